"""T5 cases of :mod:`lshsim.bench.peers`: the train step against transformers, and AltUp.

* ``t5``: lshsim's jitted train step (forward, backward, Adafactor) against Hugging Face's
  ``T5ForConditionalGeneration`` on torch, same config, weights and batch, timed by
  :func:`lshsim.bench.t5_step.bench_config` (interleaved blocks of steps; the first losses
  must agree). Each row also carries the roofline: the step's model FLOPs (XLA's count,
  :func:`lshsim.t5.cost.flops_per_token`), the FLOP rate each framework reached, and the
  machine's SGEMM rate measured in the same run (a large float32 NumPy matmul). Since
  every framework's step time is at least FLOPs / SGEMM rate, ``sgemm / torch rate`` bounds
  the ratio any implementation could reach against torch on this machine.
* ``altup``: the AltUp K=2 step against the baseline step
  (:func:`lshsim.bench.memory_step.bench_config`), in two forms: ``collapsed`` (the K blocks
  are summed before cross-attention and the output layer, so only Algorithm 2's layer stack
  differs from the baseline) and ``wide`` (the paper's Table 3 model: cross-attention
  keys/values and the output layer read all ``K d`` features). The wide model does more FLOPs
  than the baseline by construction; its row reports XLA's FLOP ratio beside the time ratio.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from lshsim.bench.timing import row

#: Batches of the T5 comparison (:mod:`lshsim.bench.t5_step`'s defaults).
BATCH = {"tiny": 32, "small": 8}
#: (timed steps, untimed warm-up steps, alternated rounds) per config, full and quick.
STEPS = {
    False: {"tiny": (30, 3, 5), "small": (6, 1, 3)},
    True: {"tiny": (8, 1, 2), "small": (2, 1, 2)},
}
#: (steps per round, rounds) of the AltUp comparison, full and quick: short rounds, many of
#: them, so that a slow stretch of the shared machine hits every variant (4 rounds of 10
#: steps gave tiny's wide AltUp 1.20x in one full run and 1.02x in the next, FLOPs 1.15x)
ALTUP_STEPS = {False: {"tiny": (2, 24), "small": (1, 6)}, True: {"tiny": (1, 8)}}


def sgemm_rate(size: int = 2048, repeats: int = 5) -> float:
    """FLOP/s of a float32 ``size^3`` NumPy matmul (best of ``repeats``): the GEMM rate."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    best = np.inf
    for _ in range(repeats + 1):  # the first warms BLAS's threads
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * size**3 / best


def step_flops(name: str, batch: int) -> float:
    """XLA's FLOP count of one training step's forward and backward pass for ``name``."""
    from lshsim.bench.t5_step import lengths
    from lshsim.t5.configs import get_config
    from lshsim.t5.cost import flops_per_token

    cfg = get_config(name)
    length, targets = lengths(cfg)
    per_token = flops_per_token(cfg, input_length=length, target_length=targets)
    return per_token["train_flops_per_token"] * batch * (length + targets)


def t5_case(quick: bool) -> list[dict[str, Any]]:
    """Train step of tiny and small (quick: tiny and small, fewer steps) against transformers."""
    from lshsim.bench import t5_step

    rows = []
    peak = sgemm_rate()  # once, before the steps
    for name in ("tiny", "small"):
        steps, warmup, rounds = STEPS[quick][name]
        r = t5_step.bench_config(name, BATCH[name], steps, warmup, rounds, seed=0)
        flops = step_flops(name, BATCH[name])
        jax_rate = flops / r["jax_s_per_step"]
        torch_rate = flops / r["torch_s_per_step"]
        rows.append(
            row(
                f"T5 {name} train step, batch {r['batch']}, lengths "
                f"{r['input_length']}/{r['target_length']}, CPU",
                ratio=r["ratio"],
                goal=1.5,
                op=">=",
                measure="torch time / lshsim time",
                ours="lshsim jax.jit train step (Adafactor)",
                peer="transformers T5ForConditionalGeneration + HF Adafactor (torch CPU)",
                ours_s=r["jax_s_per_step"],
                peer_s=r["torch_s_per_step"],
                checks={"same_first_loss": r["loss_agrees"]},
                ours_iqr_s=r["jax_iqr_s"],
                peer_iqr_s=r["torch_iqr_s"],
                loss_rel_diff=r["loss_rel_diff"],
                step_gflop=flops / 1e9,
                jax_gflops=jax_rate / 1e9,
                torch_gflops=torch_rate / 1e9,
                sgemm_gflops=peak / 1e9,
                ratio_bound=peak / torch_rate,
                note=(
                    f"{flops / 1e9:.1f} GFLOP per step: lshsim {jax_rate / 1e9:.0f} GFLOP/s "
                    f"({jax_rate / peak:.0%} of the {peak / 1e9:.0f} GFLOP/s SGEMM rate), torch "
                    f"{torch_rate / 1e9:.0f} GFLOP/s ({torch_rate / peak:.0%}); at the SGEMM "
                    f"rate the ratio could reach at most {peak / torch_rate:.2f}"
                ),
            )
        )
    return rows


def altup_case(quick: bool) -> list[dict[str, Any]]:
    """AltUp K=2 against the baseline step: collapsed and wide (quick: tiny only)."""
    from lshsim.bench import memory_step

    variants = ["baseline", "altup K=2 collapsed", "altup K=2"]
    rows = []
    for name, (steps, rounds) in ALTUP_STEPS[quick].items():
        got = {
            r["variant"]: r
            for r in memory_step.bench_config(
                name, variants, BATCH[name], steps, warmup=1, rounds=rounds
            )
        }
        base = got["baseline"]
        for variant, label in (
            ("altup K=2 collapsed", "collapsed: output and cross-attention as the baseline"),
            ("altup K=2", "wide: the paper's Table 3 model"),
        ):
            r = got[variant]
            rows.append(
                row(
                    f"AltUp K=2 {name} train step ({label})",
                    ratio=r["ratio"],
                    goal=1.10,
                    op="<=",
                    measure="AltUp time / baseline time",
                    ours=f"lshsim {variant}",
                    peer="lshsim baseline T5 step, same batch",
                    ours_s=r["s_per_step"],
                    peer_s=base["s_per_step"],
                    ours_iqr_s=r["iqr"],
                    peer_iqr_s=base["iqr"],
                    flops_ratio=r["flops_ratio"],
                    note=(
                        f"XLA FLOP ratio {r['flops_ratio']:.3f}; time ratio / FLOP ratio "
                        f"{r['ratio'] / r['flops_ratio']:.3f}"
                    ),
                )
            )
    return rows


#: AltUp first: it is JAX only, and runs before torch (loaded by the t5 case) shares the process
#: (measured, quick: collapsed 1.24 after the t5 case, 1.05 on its own)
CASES = {"altup": altup_case, "t5": t5_case}
