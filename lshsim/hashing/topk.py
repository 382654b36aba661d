"""Top-k bucket sets: softmax top-k (Voronoi), cross-polytope top-k, and PKM's product top-k.

``T_k(x)`` is the set of the ``k`` buckets with the largest scores; ties keep the lower id, as
``numpy.argmax`` does at ``k = 1``. For Voronoi the scores are ``g_i . x``; for the
cross-polytope (dense rotations) they are ``concat(y, -y)`` of the rotated ``y``; for product
keys (Lample et al. 2019) the top-k of each half's ``s`` scores are combined into ``k^2``
candidate sums ``s1_i + s2_j``, and the top-k of those are the slots ``i * s + j``. The
candidates contain the top-k of all ``s^2`` sums: a pair ``(i, j)`` with ``i`` outside the
first half's top-k is beaten by the ``k`` pairs ``(i', j)``, ``i'`` in it.

References:
    G. Lample et al., "Large memory layers with product keys", NeurIPS 2019.
    N. Shazeer et al., "Outrageously large neural networks", ICLR 2017 (top-k routing).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from lshsim._validate import as_vectors, check_int

__all__ = ["TOPK_ROWS", "TOPK_SCORES", "productkey_topk", "scores_topk", "topk_ids", "topk_sets"]
#: Batch rows per score chunk of :func:`topk_sets` (families that score every bucket).
TOPK_ROWS = 1024
#: Scores per chunk for product keys, whose rows hold only ``2 sqrt(n)`` (the two halves'):
#: what 1024 rows of a 16384-bucket Voronoi hold. One chunk is one matrix product and one
#: parallel kernel call per half: 4096 queries at s = 128 in 1024-row chunks spent 4x the
#: time of one call in BLAS's and the threads' start-up on this machine.
TOPK_SCORES = 2**24


@numba.njit(cache=True, nogil=True)
def _insert(vals, ids, k, v, i):  # pragma: no cover - jit
    """Insert candidate ``(v, i)`` into the sorted best-``k`` buffers (desc value, asc id)."""
    if not (v > vals[k - 1] or (v == vals[k - 1] and i < ids[k - 1])):
        return
    p = k - 1
    while p > 0 and (v > vals[p - 1] or (v == vals[p - 1] and i < ids[p - 1])):
        vals[p] = vals[p - 1]
        ids[p] = ids[p - 1]
        p -= 1
    vals[p] = v
    ids[p] = i


@numba.njit(cache=True, nogil=True)
def _topk_row(row, k, vals, ids):  # pragma: no cover - jit
    """Top-``k`` of one row of scores into the sorted buffers ``vals``/``ids``."""
    vals[:] = -np.inf
    ids[:] = row.shape[0]
    for j in range(row.shape[0]):
        _insert(vals, ids, k, row[j], j)


@numba.njit(cache=True, nogil=True)
def topk_ids(scores, k, out_val, out_idx):  # pragma: no cover - jit
    """Top-``k`` of each row of ``scores`` (float[m, c]) into ``out_val``/``out_idx`` [m, k].

    Sorted by value, descending; ties: the lower column first. ``O(c k)`` per row.
    """
    for r in range(scores.shape[0]):
        _topk_row(scores[r], k, out_val[r], out_idx[r])


#: Rows per parallel chunk of :func:`productkey_topk` (its buffers are allocated per chunk).
_PK_CHUNK = 64


def productkey_topk(s1, s2, k, out) -> None:
    """PKM's top-k: top-``k`` of each half, then top-``k`` of the ``k^2`` sums, per row.

    The sums are formed in the scores' dtype (float32 scores: float32 sums, as PKM's torch
    code adds them), and the ``k^2`` candidates are pruned: with both halves' top-``k``
    sorted, ``v1_a + v2_b`` falls along ``b`` and its row maximum ``v1_a + v2_0`` along
    ``a``, so a candidate below the current ``k``-th best ends its row, and a row whose
    maximum is below it ends the search (a tie is still compared: the lower slot wins). More
    rows than one chunk run in parallel chunks (the result does not depend on the thread
    count); a few rows (one pair's two) run here, without starting the thread pool.

    Args:
        s1: float[m, s], the first half's sub-key scores.
        s2: float[m, s], the second half's (same dtype).
        k: ``1 <= k <= s``.
        out: int64[m, k], the slots ``i * s + j`` by decreasing ``s1_i + s2_j`` (ties: lower
            slot first).
    """
    if s1.shape[0] <= _PK_CHUNK:
        _productkey_rows(s1, s2, k, out, 0, s1.shape[0])
    else:
        _productkey_chunks(s1, s2, k, out)


@numba.njit(cache=True, nogil=True)
def _productkey_rows(s1, s2, k, out, r0, r1):  # pragma: no cover - jit
    """:func:`productkey_topk` of rows ``r0 .. r1 - 1``."""
    s = s1.shape[1]
    v1 = np.empty(k, s1.dtype)
    i1 = np.empty(k, dtype=np.int64)
    v2 = np.empty(k, s1.dtype)
    i2 = np.empty(k, dtype=np.int64)
    vb = np.empty(k, s1.dtype)
    for r in range(r0, r1):
        v1[:] = -np.inf
        i1[:] = s
        v2[:] = -np.inf
        i2[:] = s
        for j in range(s):
            _insert(v1, i1, k, s1[r, j], j)
            _insert(v2, i2, k, s2[r, j], j)
        vb[:] = -np.inf
        best = out[r]
        best[:] = s * s
        for a in range(k):
            va = v1[a]
            if va + v2[0] < vb[k - 1]:
                break
            ia = i1[a] * s
            for b in range(k):
                v = va + v2[b]
                if v < vb[k - 1]:
                    break
                _insert(vb, best, k, v, ia + i2[b])


@numba.njit(cache=True, nogil=True, parallel=True)
def _productkey_chunks(s1, s2, k, out):  # pragma: no cover - jit
    """:func:`productkey_topk` in parallel chunks of :data:`_PK_CHUNK` rows."""
    m = s1.shape[0]
    for c in numba.prange((m + _PK_CHUNK - 1) // _PK_CHUNK):
        _productkey_rows(s1, s2, k, out, c * _PK_CHUNK, min(m, (c + 1) * _PK_CHUNK))


def scores_topk(scores: np.ndarray, k: int, out: np.ndarray) -> None:
    """Top-``k`` columns of each row of ``scores`` (float[m, c]) into ``out`` (int64[m, k]).

    float32 scores stay float32: the same order as their float64 copy (exact), without the
    copy. Rows split over Numba's threads were slower on the 2-core machine (Voronoi n = 1024,
    k = 8, 16384 rows of d = 256, scores included: 142.7 ms against 59.7 ms serial; its pool
    and OpenBLAS's alternate).
    """
    if scores.dtype not in (np.float32, np.float64):
        scores = scores.astype(np.float64)
    scores = np.ascontiguousarray(scores)
    topk_ids(scores, k, np.empty((scores.shape[0], k), scores.dtype), out)


def topk_sets(h, batch, k: int) -> np.ndarray:
    """The top-``k`` bucket ids of each row of ``batch`` under hash function ``h``.

    Args:
        h: a :class:`~lshsim.hashing.HashFamily` instance of a family with a top-k rule
            (``has_topk``; cross-polytope: a dense rotation).
        batch: float[m, d].
        k: ``1 <= k <= h.max_topk(n)``; product keys: ``k <= sqrt(n)`` (PKM's per-half top-k).

    Returns:
        int64[m, k], by decreasing score; column 0 is ``h.hash(batch)`` (the top-1 bucket).
    """
    if not h.has_topk:
        raise ValueError(f"topk applies to the families with a top-k rule, not '{h.name}'")
    x = as_vectors(batch, h.d)
    k = check_int("topk (k)", k, 1, h.max_topk(h.n))
    out = np.empty((x.shape[0], k), dtype=np.int64)
    rows = max(TOPK_ROWS, TOPK_SCORES // (2 * math.isqrt(h.n))) if h.halves else TOPK_ROWS
    for r0 in range(0, x.shape[0], rows):
        xr = x[r0 : r0 + rows]
        h.topk_block(xr, k, out[r0 : r0 + xr.shape[0]])
    return out
