"""Slot usage of a memory table, as memory-layer papers report it (pure NumPy).

Given the slots a lookup selected out of a table of ``n`` (each selection counted once) and,
optionally, the weight each selection got (the softmax score of a router or of PKM's top-k),
two distributions over the slots: ``p_u`` (selection counts, normalised) and ``p_w`` (summed
weights, normalised; ``p_w = p_u`` when every weight is 1). The metrics, XLM's names in
brackets (``evaluation/evaluator.py``, ``eval_memory_usage``):

* ``used``: the fraction of the ``n`` slots selected at least once (``mem_used``, which XLM
  prints in percent and counts on ``p_w != 0``: the same set for positive weights);
* ``kl_uniform`` / ``kl_uniform_w``: ``KL(p || uniform) = log n + sum_i p_i log p_i`` (nats)
  of ``p_u`` / ``p_w`` (``mem_kl_u`` / ``mem_kl_w``): 0 for even use, ``log n`` for one slot;
* ``gini`` / ``gini_w``: the **standard** Gini coefficient of ``p_u`` / ``p_w`` over all
  ``n`` slots (unused ones included), ``sum_i sum_j |p_i - p_j| / (2 n)``
  ``= 2 sum_i i p_(i) / n - (n + 1)/n`` with ``p_(1) <= ... <= p_(n)``: 0 for even use,
  ``(n - 1)/n`` for one slot;
* ``gini_xlm`` / ``gini_xlm_w``: **XLM's** Gini (``mem_gini_u`` / ``mem_gini_w``),
  ``1 - 2 mean_k L_k`` with ``L_k = p_(1) + ... + p_(k)`` the Lorenz curve at ``k/n``. The
  standard coefficient is one minus twice the trapezoid area under the Lorenz curve,
  ``1 - (2/n) (sum_k L_k - 1/2)``, so ``gini_xlm = gini - 1/n`` exactly: ``-1/n`` for even
  use, ``(n - 2)/n`` for one slot;
* ``top50``, ``top90``, ``top99`` (and ``_w``): XLM's ``tops``, ``n - searchsorted(L, t)``
  for ``t = 0.5, 0.1, 0.01`` (``searchsorted`` on the left): the number of slots, largest
  first, that hold at least 50 / 90 / 99% of the mass, counted as XLM counts them (a slot
  whose cumulative mass from below equals ``t`` exactly is counted among the top ones: 4 even
  slots give ``top50 = 3``);
* ``effective``: ``exp`` of the entropy of ``p_u`` (the probe's effective bucket count).

References:
    Lample et al. 2019, "Large Memory Layers with Product Keys", section 4.5 (memory usage,
    KL to uniform) and facebookresearch/XLM ``xlm/evaluation/evaluator.py`` (``kl_score``,
    ``gini_score``, ``tops``, ``eval_memory_usage``); Gini 1912.
"""

from __future__ import annotations

import numpy as np

from lshsim._validate import check_int

#: the mass fractions left below XLM's top-50/90/99 counts (``tops``)
TOP_TAILS = {"top50": 0.5, "top90": 0.1, "top99": 0.01}
#: the keys of :func:`usage_metrics`
USAGE_KEYS = (
    "used",
    "kl_uniform",
    "kl_uniform_w",
    "gini",
    "gini_w",
    "gini_xlm",
    "gini_xlm_w",
    *TOP_TAILS,
    *(k + "_w" for k in TOP_TAILS),
    "effective",
)


