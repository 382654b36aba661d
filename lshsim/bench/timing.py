"""Timing and result rows shared by the benchmarks of :mod:`lshsim.bench`.

Every comparison of :mod:`lshsim.bench.peers` is timed *in the same run*, interleaved:
round ``r`` calls each contender once, in an order that rotates every round, so the noise of
a shared machine (other jobs, frequency changes) hits every contender alike. The statistic is
the median over rounds, and a result is a ratio of medians, never an absolute time.

Each timed call follows an untimed call of the same contender (``paired``), so that it meets
the machine as that contender leaves it, not as its neighbour does: a thread pool that
busy-waits after its work (GNU OpenMP's default spin in PyTorch and FAISS, OpenBLAS's idle
loop) keeps a core for milliseconds after the call returns. Measured on the 2-core machine:
after XLM's torch product-key top-k (n = 128^2, k = 8), its OpenMP worker burnt about 5 ms of
CPU, and our top-k timed right after took 5.75 ms against 4.1 ms after its own call; torch's
time was the same either way (7.0 ms).

A case returns one or more rows made by :func:`row`; ``meets`` is computed here from the
ratio and the goal (and any extra named ``checks``), never set by hand. The train-step
benchmarks (:mod:`lshsim.bench.t5_step`, :mod:`lshsim.bench.memory_step`) time single steps
with :func:`timed` and summarise them with :func:`summary`, the statistic of
:func:`interleaved`.
"""

from __future__ import annotations

import gc
import operator
import time
from collections.abc import Callable
from typing import Any

import numpy as np

_OPS = {">=": operator.ge, "<=": operator.le}


def summary(times: list[float]) -> dict[str, float]:
    """Median, interquartile range and minimum of a list of times.

    Args:
        times: seconds, one per timed call.

    Returns:
        ``{"median", "iqr", "min"}`` in the same unit.
    """
    q25, q50, q75 = np.percentile(times, [25, 50, 75])
    return {"median": float(q50), "iqr": float(q75 - q25), "min": float(min(times))}


def timed(step: Callable[[], Any]) -> tuple[float, float]:
    """Wall and process-CPU seconds of one call of ``step``.

    Args:
        step: a zero-argument callable that returns when its work is done.

    Returns:
        ``(wall_seconds, cpu_seconds)``.
    """
    c0, t0 = time.process_time(), time.perf_counter()
    step()
    return time.perf_counter() - t0, time.process_time() - c0


def interleaved(
    fns: dict[str, Callable[[], Any]],
    *,
    rounds: int,
    warmup: int = 1,
    number: int = 1,
    paired: bool = True,
) -> dict[str, dict[str, Any]]:
    """Time several callables side by side.

    Args:
        fns: name -> zero-argument callable doing one unit of work.
        rounds: timed rounds; every round calls each callable ``number`` times.
        warmup: untimed rounds first (JIT compilation, caches, thread pools).
        number: calls per timing (for sub-millisecond work); the time is per call.
        paired: precede each timing by one untimed call of the same callable (see the
            module's docstring); off only where calls last seconds (the sweeps, datasketch),
            so that a neighbour's milliseconds do not matter.

    Returns:
        name -> ``{"median", "iqr", "min", "times"}`` in seconds per call.
    """
    if rounds < 1 or number < 1 or warmup < 0:
        raise ValueError("rounds and number must be >= 1 and warmup >= 0")
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection inside one contender's timing is noise
    try:
        for r in range(rounds):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                fn = fns[name]
                if paired:
                    fn()
                t0 = time.perf_counter()
                for _ in range(number):
                    fn()
                times[name].append((time.perf_counter() - t0) / number)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: {**summary(ts), "times": [float(t) for t in ts]} for name, ts in times.items()}


def row(
    name: str,
    *,
    ratio: float,
    goal: float,
    op: str,
    measure: str,
    ours: str,
    peer: str,
    ours_s: float | None,
    peer_s: float | None,
    checks: dict[str, bool] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One result row; ``meets`` = ``ratio op goal`` and every entry of ``checks``.

    Args:
        name: the hot path and its sizes, e.g. ``"simhash m=65536 d=512 k=16 vs FAISS"``.
        ratio: the measured ratio (see ``measure``).
        goal: the threshold for ``ratio``.
        op: ``">="`` (a speed-up to reach) or ``"<="`` (a time ratio to stay under).
        measure: what ``ratio`` is, e.g. ``"peer time / our time"``.
        ours: what was timed on our side.
        peer: what it was compared with.
        ours_s: our median seconds per call (None where not a timing).
        peer_s: the peer's median seconds per call.
        checks: extra conditions of the goal (e.g. results agree, O(m) memory).
        **extra: more fields for the JSON (sizes, IQRs, errors).

    Returns:
        The row: these fields, ``goal`` as text (e.g. ``">= 1"``), ``goal_value``,
        ``goal_op`` and ``meets``.
    """
    if op not in _OPS:
        raise ValueError(f"op must be '>=' or '<=', got {op!r}")
    checks = dict(checks or {})
    meets = bool(_OPS[op](ratio, goal)) and all(checks.values())
    return {
        "name": name,
        "ratio": float(ratio),
        "goal": f"{op} {goal:g}",
        "goal_value": float(goal),
        "goal_op": op,
        "meets": meets,
        "measure": measure,
        "ours": ours,
        "peer": peer,
        "ours_s": ours_s,
        "peer_s": peer_s,
        "checks": checks,
        **extra,
    }


def speedup_row(
    name: str,
    timings: dict[str, dict[str, Any]],
    ours_key: str,
    peer_key: str,
    *,
    goal: float,
    ours: str,
    peer: str,
    checks: dict[str, bool] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A row whose ratio is ``peer median / our median`` (>= goal to meet it).

    Args:
        name: the hot path and its sizes.
        timings: the result of :func:`interleaved`.
        ours_key: our entry of ``timings``.
        peer_key: the peer's entry of ``timings``.
        goal: the speed-up to reach.
        ours: what was timed on our side.
        peer: what it was compared with.
        checks: extra conditions of the goal.
        **extra: more fields for the JSON.

    Returns:
        A :func:`row` with both medians and IQRs.
    """
    ours_s = timings[ours_key]["median"]
    peer_s = timings[peer_key]["median"]
    return row(
        name,
        ratio=peer_s / ours_s,
        goal=goal,
        op=">=",
        measure="peer time / our time",
        ours=ours,
        peer=peer,
        ours_s=ours_s,
        peer_s=peer_s,
        checks=checks,
        ours_iqr_s=timings[ours_key]["iqr"],
        peer_iqr_s=timings[peer_key]["iqr"],
        **extra,
    )
