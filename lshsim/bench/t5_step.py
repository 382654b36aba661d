"""Train-step time of lshsim's JAX T5 against Hugging Face's PyTorch T5, same config and batch.

Usage::

    python experiments/bench_t5.py                       # tiny (batch 32) and small (batch 8)
    python experiments/bench_t5.py --configs tiny --steps 40 --json --out bench_t5.json
    python experiments/bench_t5.py --quick               # a few steps, for a smoke test

What is measured, per config: the wall time of one full training step (forward, backward and
Adafactor update) on the CPU, for

* lshsim: ``jax.jit(make_train_step(cfg, make_optimizer(cfg, 1.0, warmup_steps=10_000)),
  donate_argnums=0)``, i.e. optax Adafactor at the constant rate 0.01 of T5's warmup; the
  timer stops after ``jax.block_until_ready`` on the new state and the metrics;
* Hugging Face: ``T5ForConditionalGeneration`` (``model.train()``, default attention
  implementation) with ``transformers.optimization.Adafactor`` at lr 0.01 (T5 settings:
  parameter scaling, decay -0.8, update clipping 1, no momentum) on the ``labels`` loss.

Both get the same architecture (``lshsim.t5.hf.config_to_hf``; dropout 0), the same weights
(``params_to_hf``; the HF head is untied from the input embedding first, so both models have
the same parameter count) and the same seeded random batch: encoder inputs of the config's
``input_length``, targets of the length span corruption gives that input length
(``compute_input_and_target_lengths``: 29 for 128, 114 for 512), decoder inputs the targets
shifted right, no padding. Before timing, the first step's loss of the two (computed before
any update, from identical weights) is compared: agreement to ~1e-6 relative shows it is the
same computation. lshsim's step also computes T5X's z-loss, the accuracy and a finiteness
check; HF's does not (a small extra cost on the JAX side).

After a warm-up (JAX compilation and a few steps of each), ``--steps`` steps of each are timed
one by one, alternating blocks of steps between the two frameworks (the order swapping every
round) so that the noise of a shared machine hits both alike. Reported: median and IQR
seconds per step, examples per second, ``ratio = torch / jax`` median time (> 1: lshsim is
faster), parameter counts, threads, and the CPU utilisation (process CPU time / wall time, in
cores) of each framework's timed steps. Both use all cores: torch its intra-op pool
(``torch.get_num_threads()``), XLA:CPU its own thread pool.

Run it on a quiet machine and check ``loadavg_*`` in the JSON: when other processes compete
for the cores, torch's OpenMP pool slows down far more than XLA's (on 2 busy cores, tiny's
ratio came out 2.3; on the same 2 cores, quiet, 0.65).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
from typing import Any

import numpy as np

from lshsim.bench.machine import cpu_info, loadavg
from lshsim.bench.report import emit, log, non_negative, positive
from lshsim.bench.timing import summary, timed

#: Warmup of the rsqrt schedule for the benchmark: the rate stays at 1/sqrt(10000) = 0.01.
WARMUP_STEPS = 10_000
#: HF Adafactor's constant learning rate (equal to the JAX schedule's during warmup).
TORCH_LR = 1e-2
#: Relative loss difference above which the two models are not the same computation.
LOSS_RTOL = 1e-4
#: Token ids 0 (padding) and 1 (EOS) are kept out of the random tokens.
FIRST_TOKEN = 2


def machine_info() -> dict[str, Any]:
    """CPU model, core counts, thread pools and library versions."""
    import flax
    import jax
    import optax
    import torch
    import transformers

    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu": cpu_info()[0],
        "cores": os.cpu_count(),
        "cores_available": affinity,
        "python": platform.python_version(),
        "jax": jax.__version__,
        "jax_backend": jax.default_backend(),
        "jax_devices": len(jax.devices()),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "flax": flax.__version__,
        "optax": optax.__version__,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "transformers": transformers.__version__,
        "numpy": np.__version__,
        "loadavg_at_start": loadavg(),
    }


def lengths(cfg: Any) -> tuple[int, int]:
    """``(input_length, target_length)``: the config's input and its span-corruption target."""
    from lshsim.t5.data.spans import compute_input_and_target_lengths

    return cfg.input_length, compute_input_and_target_lengths(cfg.input_length)[1]


