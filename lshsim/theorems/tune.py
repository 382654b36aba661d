"""The claim on ``lshsim tune``: the tuned scheme meets its constraints exactly.

* **B.tn1** (exact): in the threshold form the reported false positives and negatives are the
  conditional probabilities ``int_0^t P_{k,L} / t`` and ``int_t^1 (1 - P_{k,L}) / (1 - t)``
  (checked against adaptive quadrature of ``1 - (1 - p^k)^L``), and the optimum is the
  minimum of ``w_fp FP + w_fn FN`` over every ``k L <= budget`` computed that independent
  way; in the sensitivity form the optimum's recall and false positives, recomputed from
  ``lshsim theory``'s law, meet the targets and one table fewer misses the recall.

The mutation is datasketch's: the rates as unnormalised areas (its issue #129), under which
the reported rates are no longer probabilities and the check fails. Property test:
``tests/theorems/test_claims_tune.py``; the statement in ``proofs/tune.md``.
"""

from __future__ import annotations

from collections.abc import Callable

from scipy.integrate import quad

from lshsim import theory
from lshsim.hashing import CrossPolytope, MinHash, SimHash
from lshsim.theorems.claim_types import EXACT_RESIDUALS, Claim, Mutation, replacing
from lshsim.theory.amplification import amplified
from lshsim.tune import tune

__all__ = ["CLAIMS", "TN1_SENSITIVITY", "TN1_THRESHOLD"]

#: threshold-form cases: (threshold, budget, (w_fp, w_fn)) of min-hash
TN1_THRESHOLD = (
    (0.3, 32, (0.5, 0.5)),
    (0.5, 48, (0.5, 0.5)),
    (0.8, 48, (0.2, 0.8)),
    (0.9, 64, (0.5, 0.5)),
)
#: sensitivity-form cases: (family, n, near, far, recall, false_positive)
TN1_SENSITIVITY = (
    (MinHash.name, None, 0.8, 0.4, 0.95, 0.01),
    (SimHash.name, 2, 0.9, 0.5, 0.9, 0.001),
    (CrossPolytope.name, 8, 0.85, 0.4, 0.9, 0.01),
)
#: relative agreement of the reported rates with adaptive quadrature
TN1_TOL = 1e-9


def _areas(threshold: float, k: int, big_l: int) -> tuple[float, float]:
    """FP and FN of ``(k, L)`` by scipy's adaptive quadrature, normalised."""
    fp = quad(lambda s: amplified(s, k, big_l), 0.0, threshold, epsabs=1e-14, epsrel=1e-12)
    fn = quad(lambda s: 1 - amplified(s, k, big_l), threshold, 1.0, epsabs=1e-14, epsrel=1e-12)
    return fp[0] / threshold, fn[0] / (1.0 - threshold)


def _threshold_case(threshold: float, budget: int, weights) -> dict:
    got = tune(MinHash.name, threshold=threshold, budget=budget, weights=weights)
    best = got.best
    fp, fn = _areas(threshold, best.k, best.L)
    errors = [
        (weights[0] * a + weights[1] * b, k, big_l)
        for k in range(1, budget + 1)
        for big_l in range(1, budget // k + 1)
        for a, b in [_areas(threshold, k, big_l)]
    ]
    lowest = min(errors)
    residual = max(
        abs(best.false_positive - fp) / max(fp, 1e-300),
        abs(best.false_negative - fn) / max(fn, 1e-300),
    )
    reported = weights[0] * best.false_positive + weights[1] * best.false_negative
    return {
        "threshold": threshold,
        "budget": budget,
        "(k, L)": [best.k, best.L],
        "max relative residual of FP, FN": residual,
        "objective - brute-force minimum": reported - lowest[0],
        "holds": bool(residual <= TN1_TOL and reported <= lowest[0] * (1 + TN1_TOL)),
    }


def _sensitivity_case(family, n, near, far, recall, false_positive) -> dict:
    got = tune(family, buckets=n, near=near, far=far, recall=recall, false_positive=false_positive)
    best = got.best
    if n is None:  # min-hash: one value agrees with probability J
        p1, p2 = near, far
    else:
        p1, p2 = theory.probability(family, n, near), theory.probability(family, n, far)
    r, fp = amplified(p1, best.k, best.L), amplified(p2, best.k, best.L)
    short = amplified(p1, best.k, best.L - 1) if best.L > 1 else 0.0
    return {
        "family": family,
        "(k, L)": [best.k, best.L],
        "recall": r,
        "false_positive": fp,
        "recall with L - 1": short,
        "holds": bool(
            r >= recall
            and fp <= false_positive
            and short < recall
            and abs(r - best.recall) <= TN1_TOL * r
        ),
    }


def _tn1(threshold_cases, sensitivity_cases) -> tuple[bool, dict]:
    rows = [_threshold_case(*c) for c in threshold_cases]
    rows += [_sensitivity_case(*c) for c in sensitivity_cases]
    return all(r["holds"] for r in rows), {"cases": rows, "tolerance": TN1_TOL}


def check_tn1() -> tuple[bool, dict]:
    """B.tn1 on every case."""
    return _tn1(TN1_THRESHOLD, TN1_SENSITIVITY)


def quick_tn1() -> tuple[bool, dict]:
    """B.tn1 on the smallest threshold case and every sensitivity case."""
    return _tn1(TN1_THRESHOLD[:1], TN1_SENSITIVITY)


def _area(original: Callable) -> Callable:
    def normalise(area, mass):
        return area  # datasketch's area, never divided by the side's mass

    return normalise


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "B.tn1",
        "lshsim tune: the tuned scheme meets its constraints exactly",
        " ".join(
            f"""Threshold form (min-hash, uniform similarities, t in {{0.3, 0.5, 0.8, 0.9}},
            budgets 32 to 64): the reported FP and FN of the optimum equal int_0^t P_kL(s) ds /
            t and int_t^1 (1 - P_kL(s)) ds / (1 - t), P_kL = 1 - (1 - s^k)^L, to {TN1_TOL:g}
            relative, and its objective w_fp FP + w_fn FN is the minimum over every k L <=
            budget; sensitivity form (minhash, simhash n = 2, crosspolytope n = 8): the
            optimum's recall and false positives, from the exact law, meet the targets, and
            L - 1 tables miss the recall. Exact.""".split()
        ),
        "tests/theorems/test_claims_tune.py::test_tn1",
        check_tn1,
        Mutation(
            "tune-unnormalised-area",
            "the rates are datasketch's unnormalised areas, not probabilities (issue #129).",
            replacing("lshsim.tune.prior.normalise", _area),
        ),
        quick_tn1,
        kinds={"": EXACT_RESIDUALS},
    ),
)
