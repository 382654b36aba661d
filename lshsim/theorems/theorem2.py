"""Theorem 2 (embedding lookups at upper layers): teacher, students, constructions, width sweep.

Task (paper Sec. 4.2): ``u in {0..N-1}``, ``q ~ N(0, I_d)``, ``y = <Psi(u), Phi(q)>`` with ``Psi``
an ``N x d`` table and ``Phi >= 0`` a ReLU teacher of width ``d``, depth ``D_t``; ``Var y = 1``.
Students: ``D`` ReGLU layers of width ``w``, ``h_l = relu(W_l x_l + b_l) * (V_l x_l + c_l)``.
``"A"`` (input-only lookup): ``x_1 = P q + E(u)``, ``x_l = h_{l-1}``, ``y_hat = a.h_D + beta``.
``"B"``: as A, plus ``x_l = h_{l-1} + E_l(u)`` (``l >= 2``), ``y_hat = (a + E_out(u)).h_D + beta``.
:func:`construct_b` (width ``d``) and :func:`construct_a` (``2d``) are the exact constructions
of ``proofs/theorem2.md``, :func:`lower_bound_width` its pigeonhole bound, :func:`run_sweep`
the trained-width experiment.

References:
    Paper, Theorem ``embeddinglookup`` and its proof. Shazeer (2020), "GLU Variants Improve
    Transformer" (ReGLU).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

#: The two student architectures (a plain dict so the script, tests and figure share it).
ARCHITECTURES: dict[str, str] = {"A": "input-only lookup", "B": "lookups at upper layers + output"}

Params = dict[str, Any]


# ------------------------------------------------------------------------------------------ task


class Task(NamedTuple):
    """One teacher instance: ``y(u, q) = <psi[u], Phi(q)>`` with ``Var y = 1``.

    Attributes:
        teacher_w: ``(D_t, d, d)`` teacher weights (layer ``l`` maps ``z -> relu(W_l z + b_l)``).
        teacher_b: ``(D_t, d)`` teacher biases.
        psi: ``(N, d)`` table, already divided by ``scale``.
        scale: The standard deviation of the raw target that ``psi`` was divided by.
    """

    teacher_w: Any
    teacher_b: Any
    psi: Any
    scale: Any


def teacher_features(task: Task, q: Any, xp: Any = jnp) -> Any:
    """``Phi(q)``: the teacher MLP, ReLU after every layer.

    Args:
        task: The teacher.
        q: ``(batch, d)`` inputs.
        xp: ``numpy`` (float64 references, constructions) or ``jax.numpy`` (training).

    Returns:
        ``(batch, d)`` non-negative features.
    """
    z = q
    for layer in range(task.teacher_w.shape[0]):
        z = xp.maximum(z @ task.teacher_w[layer].T + task.teacher_b[layer], 0.0)
    return z


def target(task: Task, u: Any, q: Any, xp: Any = jnp) -> Any:
    """``y(u, q) = <psi[u], Phi(q)>``.

    Args:
        task: The teacher.
        u: ``(batch,)`` integer categories.
        q: ``(batch, d)`` inputs.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        ``(batch,)`` targets.
    """
    return xp.sum(task.psi[u] * teacher_features(task, q, xp), axis=-1)


def rng_for(seed: int, *path: int) -> np.random.Generator:
    """The generator of the stream named ``path``: ``SeedSequence(seed, spawn_key=path)``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=path))


