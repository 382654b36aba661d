"""Product keys' top-k (PKM): each half's top-``k`` by a tracked scan, then the ``k^2`` merge.

PKM (Lample et al. 2019) scores a query's two halves against ``s`` sub-keys each, takes each
half's top-``k``, and ranks the ``k^2`` sums ``s1_i + s2_j`` of those; the best ``k`` are the
slots ``i * s + j`` (why the candidates suffice: :mod:`lshsim.hashing.topk`). Each half's
top-``k`` is the plain scan's (:func:`~lshsim.hashing.topk.topk_row`), found by the tracked
scan: one pass keeps each of ``g`` groups' maximum, its position and its runner-up (the state
in vector registers, :mod:`lshsim.hashing.simd`), the top-``k`` of the maxima is ranked, and
only the groups whose runner-up reaches the ``k``-th are read again.

Note: Numba's cache keys a compiled function on its own source file, so the kernels here
must be recompiled by hand (their cache files deleted) after :mod:`lshsim.hashing.topk` or
:mod:`lshsim.hashing.simd` change.

References:
    G. Lample et al., "Large memory layers with product keys", NeurIPS 2019.
"""

from __future__ import annotations

import numba
import numpy as np

from lshsim.hashing.simd import fold_groups, lowest_bit, mask_at_least, rank_counts
from lshsim.hashing.topk import (
    insert_sorted,
    scratch,
    topk_groups,
    topk_row,
    topk_row_grouped,
)

__all__ = ["productkey_topk", "productkey_topk_rows", "tracked_groups"]

#: The tracked scan's vector kernels, one per group count (module globals: Numba freezes them).
_fold32, _fold64 = fold_groups[32], fold_groups[64]
_rank32, _rank64 = rank_counts[32], rank_counts[64]
_mask32, _mask64 = mask_at_least[32], mask_at_least[64]


def tracked_groups(c: int, k: int) -> int:
    """Groups of the tracked top-``k`` scan (:func:`_topk_row_tracked`) of ``c`` scores; 0: none.

    ``g = max(32, 2k)`` (a power of two) when at most 64 and ``c >= 4g``. Fewer groups mean
    more groups holding two of the best scores, so more rescans; the group maxima are ranked
    by counting, ``g^2`` comparisons, so more groups cost more there, and beyond 64 the
    choice is left to :func:`~lshsim.hashing.topk.topk_groups`. Measured with the vector
    kernels of :mod:`lshsim.hashing.simd` (4096 rows of product-key sub-key scores, one
    thread, ``k = 8``, ``c`` = 512 / 1024): 1.02 / 1.37 ms with 32 groups, 1.24 / 1.83 ms
    with 16, 1.49 / 1.73 ms with 64 (against 1.09 / 1.41 ms for 32 in that run). Before
    those kernels, ``k = 8``: 1.13 / 1.82 / 2.78 ms against the group filter's 2.03 / 2.94 /
    3.94 ms at ``c`` = 128 / 512 / 1024; ``k = 32``: 4.34 / 5.47 against 11.36 / 13.04 ms at
    ``c`` = 512 / 1024. For product keys' ``s`` up to a few
    thousand; the spherical families' rows (up to 16384 scores) keep the filter, whose
    rescans stay small where groups are long.

    Args:
        c: scores per row.
        k: the top-``k``.

    Returns:
        The group count, or 0 where the tracked scan is not used.
    """
    g = max(32, 1 << max(0, (2 * k - 1).bit_length()))
    return g if g <= 64 and 4 * g <= c else 0


@numba.njit(cache=True, nogil=True, inline="always")
def _group_maxima(row, gm, ga, g2):  # pragma: no cover - jit
    """One pass: each group's maximum ``gm``, its position ``ga`` and its runner-up ``g2``.

    Score ``j`` is in group ``j mod g``; a later score equal to the maximum is a runner-up
    (the position kept is the first). NaNs are never taken. ``gm`` is ``-inf`` for a group
    without a score above ``-inf`` (its ``ga`` is then meaningless). The whole blocks of
    ``g`` scores go through :data:`~lshsim.hashing.simd.fold_groups` (the state in vector
    registers), the last partial block through :func:`_fold_block`.
    """
    c = row.shape[0]
    g = gm.shape[0]
    gm[:] = -np.inf
    g2[:] = -np.inf
    ga[:] = 0
    full = c - c % g
    if g == 32:
        _fold32(row, gm, ga, g2, full)
    elif g == 64:
        _fold64(row, gm, ga, g2, full)
    else:
        raise ValueError("the tracked scan has kernels for 32 or 64 groups")
    _fold_block(row, full, c - full, gm, ga, g2)
    for t in range(g):
        ga[t] += t