def make_batch(
    cfg: Any, batch_size: int, input_length: int, target_length: int, seed: int
) -> dict[str, np.ndarray]:
    """A seeded random batch in lshsim's layout (no padding; targets end with EOS).

    Args:
        cfg: the model config (tokens are drawn from its pieces and sentinels).
        batch_size: rows.
        input_length: encoder length ``L``.
        target_length: decoder length ``T``.
        seed: NumPy seed.

    Returns:
        ``encoder_input_tokens [B, L]``, ``decoder_input_tokens`` and
        ``decoder_target_tokens [B, T]`` (int32), ``decoder_loss_weights [B, T]`` (float32).
    """
    from lshsim.t5.configs import NUM_SENTINELS

    rng = np.random.default_rng(seed)
    high = min(cfg.num_pieces + NUM_SENTINELS, cfg.vocab_size)
    enc = rng.integers(FIRST_TOKEN, high, size=(batch_size, input_length), dtype=np.int32)
    targets = rng.integers(FIRST_TOKEN, high, size=(batch_size, target_length), dtype=np.int32)
    targets[:, -1] = 1  # EOS
    dec_in = np.zeros_like(targets)
    dec_in[:, 1:] = targets[:, :-1]  # shifted right; 0 is the decoder start token
    return {
        "encoder_input_tokens": enc,
        "decoder_input_tokens": dec_in,
        "decoder_target_tokens": targets,
        "decoder_loss_weights": np.ones(targets.shape, np.float32),
    }


class JaxRunner:
    """lshsim's jitted train step on a fixed batch; ``step()`` blocks until it is done."""

    name = "jax"

    def __init__(self, cfg: Any, batch: dict[str, np.ndarray], seed: int) -> None:
        import jax

        from lshsim.t5.steps import init_state, make_optimizer, make_train_step

        self._jax = jax
        optimizer = make_optimizer(cfg, learning_rate=1.0, warmup_steps=WARMUP_STEPS)
        self.state = init_state(cfg, optimizer, seed)
        self.num_params = sum(int(x.size) for x in jax.tree_util.tree_leaves(self.state["params"]))
        self.initial_params = jax.device_get(self.state["params"])
        self.batch = jax.device_put({k: np.asarray(v) for k, v in batch.items()})
        self.fn = jax.jit(make_train_step(cfg, optimizer, seed), donate_argnums=0)
        self.metrics: dict = {}

    def step(self) -> None:
        """One training step."""
        self.state, self.metrics = self.fn(self.state, self.batch)
        self._jax.block_until_ready((self.state, self.metrics))

    def loss(self) -> float:
        """Cross-entropy per target token of the last step (before its update)."""
        return float(self.metrics["loss"])

    def compiled_versions(self) -> int | None:
        """Entries in the jit cache (1 unless something recompiled)."""
        size = getattr(self.fn, "_cache_size", None)
        return int(size()) if callable(size) else None


