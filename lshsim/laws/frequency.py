"""Frequency-aware collisions: how much of a corpus's mass shares a bucket with another key.

A corpus is a stream of keys (tokens, or the ``N``-token windows of hashed n-grams) with
``D`` distinct keys of occurrence counts ``f_1, ..., f_D`` (the frequency spectrum),
``F = sum_i f_i``. A table of ``H`` heads hashes every key into each head ``h``'s ``m_h``
buckets. The quantity is the **occurrence-weighted collision share**

    ``S_h = sum_i f_i C_i^h / F``,  ``C_i^h = 1{some other distinct key has i's bucket in h}``,

the share of the corpus's occurrences whose bucket also holds another distinct key; over the
heads, **all** heads (``prod_h C_i^h``: the key has no clean row anywhere) and **any** head
(``1 - prod_h (1 - C_i^h)``: at least one of its rows is shared). Restricting the sum to a set
of keys (a frequency band) gives the band's share.

The exact law under ideal hashing (every distinct key's bucket uniform on ``[0, m_h)``,
independent across keys and heads; ``proofs/frequency.md`` derives it):

* ``P(C_i^h = 0) = a_h = (1 - 1/m_h)^(D-1)`` for every key, so ``E S_h = 1 - a_h``, the
  same for every band: the mean share does not depend on the frequencies, only on ``D``;
* all heads: ``E = prod_h (1 - a_h)``; any head: ``E = 1 - prod_h a_h``;
* the spread over hash draws does depend on them: for two distinct keys
  ``P(C_i^h = 0, C_j^h = 0) = b_h = (1 - 1/m_h)(1 - 2/m_h)^(D-2)``, and with the event's
  single-key probability ``mu`` and pair probability ``nu = E[C_i C_j]``,
  ``Var S = (Q mu (1 - mu) + (W^2 - Q)(nu - mu^2)) / W^2``, ``W = sum f_i``,
  ``Q = sum f_i^2`` over the keys summed (``nu``: per head ``1 - 2 a_h + b_h``; all heads
  ``prod_h (1 - 2 a_h + b_h)``; any head ``1 - 2 prod_h a_h + prod_h b_h``).
  A Zipfian corpus concentrates ``Q``: the most frequent keys either collide or not, and one
  hash draw's share moves by their mass.

The measured share (:func:`measured_shares`) takes the real buckets of each distinct key.

References:
    Knuth, TAOCP vol. 3, 6.4 (uniform hashing: the chance a given key shares its slot);
    X. Cheng et al. (DeepSeek), Engram, arXiv 2601.07372 (hashed n-gram tables sized against
    the n-gram spectrum); Meituan LongCat team 2026, "Scaling Embeddings Outperforms Scaling
    Experts in Language Models" (LongCat-Flash-Lite's n-gram table rules).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from lshsim._validate import check_int

#: the events over heads a share is reported for (besides each head)
OVER_HEADS = ("all", "any")
#: the default frequency bands: the top 1% of key types by count, the next 9%, the rest
BAND_EDGES = (0.01, 0.10)
#: the bands' names, in order
BAND_NAMES = ("top 1%", "next 9%", "rest")


def _pow1m(x: float, k: int) -> float:
    """``(1 - x)^k`` for ``x`` in ``[0, 1]``, ``k >= 0`` (``0^0 = 1``), accurate for small ``x``."""
    if k == 0:
        return 1.0
    if x >= 1.0:
        return 0.0
    return math.exp(k * math.log1p(-x))


def _check_sizes(sizes: Sequence[int]) -> list[int]:
    sizes = [check_int("table size (m)", m, 1) for m in np.atleast_1d(sizes).tolist()]
    if not sizes:
        raise ValueError("sizes: need at least one head's table size")
    return sizes


def spectrum(keys) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct keys, counts)`` of a stream of keys.

    Args:
        keys: ``[F]`` scalar keys, or ``[F, N]`` windows (one key per row).

    Returns:
        The distinct keys (sorted; ``[D]`` or ``[D, N]``) and their ``int64 [D]`` counts.
    """
    arr = np.asarray(keys)
    if arr.ndim not in (1, 2):
        raise ValueError(f"keys: need [F] or [F, N], got shape {arr.shape}")
    uniq, counts = np.unique(arr, axis=0 if arr.ndim == 2 else None, return_counts=True)
    return uniq, counts.astype(np.int64)


def windows(rows: Sequence[Sequence[int]], n: int, pad_id: int = 0) -> np.ndarray:
    """The ``n``-token windows ending at every position of every row, left-padded with ``pad_id``.

    Args:
        rows: token-id sequences (documents).
        n: the window length ``N >= 1``.
        pad_id: the id before a row's first token (as the model's n-gram lookup pads).

    Returns:
        ``int64 [sum len(row), n]``: row ``t`` of a document is ``(x_{t-n+1}, ..., x_t)``.
    """
    n = check_int("ngram (N)", n, 1)
    out = []
    for row in rows:
        r = np.asarray(row, dtype=np.int64)
        if r.size == 0:
            continue
        padded = np.concatenate([np.full(n - 1, pad_id, np.int64), r])
        out.append(np.lib.stride_tricks.sliding_window_view(padded, n))
    return np.concatenate(out) if out else np.zeros((0, n), np.int64)


def _moments(a: list[float], b: list[float]) -> dict[str, tuple[float, float]]:
    """``{event: (mu, nu)}``: single-key and distinct-pair probabilities of each event."""
    pair = [1 - 2 * ah + bh for ah, bh in zip(a, b, strict=True)]
    out = {f"head {h}": (1 - ah, pair[h]) for h, ah in enumerate(a)}
    out["all"] = (math.prod(1 - ah for ah in a), math.prod(pair))
    pa, pb = math.prod(a), math.prod(b)
    out["any"] = (1 - pa, 1 - 2 * pa + pb)
    return out


