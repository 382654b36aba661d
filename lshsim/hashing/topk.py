"""Top-k bucket sets: softmax top-k (Voronoi), cross-polytope top-k, and PKM's product top-k.

``T_k(x)`` is the set of the ``k`` buckets with the largest scores; ties keep the lower id, as
``numpy.argmax`` does at ``k = 1``. For Voronoi the scores are ``g_i . x``; for the
cross-polytope (dense rotations) they are ``concat(y, -y)`` of the rotated ``y``; for product
keys (Lample et al. 2019) the top-k of each half's ``s`` scores are combined into ``k^2``
candidate sums ``s1_i + s2_j``, and the top-k of those are the slots ``i * s + j``. The
candidates contain the top-k of all ``s^2`` sums: a pair ``(i, j)`` with ``i`` outside the
first half's top-k is beaten by the ``k`` pairs ``(i', j)``, ``i'`` in it. Product keys' own
scan and merge are in :mod:`lshsim.hashing.productkey_topk`; this module holds the row scans
they share and :func:`topk_sets`, which runs any family's blocks on the threads.

References:
    G. Lample et al., "Large memory layers with product keys", NeurIPS 2019.
    N. Shazeer et al., "Outrageously large neural networks", ICLR 2017 (top-k routing).
"""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from itertools import pairwise

import numba
import numpy as np

from lshsim._validate import as_vectors, check_int, vectors_fit, vectors_in_range

__all__ = [
    "HUGE_PAGE",
    "SCRATCH_KEEP",
    "TOPK_PART_ROWS",
    "TOPK_ROWS",
    "TOPK_SCORES",
    "abs_max",
    "insert_sorted",
    "scores_topk",
    "scratch",
    "spherical_topk_rows",
    "topk_groups",
    "topk_ids",
    "topk_row",
    "topk_row_grouped",
    "topk_sets",
]
#: Fewest batch rows per block of :func:`topk_sets`: one BLAS call per block, and a matrix
#: product of fewer rows repacks the whole weight matrix for little work (Voronoi n = 16384:
#: 64-row blocks were 1.3x slower than 256-row ones).
TOPK_ROWS = 256
#: Scores per block of :func:`topk_sets` beyond :data:`TOPK_ROWS` rows (8 MiB of float32):
#: one buffer per thread, reused, so BLAS writes into warm pages (a fresh 4 MiB product per
#: 1024-row block of Voronoi n = 1024 spent more time in page faults than in the product).
#: Twice the earlier 2^20: fewer BLAS calls, each packing the weights once, for product
#: keys n = 1024^2, k = 8: 16.5-17.4 ms against 17.1-17.9 ms (4096 rows, 2 threads;
#: n = 512^2 and Voronoi / cross-polytope n = 1024 the same or up to 2.5% faster).
TOPK_SCORES = 2**21
#: Fewest rows per thread of :func:`topk_sets`: fewer rows run on the calling thread only.
TOPK_PART_ROWS = 64
#: Alignment of the score buffers of :func:`topk_sets`' blocks: one transparent huge page
#: (x86-64). NumPy asks the kernel for huge pages on arrays of 4 MiB or more
#: (``madvise``), which it grants for the 2 MiB-aligned stretches; a fresh buffer lands on
#: whatever the heap has (product keys n = 512^2 / 1024^2, k = 8, 4096 rows, 2 threads:
#: 8.86-8.95 / 16.1-16.4 ms fresh, 8.50-8.63 / 15.3-15.6 ms aligned and kept, three
#: processes each).
HUGE_PAGE = 2 << 20
#: Largest scratch a thread keeps between calls (bytes): ``2 TOPK_SCORES`` float64 scores,
#: the largest block of :func:`topk_sets` for up to 16384 buckets (256 rows of 16384).
SCRATCH_KEEP = 2 * 8 * TOPK_SCORES
#: Each thread's scratch (``raw``: uint8), kept between calls.
_SCRATCH = threading.local()