@numba.njit(cache=True, nogil=True, inline="always")
def _fold_block(row, b, n, gm, ga, g2):  # pragma: no cover - jit
    """Fold scores ``b .. b + n - 1`` into groups ``0 .. n - 1`` of :func:`_group_maxima`."""
    pos = np.int32(b)
    block = row[b:]  # indexed from 0: no negative-index wraparound, so a plain vector load
    for t in range(n):
        v = block[t]
        m = gm[t]
        m2 = g2[t]
        gt = v > m
        g2[t] = m if gt else (v if v > m2 else m2)
        gm[t] = v if gt else m
        ga[t] = pos if gt else ga[t]


@numba.njit(cache=True, nogil=True, inline="always")
def _topk_row_tracked(row, k, vals, ids, gm, ga, g2, vb, ib, cnt):  # pragma: no cover - jit
    """The plain scan's top-``k`` from the group maxima and runners-up; False: scan instead.

    After :func:`_group_maxima` (``g >= k`` groups), the top-``k`` of the group maxima are
    ranked by :func:`_rank_maxima`; their ``k``-th value ``t`` is at most the row's ``k``-th
    best. A score other than its group's maximum reaches ``t`` only if that group's runner-up
    does, so only those groups (few: two of the best scores in one group) are rescanned,
    their other scores ``>= t`` inserted as the full scan does. The result is the full
    scan's bit for bit (the order of insertions does not matter), unless ``t`` is ``-inf``
    (fewer than ``k`` groups with a score above it): then nothing is written and the caller
    scans.
    """
    c = row.shape[0]
    g = gm.shape[0]
    _group_maxima(row, gm, ga, g2)
    _rank_maxima(gm, ga, k, vb, ib, cnt)
    thr = vb[k - 1]
    if thr == -np.inf:
        return False
    vals[:] = vb[:k]
    ids[:] = ib[:k]
    rescan = _mask32(g2, thr) if g == 32 else _mask64(g2, thr)
    while rescan:
        t = lowest_bit(rescan)
        rescan &= rescan - 1
        top = ga[t]
        for j in range(t, c, g):
            v = row[j]
            if v >= thr and j != top:
                insert_sorted(vals, ids, k, v, j)
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _rank_maxima(gm, ga, k, vb, ib, cnt):  # pragma: no cover - jit
    """The ``k`` best of ``gm`` (value descending, then position ``ga``) into ``vb``/``ib``.

    Each entry's rank is the count of entries before it, and it is written to slot
    ``min(rank, k)``: no branch. The counts of larger values come from
    :data:`~lshsim.hashing.simd.rank_counts` (every pair in vector lanes; ``cnt``: int32[g]
    scratch); their sum tells whether the values are distinct, and where they are not
    (ties, ``-0.0`` beside ``+0.0``, several ``-inf`` groups) each pair is compared again,
    value then position. 4096 rows of 32 float32 maxima: 0.20 ms, against 0.41 ms for the
    earlier one-comparison int64 keys (the order-preserving bits above the position).
    """
    g = gm.shape[0]
    if g == 32:
        total = _rank32(gm, cnt)
    elif g == 64:
        total = _rank64(gm, cnt)
    else:
        raise ValueError("the tracked scan has kernels for 32 or 64 groups")
    if total == g * (g - 1) // 2:
        for t in range(g):
            p = min(cnt[t], k)
            vb[p] = gm[t]
            ib[p] = ga[t]
        return
    for t in range(g):
        v = gm[t]
        i = ga[t]
        r = 0
        for u in range(g):
            w = gm[u]
            r += (w > v) | ((w == v) & (ga[u] < i))
        p = min(r, k)
        vb[p] = v
        ib[p] = i


def productkey_topk(s1, s2, k, out) -> None:
    """PKM's top-k: top-``k`` of each half, then top-``k`` of the ``k^2`` sums, per row.

    Each half's top-``k`` is the plain scan's (:func:`~lshsim.hashing.topk.topk_row`), found
    through the tracked scan (:func:`tracked_groups`) or else the group filter
    (:func:`~lshsim.hashing.topk.topk_groups`). The sums
    are formed in the scores' dtype (float32 scores: float32 sums, as PKM's torch code adds
    them), and the ``k^2`` candidates are pruned: with both halves' top-``k`` sorted,
    ``v1_a + v2_b`` falls along ``b`` and its row maximum ``v1_a + v2_0`` along ``a``, so a
    candidate below the current ``k``-th best ends its row, and a row whose maximum is below
    it ends the search (a tie is still compared: the lower slot wins). Serial:
    :func:`~lshsim.hashing.topk.topk_sets` runs it per thread on its own rows
    (:func:`productkey_topk_rows`).

    Args:
        s1: float[m, s], the first half's sub-key scores.
        s2: float[m, s], the second half's (same dtype).
        k: ``1 <= k <= s``.
        out: int64[m, k], the slots ``i * s + j`` by decreasing ``s1_i + s2_j`` (ties: lower
            slot first).
    """
    dtype = np.result_type(s1, s2)
    dtype = dtype if dtype in (np.float32, np.float64) else np.float64
    s1, s2 = (np.ascontiguousarray(a, dtype=dtype) for a in (s1, s2))  # the kernels' layout
    _productkey_rows(s1, s2, k, out, *_half_groups(s1.shape[1], k))


