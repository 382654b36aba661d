"""Checks of Theorem 1's ordering claims: Token-ID vs Softmax (f1), Softmax vs SimHash (f2).

Also :func:`tie_overlap` (``f_n``, where Token-ID and Softmax tie at ``n`` buckets) and
:func:`crossover` (``n*(f)``), used by the collision study. Each ``check_*`` takes ``quick``
(a smaller grid) and returns ``(holds, evidence)`` computed from :mod:`lshsim.theory`.
"""

from __future__ import annotations

import itertools
import math

from lshsim import theory

#: an upper bound of sup_n n f_n (which is 3 f_3 = 1.7023..., claim T1.f1)
TIE_CONSTANT = 1.71
#: from this n on, n f_n < ANALYTIC_C follows from the analytic bound (proofs/theorem1.md, T1.f1)
ANALYTIC_FROM = 20
ANALYTIC_C = 1.70


def tie_overlap(n: int) -> float:
    """``f_n``: the overlap in (0, 1) where Token-ID and Softmax tie, ``P_vor(n, f_n) = f_n``.

    Token-ID >= Softmax at ``n`` buckets exactly when ``f >= f_n`` (claim T1.f1).
    """
    from scipy.optimize import brentq

    n = int(n)

    def excess(f):
        return theory.probability("voronoi", n, f) - f

    lo, hi = 0.5 / n, min(1.0 - 1e-9, 2.0 / n)
    while excess(hi) > 0:  # the tie lies above 2/n only for tiny n
        hi = 0.5 * (hi + 1.0)
    # tolerance relative to the scale 1/n of the tie (an absolute 1e-12 is 6e-8 of f_n at 2^16)
    return brentq(excess, lo, hi, xtol=1e-12 * lo, rtol=1e-12)


def crossover(f: float) -> int:
    """``n*(f)``: the least ``n >= 2`` with ``P_vor(n, f) <= f`` (Token-ID >= Softmax).

    A bisection over ``n``: exact when ``P_vor(n, f)`` decreases in ``n`` (checked on a grid by
    T1.f1, not proven); ``n*(f) <= ceil(TIE_CONSTANT / f)`` holds either way.
    """
    if not 0.0 < f <= 1.0:
        raise ValueError(f"overlap (f) must be in (0, 1], got {f!r}")
    if theory.probability("voronoi", 2, f) <= f:
        return 2
    lo, hi = 2, 4
    while theory.probability("voronoi", hi, f) > f:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if theory.probability("voronoi", mid, f) > f:
            lo = mid
        else:
            hi = mid
    return hi


def analytic_margin(n: int, c: float) -> float:
    """``1 - c (1 - W1_max - c/n)`` with ``W1_max = 2 ln n/(n - 1) >= M_n^2/(n - 1)``.

    Negative means ``n h(c/n) < 0``, so ``n f_n < c`` (the proof of T1.f1).
    """
    return 1.0 - c * (1.0 - 2.0 * math.log(n) / (n - 1) - c / n)


#: T1.f1: P_vor(n, f) > P_vor(n + 1, f) is checked at consecutive n up to here, then on a
#: geometric grid, at each of these f
MONOTONE_CONSECUTIVE = 24
MONOTONE_GEOMETRIC = (24, 96, 384, 1536, 6144, 24576, 98304, 393216, 2**20)
MONOTONE_FS = (0.1, 0.5, 0.9)
CROSSOVER_FS = (0.5, 0.1, 0.01)


def _monotone(quick: bool) -> tuple[int, float]:
    """Violations of ``P_vor(n, f)`` decreasing along the grid, and the smallest relative step."""
    cons = range(2, 7 if quick else MONOTONE_CONSECUTIVE + 1)
    geo = MONOTONE_GEOMETRIC[::4] if quick else MONOTONE_GEOMETRIC
    violations, smallest = 0, math.inf
    for f in MONOTONE_FS[1:2] if quick else MONOTONE_FS:
        for grid in (cons, geo):
            logs = [theory.log_probability("voronoi", n, f, rtol=1e-12) for n in grid]
            for a, b in itertools.pairwise(logs):
                violations += b >= a
                smallest = min(smallest, a - b)
    return violations, smallest