@numba.njit(cache=True, nogil=True)
def insert_sorted(vals, ids, k, v, i):  # pragma: no cover - jit
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
def topk_row(row, k, vals, ids):  # pragma: no cover - jit
    """Top-``k`` of one row of scores into the sorted buffers ``vals``/``ids`` (a full scan)."""
    vals[:] = -np.inf
    ids[:] = row.shape[0]
    for j in range(row.shape[0]):
        insert_sorted(vals, ids, k, row[j], j)


def topk_groups(c: int, k: int) -> int:
    """Groups of the pre-filtered top-``k`` scan of ``c`` scores; 0: scan every score.

    About ``sqrt(k c) / 2`` (a power of two): the filter reads ``c`` scores once, then ranks
    the groups' maxima and rescans the ``k`` or so groups that hold the top-``k``
    (``c / g`` scores each), so ``g`` near ``sqrt(k c)`` balances the two; measured best at
    ``sqrt(k c) / 2`` (float32, ``c`` from 512 to 16384, ``k`` 8 and 32). Below ``2k`` groups
    or 4 scores a group the filter does not pay.

    Args:
        c: scores per row.
        k: the top-``k``.

    Returns:
        The group count ``g`` (``2k <= g <= c / 4``), or 0 for the plain scan.
    """
    g = 1 << max(0, round(math.log2(max(1.0, math.sqrt(k * c) / 2))))
    return g if 2 * k <= g <= c // 4 else 0


@numba.njit(cache=True, nogil=True)
def _kth_value(gm, k, buf):  # pragma: no cover - jit
    """The ``k``-th largest value of ``gm`` (``-inf`` if fewer than ``k`` are above it)."""
    buf[:k] = -np.inf
    low = buf[k - 1]
    for t in range(gm.shape[0]):
        v = gm[t]
        if v > low:
            p = k - 1
            while p > 0 and v > buf[p - 1]:
                buf[p] = buf[p - 1]
                p -= 1
            buf[p] = v
            low = buf[k - 1]
    return low


@numba.njit(cache=True, nogil=True)
def topk_row_grouped(row, k, vals, ids, gm, buf):  # pragma: no cover - jit
    """:func:`topk_row` through a filter: the same buffers, most scores read once.

    Score ``j`` is in group ``j mod g`` (``g = gm.shape[0] >= k``). One vectorised pass
    takes each group's maximum; their ``k``-th largest ``t`` is at most the row's ``k``-th
    best (``k`` groups each hold a score ``>= t``), so a score below ``t`` cannot be in the
    top-``k`` and only the groups whose maximum reaches ``t`` are rescanned, their scores
    ``>= t`` inserted as the full scan does. The result does not depend on the order of the
    insertions (value descending, then id ascending, is a total order): it is the full scan's
    bit for bit, ties and NaNs (never inserted) included.
    """
    c = row.shape[0]
    g = gm.shape[0]
    gm[:] = -np.inf
    full = c - c % g
    for b in range(0, full + g, g):
        block = row[b:]  # indexed from 0: no negative-index wraparound, a plain vector load
        for t in range(g if b < full else c - full):
            v = block[t]
            m = gm[t]
            gm[t] = v if v > m else m
    thr = _kth_value(gm, k, buf)
    vals[:] = -np.inf
    ids[:] = c
    for t in range(g):
        if gm[t] >= thr:
            for j in range(t, c, g):
                v = row[j]
                if v >= thr:
                    insert_sorted(vals, ids, k, v, j)