def sample_inputs(
    rng: np.random.Generator, batch: int | tuple[int, ...], d: int, n_categories: int
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``u ~ U{0..N-1}`` (int32) and ``q ~ N(0, I_d)`` (float32).

    Args:
        rng: Generator.
        batch: Number of pairs, or a leading shape such as ``(steps, batch)``.
        d: Dimension of ``q``.
        n_categories: ``N``.

    Returns:
        ``(u, q)`` of shapes ``(*batch,)`` and ``(*batch, d)``.
    """
    shape = (batch,) if isinstance(batch, int) else tuple(batch)
    u = rng.integers(0, n_categories, size=shape, dtype=np.int32)
    return u, rng.standard_normal((*shape, d), dtype=np.float32)


def _haar_orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed ``d x d`` orthogonal matrix (QR of a Gaussian, signs fixed)."""
    qmat, rmat = np.linalg.qr(rng.standard_normal((d, d)))
    return qmat * np.sign(np.diag(rmat))


def make_task(
    rng: np.random.Generator, d: int, teacher_depth: int, n_categories: int,
    scale_sample: int = 65536, bias_std: float = 0.1,
) -> Task:  # fmt: skip
    """A random teacher: He-scaled orthogonal weights, small biases, ``Psi ~ N(0, 1)``.

    Each teacher layer is ``sqrt(2) O`` with ``O`` Haar-orthogonal (He's gain for ReLU, so
    ``E|z|^2`` is kept from layer to layer) and biases ``N(0, bias_std^2)``. Orthogonal rather
    than Gaussian weights keep every one of the ``d`` directions of ``Phi`` strong: a square
    Gaussian matrix has singular values near 0, which would let a narrow student drop them.

    The raw target's standard deviation is estimated once from ``scale_sample`` pairs drawn
    from ``rng`` and divided out of ``psi``, so that ``Var y = 1`` up to that sample's error.

    Args:
        rng: Generator (the whole task is a function of its state).
        d: Width of the teacher and dimension of ``q``.
        teacher_depth: ``D_t >= 1``.
        n_categories: ``N >= 1``.
        scale_sample: Pairs used to estimate the scale.
        bias_std: Standard deviation of the teacher biases.

    Returns:
        The task (float64 arrays).
    """
    w = np.stack([math.sqrt(2.0) * _haar_orthogonal(rng, d) for _ in range(teacher_depth)])
    b = rng.standard_normal((teacher_depth, d)) * bias_std
    psi = rng.standard_normal((n_categories, d))
    u, q = sample_inputs(rng, scale_sample, d, n_categories)
    scale = float(np.std(target(Task(w, b, psi, 1.0), u, q.astype(np.float64), np)))
    if not scale > 0:  # a dead teacher (y == 0 on the whole sample) is left unscaled
        scale = 1.0
    return Task(w, b, psi / scale, scale)


# -------------------------------------------------------------------------------------- students


def init_student(
    rng: np.random.Generator, arch: str, d: int, width: int, depth: int, n_categories: int,
    linear_scale: float = 0.1, linear_bias: float = 1.0,
) -> Params:  # fmt: skip
    """Random student parameters.

    LeCun-normal ``P, a``, He-normal gates ``W``, zero gate biases, an ``N(0, 1)`` input table,
    and each layer's linear branch near the constant ``linear_bias``: ``V`` is LeCun-normal
    times ``linear_scale`` and ``c = linear_bias`` (the defaults start every ReGLU layer close
    to a ReLU layer). B's extra tables (``E_up``, ``E_out``) start at 0 and the shared
    parameters are drawn in the same order, so from the same generator state B starts as
    exactly the same function as A.

    Args:
        rng: Generator.
        arch: ``"A"`` or ``"B"``.
        d: Dimension of ``q``.
        width: ``w``.
        depth: ``D >= 1`` ReGLU layers.
        n_categories: ``N``.
        linear_scale: Scale of ``V`` relative to LeCun-normal.
        linear_bias: Initial ``c``.

    Returns:
        Float32 arrays: ``P (w, d)``, ``E (N, w)``, ``W, V (D, w, w)``, ``b, c (D, w)``,
        ``a (w,)``, ``beta ()``, and for ``"B"`` also ``E_up (D-1, N, w)`` and ``E_out (N, w)``.
    """
    _check_arch(arch)
    normal = lambda *shape: rng.standard_normal(shape, dtype=np.float32)  # noqa: E731
    params: Params = {
        "P": normal(width, d) / np.float32(math.sqrt(d)),
        "E": normal(n_categories, width),
        "W": normal(depth, width, width) * np.float32(math.sqrt(2.0 / width)),
        "b": np.zeros((depth, width), np.float32),
        "V": normal(depth, width, width) * np.float32(linear_scale / math.sqrt(width)),
        "c": np.full((depth, width), linear_bias, np.float32),
        "a": normal(width) / np.float32(math.sqrt(width)),
        "beta": np.zeros((), np.float32),
    }
    if arch == "B":
        params["E_up"] = np.zeros((depth - 1, n_categories, width), np.float32)
        params["E_out"] = np.zeros((n_categories, width), np.float32)
    return params


def student_interfaces(params: Params, u: Any, q: Any, xp: Any = jnp) -> tuple[list[Any], Any]:
    """Run a student and keep what it carries between layers.

    Args:
        params: From :func:`init_student`, :func:`construct_a` or :func:`construct_b`.
        u: ``(batch,)`` categories.
        q: ``(batch, d)`` inputs.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        ``([x_1, ..., x_D], y_hat)``: the layer inputs (each ``(batch, w)``) and the output.
    """
    x = q @ params["P"].T + params["E"][u]
    inputs = []
    for layer in range(params["W"].shape[0]):
        if layer > 0 and "E_up" in params:
            x = x + params["E_up"][layer - 1][u]
        inputs.append(x)
        gate = xp.maximum(x @ params["W"][layer].T + params["b"][layer], 0.0)
        x = gate * (x @ params["V"][layer].T + params["c"][layer])
    out_w = params["a"] + params["E_out"][u] if "E_out" in params else params["a"]
    return inputs, xp.sum(out_w * x, axis=-1) + params["beta"]


def student_apply(params: Params, u: Any, q: Any, xp: Any = jnp) -> Any:
    """``y_hat(u, q)``, the second output of :func:`student_interfaces` (same arguments)."""
    return student_interfaces(params, u, q, xp)[1]


def _check_arch(arch: str) -> None:
    if arch not in ARCHITECTURES:
        raise ValueError(f"arch: must be one of {sorted(ARCHITECTURES)}, got {arch!r}")


# --------------------------------------------------------------------------------- constructions


def _prepare(task: Task, width: int | None, depth: int | None, least: tuple[int, int]) -> tuple:
    """Float64 teacher, and the width/depth (defaults: the least allowed; depth ``D_t + 1``)."""
    tw, tb, psi = (np.asarray(x, dtype=np.float64) for x in task[:3])
    dt, d = tw.shape[0], tw.shape[1]
    min_w, min_d = least[0] * d, dt + least[1]
    width = min_w if width is None else width
    depth = dt + 1 if depth is None else depth
    if width < min_w or depth < min_d:
        raise ValueError(f"width, depth: the construction needs width >= {min_w} and depth >= "
                         f"{min_d}, got {width}, {depth}")  # fmt: skip
    return tw, tb, psi, dt, d, width, depth


def _empty(d: int, width: int, depth: int, n: int, arch: str) -> Params:
    shapes = {"P": (width, d), "E": (n, width), "W": (depth, width, width), "b": (depth, width)}
    shapes |= {"V": (depth, width, width), "c": (depth, width), "a": (width,), "beta": ()}
    if arch == "B":
        shapes |= {"E_up": (depth - 1, n, width), "E_out": (n, width)}
    return {k: np.zeros(v) for k, v in shapes.items()}


def construct_b(task: Task, width: int | None = None, depth: int | None = None) -> Params:
    """Architecture B computing ``y`` exactly at width ``d`` (Construction B).

    Layer ``l <= D_t`` is teacher layer ``l`` (gate ``W = W_l, b = b_l``; linear branch
    ``V = 0, c = 1``); layers above ``D_t`` are ``relu(x) * 1 = x`` (their input is ``>= 0``);
    ``P = I``, all input/upper tables 0, ``a = 0``, ``E_out(u) = Psi(u)``, ``beta = 0``.
    Extra units (``width > d``) are identically 0.

    Args:
        task: The teacher.
        width: ``w >= d`` (default ``d``).
        depth: ``D >= D_t`` (default ``D_t + 1``, the experiment's student depth).

    Returns:
        Float64 NumPy parameters for :func:`student_apply`.
    """
    tw, tb, psi, dt, d, width, depth = _prepare(task, width, depth, (1, 0))
    p = _empty(d, width, depth, psi.shape[0], "B")
    p["P"][:d, :d] = np.eye(d)
    for layer in range(depth):
        if layer < dt:
            p["W"][layer, :d, :d], p["b"][layer, :d] = tw[layer], tb[layer]
        else:
            p["W"][layer, :d, :d] = np.eye(d)
        p["c"][layer, :d] = 1.0
    p["E_out"][:, :d] = psi
    return p


def construct_a(
    task: Task, width: int | None = None, depth: int | None = None, margin: float = 1.0
) -> Params:
    """Architecture A computing ``y`` exactly at width ``2d`` (Construction A).

    ``x_1 = [q ; Psi(u) + C]`` with ``C = max|Psi| + margin``. Layers ``1..D_t`` run the teacher
    on the first half and carry the second half unchanged (``relu(x) * 1 = x`` as ``x > 0``);
    layers between ``D_t`` and the last are identities; the last layer's unit ``i`` is
    ``relu(Phi_i) * ((Psi_i + C) - C) = Phi_i Psi_i``; ``a = 1`` on those ``d`` units.

    Args:
        task: The teacher.
        width: ``w >= 2d`` (default ``2d``); extra units are identically 0.
        depth: ``D >= D_t + 1`` (default ``D_t + 1``).
        margin: ``C - max|Psi| > 0``.

    Returns:
        Float64 NumPy parameters for :func:`student_apply`.
    """
    tw, tb, psi, dt, d, width, depth = _prepare(task, width, depth, (2, 1))
    if not margin > 0:
        raise ValueError(f"margin: must be > 0, got {margin}")
    shift = float(np.max(np.abs(psi))) + margin
    eye = np.eye(d)
    p = _empty(d, width, depth, psi.shape[0], "A")
    p["P"][:d, :d] = eye
    p["E"][:, d : 2 * d] = psi + shift
    for layer in range(depth - 1):
        if layer < dt:
            p["W"][layer, :d, :d], p["b"][layer, :d] = tw[layer], tb[layer]
        else:
            p["W"][layer, :d, :d] = eye
        p["W"][layer, d : 2 * d, d : 2 * d] = eye
        p["c"][layer, : 2 * d] = 1.0
    last = depth - 1
    p["W"][last, :d, :d] = eye
    p["V"][last, :d, d : 2 * d] = eye
    p["c"][last, :d] = -shift
    p["a"][:d] = 1.0
    return p


# ----------------------------------------------------------------------------- counting, bounds


def param_counts(arch: str, d: int, width: int, depth: int, n_categories: int) -> dict[str, int]:
    """Parameter counts of a student, tables and the rest separately.

    Non-table: ``P`` (``w d``), ``D`` ReGLU layers (``2 w^2 + 2 w`` each), ``a`` and ``beta``.
    Tables: ``E`` (``N w``), and for B also ``D - 1`` upper tables and ``E_out`` (``N w`` each).
    ``table_used_by_construction`` counts the table entries the exact construction needs
    (A: ``N d`` of ``E``; B: ``N d`` of ``E_out``).

    Args:
        arch: ``"A"`` or ``"B"``.
        d: Dimension of ``q``.
        width: ``w``.
        depth: ``D``.
        n_categories: ``N``.

    Returns:
        ``{"non_table", "table", "total", "table_used_by_construction"}``.
    """
    _check_arch(arch)
    non_table = width * d + depth * (2 * width * width + 2 * width) + width + 1
    table = (1 + (depth if arch == "B" else 0)) * n_categories * width
    used = n_categories * d
    return {
        "non_table": non_table,
        "table": table,
        "total": non_table + table,
        "table_used_by_construction": used,
    }


def min_width_bits(n_values: int, bits: int) -> int:
    """Smallest ``w`` with ``(2^bits)^w >= n_values``: ``ceil(log2(n_values) / bits)``.

    A ``w``-unit vector whose units take at most ``2^bits`` values each takes at most
    ``2^(bits w)`` values, so it can be injective on a set of ``n_values`` points only if
    ``w >= min_width_bits(n_values, bits)`` (pigeonhole).

    Args:
        n_values: ``>= 1`` distinct values to carry.
        bits: ``>= 1`` bits per unit.

    Returns:
        The width (exact integer arithmetic).
    """
    if n_values < 1 or bits < 1:
        raise ValueError(f"n_values, bits: must be >= 1, got {n_values}, {bits}")
    width = 0
    while (1 << (bits * width)) < n_values:
        width += 1
    return width


def lower_bound_width(arch: str, n_categories: int, n_queries: int, bits: int) -> int:
    """Pigeonhole lower bound on the width of an exact ``b``-bit student (Theorem 2, part 2).

    A: every layer input is injective on ``S = U x Q``, so ``w >= log2(N M) / b``.
    B: for each fixed ``u`` every layer input is injective on ``Q``, so ``w >= log2(M) / b``.

    Args:
        arch: ``"A"`` or ``"B"``.
        n_categories: ``N = |U|``.
        n_queries: ``M = |Q|``.
        bits: ``b``.

    Returns:
        The smallest width the bound allows.
    """
    _check_arch(arch)
    carried = n_categories * n_queries if arch == "A" else n_queries
    return min_width_bits(carried, bits)


def grid_instance(d: int, bits: int, teacher_depth: int, seed: int) -> tuple[Task, np.ndarray]:
    """An instance on which the constructions are ``b``-bit, so the bounds are tight.

    ``Q`` is the product of ``d`` sets of ``2^b`` positive values; teacher layers are positive
    scalings of permutations with zero bias (each layer maps the grid to a grid). ``Psi``'s
    rows are all ``2^(d b)`` points of a product of ``d`` random Gaussian sets of ``2^b``
    values, so ``N = M = 2^(d b)``; ``y`` is injective on ``U x Q`` almost surely.

    Args:
        d: Width.
        bits: ``b``.
        teacher_depth: ``D_t``.
        seed: NumPy seed.

    Returns:
        ``(task, Q)`` with float64 arrays; ``Q`` has shape ``(2^(d b), d)``.
    """
    rng = np.random.default_rng(seed)
    k = 1 << bits
    q_sets = np.sort(rng.uniform(0.5, 1.5, size=(d, k)), axis=1)
    psi_sets = rng.normal(size=(d, k))
    idx = np.stack(np.meshgrid(*[np.arange(k)] * d, indexing="ij"), axis=-1).reshape(-1, d)
    queries = q_sets[np.arange(d), idx]
    psi = psi_sets[np.arange(d), idx]
    w = np.zeros((teacher_depth, d, d))
    for layer in range(teacher_depth):
        w[layer][np.arange(d), rng.permutation(d)] = rng.uniform(0.5, 2.0, size=d)
    return Task(w, np.zeros((teacher_depth, d)), psi, 1.0), queries


# ------------------------------------------------------------------------------------ experiment


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
#: A quick look (under a minute): d = 4, six widths, two seeds, 6k steps.
QUICK = Theorem2Config(dims=(4,), width_ratios=(0.5, 1.0, 1.5, 2.0, 3.0, 4.0), seeds=2, steps=6000)
#: A pipeline check for tests (seconds): d = 4, widths d and 2d, N = 16.
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


def minimal_width(widths: Sequence[int], losses: Sequence[float], target_loss: float) -> int | None:
    """Smallest swept width whose held-out loss is at most ``target_loss``.

    Args:
        widths: Swept widths (any order).
        losses: Held-out loss at each width (NaN counts as not reached).
        target_loss: The threshold.

    Returns:
        The width, or ``None`` if no swept width reaches the target.
    """
    if len(widths) != len(losses):
        raise ValueError(f"losses: expected {len(widths)} values, got {len(losses)}")
    reached = [w for w, loss in zip(widths, losses, strict=True) if loss <= target_loss]
    return min(reached) if reached else None


def median_width(values: Sequence[int | None]) -> float | None:
    """Median of per-seed minimal widths, ``None`` (never reached) ranked above every width.

    Args:
        values: One minimal width (or ``None``) per seed.

    Returns:
        The median (mean of the two middle values for an even count), or ``None`` if a middle
        value is ``None``.
    """
    if not values:
        raise ValueError("values: need at least one seed")
    mid = sorted(values, key=lambda v: math.inf if v is None else v)
    mid = mid[(len(mid) - 1) // 2 : len(mid) // 2 + 1]
    return None if None in mid else float(sum(mid)) / len(mid)  # type: ignore[arg-type]


def summarise(rows: Sequence[Mapping[str, Any]], target_loss: float) -> dict[str, Any]:
    """Minimal widths per seed and their median, per ``d`` and arch, and the ratio A / B.

    Args:
        rows: ``run_sweep``'s rows (``d, arch, width, replicate, heldout_nmse``).
        target_loss: The threshold.

    Returns:
        ``{"minimal": {str(d): {arch: {"per_seed", "per_seed_over_d", "median",
        "median_over_d"}}}, "ratio": {str(d): median A / median B or None}}``.
    """
    minimal: dict[str, Any] = {}
    for d in sorted({int(r["d"]) for r in rows}):
        minimal[str(d)] = {}
        for arch in ARCHITECTURES:
            mine = [r for r in rows if r["d"] == d and r["arch"] == arch]
            per_seed = []
            for rep in sorted({r["replicate"] for r in mine}):
                runs = [r for r in mine if r["replicate"] == rep]
                losses = [r["heldout_nmse"] for r in runs]
                per_seed.append(minimal_width([r["width"] for r in runs], losses, target_loss))
            med = median_width(per_seed)
            minimal[str(d)][arch] = {
                "per_seed": per_seed,
                "per_seed_over_d": [None if w is None else w / d for w in per_seed],
                "median": med,
                "median_over_d": None if med is None else med / d,
            }
    meds = {k: (v["A"]["median"], v["B"]["median"]) for k, v in minimal.items()}
    ratio = {k: None if a is None or b is None else a / b for k, (a, b) in meds.items()}
    return {"minimal": minimal, "ratio": ratio}


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
