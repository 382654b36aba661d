"""The Hadamard cross-polytope kernel: float32 buffers, radix-4 FWHT, parallel row blocks.

Checked against the slow float64 reference of ``lshsim/testing/reference.py``: float64 batches give
bit-identical ids (the kernel adds in the reference's order), float32 batches equal ids
except on near-ties within float32 rounding; the ids do not depend on the number of threads
or on how the rows are split; non-finite rows raise.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.linalg

from lshsim.hashing import make_family
from lshsim.hashing.spherical import (
    HADAMARD_BLOCK,
    fwht_columns,
    hadamard_crosspolytope,
    hadamard_crosspolytope_serial,
)
from lshsim.testing import reference as ref


def _batch(rows: int, d: int, dtype, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, d)).astype(dtype)


@pytest.mark.parametrize("dim", [2, 8, 32, 128, 512])
def test_radix4_fwht_is_bitwise_the_radix2_transform(dim):
    """Fused stage pairs add in the radix-2 order: same bits (float32 and float64)."""
    for dtype in (np.float32, np.float64):
        z = _batch(dim, 5, dtype, seed=dim)
        buf = z.copy()
        fwht_columns(buf)
        for c in range(5):
            np.testing.assert_array_equal(buf[:, c], ref.walsh_hadamard(z[:, c]).astype(dtype))
        hmat = scipy.linalg.hadamard(dim)
        np.testing.assert_allclose(buf, hmat @ z.astype(np.float64), atol=1e-4 * dim, rtol=0)


@pytest.mark.parametrize(("n", "d"), [(2048, 1024), (64, 20), (300, 100), (4096, 7)])
@pytest.mark.parametrize("last", [5, 13])
def test_float64_ids_equal_reference(n, d, last):
    """Partial last blocks of 5 rows (edge rows only) and 13 (one 8-row tile plus edge rows),
    and ``d`` with and without whole 8-column tiles, through the tiled transpose."""
    h = make_family("crosspolytope", n, d, seed=n + d, rotation="hadamard")
    x = _batch(3 * HADAMARD_BLOCK + last, d, np.float64)  # parallel path
    np.testing.assert_array_equal(h.hash(x), ref.crosspolytope(h, x))
    np.testing.assert_array_equal(h.hash(x[:5]), ref.crosspolytope(h, x[:5]))  # serial path


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n", "d"), [(2048, 1024), (64, 32), (300, 100)])
def test_exact_ties_go_to_the_lowest_id(n, d, dtype):
    """Small-integer rows (one-hot, zero, sums of two units): the rotation is exact in both
    float types and many coordinates tie exactly (41, 86 and 49 of the 201 rows have a tied
    maximum); every tie goes to the lowest id, as ``numpy.argmax`` over ``concat([y, -y])``,
    with every coordinate kept (``m = D``: the first two cases) and with fewer (the third)."""
    h = make_family("crosspolytope", n, d, seed=7, rotation="hadamard")
    x = np.zeros((3 * HADAMARD_BLOCK + 9, d))
    idx = np.arange(x.shape[0])
    x[idx, idx % d] = 1.0
    x[::3, (idx[::3] * 7 + 1) % d] -= 2.0
    x[::5] = 0.0
    x = x.astype(dtype)
    np.testing.assert_array_equal(h.hash(x), ref.crosspolytope(h, x.astype(np.float64)))


@pytest.mark.parametrize(("n", "d"), [(2048, 1024), (300, 100)])
def test_float32_ids_equal_reference_up_to_near_ties(n, d):
    h = make_family("crosspolytope", n, d, seed=1, rotation="hadamard")
    x = _batch(2000, d, np.float32)
    got = h.hash(x)
    want = ref.crosspolytope(h, x)
    bad = np.flatnonzero(got != want)
    assert bad.size <= 2, bad.size
    y = np.abs(ref.hadamard_rotation(h, x[bad]))
    part = np.partition(y, -2, axis=1)
    rms = np.sqrt(np.mean(ref.hadamard_rotation(h, x[:64]) ** 2))
    assert ((part[:, -1] - part[:, -2]) / rms < 1e-5).all()


def test_same_ids_for_any_split_and_thread_count():
    h = make_family("crosspolytope", 2048, 1024, seed=2, rotation="hadamard")
    x = _batch(1000, 1024, np.float32)
    signs = h.signs.astype(np.float32)
    base = np.empty(1000, dtype=np.int64)
    hadamard_crosspolytope_serial(x, signs, h.m, base)
    threads = numba.get_num_threads()
    try:
        for t in sorted({1, threads}):
            numba.set_num_threads(t)
            for chunks in (1, 3, 16, 64):
                out = np.empty(1000, dtype=np.int64)
                hadamard_crosspolytope(x, signs, h.m, out, chunks)
                np.testing.assert_array_equal(out, base)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(h.hash(x), base)


@pytest.mark.parametrize("rows", [3, 500])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_finite_rows_raise(rows, bad, dtype):
    h = make_family("crosspolytope", 64, 20, seed=1, rotation="hadamard")
    x = _batch(rows, 20, dtype)
    x[rows // 2, 7] = bad
    with pytest.raises(ValueError, match="batch must be finite"):
        h.hash(x)


def test_float32_overflow_falls_back_to_float64():
    """Entries near float32's limit overflow the float32 sums; the ids come from float64."""
    h = make_family("crosspolytope", 64, 20, seed=1, rotation="hadamard")
    x = _batch(300, 20, np.float64)
    big = (x * 2.0**120).astype(np.float32)
    np.testing.assert_array_equal(h.hash(big), ref.crosspolytope(h, big.astype(np.float64)))


def test_only_overflowing_float32_rows_are_redone_and_float64_overflow_raises():
    """Rows whose float32 sums overflow get their float64 ids, the others keep theirs; a
    float64 batch whose rotation overflows raises instead of returning bucket -1."""
    h = make_family("crosspolytope", 64, 20, seed=1, rotation="hadamard")
    x = _batch(300, 20, np.float64)
    mixed = x.astype(np.float32)
    mixed[::7] *= np.float32(2.0**120)
    np.testing.assert_array_equal(h.hash(mixed), ref.crosspolytope(h, mixed.astype(np.float64)))
    with pytest.raises(ValueError, match="overflow float64"):
        h.hash(x * 1e307)