@numba.njit(cache=True, nogil=True)
def _topk_row_signed(y, k, vals, ids, gm, buf):  # pragma: no cover - jit
    """Top-``k`` of ``concat(y, -y)`` (ids ``j`` and ``j + len(y)``) without the copy.

    With groups (``gm.shape[0] >= k``) the filter of :func:`topk_row_grouped` runs on
    ``|y_j|`` (each group's largest ``|y_j|`` is one of its ``2 len(y)`` candidates);
    ``gm.shape[0] == 0`` scans every candidate. The same top-``k`` as :func:`topk_row` of
    the concatenation, bit for bit (the insertion order does not matter).
    """
    c = y.shape[0]
    g = gm.shape[0]
    thr = -np.inf
    if g:
        gm[:] = -np.inf
        full = c - c % g
        for b in range(0, full + g, g):
            block = y[b:]  # as in topk_row_grouped
            for t in range(g if b < full else c - full):
                v = abs(block[t])
                m = gm[t]
                gm[t] = v if v > m else m
        thr = _kth_value(gm, k, buf)
    vals[:] = -np.inf
    ids[:] = 2 * c
    for t in range(max(g, 1)):
        if g and not gm[t] >= thr:
            continue
        for j in range(t, c, max(g, 1)):
            v = y[j]
            if v >= thr:
                insert_sorted(vals, ids, k, v, j)
            if -v >= thr:
                insert_sorted(vals, ids, k, -v, j + c)


@numba.njit(cache=True, nogil=True)
def _rows_topk(scores, k, out_idx, g, signed):  # pragma: no cover - jit
    """Top-``k`` ids of each row (of ``concat(y, -y)`` when ``signed``) into ``out_idx``."""
    vals = np.empty(k, scores.dtype)
    buf = np.empty(k, scores.dtype)
    gm = np.empty(g, scores.dtype)
    for r in range(scores.shape[0]):
        if signed:
            _topk_row_signed(scores[r], k, vals, out_idx[r], gm, buf)
        elif g:
            topk_row_grouped(scores[r], k, vals, out_idx[r], gm, buf)
        else:
            topk_row(scores[r], k, vals, out_idx[r])


@numba.njit(cache=True, nogil=True)
def topk_ids(scores, k, out_val, out_idx):  # pragma: no cover - jit
    """Top-``k`` of each row of ``scores`` (float[m, c]) into ``out_val``/``out_idx`` [m, k].

    Sorted by value, descending; ties: the lower column first. ``O(c k)`` per row.
    """
    for r in range(scores.shape[0]):
        topk_row(scores[r], k, out_val[r], out_idx[r])


