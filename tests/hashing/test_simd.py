"""The tracked scan's vector kernels (``lshsim.hashing.simd``) against NumPy loops."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from lshsim.hashing.simd import GROUPS, fold_groups, lowest_bit, mask_at_least, rank_counts

_fold32, _fold64 = fold_groups[32], fold_groups[64]
_rank32, _rank64 = rank_counts[32], rank_counts[64]
_mask32, _mask64 = mask_at_least[32], mask_at_least[64]


@numba.njit
def _fold(row, gm, ga, g2, full):  # pragma: no cover - jit
    if gm.shape[0] == 32:
        _fold32(row, gm, ga, g2, full)
    else:
        _fold64(row, gm, ga, g2, full)


@numba.njit
def _rank(gm, cnt):  # pragma: no cover - jit
    return _rank32(gm, cnt) if gm.shape[0] == 32 else _rank64(gm, cnt)


@numba.njit
def _bits(arr, value):  # pragma: no cover - jit
    """The indices of the mask's set bits, lowest first, as the tracked scan visits them."""
    mask = _mask32(arr, value) if arr.shape[0] == 32 else _mask64(arr, value)
    out = []
    while mask:
        out.append(lowest_bit(mask))
        mask &= mask - 1
    return out


def _fold_reference(row, gm, ga, g2, full):
    """The fold's rule, one score at a time (NaN compares false)."""
    g = gm.shape[0]
    for b in range(0, full, g):
        for t in range(g):
            v = row[b + t]
            if v > gm[t]:
                gm[t], g2[t], ga[t] = v, gm[t], b
            elif v > g2[t]:
                g2[t] = v


def _rows(rng, c, dtype):
    yield rng.standard_normal(c).astype(dtype)
    yield rng.integers(-2, 3, c).astype(dtype)  # ties: an equal score is a runner-up
    x = rng.standard_normal(c).astype(dtype)
    x[rng.random(c) < 0.3] = np.nan
    x[rng.random(c) < 0.1] = -np.inf
    x[rng.random(c) < 0.05] = np.inf
    yield x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fold_is_the_scalar_rule(dtype):
    rng = np.random.default_rng(3)
    for g in GROUPS:
        for c in (0, g, 5 * g, 9 * g + 7):
            full = c - c % g
            # a full that is no multiple of G folds only the whole blocks below it
            full_arg = full + (g // 2 if c % g else 0)
            for row in _rows(rng, c, dtype):
                # a state carried in from earlier blocks, some of it above the row's scores
                start = [rng.standard_normal(g).astype(dtype) + 1 for _ in range(2)]
                gm0, g20 = np.maximum(*start), np.minimum(*start)
                ga0 = rng.integers(0, 100, g).astype(np.int32)
                got = (gm0.copy(), ga0.copy(), g20.copy())
                want = (gm0.copy(), ga0.copy(), g20.copy())
                _fold(row, got[0], got[1], got[2], full_arg)
                _fold_reference(row, want[0], want[1], want[2], full)
                for a, b in zip(got, want, strict=True):
                    np.testing.assert_array_equal(a, b, err_msg=f"g={g} c={c}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rank_counts_and_the_distinct_test(dtype):
    rng = np.random.default_rng(4)
    for g in GROUPS:
        distinct = rng.permutation(g).astype(dtype) - g / 2
        tied = rng.integers(-3, 4, g).astype(dtype)
        zeros = np.where(rng.random(g) < 0.5, -0.0, 0.0).astype(dtype)
        for gm in (distinct, tied, zeros, np.full(g, -np.inf, dtype)):
            cnt = np.empty(g, np.int32)
            total = _rank(gm, cnt)
            want = (gm[None, :] > gm[:, None]).sum(axis=1)
            np.testing.assert_array_equal(cnt, want)
            assert total == want.sum()
            assert (total == g * (g - 1) // 2) == (np.unique(gm).size == g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mask_bits_are_the_entries_at_least_the_value(dtype):
    rng = np.random.default_rng(5)
    for g in GROUPS:
        for arr in (
            rng.standard_normal(g).astype(dtype),
            np.where(rng.random(g) < 0.3, np.nan, rng.integers(-2, 3, g)).astype(dtype),
            np.r_[np.full(g - 1, -np.inf), 1.0].astype(dtype),  # only the top bit (63 at G = 64)
        ):
            for value in (dtype(0.0), dtype(1.0), dtype(-np.inf), arr[g // 2]):
                want = [int(t) for t in np.flatnonzero(arr >= value)]
                assert list(_bits(arr, value)) == want, (g, arr, value)
