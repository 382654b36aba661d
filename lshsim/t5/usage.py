"""Slot usage of a memory table, as memory-layer papers report it (pure NumPy).

Given the slots a lookup selected (each selection counted once) out of a table of ``n``:

* ``used``: the fraction of the ``n`` slots selected at least once (XLM's "memory usage");
* ``kl_uniform``: ``KL(p || uniform) = sum_i p_i log(n p_i)`` (nats) of the selection
  frequencies ``p``: 0 for perfectly even use, ``log n`` when one slot takes everything;
* ``gini``: the Gini coefficient of the ``n`` counts (unused slots included):
  ``sum_i sum_j |c_i - c_j| / (2 n^2 mean(c))``: 0 for even use, ``(n - 1)/n`` for one slot;
* ``effective``: ``exp`` of the entropy of ``p`` (the probe's effective bucket count).

References:
    Lample et al. 2019, "Large Memory Layers with Product Keys", section 4.5 (memory usage,
    KL to uniform) and facebookresearch/XLM ``evaluation/evaluator.py``; Gini 1912.
"""

from __future__ import annotations

import numpy as np

from lshsim._validate import check_int


def slot_counts(slots, n: int) -> np.ndarray:
    """``int64 [n]``: how often each slot occurs in ``slots`` (any shape of ids in ``[0, n)``).

    Raises:
        ValueError: ``n < 1``, or an id outside ``[0, n)``.
    """
    n = check_int("n (slots)", n, 1)
    ids = np.asarray(slots, dtype=np.int64).ravel()
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise ValueError(f"slots: ids must lie in [0, {n}), got [{ids.min()}, {ids.max()}]")
    return np.bincount(ids, minlength=n)


def gini(counts) -> float:
    """Gini coefficient of non-negative ``counts`` (0 when they sum to 0).

    Computed as ``2 sum_i i c_(i) / (n sum c) - (n + 1)/n`` with ``c_(1) <= ... <= c_(n)``,
    equal to the mean-difference form of the module docstring.
    """
    c = np.sort(np.asarray(counts, dtype=np.float64).ravel())
    n, total = c.size, c.sum()
    if n == 0 or total == 0:
        return 0.0
    ranks = np.arange(1, n + 1)
    return float(2 * np.sum(ranks * c) / (n * total) - (n + 1) / n)


def usage_metrics(slots, n: int) -> dict[str, float]:
    """``{"used", "kl_uniform", "gini", "effective"}`` of the selections ``slots`` of ``n``.

    Args:
        slots: selected slot ids (any shape; top-k selections flattened, each counted once).
        n: the table size.

    Returns:
        The four metrics (module docstring); all 0 but ``effective`` (0 too) when ``slots``
        is empty.
    """
    counts = slot_counts(slots, n)
    total = counts.sum()
    if total == 0:
        return {"used": 0.0, "kl_uniform": 0.0, "gini": 0.0, "effective": 0.0}
    p = counts[counts > 0] / total
    entropy = float(-np.sum(p * np.log(p)))
    return {
        "used": float(np.count_nonzero(counts) / n),
        "kl_uniform": float(np.log(n) - entropy),
        "gini": gini(counts),
        "effective": float(np.exp(entropy)),
    }