def _half_groups(s: int, k: int) -> tuple[int, bool]:
    """``(g, tracked)`` of a half's top-``k``: the tracked scan's groups, else the filter's."""
    g = tracked_groups(s, k)
    return (g, True) if g else (topk_groups(s, k), False)


@numba.njit(cache=True, nogil=True, inline="always")
def _half_topk(row, k, vals, ids, tracked, gm, ga, g2, vb, ib, cnt):  # pragma: no cover - jit
    """One half's top-``k`` into ``vals``/``ids``: tracked, filtered (``gm`` groups) or plain."""
    if tracked:
        if not _topk_row_tracked(row, k, vals, ids, gm, ga, g2, vb, ib, cnt):
            topk_row(row, k, vals, ids)
    elif gm.shape[0]:
        topk_row_grouped(row, k, vals, ids, gm, vb)
    else:
        topk_row(row, k, vals, ids)


@numba.njit(cache=True, nogil=True)
def _productkey_rows(s1, s2, k, out, g, tracked):  # pragma: no cover - jit
    """:func:`productkey_topk` of every row; ``(g, tracked)``: :func:`_half_groups`."""
    s = s1.shape[1]
    v1 = np.empty(k, s1.dtype)
    i1 = np.empty(k, dtype=np.int64)
    v2 = np.empty(k, s1.dtype)
    i2 = np.empty(k, dtype=np.int64)
    vbest = np.empty(k, s1.dtype)
    gm = np.empty(g, s1.dtype)
    g2 = np.empty(g if tracked else 0, s1.dtype)
    ga = np.empty(g if tracked else 0, np.int32)
    cnt = np.empty(g if tracked else 0, np.int32)
    vb = np.empty(k + 1, s1.dtype)
    ib = np.empty(k + 1, np.int64)
    for r in range(s1.shape[0]):
        _half_topk(s1[r], k, v1, i1, tracked, gm, ga, g2, vb, ib, cnt)
        _half_topk(s2[r], k, v2, i2, tracked, gm, ga, g2, vb, ib, cnt)
        vbest[:] = -np.inf
        best = out[r]
        best[:] = s * s
        for a in range(k):
            va = v1[a]
            if va + v2[0] < vbest[k - 1]:
                break
            ia = i1[a] * s
            for b in range(k):
                v = va + v2[b]
                if v < vbest[k - 1]:
                    break
                insert_sorted(vbest, best, k, v, ia + i2[b])


def productkey_topk_rows(x, w1, w2, k, out, rows) -> None:
    """PKM's top-k (:func:`productkey_topk`) of the rows of ``x`` in blocks of ``rows``.

    One thread's share of :func:`~lshsim.hashing.topk.topk_sets` for product keys: each
    block's two sub-key score matrices go into two buffers, the halves of the thread's
    :func:`~lshsim.hashing.topk.scratch`, and through :func:`_productkey_rows` (serial, GIL
    released) while they are in cache.

    Args:
        x: float[m, d], C-contiguous, ``d`` even.
        w1: float[s, d / 2], the first half's sub-keys in ``x``'s dtype.
        w2: float[s, d / 2], the second half's.
        k: ``1 <= k <= s``.
        out: int64[m, k], written.
        rows: rows per block.
    """
    m, h = x.shape[0], x.shape[1] // 2
    shape = (min(rows, m), w1.shape[0])
    size = shape[0] * shape[1]
    flat = scratch(2 * size, np.result_type(x, w1))
    buf1, buf2 = flat[:size].reshape(shape), flat[size:].reshape(shape)
    groups = _half_groups(w1.shape[0], k)
    for r0 in range(0, m, rows):
        r1 = min(m, r0 + rows)
        s1, s2 = buf1[: r1 - r0], buf2[: r1 - r0]
        np.matmul(x[r0:r1, :h], w1.T, out=s1)
        np.matmul(x[r0:r1, h:], w2.T, out=s2)
        _productkey_rows(s1, s2, k, out[r0:r1], *groups)