def collision_law(counts, sizes: Sequence[int], *, distinct: int | None = None) -> dict:
    """The exact mean and standard deviation of the collision shares under ideal hashing.

    Args:
        counts: the occurrence counts ``f_i >= 0`` of the keys whose share is wanted (all
            keys, or one band's).
        sizes: the heads' table sizes ``m_h >= 1``.
        distinct: ``D``, the number of distinct keys hashed into the table (default: the
            number of ``counts``; a band's share needs the whole corpus's ``D``).

    Returns:
        ``{event: {"mean", "sd"}}`` for ``"head h"`` (each head), ``"all"`` and ``"any"``
        (module docstring); ``sd`` over hash draws. With no occurrences, means and sds are 0.

    Raises:
        ValueError: a size < 1, negative counts, or ``distinct`` below the number of keys
            with a count.
    """
    f = np.asarray(counts, dtype=np.float64).ravel()
    if f.size and (not np.all(np.isfinite(f)) or f.min() < 0):
        raise ValueError("counts: need finite occurrence counts >= 0")
    sizes = _check_sizes(sizes)
    keys = int(np.count_nonzero(f))
    d = keys if distinct is None else check_int("distinct (D)", distinct, 0)
    if d < keys:
        raise ValueError(f"distinct: D = {d} is below the {keys} keys with a count")
    a = [_pow1m(1 / m, d - 1) if d else 1.0 for m in sizes]
    b = [(1 - 1 / m) * _pow1m(2 / m, d - 2) if d >= 2 else 1.0 for m in sizes]
    w, q = float(f.sum()), float(np.sum(f * f))
    out = {}
    for event, (mu, nu) in _moments(a, b).items():
        if w == 0:
            out[event] = {"mean": 0.0, "sd": 0.0}
            continue
        var = (q * mu * (1 - mu) + (w * w - q) * (nu - mu * mu)) / (w * w)
        out[event] = {"mean": mu, "sd": math.sqrt(max(var, 0.0))}
    return out


def share_for_mean(share: float, distinct: int) -> float:
    """The table size ``m`` at which one head's mean share is ``share``.

    Solves ``1 - (1 - 1/m)^(D-1) = share`` for a real ``m`` (``m ~ (D-1) / -log(1 - share)``
    for large ``D``).
    """
    if not 0 < share < 1:
        raise ValueError(f"share: must be in (0, 1), got {share}")
    d = check_int("distinct (D)", distinct, 2)
    return 1 / -math.expm1(math.log1p(-share) / (d - 1))


def measured_shares(counts, buckets) -> dict[str, float]:
    """The collision shares of real buckets: per head, all heads, any head.

    Args:
        counts: ``[D]`` occurrence counts of the distinct keys (0 for a key hashed but not
            counted, e.g. outside a band).
        buckets: ``[D]`` or ``[D, H]`` bucket ids of every distinct key in the table (all
            ``D`` keys: the occupancy counts every key).

    Returns:
        ``{"head h": share, "all": share, "any": share}`` (0 with no occurrences).
    """
    f = np.asarray(counts, dtype=np.float64).ravel()
    bk = np.asarray(buckets, dtype=np.int64)
    bk = bk[:, None] if bk.ndim == 1 else bk
    if bk.ndim != 2 or bk.shape[0] != f.size:
        raise ValueError(f"buckets: need [D] or [D, H] with D = {f.size}, got {np.shape(buckets)}")
    hit = collided(bk)
    total = f.sum()
    share = (lambda c: float(f @ c / total)) if total else (lambda c: 0.0)
    out = {f"head {h}": share(hit[:, h]) for h in range(bk.shape[1])}
    out["all"] = share(hit.all(axis=1))
    out["any"] = share(hit.any(axis=1))
    return out


def collided(buckets) -> np.ndarray:
    """``bool [D, H]``: whether another distinct key shares each key's bucket, per head."""
    bk = np.asarray(buckets, dtype=np.int64)
    bk = bk[:, None] if bk.ndim == 1 else bk
    out = np.empty(bk.shape, dtype=bool)
    for h in range(bk.shape[1]):
        _, inverse, occupancy = np.unique(bk[:, h], return_inverse=True, return_counts=True)
        out[:, h] = occupancy[inverse.ravel()] > 1
    return out


def frequency_bands(counts, edges: Sequence[float] = BAND_EDGES) -> np.ndarray:
    """``int [D]``: the band of each key type by its count (0: the most frequent).

    The types with a positive count are ranked by count, most frequent first (ties: the
    earlier index first); band ``k`` holds the ranks ``[ceil(e_{k-1} T), ceil(e_k T))`` of
    the ``T`` counted types (``e_{-1} = 0``), the last band the rest, and types with count 0
    (never seen) the last band. With the default edges: the top 1% of types, the next 9%, the
    rest.
    """
    f = np.asarray(counts, dtype=np.float64).ravel()
    edges = [float(e) for e in edges]
    if any(not 0 < e < 1 for e in edges) or edges != sorted(edges):
        raise ValueError(f"edges: need increasing fractions in (0, 1), got {edges}")
    seen = int(np.count_nonzero(f > 0))
    order = np.argsort(-f, kind="stable")
    rank = np.empty(f.size, dtype=np.int64)
    rank[order] = np.arange(f.size)
    cuts = np.array([math.ceil(e * seen) for e in edges], dtype=np.int64)
    band = np.searchsorted(cuts, rank, side="right")
    band[f <= 0] = len(edges)
    return band