class TorchRunner:
    """HF ``T5ForConditionalGeneration`` with HF Adafactor, same weights and batch."""

    name = "torch"

    def __init__(self, cfg: Any, batch: dict[str, np.ndarray], params: Any) -> None:
        import torch
        import transformers
        from transformers.optimization import Adafactor

        from lshsim.t5.hf import config_to_hf, params_to_hf, untie_lm_head

        self._torch = torch
        model = untie_lm_head(transformers.T5ForConditionalGeneration(config_to_hf(cfg)))
        state = {k: torch.from_numpy(v) for k, v in params_to_hf(params, cfg).items()}
        model.load_state_dict(state, strict=True)
        model.train()
        self.model = model
        self.attn_implementation = getattr(model.config, "_attn_implementation", None)
        self.num_params = sum(p.numel() for p in model.parameters())
        self.optimizer = Adafactor(
            model.parameters(),
            scale_parameter=True,
            relative_step=False,
            warmup_init=False,
            lr=TORCH_LR,
            clip_threshold=1.0,
            decay_rate=-0.8,
            beta1=None,
        )
        enc = torch.from_numpy(batch["encoder_input_tokens"]).long()
        labels = torch.from_numpy(batch["decoder_target_tokens"]).long()
        labels = labels.masked_fill(torch.from_numpy(batch["decoder_loss_weights"]) == 0, -100)
        self.inputs = {
            "input_ids": enc,
            "attention_mask": (enc > 0).long(),
            "decoder_input_ids": torch.from_numpy(batch["decoder_input_tokens"]).long(),
            "labels": labels,
        }
        self.last_loss: Any = None

    def step(self) -> None:
        """One training step."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.model(**self.inputs).loss
        loss.backward()
        self.optimizer.step()
        self.last_loss = loss.detach()

    def loss(self) -> float:
        """The ``labels`` cross-entropy of the last step (before its update)."""
        return float(self.last_loss)


def _first_steps(
    name: str, jx: JaxRunner, th: TorchRunner
) -> tuple[dict[str, float], tuple[float, float, float]]:
    """First step of each from identical weights: compile time and the loss check.

    Returns:
        ``({"jax": s, "torch": s}, (loss_jax, loss_torch, relative difference))``.
    """
    first: dict[str, float] = {}
    for runner in (jx, th):
        first[runner.name] = timed(runner.step)[0]
    loss_jax, loss_torch = jx.loss(), th.loss()
    rel = abs(loss_jax - loss_torch) / max(abs(loss_torch), 1e-30)
    log(
        f"[{name}] first step: jax {first['jax']:.2f}s (with compile), torch "
        f"{first['torch']:.2f}s; loss jax {loss_jax:.7f} torch {loss_torch:.7f} (rel {rel:.1e})"
    )
    if not rel <= LOSS_RTOL:
        log(f"[{name}] WARNING: losses differ by {rel:.1e} relative (> {LOSS_RTOL:g})")
    return first, (loss_jax, loss_torch, rel)


def _alternate(
    name: str, jx: JaxRunner, th: TorchRunner, steps: int, rounds: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Time ``steps`` steps of each in ``rounds`` alternated blocks (the order swapping).

    Returns:
        ``(wall, cpu)``: wall seconds of every step, and summed process-CPU seconds, per name.
    """
    wall: dict[str, list[float]] = {"jax": [], "torch": []}
    cpu: dict[str, float] = {"jax": 0.0, "torch": 0.0}
    block = -(-steps // rounds)
    gc.collect()
    for r in range(rounds):
        order = (jx, th) if r % 2 == 0 else (th, jx)
        for runner in order:
            for _ in range(min(block, steps - len(wall[runner.name]))):
                w, c = timed(runner.step)
                wall[runner.name].append(w)
                cpu[runner.name] += c
        log(
            f"[{name}] round {r + 1}/{rounds}: jax {np.median(wall['jax']):.4f} s/step, "
            f"torch {np.median(wall['torch']):.4f} s/step"
        )
    return wall, cpu


def bench_config(
    name: str, batch_size: int, steps: int, warmup: int, rounds: int, seed: int
) -> dict[str, Any]:
    """Check that both models compute the same loss, then time ``steps`` steps of each.

    Args:
        name: a key of ``lshsim.t5.configs.CONFIGS``.
        batch_size: examples per step.
        steps: timed steps per framework.
        warmup: untimed steps per framework after the first (compiling) one.
        rounds: blocks of steps per framework, alternated between the two.
        seed: seeds the weights and the batch.

    Returns:
        One result row (see the module docstring).
    """
    from lshsim.t5.configs import get_config

    cfg = get_config(name)
    if cfg.dropout_rate != 0.0:
        cfg = cfg.replace(dropout_rate=0.0)
    input_length, target_length = lengths(cfg)
    batch = make_batch(cfg, batch_size, input_length, target_length, seed)
    log(f"[{name}] batch {batch_size}, lengths {input_length}/{target_length}: building models")
    jx = JaxRunner(cfg, batch, seed)
    th = TorchRunner(cfg, batch, jx.initial_params)
    del jx.initial_params

    first, (loss_jax, loss_torch, rel) = _first_steps(name, jx, th)
    for _ in range(warmup):
        for runner in (jx, th):
            runner.step()
    wall, cpu = _alternate(name, jx, th, steps, rounds)
    sj, st = summary(wall["jax"]), summary(wall["torch"])
    return {
        "config": name,
        "batch": batch_size,
        "input_length": input_length,
        "target_length": target_length,
        "steps": steps,
        "warmup": warmup,
        "rounds": rounds,
        "jax_s_per_step": sj["median"],
        "jax_iqr_s": sj["iqr"],
        "jax_min_s": sj["min"],
        "torch_s_per_step": st["median"],
        "torch_iqr_s": st["iqr"],
        "torch_min_s": st["min"],
        "ratio": st["median"] / sj["median"],
        "jax_examples_per_s": batch_size / sj["median"],
        "torch_examples_per_s": batch_size / st["median"],
        "jax_cpu_cores_used": cpu["jax"] / sum(wall["jax"]),
        "torch_cpu_cores_used": cpu["torch"] / sum(wall["torch"]),
        "jax_first_step_s": first["jax"],
        "torch_first_step_s": first["torch"],
        "jax_compiled_versions": jx.compiled_versions(),
        "params_jax": jx.num_params,
        "params_torch": th.num_params,
        "loss_jax": loss_jax,
        "loss_torch": loss_torch,
        "loss_rel_diff": rel,
        "loss_agrees": bool(rel <= LOSS_RTOL),
        "final_loss_jax": jx.loss(),
        "final_loss_torch": th.loss(),
        "torch_attn_implementation": th.attn_implementation,
        "loadavg_after": loadavg(),
        "jax_s_per_step_all": wall["jax"],
        "torch_s_per_step_all": wall["torch"],
    }


def format_table(results: list[dict[str, Any]]) -> str:
    """A plain-text table of the result rows."""
    head = (
        f"{'config':<7}{'batch':>6}{'L/T':>9}{'jax s/step (IQR)':>22}{'torch s/step (IQR)':>22}"
        f"{'jax ex/s':>10}{'torch ex/s':>11}{'ratio':>7}{'params':>13}{'loss rel':>10}"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        same = r["params_jax"] == r["params_torch"]
        lines.append(
            f"{r['config']:<7}{r['batch']:>6}{r['input_length']:>5}/{r['target_length']:<3}"
            f"{r['jax_s_per_step']:>13.4f} ({r['jax_iqr_s']:.4f})"
            f"{r['torch_s_per_step']:>13.4f} ({r['torch_iqr_s']:.4f})"
            f"{r['jax_examples_per_s']:>10.1f}{r['torch_examples_per_s']:>11.1f}"
            f"{r['ratio']:>7.2f}{r['params_jax']:>12,}{'' if same else '!':1}"
            f"{r['loss_rel_diff']:>10.1e}"
        )
    lines.append(
        "ratio = torch / jax median s/step (> 1: lshsim faster); '!' = param counts differ"
    )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (argparse exits 2 with a one-line message on bad input)."""
    from lshsim.t5.configs import CONFIGS

    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--configs", nargs="+", default=["tiny", "small"], choices=sorted(CONFIGS))
    p.add_argument("--batch-tiny", type=positive, default=32, help="batch of tiny")
    p.add_argument("--batch-small", type=positive, default=8, help="batch of small")
    p.add_argument("--batch", type=positive, default=8, help="batch of any other config")
    p.add_argument("--steps", type=positive, default=None, help="timed steps (default 30/3)")
    p.add_argument("--warmup", type=non_negative, default=None, help="untimed steps (3/1)")
    p.add_argument("--rounds", type=positive, default=None, help="alternated blocks (5/2)")
    p.add_argument("--seed", type=non_negative, default=0)
    p.add_argument("--quick", action="store_true", help="few steps (a smoke test)")
    p.add_argument("--json", action="store_true", help="print JSON (the table goes to stderr)")
    p.add_argument("--out", default=None, help="also write the JSON to this file")
    args = p.parse_args(argv)
    steps, warmup, rounds = (3, 1, 2) if args.quick else (30, 3, 5)
    args.steps = steps if args.steps is None else args.steps
    args.warmup = warmup if args.warmup is None else args.warmup
    args.rounds = min(rounds if args.rounds is None else args.rounds, args.steps)
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; print the table (or JSON) and return the JSON payload."""
    args = parse_args(argv)
    machine = machine_info()
    log(
        f"threads: torch {machine['torch_threads']} (interop "
        f"{machine['torch_interop_threads']}), XLA:CPU its own pool over "
        f"{machine['cores_available']} available cores; jax {machine['jax']}, "
        f"torch {machine['torch']}, transformers {machine['transformers']}"
    )
    batches = {"tiny": args.batch_tiny, "small": args.batch_small}
    results = [
        bench_config(
            name, batches.get(name, args.batch), args.steps, args.warmup, args.rounds, args.seed
        )
        for name in args.configs
    ]
    payload = {
        "machine": machine,
        "settings": {
            "steps": args.steps,
            "warmup": args.warmup,
            "rounds": args.rounds,
            "seed": args.seed,
            "quick": args.quick,
            "jax_lr": 1.0 / WARMUP_STEPS**0.5,
            "torch_lr": TORCH_LR,
        },
        "results": results,
    }
    emit(payload, format_table(results), as_json=args.json, out=args.out)
    return payload
