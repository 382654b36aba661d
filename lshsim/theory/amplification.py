"""Amplification and query cost: ``k`` concatenated hashes per table, ``L`` tables.

A table's key is ``k`` independent hash functions of one family concatenated, so a pair
collides in it with probability ``p^k``; with ``L`` independent tables a near pair (collision
probability ``p1``) is found with probability

    amplified(p1, k, L) = 1 - (1 - p1^k)^L,

and each of ``N`` far points (``p2``) is retrieved from a table with probability ``p2^k``.

**Cost model** (the unit is one inner product of length ``d``: ``d`` multiply-adds, i.e. ``2d``
flops). One hash function of each family costs:

* ``simhash`` with ``n = 2^b`` buckets: ``b = log2 n`` inner products (its ``b`` hyperplanes;
  ``k`` of them make a ``k log2 n``-bit code);
* ``pstable``: ``k`` (its directions; default ``log2 n``);
* ``voronoi`` (softmax top-1): ``n`` (one score per centre);
* ``crosspolytope``, ``gaussian-projection`` or ``orthogonal``: ``m = n/2`` (the rows of its
  ``m x d`` matrix);
* ``crosspolytope``, ``hadamard``: three rounds of ``D`` sign flips and a fast Walsh-Hadamard
  transform of ``D log2 D`` additions, ``D`` the next power of two ``>= max(d, m)``:
  ``3 D (log2 D + 1)`` flops, i.e. ``3 D (log2 D + 1) / (2d)`` inner products. It depends on
  ``d`` (give ``dim``), and it is the only construction whose cost grows as ``D log D`` rather
  than ``m d``.

Not counted: drawing the functions (done once), the argmax or sign extraction over the scores
(``O(n)`` comparisons, no multiplies) and the table look-ups. A query with ``L`` tables costs
``L k c`` inner products to hash (:func:`query_cost`), plus, in the equal-cost comparison
(:func:`best_scheme`), one inner product per far candidate retrieved: ``L N p2^k`` in
expectation (duplicates across tables counted, as a plain implementation scans them). The
best scheme at budget ``C`` maximises the recall over ``(n, k)`` with ``L = floor(C / (k c +
N p2^k))`` tables, which is how Andoni et al. (2015) compare families: at equal query cost, not
at equal bucket count.

References:
    P. Indyk, R. Motwani, STOC 1998 (the ``(k, L)`` scheme). A. Andoni, P. Indyk, T. Laarhoven,
    I. Razenshteyn, L. Schmidt, "Practical and optimal LSH for angular distance", NeurIPS 2015.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from lshsim._validate import check_float, check_int
from lshsim.hashing import CrossPolytope, NoLaw, family_names, get_family
from lshsim.theory.families import log_probability

__all__ = [
    "HADAMARD_ROUNDS",
    "Scheme",
    "amplified",
    "best_family_grid",
    "best_scheme",
    "hash_cost",
    "log_miss",
    "query_cost",
]

#: Rounds of signs + Walsh-Hadamard of the ``hadamard`` cross-polytope (the kernel's).
HADAMARD_ROUNDS = CrossPolytope.ROUNDS


def hash_cost(family: str, n: int, *, dim: int | None = None, **params) -> float:
    """Inner products of length ``d`` that one hash function of ``family`` costs (module doc).

    Asked of the family object (:meth:`HashFamily.hash_cost`).

    Args:
        family: a family with a cost in inner products (simhash, pstable, voronoi,
            crosspolytope).
        n: buckets.
        dim: the input dimension ``d``; needed for ``rotation="hadamard"`` only (and checked
            against ``n/2 <= d`` for ``rotation="orthogonal"`` when given).
        **params: the family's parameters (``rotation``, ``k``, ``w``).

    Returns:
        The cost in inner-product equivalents (a float: the Hadamard cost is fractional).

    Raises:
        ValueError: unknown family, bad parameters, or ``dim`` missing for hadamard.
        NoLaw: the family's cost is not counted in inner products.
    """
    cls = get_family(family)
    if not cls.has_law("hash_cost"):
        have = family_names(lambda c: c.has_law("hash_cost"))
        raise NoLaw(
            f"family must be one of {', '.join(have)} (the families with a cost in inner "
            f"products), got {family!r}"
        )
    p = cls.check_law("hash_cost", n, **params)
    return cls.hash_cost(p.pop("n"), dim, **p)


def _check_amplification(p: float, concat: int, tables: int) -> tuple[float, int, int]:
    p = check_float("p (collision probability)", p, 0.0, 1.0)
    return p, check_int("concat (k)", concat, 1, 2**20), check_int("tables (L)", tables, 1, 2**40)


def log_miss(p: float, concat: int, tables: int) -> float:
    """``ln (1 - p^k)^L``: the log of the probability that all ``L`` tables miss."""
    p, k, tables = _check_amplification(p, concat, tables)
    return tables * math.log1p(-(p**k)) if p < 1.0 else -math.inf


def amplified(p: float, concat: int, tables: int) -> float:
    """``1 - (1 - p^k)^L``: a pair of collision probability ``p`` meets in some table.

    Args:
        p: one hash function's collision probability, in ``[0, 1]``.
        concat: ``k >= 1`` hashes concatenated per table.
        tables: ``L >= 1`` independent tables.

    Returns:
        The amplified probability, computed as ``-expm1(L log1p(-p^k))`` (no cancellation).
    """
    return -math.expm1(log_miss(p, concat, tables))


def query_cost(
    family: str, n: int, concat: int, tables: int, *, dim: int | None = None, **params
) -> float:
    """Inner products to hash one query into ``L`` tables of ``k`` functions: ``L k c``."""
    k = check_int("concat (k)", concat, 1, 2**20)
    tables = check_int("tables (L)", tables, 1, 2**40)
    return tables * k * hash_cost(family, n, dim=dim, **params)


@dataclass(frozen=True)
class Scheme:
    """One ``(n, k, L)`` configuration of a family and what it achieves at its cost.

    Attributes:
        family, n, concat, tables: the family, buckets, ``k`` and ``L``.
        p1, p2: one function's collision probability at the near and the far cosine.
        log_miss: ``L ln(1 - p1^k)``; recall: ``1 - exp(log_miss)``.
        hashing: ``L k c`` inner products; candidates: ``L N p2^k`` expected far candidates.
    """

    family: str
    n: int
    concat: int
    tables: int
    p1: float
    p2: float
    log_miss: float
    recall: float
    hashing: float
    candidates: float

    @property
    def cost(self) -> float:
        """The query cost in inner products: hashing plus one per far candidate."""
        return self.hashing + self.candidates

    def to_dict(self) -> dict:
        """JSON-ready fields, the cost included."""
        return {**asdict(self), "cost": self.cost}


def _table(p1, p2, cost, budget, points, max_concat):
    """``log_miss`` and ``L`` over ``(n, k)`` for arrays ``p1, p2, cost`` indexed by ``n``."""
    k = np.arange(1, max_concat + 1)[None, :]
    with np.errstate(under="ignore", divide="ignore"):
        per_table = k * cost[:, None] + points * p2[:, None] ** k
        tables = np.floor(budget / per_table)
        miss = tables * np.log1p(-(p1[:, None] ** k))
    miss = np.where(tables >= 1, miss, 0.0)  # no table affordable: recall 0
    return miss, tables


def best_scheme(
    family: str,
    cosine: float,
    budget: float,
    *,
    buckets,
    points: int,
    far: float = 0.0,
    max_concat: int = 64,
    probabilities: dict | None = None,
    **params,
) -> Scheme | None:
    """The ``(n, k, L)`` of ``family`` with the highest recall at query cost ``<= budget``.

    Over ``n`` in ``buckets`` and ``k`` in ``1..max_concat``, ``L = floor(budget / (k c(n) +
    points p2(n)^k))``; ties keep the smallest ``n``, then ``k``.

    Args:
        family: a cosine family.
        cosine: the near pair's cosine ``a``.
        budget: inner products per query (> 0).
        buckets: the ``n`` values to search.
        points: ``N``, the number of far points in the data set.
        far: the far points' cosine ``a2`` to the query (default 0).
        max_concat: the largest ``k``.
        probabilities: optional ``{n: (p1, p2)}`` already computed (the grid reuses them).
        **params: the family's parameters.

    Returns:
        The best :class:`Scheme`, or None when no ``n`` affords a single table.
    """
    budget = check_float("budget", budget, 0.0, math.inf, lo_open=True, hi_open=True)
    points = check_int("points (N)", points, 0, 2**62)
    max_concat = check_int("max_concat", max_concat, 1, 4096)
    ns = [int(n) for n in buckets]
    if not ns:
        raise ValueError("buckets must name at least one n")
    if probabilities is None:
        probabilities = {
            n: (
                math.exp(log_probability(family, n, cosine, **params)),
                math.exp(log_probability(family, n, far, **params)),
            )
            for n in ns
        }
    p1 = np.array([probabilities[n][0] for n in ns])
    p2 = np.array([probabilities[n][1] for n in ns])
    cost = np.array([hash_cost(family, n, **params) for n in ns])
    miss, tables = _table(p1, p2, cost, budget, points, max_concat)
    if not (tables >= 1).any():
        return None
    i, j = np.unravel_index(np.argmin(np.where(tables >= 1, miss, np.inf)), miss.shape)
    big_l, k = int(tables[i, j]), int(j) + 1
    return Scheme(
        family=family,
        n=ns[i],
        concat=k,
        tables=big_l,
        p1=float(p1[i]),
        p2=float(p2[i]),
        log_miss=float(miss[i, j]),
        recall=float(-np.expm1(miss[i, j])),
        hashing=float(big_l * k * cost[i]),
        candidates=float(big_l * points * p2[i] ** k),
    )


def best_family_grid(
    cosines,
    budgets,
    *,
    buckets: dict,
    points: int,
    far: float = 0.0,
    max_concat: int = 64,
) -> dict:
    """The best family at equal query cost over a ``(cosine, budget)`` grid (JSON-ready).

    Args:
        cosines: the near pairs' cosines (rows of the grid).
        budgets: query budgets in inner products (columns).
        buckets: ``{family: (n, ...)}``, the families compared and the ``n`` each may use.
        points: ``N`` far points, as for :func:`best_scheme`.
        far: their cosine to the query.
        max_concat: the largest ``k``.

    Returns:
        The grid, a dict
        ``{"cosines", "budgets", "families", "winner": [[index]], "log_miss": {family:
        [[...]]}, "margin": [[...]], "schemes": {family: [[dict | None]]}}``; ``winner[i][j]``
        indexes ``families`` (the lowest ``log_miss``; ties keep the earlier family) and
        ``margin`` is the winner's ``log_miss`` over the runner-up's (>= 1; 1 is a tie; None
        where the runner-up affords no table). Every family runs with its default parameters.
    """
    cosines = [float(c) for c in cosines]
    budgets = [float(b) for b in budgets]
    families = list(buckets)
    miss = {f: np.zeros((len(cosines), len(budgets))) for f in families}
    schemes = {f: [[None] * len(budgets) for _ in cosines] for f in families}
    for family in families:
        ns = [int(n) for n in buckets[family]]
        log_far = {n: log_probability(family, n, far) for n in ns}
        for i, a in enumerate(cosines):
            probs = {n: (math.exp(log_probability(family, n, a)), math.exp(log_far[n])) for n in ns}
            for j, c in enumerate(budgets):
                s = best_scheme(
                    family,
                    a,
                    c,
                    buckets=ns,
                    points=points,
                    far=far,
                    max_concat=max_concat,
                    probabilities=probs,
                )
                if s is not None:
                    miss[family][i, j] = s.log_miss
                    schemes[family][i][j] = s.to_dict()
    stack = np.stack([miss[f] for f in families])  # (families, cosines, budgets)
    winner = np.argmin(stack, axis=0)
    ordered = np.sort(stack, axis=0)
    margin = [
        [float(w / r) if r < 0 else None for w, r in zip(row0, row1, strict=True)]
        for row0, row1 in zip(ordered[0], ordered[1], strict=True)
    ]
    return {
        "cosines": cosines,
        "budgets": budgets,
        "families": families,
        "points": points,
        "far": far,
        "winner": winner.tolist(),
        "margin": margin,
        "log_miss": {f: miss[f].tolist() for f in families},
        "schemes": schemes,
    }