def check_f1(quick: bool = False):
    """T1.f1: the tie f_n, sup n f_n = 3 f_3 < 1.71, n*(f), and P_vor decreasing in n."""
    p = theory.probability
    sup = 3 * tie_overlap(3)
    below, above = [], []
    ns = (2, 3, 4, 7, ANALYTIC_FROM - 1) if quick else range(2, ANALYTIC_FROM + 5)
    for n in ns:
        below.append(p("voronoi", n, 1.0 / n) - 1.0 / n)  # > 0: n f_n > 1
        if n != 3:
            above.append(p("voronoi", n, sup / n) - sup / n)  # < 0: n f_n < 3 f_3
    margins = [analytic_margin(n, ANALYTIC_C) for n in (ANALYTIC_FROM, 2**20)]
    near_one = p("voronoi", 2**20, 1.001 / 2**20) - 1.001 / 2**20  # < 0: n f_n < 1.001
    violations, step = _monotone(quick)
    cross = {}
    for f in CROSSOVER_FS[:1] if quick else CROSSOVER_FS:
        cross[f] = crossover(f)
    counter = p("voronoi", 3, 0.5)
    ok = min(below) > 0 and max(above) < 0 and ANALYTIC_C < sup < TIE_CONSTANT
    ok &= max(margins) < 0
    ok &= near_one < 0 and violations == 0 and counter > 0.5
    ok &= all(1 / f <= ns < 1 + sup / f for f, ns in cross.items())
    return ok, {
        "3 f_3 (sup n f_n)": sup,
        "bound": TIE_CONSTANT,
        "n of the quadrature part": list(ns),
        "min P(n, 1/n) - 1/n": min(below),
        "max P(n, 3f_3/n) - 3f_3/n, n != 3": max(above),
        f"analytic margin at n={ANALYTIC_FROM}, 2^20 (< 0: n f_n < {ANALYTIC_C})": margins,
        "P(2^20, 1.001/2^20) - 1.001/2^20 (< 0: n f_n < 1.001)": near_one,
        "P(n, f) decreasing in n: grid violations": violations,
        "smallest log P(n, f) - log P(n', f) on the grid": step,
        "n*(f)": {str(f): ns for f, ns in cross.items()},
        "counterexample P_vor(3, 0.5)": counter,
    }


F2_LOG2N = (2, 3, 5, 8, 12, 16, 20, 24)
F2_FS = (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99)
F2_NEGATIVE = (-0.99, -0.9, -0.6, -0.3, -0.1, -0.01)
F2_EQUAL_AT_2 = (-0.9, -0.3, 0.3, 0.8)


def _log_gap(n: int, a: float) -> float:
    return theory.log_probability("voronoi", n, a) - theory.log_probability("simhash", n, a)


def check_f2(quick: bool = False):
    """T1.f2: log P_vor - log P_sh > 0 for f in (0, 1), < 0 for a in (-1, 0); 0 at n = 2."""
    ks = F2_LOG2N[::3] if quick else F2_LOG2N
    fs, negs = (F2_FS[1::4], F2_NEGATIVE[1::3]) if quick else (F2_FS, F2_NEGATIVE)
    pos = [_log_gap(2**k, f) for k in ks for f in fs]
    neg = [_log_gap(2**k, a) for k in ks for a in negs]
    eq = [_log_gap(2, a) for a in F2_EQUAL_AT_2]
    ends = [_log_gap(2**k, f) for k in ks for f in (0.0, 1.0)]
    ok = min(pos) > 0 and max(neg) < 0 and max(map(abs, eq + ends)) < 1e-12
    return ok, {
        "log2 n": list(ks),
        "f in (0, 1)": list(fs),
        "min log P_vor - log P_sh, f in (0, 1)": min(pos),
        "negative cosines": list(negs),
        "max log P_vor - log P_sh, a < 0": max(neg),
        "n = 2: log P_vor - log P_sh at a": dict(zip(map(str, F2_EQUAL_AT_2), eq, strict=True)),
        "max |log P_vor - log P_sh| at f in {0, 1}": max(map(abs, ends)),
    }