def scores_topk(scores: np.ndarray, k: int, out: np.ndarray, *, signed: bool = False) -> None:
    """Top-``k`` columns of each row of ``scores`` (float[m, c]) into ``out`` (int64[m, k]).

    By decreasing score, ties to the lower column. float32 scores stay float32: the same
    order as their float64 copy (exact), without the copy. Rows of more than a few hundred
    scores go through the group filter of :func:`topk_row_grouped` (most scores read once,
    in SIMD); the ids are those of the plain scan, bit for bit. Serial: rows split over
    Numba's threads after a threaded BLAS product were slower on the 2-core machine
    (Voronoi n = 1024, k = 8, 16384 rows of d = 256, scores included: 142.7 ms against
    59.7 ms serial; its pool and OpenBLAS's alternate), so :func:`topk_sets` gives each of
    its threads both the products and the ranking of its rows instead.

    Args:
        scores: float[m, c].
        k: ``1 <= k <= c`` (``2c`` when ``signed``).
        out: int64[m, k], written.
        signed: rank ``concat(scores, -scores)`` (ids ``j`` and ``j + c``: the
            cross-polytope's buckets) without forming it.
    """
    if scores.dtype not in (np.float32, np.float64):
        scores = scores.astype(np.float64)
    scores = np.ascontiguousarray(scores)
    g = topk_groups(scores.shape[1] * (2 if signed else 1), k)
    _rows_topk(scores, k, out, g // 2 if signed else g, signed)


def scratch(count: int, dtype) -> np.ndarray:
    """This thread's scratch: ``count`` items of ``dtype`` from a :data:`HUGE_PAGE` boundary.

    Kept between calls up to :data:`SCRATCH_KEEP` bytes (one per thread: the calling thread
    and :func:`topk_sets`' workers), so its huge pages stay; a larger request gets fresh
    memory. Its contents are left over from earlier calls: write before reading.

    Args:
        count: items.
        dtype: their NumPy dtype.

    Returns:
        A C-contiguous 1-d array of ``count`` items.
    """
    nbytes = count * np.dtype(dtype).itemsize
    raw = getattr(_SCRATCH, "raw", None)
    if raw is None or raw.nbytes < nbytes + HUGE_PAGE:
        raw = np.empty(nbytes + HUGE_PAGE, np.uint8)
        if nbytes <= SCRATCH_KEEP:
            _SCRATCH.raw = raw
    start = -raw.ctypes.data % HUGE_PAGE
    return raw[start : start + nbytes].view(dtype)


def spherical_topk_rows(x, w, k, out, rows, *, signed=False) -> None:
    """Top-``k`` of ``x @ w.T`` (of ``concat(y, -y)`` when ``signed``) in blocks of ``rows``.

    One thread's share of :func:`topk_sets` for the families that score every bucket: each
    block's scores are written by BLAS into one buffer, the thread's :func:`scratch`, and
    ranked by :func:`_rows_topk` (which releases the GIL) while they are still in cache.

    Args:
        x: float[m, d], C-contiguous.
        w: float[c, d] in ``x``'s dtype (the centres, or the rotation's rows).
        k: ``1 <= k <= c`` (``2c`` when ``signed``).
        out: int64[m, k], written.
        rows: rows per block.
        signed: rank ``concat(y, -y)`` (ids ``j`` and ``j + c``), the cross-polytope's rule.
    """
    m = x.shape[0]
    shape = (min(rows, m), w.shape[0])
    buf = scratch(shape[0] * shape[1], np.result_type(x, w)).reshape(shape)
    g = topk_groups(w.shape[0] * (2 if signed else 1), k)
    g = g // 2 if signed else g
    for r0 in range(0, m, rows):
        r1 = min(m, r0 + rows)
        block = buf[: r1 - r0]
        np.matmul(x[r0:r1], w.T, out=block)
        _rows_topk(block, k, out[r0:r1], g, signed)


#: :func:`topk_sets`' worker threads, by count (the calling thread runs one part itself).
_POOL: dict[int, ThreadPoolExecutor] = {}
#: One threaded :func:`topk_sets` at a time: each sets BLAS to one thread while it runs.
_THREADED = threading.Lock()
#: The threadpoolctl controller, made on first use (it lists the loaded BLAS libraries).
_BLAS: list = []


def _after_fork() -> None:
    """A forked child has none of the parent's worker threads, nor its lock's holder."""
    global _THREADED
    _THREADED = threading.Lock()
    _POOL.clear()


os.register_at_fork(after_in_child=_after_fork)


def _blas_one_thread():
    """A context in which the BLAS libraries run on the calling thread (threadpoolctl)."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


def topk_sets(h, batch, k: int) -> np.ndarray:
    """The top-``k`` bucket ids of each row of ``batch`` under hash function ``h``.

    The rows are cut into one contiguous part per Numba thread (at least
    :data:`TOPK_PART_ROWS` rows each); each part runs ``h.topk_block`` on its own Python
    thread with BLAS held to one thread meanwhile (threadpoolctl), in blocks of
    ``max(TOPK_ROWS, TOPK_SCORES / width)`` rows: its matrix products and its ranking
    alternate on one core, the block's scores still in cache, where BLAS's threaded product
    and Numba's threaded ranking alternated between two thread pools that spun against each
    other on the 2-core machine. The ids do not depend on the cut (each row's scores are one
    BLAS dot product per entry, whatever the block). One part (a single thread, or a few
    rows) runs on the calling thread, BLAS untouched. The BLAS limit is the process's:
    other threads' BLAS calls also run on one thread while a threaded call lasts. The
    batch's values are checked (:func:`~lshsim._validate.as_vectors`' rule) by the parts
    too: each finds its rows' largest magnitude (:func:`abs_max`) before its top-k, and a
    float32 batch found to need float64 is ranked again in float64. ``as_vectors``' two
    serial passes over a 4096 x 512 float32 batch were 0.6 ms, and a separate threaded pass
    0.47 ms (two thread hand-offs), of a 4-17 ms call.

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
    x = as_vectors(batch, h.d, check_values=False)
    k = check_int("topk (k)", k, 1, h.max_topk(h.n))
    m = x.shape[0]
    out = np.empty((m, k), dtype=np.int64)
    width = 2 * math.isqrt(h.n) if h.halves else h.matrix.shape[0]
    rows = max(TOPK_ROWS, TOPK_SCORES // width)
    parts = max(1, min(numba.get_num_threads(), m // TOPK_PART_ROWS))
    if parts == 1:
        x = as_vectors(x, h.d)
        h.topk_block(x, k, out, rows)
        return out
    cuts = [m * p // parts for p in range(parts + 1)]
    with _THREADED, _blas_one_thread():
        pool = _POOL.get(parts - 1)
        if pool is None:
            pool = _POOL[parts - 1] = ThreadPoolExecutor(parts - 1, "lshsim-topk")

        def part(a, b):
            top = abs_max(x[a:b])
            if vectors_fit(x.dtype, top):
                h.topk_block(x[a:b], k, out[a:b], min(rows, b - a))
            return top

        tops = _in_parts(pool, cuts, part)
        checked = vectors_in_range(x, float(np.max(tops)))  # NaN propagates (max() would not)
        if checked is not x:  # float32 with an entry >= 2^64: every part again, in float64
            _in_parts(
                pool,
                cuts,
                lambda a, b: h.topk_block(checked[a:b], k, out[a:b], min(rows, b - a)),
            )
    return out


def abs_max(x: np.ndarray) -> float:
    """The largest ``|entry|`` of a C-contiguous float32/float64 array, in one pass.

    The magnitudes' bit patterns are compared as integers (vectorised; a float's order is
    its pattern's, with NaN above infinity above every finite value), so the result is NaN
    where ``x`` holds a NaN and inf where it holds an infinity (and no NaN).

    Args:
        x: float32 or float64, C-contiguous, non-empty.

    Returns:
        ``max |x|`` as a Python float.
    """
    bits = np.uint32 if x.dtype == np.float32 else np.uint64
    magnitude = bits(np.iinfo(bits).max >> 1)  # every bit but the sign
    top = _max_bits(x.reshape(-1).view(bits), magnitude)
    return float(np.array(top, dtype=bits).view(x.dtype))


@numba.njit(cache=True, nogil=True)
def _max_bits(u, mask):  # pragma: no cover - jit
    """``max(u & mask)`` of unsigned integers."""
    top = u[0] & mask
    for i in range(u.shape[0]):  # an index loop: iterating the array made LLVM gather
        w = u[i] & mask
        top = w if w > top else top
    return top


def _in_parts(pool: ThreadPoolExecutor, cuts: list[int], fn) -> list:
    """``fn(a, b)`` of each part ``[a, b)`` of ``cuts``: the first on the calling thread.

    Args:
        pool: ``len(cuts) - 2`` worker threads.
        cuts: the parts' bounds, ascending.
        fn: a callable of a part's bounds that releases the GIL for most of its work.

    Returns:
        The parts' results, in order.
    """
    futures = [pool.submit(fn, a, b) for a, b in pairwise(cuts[1:])]
    try:
        first = fn(cuts[0], cuts[1])
    finally:
        wait(futures)
    return [first] + [f.result() for f in futures]