def slot_counts(slots, n: int, weights=None) -> np.ndarray:
    """``[n]``: how often each slot occurs in ``slots``, or the sum of its ``weights``.

    Args:
        slots: ids in ``[0, n)``, any shape.
        n: the table size.
        weights: ``None`` (int64 counts), or one finite weight >= 0 per id (float64 sums).

    Raises:
        ValueError: ``n < 1``, an id outside ``[0, n)``, or weights of another shape,
            negative or not finite.
    """
    n = check_int("n (slots)", n, 1)
    ids = np.asarray(slots, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise ValueError(f"slots: ids must lie in [0, {n}), got [{ids.min()}, {ids.max()}]")
    if weights is None:
        return np.bincount(ids.ravel(), minlength=n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != ids.shape:
        raise ValueError(f"weights: need the shape of slots {ids.shape}, got {w.shape}")
    if w.size and not (np.all(np.isfinite(w)) and w.min() >= 0):
        raise ValueError("weights: need finite values >= 0")
    return np.bincount(ids.ravel(), weights=w.ravel(), minlength=n)


def gini(counts) -> float:
    """Standard Gini coefficient of non-negative ``counts`` (0 when they sum to 0).

    Computed as ``2 sum_i i c_(i) / (n sum c) - (n + 1)/n`` with ``c_(1) <= ... <= c_(n)``,
    equal to the mean-difference form of the module docstring.
    """
    c = np.sort(np.asarray(counts, dtype=np.float64).ravel())
    n, total = c.size, c.sum()
    if n == 0 or total == 0:
        return 0.0
    ranks = np.arange(1, n + 1)
    return float(2 * np.sum(ranks * c) / (n * total) - (n + 1) / n)


def gini_xlm(counts) -> float:
    """XLM's Gini of non-negative ``counts``: ``1 - 2 mean(cumsum(sort(p)))`` = :func:`gini` - 1/n.

    0 when they sum to 0 (XLM divides by zero there).
    """
    c = np.asarray(counts, dtype=np.float64).ravel()
    if c.size == 0 or c.sum() == 0:
        return 0.0
    return float(1 - 2 * np.cumsum(np.sort(c / c.sum())).mean())


def kl_uniform(counts) -> float:
    """``KL(p || uniform)`` in nats of ``p = counts / sum`` (0 when they sum to 0)."""
    c = np.asarray(counts, dtype=np.float64).ravel()
    total = c.sum()
    if c.size == 0 or total == 0:
        return 0.0
    p = c[c > 0] / total
    return float(np.log(c.size) + np.sum(p * np.log(p)))


def top_counts(counts) -> dict[str, int]:
    """XLM's ``tops``: ``{"top50", "top90", "top99"}`` slot counts of ``p = counts / sum``.

    ``n - searchsorted(cumsum(sort(p)), t)`` for the tails ``t`` of :data:`TOP_TAILS`
    (0 for all when the counts sum to 0).
    """
    c = np.asarray(counts, dtype=np.float64).ravel()
    total = c.sum()
    if c.size == 0 or total == 0:
        return dict.fromkeys(TOP_TAILS, 0)
    lorenz = np.cumsum(np.sort(c / total))
    at = np.searchsorted(lorenz, list(TOP_TAILS.values()))
    return {k: int(c.size - i) for k, i in zip(TOP_TAILS, at, strict=True)}


def usage_metrics(slots, n: int, weights=None) -> dict[str, float]:
    """The usage metrics (keys :data:`USAGE_KEYS`) of the selections ``slots`` of ``n``.

    Args:
        slots: selected slot ids (any shape; top-k selections flattened, each counted once).
        n: the table size.
        weights: the selections' weights (same shape; ``None``: all 1, so every ``_w``
            metric equals its unweighted one).

    Returns:
        The metrics of the module docstring (floats; the top counts are whole numbers); all
        0 when ``slots`` is empty (or the weights sum to 0, for the ``_w`` ones).
    """
    counts = slot_counts(slots, n)
    scores = counts if weights is None else slot_counts(slots, n, weights)
    total = counts.sum()
    if total == 0:
        return dict.fromkeys(USAGE_KEYS, 0.0)
    p = counts[counts > 0] / total
    entropy = float(-np.sum(p * np.log(p)))
    out = {
        "used": float(np.count_nonzero(counts) / n),
        "kl_uniform": kl_uniform(counts),
        "kl_uniform_w": kl_uniform(scores),
        "gini": gini(counts),
        "gini_w": gini(scores),
        "gini_xlm": gini_xlm(counts),
        "gini_xlm_w": gini_xlm(scores),
    }
    for suffix, c in (("", counts), ("_w", scores)):
        out.update({k + suffix: float(v) for k, v in top_counts(c).items()})
    out["effective"] = float(np.exp(entropy))
    return {k: out[k] for k in USAGE_KEYS}


def split_record(rec) -> tuple:
    """``(ids, vectors, weights or None)`` of a probe record (``(ids, vectors[, weights])``)."""
    ids, vectors, *rest = rec
    return ids, vectors, (rest[0] if rest else None)


def pair_weights(wa, wb, ids_a, ids_b):
    """The weights of ``concat(ids_a, ids_b)`` (``None`` when neither record has any)."""
    if wa is None and wb is None:
        return None
    wa = np.ones(np.shape(ids_a)) if wa is None else np.asarray(wa, np.float64)
    wb = np.ones(np.shape(ids_b)) if wb is None else np.asarray(wb, np.float64)
    return np.concatenate([wa.ravel(), wb.ravel()])
