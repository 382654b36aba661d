"""The two tuning forms: a sensitivity target, and datasketch's weighted threshold form.

**Sensitivity form** (:func:`tune_sensitivity`): recall ``P_{k,L}(s1) >= R`` at the near
similarity and ``P_{k,L}(s2) <= P`` at the far one. For each ``k`` the recall grows with
``L``, and so do the false positives and the cost, so the only candidate with that ``k`` is
the smallest ``L`` meeting the recall; among those that keep the false positives, the optimum
minimises the query cost (or the tables, then the cost). The query cost is the project's
(:mod:`lshsim.theory.amplification`): ``L k c`` to hash the query (``c`` one function's
cost) plus one per far candidate, ``L N E[p2^k]`` for ``N`` far points (duplicates across
tables counted).

**Threshold form** (:func:`tune_threshold`): every ``(k, L)`` with ``k L <= budget`` (as
datasketch's ``_optimal_param`` tries every ``b r <= num_perm``), minimising
``w_fp FP + w_fn FN`` with FP and FN the *probabilities* of :mod:`lshsim.tune.prior`; ties go
to fewer functions, then fewer tables. The unused tail of the signature is reported.

Both return a :class:`Tuning`: the optimum and the Pareto front (non-dominated in cost,
recall and false positives; the sensitivity form's candidates are one per ``k``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import cached_property

import numpy as np

from lshsim._validate import check_float, check_int
from lshsim.tune.law import MAX_CONCAT, MAX_TABLES, Amplifier, amplified_law, banded_areas
from lshsim.tune.prior import Prior, conditional_mean, normalise

__all__ = [
    "Scheme",
    "Tuning",
    "pareto_front",
    "schemes_within",
    "tune_sensitivity",
    "tune_threshold",
]

#: The threshold form's largest budget (every ``k L <= budget`` is evaluated).
MAX_THRESHOLD_BUDGET = 4096


@dataclass(frozen=True)
class Scheme:
    """One ``(k, L)``: ``k`` functions per table (datasketch's ``r``), ``L`` tables (``b``).

    Attributes:
        k, L: the scheme.
        recall: ``P_{k,L}(s1)`` (sensitivity form) or ``1 - FN`` (threshold form).
        false_positive: ``P_{k,L}(s2)``, or FP of the threshold form.
        false_negative: ``1 - recall``.
        hash_functions: ``k L`` functions evaluated per query.
        hashing: ``k L c`` in the family's cost unit.
        candidates: expected far candidates per query (``L N E[p2^k]``; 0 in the threshold
            form, which has no far points).
        cost: ``hashing + candidates``.
    """

    k: int
    L: int
    recall: float
    false_positive: float
    false_negative: float
    hash_functions: int
    hashing: float
    candidates: float
    cost: float

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return asdict(self)


@dataclass(frozen=True)
class Tuning:
    """The answer: the optimum, the Pareto front and what was asked.

    Attributes:
        family, n, params: the family (``n`` None for min-hash).
        form: ``"sensitivity"`` or ``"threshold"``.
        similarity: what the similarities are (cosine, jaccard, overlap).
        best: the optimum.
        inputs: the targets and options asked (JSON-ready).
        cost_unit: the unit of ``hashing`` and ``cost``.
        candidates: every scheme searched, as arrays (``k``, ``L``, ``recall``,
            ``false_positive``, ``candidates``), from which :attr:`front` is drawn.
        notes: lines a reader needs (e.g. datasketch's ``b >= 2``).
    """

    family: str
    n: int | None
    params: dict
    form: str
    similarity: str
    best: Scheme
    inputs: dict
    cost_unit: str
    candidates: dict = field(repr=False)
    cost: float = 1.0
    notes: list[str] = field(default_factory=list)

    @cached_property
    def front(self) -> list[Scheme]:
        """The Pareto front of the candidates (computed when first asked), by cost."""
        c = self.candidates
        idx = pareto_front(_costs(c, self.cost), c["recall"], c["false_positive"])
        return [
            _scheme(
                c["k"][i],
                c["L"][i],
                c["recall"][i],
                c["false_positive"][i],
                self.cost,
                c["candidates"][i],
                c["false_negative"][i],
            )
            for i in idx
        ]

    def to_dict(self) -> dict:
        """One JSON object: ``best`` and ``front`` (schemes as dicts), the rest as given."""
        return {
            "family": self.family,
            "n": self.n,
            "params": self.params,
            "form": self.form,
            "similarity": self.similarity,
            "best": self.best.to_dict(),
            "front": [f.to_dict() for f in self.front],
            "inputs": self.inputs,
            "cost_unit": self.cost_unit,
            "notes": self.notes,
        }


def _costs(c: dict, unit: float) -> np.ndarray:
    return c["k"] * c["L"] * unit + c["candidates"]


def pareto_front(cost, recall, false_positive) -> np.ndarray:
    """Indices of the schemes no other beats in cost, recall and false positives at once.

    Args:
        cost: float array, one entry per scheme.
        recall: the schemes' recall.
        false_positive: their false positives.

    Returns:
        int indices, by increasing cost (ties: higher recall, then fewer false positives).
    """
    cost, recall, fp = (np.asarray(x, dtype=np.float64) for x in (cost, recall, false_positive))
    order = np.lexsort((fp, -recall, cost))
    keep: list[int] = []
    best_r = np.empty(0)
    best_fp = np.empty(0)
    for i in order:
        if not ((best_r >= recall[i]) & (best_fp <= fp[i])).any():
            keep.append(int(i))
            best_r = np.append(best_r, recall[i])
            best_fp = np.append(best_fp, fp[i])
    return np.array(keep, dtype=np.int64)


def _min_tables(values: np.ndarray, weights: np.ndarray, k: int, recall: float) -> int | None:
    """The smallest ``L <= MAX_TABLES`` with ``P_{k,L} >= recall`` at one similarity, or None."""

    def at(big_l: int) -> float:
        return float(amplified_law(values, weights, k, big_l)[0])

    if at(MAX_TABLES) < recall:
        return None
    if values.shape[1] == 1 and 0.0 < values[0, 0] < 1.0:  # one atom: the closed form
        guess = math.ceil(math.log1p(-recall) / math.log1p(-(values[0, 0] ** k)))
        lo = max(1, guess - 2)
    else:
        lo = 1
    if at(lo) >= recall:
        return lo if lo == 1 or at(lo - 1) < recall else _bisect(at, 1, lo, recall)
    return _bisect(at, lo, MAX_TABLES, recall)


def _bisect(at, lo: int, hi: int, recall: float) -> int:
    """The smallest ``L`` in ``(lo, hi]`` with ``at(L) >= recall`` (``at`` increasing)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid) >= recall:
            hi = mid
        else:
            lo = mid
    return hi


def _scheme(k, big_l, recall, fp, cost, candidates, fn=None) -> Scheme:
    """A :class:`Scheme`; ``fn`` where it was computed directly (``1 - recall`` cancels)."""
    hashing = k * big_l * cost
    return Scheme(
        k=int(k),
        L=int(big_l),
        recall=float(recall),
        false_positive=float(fp),
        false_negative=float(1.0 - recall if fn is None else fn),
        hash_functions=int(k * big_l),
        hashing=float(hashing),
        candidates=float(candidates),
        cost=float(hashing + candidates),
    )


def tune_sensitivity(
    amp: Amplifier,
    *,
    near: float,
    far: float,
    recall: float,
    false_positive: float,
    points: int = 10**6,
    budget: int | None = None,
    minimise: str = "cost",
) -> Tuning:
    """The cheapest ``(k, L)`` with recall ``>= R`` at ``near`` and ``<= P`` at ``far``.

    Args:
        amp: the family (:func:`lshsim.tune.law.make_amplifier`).
        near: ``s1``, the near pairs' similarity.
        far: ``s2 < s1``, the far pairs'.
        recall: ``R`` in ``(0, 1]``.
        false_positive: ``P`` in ``[0, 1)``.
        points: ``N`` far points per query, for the cost (``>= 0``).
        budget: at most this many functions ``k L`` (None: no limit).
        minimise: ``"cost"`` or ``"tables"`` (then the cost).

    Returns:
        The :class:`Tuning`.

    Raises:
        ValueError: bad input, or no scheme meets the targets (one line saying the nearest).
    """
    lo, hi = amp.bounds
    near = check_float("near", near, lo, hi)
    far = check_float("far", far, lo, hi)
    if far >= near:
        raise ValueError(f"far must be below near ({near:g}), got {far:g}")
    recall = check_float("recall", recall, 0.0, 1.0, lo_open=True)
    false_positive = check_float("false_positive", false_positive, 0.0, 1.0, hi_open=True)
    points = check_int("points", points, 0, 2**62)
    if budget is not None:
        budget = check_int("budget", budget, 1, MAX_TABLES)
    if minimise not in ("cost", "tables"):
        raise ValueError(f"minimise must be 'cost' or 'tables', got {minimise!r}")
    (v1, w1), (v2, w2) = amp.atoms([near]), amp.atoms([far])
    candidates: list[Scheme] = []
    for k in range(1, min(budget or MAX_CONCAT, MAX_CONCAT) + 1):
        big_l = _min_tables(v1, w1, k, recall)
        if big_l is None or (budget is not None and k * big_l > budget):
            break  # p1^k falls with k, so L and k L only grow from here
        got = float(amplified_law(v1, w1, k, big_l)[0])
        fp = float(amplified_law(v2, w2, k, big_l)[0])
        per_table = float((w2 * v2**k).sum())
        candidates.append(_scheme(k, big_l, got, fp, amp.cost, big_l * points * per_table))
    inputs = {
        "near": near,
        "far": far,
        "recall": recall,
        "false_positive": false_positive,
        "points": points,
        "budget": budget,
        "minimise": minimise,
    }
    feasible = [s for s in candidates if s.false_positive <= false_positive]
    if not feasible:
        raise ValueError(_infeasible(candidates, inputs))
    key = (lambda s: (s.cost, s.k)) if minimise == "cost" else (lambda s: (s.L, s.cost, s.k))
    best = min(feasible, key=key)
    names = ("k", "L", "recall", "false_positive", "false_negative", "candidates")
    arrays = {name: np.array([getattr(c, name) for c in candidates]) for name in names}
    return _tuning(amp, "sensitivity", best, inputs, arrays)


def _infeasible(candidates: list[Scheme], inputs: dict) -> str:
    within = f" within a budget of {inputs['budget']} functions" if inputs["budget"] else ""
    head = (
        f"no (k, L){within} reaches recall >= {inputs['recall']:g} at near = "
        f"{inputs['near']:g} with false_positive <= {inputs['false_positive']:g} at far = "
        f"{inputs['far']:g}"
    )
    if not candidates:
        return head + " (no k reaches the recall at all)"
    low = min(candidates, key=lambda s: s.false_positive)
    return head + f"; the lowest false_positive is {low.false_positive:.3g} at k={low.k}, L={low.L}"


def tune_threshold(
    amp: Amplifier,
    prior: Prior,
    *,
    weights: tuple[float, float] = (0.5, 0.5),
    budget: int = 128,
) -> Tuning:
    """The threshold form (datasketch's): minimise ``w_fp FP + w_fn FN`` over ``k L <= budget``.

    Args:
        amp: the family.
        prior: the similarity law split at the threshold (:mod:`lshsim.tune.prior`).
        weights: ``(w_fp, w_fn)``, each ``>= 0``, not both 0.
        budget: the signature length (datasketch's ``num_perm``), ``<= 4096``.

    Returns:
        The :class:`Tuning`; ``recall = 1 - FN`` and ``false_positive = FP`` as probabilities
        (a side with no pairs has rate 0).
    """
    budget = check_int("budget", budget, 1, MAX_THRESHOLD_BUDGET)
    if len(weights) != 2:
        raise ValueError(f"weights must be two numbers w_fp,w_fn, got {weights!r}")
    w_fp = check_float("weights (w_fp)", weights[0], 0.0, math.inf, hi_open=True)
    w_fn = check_float("weights (w_fn)", weights[1], 0.0, math.inf, hi_open=True)
    if w_fp == w_fn == 0:
        raise ValueError("weights: w_fp and w_fn cannot both be 0")
    ks, ls = schemes_within(budget)
    if prior.uniform == (0.0, 1.0) and amp.cls.law_is_similarity:  # 1 - (1 - s^k)^L
        t = prior.threshold
        below, above = banded_areas(t, ks, ls)
        fp = normalise(below, t) if t > 0 else np.zeros(ks.shape)  # P(0) = 0
        fn = normalise(above, 1.0 - t) if t < 1 else np.zeros(ks.shape)  # P(1) = 1
    else:
        fp = _side(amp, prior.below, prior.below_weights, ks, ls)
        fn = 1.0 - _side(amp, prior.above, prior.above_weights, ks, ls, empty=1.0)
    objective = w_fp * fp + w_fn * fn
    i = int(np.lexsort((ls, ks * ls, objective))[0])
    best = _scheme(ks[i], ls[i], 1.0 - fn[i], fp[i], amp.cost, 0.0, fn[i])
    inputs = {
        "threshold": prior.threshold,
        "weights": [w_fp, w_fn],
        "budget": budget,
        "similarities": prior.description,
        "unused": budget - best.hash_functions,
        "objective": float(objective[i]),
    }
    arrays = {
        "k": ks,
        "L": ls,
        "recall": 1.0 - fn,
        "false_positive": fp,
        "false_negative": fn,
        "candidates": np.zeros(ks.shape),
    }
    return _tuning(amp, "threshold", best, inputs, arrays)


def _tuning(amp: Amplifier, form: str, best: Scheme, inputs: dict, arrays: dict) -> Tuning:
    """The :class:`Tuning` of one form for the family ``amp``."""
    return Tuning(
        amp.family,
        amp.n,
        amp.params,
        form,
        amp.similarity,
        best,
        inputs,
        amp.cost_unit,
        arrays,
        amp.cost,
    )


def schemes_within(budget: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(k, L)`` with ``k L <= budget``, ``k`` major: int64 arrays ``k`` and ``L``."""
    k = np.arange(1, budget + 1)
    counts = budget // k
    ks = np.repeat(k, counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return ks, np.arange(ks.size) - starts + 1


def _side(amp, nodes, node_weights, ks, ls, empty: float = 0.0) -> np.ndarray:
    """``E[P_{k,L}(s)]`` over one side's nodes for every ``(k, L)`` (``empty`` with none)."""
    if nodes.size == 0:
        return np.full(ks.shape, empty)
    v, w = amp.atoms(nodes)
    out = np.empty(ks.shape)
    step = max(1, 2**22 // max(1, nodes.size * v.shape[1]))
    for i in range(0, ks.size, step):
        curve = amplified_law(v, w, ks[i : i + step], ls[i : i + step])
        out[i : i + step] = conditional_mean(curve, node_weights)
    return out
