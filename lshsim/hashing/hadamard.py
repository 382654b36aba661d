"""Fast Walsh-Hadamard kernels and the cross-polytope hash with the Hadamard rotation.

Radix-2/4/8 butterflies over rows of a transposed ``D x B`` buffer (SIMD across ``B``
vectors), :func:`fwht_columns` (the plain transform), and :func:`hadamard_crosspolytope`
(three rounds of random signs and transforms, then the signed argmax over the first ``m``
coordinates), the kernel of ``CrossPolytope(rotation="hadamard")`` in
:mod:`lshsim.hashing.spherical`.

References:
    A. Andoni, P. Indyk, T. Laarhoven, I. Razenshteyn, L. Schmidt, "Practical and optimal LSH
    for angular distance", NeurIPS 2015 (the pseudo-random rotation of FALCONN).
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _butterfly2(b0, b1, cols):  # pragma: no cover - jit
    """``(b0, b1) <- (b0 + b1, b0 - b1)`` over ``cols`` entries (two row views: SIMD)."""
    for c in range(cols):
        a0 = b0[c]
        a1 = b1[c]
        b0[c] = a0 + a1
        b1[c] = a0 - a1


@numba.njit(cache=True, nogil=True)
def _butterfly4(b0, b1, b2, b3, cols):  # pragma: no cover - jit
    """Two butterfly stages at once: strides ``h`` (b0/b1, b2/b3) then ``2h`` (b0/b2, b1/b3)."""
    for c in range(cols):
        a0 = b0[c]
        a1 = b1[c]
        a2 = b2[c]
        a3 = b3[c]
        p = a0 + a1
        q = a0 - a1
        u = a2 + a3
        w = a2 - a3
        b0[c] = p + u
        b2[c] = p - u
        b1[c] = q + w
        b3[c] = q - w


@numba.njit(cache=True, nogil=True)
def _butterfly2s(b0, b1, s0, s1, cols):  # pragma: no cover - jit
    """:func:`_butterfly2` of the sign-flipped rows ``s0 b0``, ``s1 b1``."""
    for c in range(cols):
        a0 = b0[c] * s0
        a1 = b1[c] * s1
        b0[c] = a0 + a1
        b1[c] = a0 - a1


@numba.njit(cache=True, nogil=True)
def _butterfly4s(b0, b1, b2, b3, s0, s1, s2, s3, cols):  # pragma: no cover - jit
    """:func:`_butterfly4` of the sign-flipped rows ``s_k b_k``."""
    for c in range(cols):
        a0 = b0[c] * s0
        a1 = b1[c] * s1
        a2 = b2[c] * s2
        a3 = b3[c] * s3
        p = a0 + a1
        q = a0 - a1
        u = a2 + a3
        w = a2 - a3
        b0[c] = p + u
        b2[c] = p - u
        b1[c] = q + w
        b3[c] = q - w


@numba.njit(cache=True, nogil=True)
def _butterfly8(b0, b1, b2, b3, b4, b5, b6, b7, cols):  # pragma: no cover - jit
    """Three butterfly stages at once: strides ``h``, ``2h``, ``4h`` on rows ``b_0 .. b_7``."""
    for c in range(cols):
        a0 = b0[c]
        a1 = b1[c]
        a2 = b2[c]
        a3 = b3[c]
        a4 = b4[c]
        a5 = b5[c]
        a6 = b6[c]
        a7 = b7[c]
        e0 = a0 + a1
        e1 = a0 - a1
        e2 = a2 + a3
        e3 = a2 - a3
        e4 = a4 + a5
        e5 = a4 - a5
        e6 = a6 + a7
        e7 = a6 - a7
        f0 = e0 + e2
        f2 = e0 - e2
        f1 = e1 + e3
        f3 = e1 - e3
        f4 = e4 + e6
        f6 = e4 - e6
        f5 = e5 + e7
        f7 = e5 - e7
        b0[c] = f0 + f4
        b4[c] = f0 - f4
        b1[c] = f1 + f5
        b5[c] = f1 - f5
        b2[c] = f2 + f6
        b6[c] = f2 - f6
        b3[c] = f3 + f7
        b7[c] = f3 - f7


@numba.njit(cache=True, nogil=True)
def _fwht_rows(buf, cols, signs, signed):  # pragma: no cover - jit
    """Unnormalised FWHT along axis 0 of ``buf[D, :cols]``, up to three stages per pass.

    With ``signed``, row ``j`` is first multiplied by ``signs[j]`` (folded into the first
    pass). The first pass fuses one or two stages (``log2 D mod 3`` of them, two when that is
    0), then radix-8 passes fuse three (a radix-2 pass ends when ``log2 D`` is a multiple
    of 3); each butterfly runs over a row of ``cols`` contiguous entries (SIMD). Each entry
    sees exactly the
    additions of the radix-2 stages at strides 1, 2, ..., D/2 in that order (stages are
    fused, never reordered), so the result is bitwise that of the one-vector radix-2
    transform.
    """
    dim = buf.shape[0]
    left = 0
    while (1 << left) < dim:
        left += 1
    if left == 0:
        if signed:
            buf[0, :cols] *= signs[0]
        return
    h = 1
    first = 1 if left % 3 == 1 else 2
    while left > 0:
        k = first if h == 1 else (3 if left >= 3 else left)
        if k == 1:
            for i in range(0, dim, 2 * h):
                for j in range(i, i + h):
                    if signed and h == 1:
                        _butterfly2s(buf[j], buf[j + h], signs[j], signs[j + h], cols)
                    else:
                        _butterfly2(buf[j], buf[j + h], cols)
        elif k == 2:
            for i in range(0, dim, 4 * h):
                for j in range(i, i + h):
                    if signed and h == 1:
                        _butterfly4s(
                            buf[j],
                            buf[j + h],
                            buf[j + 2 * h],
                            buf[j + 3 * h],
                            signs[j],
                            signs[j + h],
                            signs[j + 2 * h],
                            signs[j + 3 * h],
                            cols,
                        )
                    else:
                        _butterfly4(buf[j], buf[j + h], buf[j + 2 * h], buf[j + 3 * h], cols)
        else:
            for i in range(0, dim, 8 * h):
                for j in range(i, i + h):
                    _butterfly8(
                        buf[j],
                        buf[j + h],
                        buf[j + 2 * h],
                        buf[j + 3 * h],
                        buf[j + 4 * h],
                        buf[j + 5 * h],
                        buf[j + 6 * h],
                        buf[j + 7 * h],
                        cols,
                    )
        h <<= k
        left -= k


@numba.njit(cache=True, nogil=True)
def fwht_columns(buf):  # pragma: no cover - jit
    """Unnormalised fast Walsh-Hadamard transform of every column of ``buf[D, B]``, in place.

    Butterflies ``(a, b) -> (a + b, a - b)`` with the stride doubling from 1 to ``D/2``
    (``D`` a power of two), up to three stages per pass; each butterfly runs across a contiguous row
    of ``B`` columns, so a block of vectors is transformed with SIMD; each column sees exactly
    the additions of the one-vector transform, in the same order.
    """
    _fwht_rows(buf, buf.shape[1], np.ones(buf.shape[0], dtype=buf.dtype), False)


#: Rows rotated together by the Hadamard kernel (one ``D x 64`` buffer, transposed, in the
#: input's float type). Chosen with the earlier radix-4 passes (D = 1024, float32, one
#: thread: 32 columns 1.7x slower than 64, 128 no faster); not re-measured for radix-8.
HADAMARD_BLOCK = 64
#: Largest buffer (D x cols entries) of one thread: large D rotates fewer rows at a time.
HADAMARD_BUFFER = 2**22


@numba.njit(cache=True, nogil=True)
def _hadamard_cols(rows, dim):  # pragma: no cover - jit
    return max(1, min(HADAMARD_BLOCK, rows, HADAMARD_BUFFER // dim))


@numba.njit(cache=True, nogil=True, inline="always")
def _signed_tile8(x, r, j, s0, buf, c):  # pragma: no cover - jit
    """``buf[j + k, c + i] = x[r + i, j + k] * s0[j + k]`` for ``i, k < 8``: one 8 x 8 tile.

    The eight stores per coordinate are spelled out so that LLVM keeps the tile in registers
    (measured, 4096 x 1024 float32 on one thread: 2.1 ms against 3.4 ms for a staged copy
    and a strided column gather).
    """
    for k in range(8):
        jk = j + k
        g = s0[jk]
        b = buf[jk]
        b[c] = x[r, jk] * g
        b[c + 1] = x[r + 1, jk] * g
        b[c + 2] = x[r + 2, jk] * g
        b[c + 3] = x[r + 3, jk] * g
        b[c + 4] = x[r + 4, jk] * g
        b[c + 5] = x[r + 5, jk] * g
        b[c + 6] = x[r + 6, jk] * g
        b[c + 7] = x[r + 7, jk] * g


@numba.njit(cache=True, nogil=True)
def _signed_transpose(x, r0, nb, s0, buf):  # pragma: no cover - jit
    """``buf[j, c] = x[r0 + c, j] * s0[j]`` for ``c < nb``, ``j < d``: 8 x 8 tiles, then edges."""
    d = x.shape[1]
    nb8 = nb - nb % 8
    d8 = d - d % 8
    for c in range(0, nb8, 8):
        for j in range(0, d8, 8):
            _signed_tile8(x, r0 + c, j, s0, buf, c)
    for j in range(d8, d):  # the last d % 8 coordinates of the full tiles' rows
        for c in range(nb8):
            buf[j, c] = x[r0 + c, j] * s0[j]
    for c in range(nb8, nb):  # the last nb % 8 rows
        for j in range(d):
            buf[j, c] = x[r0 + c, j] * s0[j]


@numba.njit(cache=True, nogil=True)
def _hadamard_block(x, signs, m, out, r0, cols, buf, best, ids):  # pragma: no cover
    """Cross-polytope ids of rows ``r0 .. r0 + cols`` (fewer at the end) of ``x``.

    ``buf[D, cols]`` (input dtype) receives the rows transposed with the first signs applied
    (8 x 8 register tiles); then the rounds (the signs of rounds 2.. folded into their first
    pass), then the signed argmax over the first ``m`` coordinates, vectorised over the
    columns with the lowest-id tie rule.
    """
    rows, d = x.shape
    rounds = signs.shape[0]
    nb = min(cols, rows - r0)
    buf[d:, :] = 0
    for c in range(nb, cols):
        buf[:d, c] = 0
    _signed_transpose(x, r0, nb, signs[0], buf)
    for r in range(rounds):
        _fwht_rows(buf, cols, signs[r], r > 0)  # round 0's signs came with the transpose
    best[:] = -1.0
    ids[:] = 0
    for j in range(m):
        _signed_best(buf[j], j, m, best, ids, cols)
    for c in range(nb):  # -1 flags a non-finite row (NaN / inf reach every coordinate)
        out[r0 + c] = ids[c] if 0.0 <= best[c] < math.inf else -1


@numba.njit(cache=True, nogil=True)
def _signed_best(row, j, half, best, ids, cols):  # pragma: no cover - jit
    """Fold coordinate ``j`` of every column into the running cross-polytope argmax.

    Candidate id ``j`` (value >= 0) or ``j + half``; ties keep the lower id, as
    ``numpy.argmax`` over ``concat([y, -y])``. Branch-free, so it runs with SIMD.
    """
    for c in range(cols):
        v = row[c]
        a = abs(v)
        cand = j if v >= 0 else j + half
        b = best[c]
        upd = (a > b) | ((a == b) & (cand < ids[c]))
        best[c] = a if upd else b
        ids[c] = cand if upd else ids[c]


@numba.njit(cache=True, nogil=True, parallel=True)
def hadamard_crosspolytope(x, signs, m, out, chunks=8):  # pragma: no cover - jit
    """Cross-polytope ids with the pseudo-random rotation ``H S_R ... H S_1``.

    Rows go ``HADAMARD_BLOCK`` at a time through a transposed ``D x B`` buffer of the input's
    float type (float32 in, float32 arithmetic); blocks run in parallel (``prange`` over
    chunks of blocks, one buffer per chunk). Every row's id depends on that row alone, so the
    output is the same for any thread count.

    Args:
        x: float[rows, d], C-contiguous.
        signs: float[R, D] of ±1 in the dtype of ``x``, ``D`` a power of two ``>= d``.
        m: number of kept coordinates (``n = 2m``), ``m <= D``.
        out: int64[rows], written with ``j`` (``+e_j``) or ``j + m`` (``-e_j``); ties keep
            the lower id, as ``numpy.argmax`` over ``concat([y, -y])`` (and the Gaussian path);
            -1 where the rotated row is not finite (every coordinate of ``H S x`` sums every
            entry of ``x``, so a NaN or inf in a row, or a float32 overflow, reaches them all).
        chunks: parallel work items (e.g. 4 per thread); it changes the split, not the ids.
    """
    rows = x.shape[0]
    dim = signs.shape[1]
    cols = _hadamard_cols(rows, dim)
    blocks = (rows + cols - 1) // cols
    chunks = max(1, min(blocks, chunks))
    per = (blocks + chunks - 1) // chunks
    for k in numba.prange(chunks):
        buf = np.empty((dim, cols), dtype=x.dtype)
        best = np.empty(cols, dtype=x.dtype)
        ids = np.empty(cols, dtype=np.int64)
        for b in range(k * per, min(blocks, (k + 1) * per)):
            _hadamard_block(x, signs, m, out, b * cols, cols, buf, best, ids)


@numba.njit(cache=True, nogil=True)
def hadamard_crosspolytope_serial(x, signs, m, out):  # pragma: no cover - jit
    """:func:`hadamard_crosspolytope` on one thread (small batches: no thread start-up)."""
    rows = x.shape[0]
    dim = signs.shape[1]
    cols = _hadamard_cols(rows, dim)
    buf = np.empty((dim, cols), dtype=x.dtype)
    best = np.empty(cols, dtype=x.dtype)
    ids = np.empty(cols, dtype=np.int64)
    for r0 in range(0, rows, cols):
        _hadamard_block(x, signs, m, out, r0, cols, buf, best, ids)
