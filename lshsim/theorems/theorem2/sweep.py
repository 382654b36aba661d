"""Theorem 2's trained-width experiment: the sweep's configuration, the jitted trainer, the run.

:func:`run_sweep` trains both students over a grid of widths (replicates under ``jax.vmap``,
online training under ``lax.scan``) and reads off the minimal widths
(:mod:`lshsim.theorems.theorem2.readout`), with the constructions' errors and parameter counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lshsim.theorems.theorem2.architectures import ARCHITECTURES, Params
from lshsim.theorems.theorem2.bounds import param_counts
from lshsim.theorems.theorem2.constructions import construct_a, construct_b
from lshsim.theorems.theorem2.readout import summarise
from lshsim.theorems.theorem2.students import init_student, student_apply
from lshsim.theorems.theorem2.task import Task, make_task, rng_for, sample_inputs, target


@dataclasses.dataclass(frozen=True)
class Theorem2Config:
    """The width sweep: both students at depth ``D_t + 1`` over widths ``w = ratio * d``.

    Attributes:
        dims: Teacher widths ``d`` (one figure panel each).
        teacher_depth: ``D_t``.
        n_categories: ``N``, the number of table rows.
        width_ratios: ``w / d`` values to sweep (rounded to integers, at least 1).
        seeds: Replicates per (d, arch, width); each has its own teacher, data stream and init.
        steps: Online training steps (a fresh batch every step).
        batch: Pairs per step.
        learning_rate: Peak AdamW learning rate (linear warmup, cosine decay to 1%).
        warmup_steps: Warmup length.
        weight_decay: AdamW decoupled weight decay.
        clip_norm: Global gradient-norm clip.
        linear_scale: Initial scale of each ReGLU linear branch ``V`` (see :func:`init_student`).
        linear_bias: Initial linear-branch bias ``c``.
        heldout: Size of the fixed held-out sample per replicate.
        target_loss: Held-out normalised MSE (``1 - R^2``) that counts as "reached".
        scale_sample: Pairs used once to normalise ``Var y`` to 1.
    """

    dims: tuple[int, ...] = (4, 8)
    teacher_depth: int = 2
    n_categories: int = 256
    width_ratios: tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)
    seeds: int = 3
    steps: int = 20000
    batch: int = 256
    learning_rate: float = 1e-2
    warmup_steps: int = 200
    weight_decay: float = 0.0
    clip_norm: float = 1.0
    linear_scale: float = 0.1
    linear_bias: float = 1.0
    heldout: int = 8192
    target_loss: float = 0.05
    scale_sample: int = 65536

    @property
    def student_depth(self) -> int:
        """``D = D_t + 1`` for both students."""
        return self.teacher_depth + 1

    def widths(self, d: int) -> list[int]:
        """The swept widths for teacher width ``d`` (sorted, distinct, >= 1)."""
        return sorted({max(1, round(r * d)) for r in self.width_ratios})

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first out-of-range field."""
        for name in ("teacher_depth", "n_categories", "seeds", "steps", "batch", "heldout"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: must be an integer >= 1, got {value!r}")
        if not self.dims or any(not isinstance(d, int) or d < 1 for d in self.dims):
            raise ValueError(f"dims: must be integers >= 1, got {self.dims!r}")
        if not self.width_ratios or any(not r > 0 for r in self.width_ratios):
            raise ValueError(f"width_ratios: must be > 0, got {self.width_ratios!r}")
        if not (isinstance(self.warmup_steps, int) and 0 <= self.warmup_steps < self.steps):
            raise ValueError(f"warmup_steps: must be in [0, steps), got {self.warmup_steps!r}")
        for name in ("learning_rate", "clip_norm", "target_loss", "scale_sample"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: must be > 0, got {getattr(self, name)!r}")
        if not (self.weight_decay >= 0 and self.linear_scale >= 0):
            got = f"{self.weight_decay!r}, {self.linear_scale!r}"
            raise ValueError(f"weight_decay, linear_scale: must be >= 0, got {got}")


#: The committed sweep: d = 4 and 8, 9 widths, 3 seeds, 20k steps (343 s measured on 2 CPU cores).
DEFAULT = Theorem2Config()
#: A quick look (about 15 s on 2 CPU cores): d = 4, widths d/2 to 4d doubling, two seeds, 6k steps.
QUICK = Theorem2Config(dims=(4,), width_ratios=(0.5, 1.0, 2.0, 4.0), seeds=2, steps=6000)
#: A pipeline check for tests, seconds long: d = 4, widths d and 2d, N = 16.
SMOKE = Theorem2Config(
    dims=(4,), n_categories=16, width_ratios=(1.0, 2.0), seeds=2, steps=3000, batch=128,
    warmup_steps=100, heldout=1024, scale_sample=4096,
)  # fmt: skip
#: Extra targets at which ``run_sweep`` also reports the median minimal widths and their ratio.
SUMMARY_TARGETS = (0.2, 0.1, 0.05, 0.02, 0.01)


def _optimizer(config: Theorem2Config) -> optax.GradientTransformation:
    schedule = optax.warmup_cosine_decay_schedule(
        0.0, config.learning_rate, config.warmup_steps, config.steps, config.learning_rate / 100
    )
    return optax.chain(
        optax.clip_by_global_norm(config.clip_norm),
        optax.adamw(schedule, weight_decay=config.weight_decay),
    )


_TRAINERS: dict[tuple[Any, ...], Callable[..., Any]] = {}


def _trainer(config: Theorem2Config, arch: str, d: int, width: int) -> Callable[..., Any]:
    """Jitted ``vmap`` over replicates of: online training (``lax.scan``), held-out nMSE.

    The returned function takes ``(task, params, u, q, hu, hq)`` with a leading replicate axis
    (``u, q`` of shape ``(steps, batch[, d])`` per replicate) and returns the held-out nMSE and
    the mean training loss of the last 5% of steps. One compile per (config, arch, d, width).
    """
    cache_key = (config, arch, d, width)
    if cache_key not in _TRAINERS:
        opt = _optimizer(config)

        def loss_fn(params: Params, u: Any, q: Any, y: Any) -> Any:
            return jnp.mean((student_apply(params, u, q) - y) ** 2)

        def step(task: Task, carry: Any, batch: Any) -> Any:
            params, state = carry
            u, q = batch
            loss, grads = jax.value_and_grad(loss_fn)(params, u, q, target(task, u, q))
            updates, state = opt.update(grads, state, params)
            return (optax.apply_updates(params, updates), state), loss

        def train_one(task: Task, params: Params, u: Any, q: Any, hu: Any, hq: Any) -> Any:
            init = (params, opt.init(params))
            (params, _), losses = jax.lax.scan(lambda c, b: step(task, c, b), init, (u, q))
            hy = target(task, hu, hq)
            nmse = jnp.mean((student_apply(params, hu, hq) - hy) ** 2) / jnp.var(hy)
            return nmse, jnp.mean(losses[-max(1, config.steps // 20) :])

        _TRAINERS[cache_key] = jax.jit(jax.vmap(train_one))
    return _TRAINERS[cache_key]


def _stack(trees: Sequence[Any]) -> Any:
    return jax.tree.map(lambda *xs: jnp.asarray(np.stack(xs), dtype=xs[0].dtype), *trees)


def _construction_errors(tasks: Sequence[Task], heldout: Sequence[tuple[Any, Any]]) -> dict:
    """Max ``|y_hat - y|`` of both constructions on the held-out samples, float64 and float32."""
    out: dict[str, dict[str, Any]] = {}
    for arch, build in (("A", construct_a), ("B", construct_b)):
        err64 = err32 = 0.0
        for task, (u, q) in zip(tasks, heldout, strict=True):
            params, q64 = build(task), q.astype(np.float64)
            y = target(task, u, q64, np)
            err64 = max(err64, float(np.max(np.abs(student_apply(params, u, q64, np) - y))))
            p32 = jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), params)
            y32 = student_apply(p32, jnp.asarray(u), jnp.asarray(q))
            err32 = max(err32, float(np.max(np.abs(np.asarray(y32, np.float64) - y))))
        width, depth = params["a"].shape[0], params["W"].shape[0]
        out[arch] = {"width": width, "depth": depth, "max_abs_error_float64": err64}
        out[arch]["max_abs_error_float32"] = err32
    return out


def _sweep_dim(
    config: Theorem2Config, seed: int, d: int, progress: Callable[[str], None] | None
) -> tuple[list[dict[str, Any]], list[Task], list[tuple[Any, Any]]]:
    """Train every (arch, width) for one ``d``; returns the rows, teachers and held-out sets."""
    depth, n, reps = config.student_depth, config.n_categories, range(config.seeds)
    tasks = [
        make_task(rng_for(seed, d, r, 0), d, config.teacher_depth, n, config.scale_sample)
        for r in reps
    ]
    heldout = [sample_inputs(rng_for(seed, d, r, 1), config.heldout, d, n) for r in reps]
    shape = (config.steps, config.batch)
    data = _stack([sample_inputs(rng_for(seed, d, r, 2), shape, d, n) for r in reps])
    data += _stack(heldout)
    task_s = _stack([Task(*(np.float32(x) for x in t)) for t in tasks])
    rows: list[dict[str, Any]] = []
    for arch in ARCHITECTURES:
        for width in config.widths(d):
            init = [
                init_student(rng_for(seed, d, r, 3, width), arch, d, width, depth, n,
                             config.linear_scale, config.linear_bias)
                for r in reps
            ]  # fmt: skip
            out = _trainer(config, arch, d, width)(task_s, _stack(init), *data)
            nmse, tail = (np.asarray(x, np.float64) for x in out)
            base = {"d": d, "arch": arch, "width": width, "width_over_d": width / d}
            rows += [
                {**base, "replicate": r, "heldout_nmse": float(nmse[r]),
                 "train_loss_tail": float(tail[r])}
                for r in reps
            ]  # fmt: skip
            if progress is not None:
                losses = " ".join(f"{x:.4f}" for x in nmse)
                progress(f"d={d} {arch} w={width}: held-out nMSE per seed {losses}")
    return rows, tasks, heldout


def run_sweep(
    config: Theorem2Config, seed: int, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Train A and B students over the width grid and read off the minimal widths.

    For each ``d`` and replicate ``r``, the NumPy streams :func:`rng_for` ``(seed, d, r, k)``
    give the teacher (``k = 0``), the held-out sample (1), the training stream that every
    student of the replicate sees (2) and the initialisation (3, then the width; the same for A
    and B, whose extra tables start at 0). Replicates train together under ``jax.vmap``; each
    (arch, width) compiles once.

    Args:
        config: The sweep.
        seed: Master seed (same seed, same numbers).
        progress: Called with a one-line message after each (d, arch, width) group.

    Returns:
        A JSON-able dict: ``config`` (its fields plus ``student_depth``), ``seed``, ``rows``
        (per d, arch, width, replicate: ``d, arch, width, width_over_d, replicate,
        heldout_nmse, train_loss_tail``), ``minimal`` and ``ratio`` at ``config.target_loss``
        (:func:`summarise`; ``None`` = never reached), ``by_target`` (the same for each of
        :data:`SUMMARY_TARGETS`, keyed by ``str(target)``), ``constructions`` (per ``str(d)``,
        per arch: ``width``, ``depth`` and the max abs error of the exact construction on the
        held-out samples in float64 and float32) and ``params`` (per ``str(d)``, per arch:
        :func:`param_counts` at the construction width).
    """
    config.validate()
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    depth, n = config.student_depth, config.n_categories
    rows: list[dict[str, Any]] = []
    constructions, params = {}, {}
    for d in config.dims:
        new_rows, tasks, heldout = _sweep_dim(config, seed, d, progress)
        rows += new_rows
        constructions[str(d)] = _construction_errors(tasks, heldout)
        params[str(d)] = {
            "A": {"width": 2 * d, **param_counts("A", d, 2 * d, depth, n)},
            "B": {"width": d, **param_counts("B", d, d, depth, n)},
        }
    return {
        "config": {**dataclasses.asdict(config), "student_depth": depth},
        "seed": seed,
        "rows": rows,
        **summarise(rows, config.target_loss),
        "by_target": {str(t): summarise(rows, t) for t in SUMMARY_TARGETS},
        "constructions": constructions,
        "params": params,
    }
