"""The group-filtered and tracked top-k scans and the threaded ``topk_sets`` against the plain
scan.

The filter skips the groups whose maximum is below the ``k``-th largest group maximum; the
tracked scan takes the top-``k`` of the group maxima and rescans only the groups whose
runner-up reaches the ``k``-th. The checks use many ties (small integers, signed zeros), NaNs
and infinities, where an inexact skip or a changed insertion order would show, rows with
fewer than ``k`` scores above ``-inf`` (the tracked scan's fallback), and row lengths around
the group sizes.
"""

from __future__ import annotations

import os
import sys
import threading

import numba
import numpy as np
import pytest

from lshsim.hashing import CrossPolytope, Voronoi
from lshsim.hashing.productkey import ProductKey
from lshsim.hashing.productkey_topk import _half_topk, productkey_topk, tracked_groups
from lshsim.hashing.topk import (
    HUGE_PAGE,
    SCRATCH_KEEP,
    abs_max,
    scores_topk,
    scratch,
    topk_groups,
    topk_ids,
    topk_sets,
)


def _plain(scores: np.ndarray, k: int) -> np.ndarray:
    vals = np.empty((scores.shape[0], k), scores.dtype)
    ids = np.empty((scores.shape[0], k), np.int64)
    topk_ids(np.ascontiguousarray(scores), k, vals, ids)
    return ids


def _scores(kind: str, rng, m: int, c: int, dtype) -> np.ndarray:
    x = rng.standard_normal((m, c)).astype(dtype)
    if kind == "ties":
        x = rng.integers(-3, 4, (m, c)).astype(dtype)
        x[rng.random((m, c)) < 0.2] = -0.0
    elif kind == "special":
        x[rng.random((m, c)) < 0.3] = np.nan
        x[rng.random((m, c)) < 0.2] = -np.inf
        x[rng.random((m, c)) < 0.01] = np.inf
    elif kind == "negative":  # every score below zero: the order of negative bit patterns
        x = -np.abs(x) - 1e-3
    elif kind == "zeros":  # signed zeros tie (-0.0 == 0.0): the lower id wins
        x = rng.choice(np.array([-1.0, -0.0, 0.0], dtype), (m, c))
    elif kind == "sparse":  # row r: r % 12 scores above -inf, the rest NaN or -inf
        keep = np.arange(c)[None, :] < (np.arange(m) % 12)[:, None]
        x = np.where(keep, x, np.where(rng.random((m, c)) < 0.5, np.nan, -np.inf)).astype(dtype)
        x = rng.permuted(x, axis=1)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["normal", "ties", "special"])
@pytest.mark.parametrize(("c", "k"), [(1, 1), (7, 3), (64, 4), (130, 8), (1000, 8), (4099, 32)])
def test_filtered_scan_is_the_plain_scan(dtype, kind, c, k):
    rng = np.random.default_rng(c * 7 + k)
    x = _scores(kind, rng, 9, c, dtype)
    out = np.empty((9, k), np.int64)
    scores_topk(x, k, out)
    np.testing.assert_array_equal(out, _plain(x, k))
    out = np.empty((9, min(2 * k, 2 * c)), np.int64)
    scores_topk(x, out.shape[1], out, signed=True)
    np.testing.assert_array_equal(out, _plain(np.concatenate([x, -x], axis=1), out.shape[1]))


@numba.njit
def _tracked_rows(x, k, g):  # pragma: no cover - jit
    """Each row's top-``k`` through the tracked scan of ``g`` groups (its fallback included)."""
    out = np.empty((x.shape[0], k), np.int64)
    vals = np.empty(k, x.dtype)
    gm, g2 = np.empty(g, x.dtype), np.empty(g, x.dtype)
    ga = np.empty(g, np.int32)
    vb, ib = np.empty(k + 1, x.dtype), np.empty(k + 1, np.int64)
    cnt = np.empty(g, np.int32)
    for r in range(x.shape[0]):
        _half_topk(x[r], k, vals, out[r], True, gm, ga, g2, vb, ib, cnt)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tracked_scan_is_the_plain_scan(dtype):
    """Runners-up reaching the k-th (ties; 4 scores a group at c = 128), the -inf fallback.

    One test per dtype, the cases in a loop: the jitted wrapper compiles once per dtype (a
    few seconds) where 60 parametrised cases spread over the workers compiled it in each.
    """
    for kind in ("normal", "ties", "special", "sparse", "negative", "zeros"):
        for c, k in ((128, 8), (130, 8), (200, 3), (300, 32), (1024, 8)):
            x = _scores(kind, np.random.default_rng(c + k), 60, c, dtype)
            np.testing.assert_array_equal(
                _tracked_rows(x, k, tracked_groups(c, k)), _plain(x, k), err_msg=f"{kind} {c} {k}"
            )


def test_group_counts():
    assert tracked_groups(128, 8) == 32
    assert tracked_groups(512, 32) == 64
    assert tracked_groups(127, 8) == 0  # fewer than 4 scores a group
    assert tracked_groups(4096, 33) == 0  # 128 groups: ranked by the filter instead
    assert topk_groups(1024, 8) == 64
    assert topk_groups(16384, 32) == 256
    assert topk_groups(128, 32) == 0  # fewer than 2k groups: the plain scan
    for c in (1, 5, 100, 10_000):
        for k in (1, 4, 32):
            g = topk_groups(c, k)
            assert g == 0 or 2 * k <= g <= c // 4


@pytest.mark.parametrize("kind", ["normal", "ties"])
def test_productkey_tracked_halves(kind):
    """Rows of 512 sub-key scores: both halves through the tracked scan, then PKM's merge."""
    rng = np.random.default_rng(5)
    s1, s2 = (_scores(kind, rng, 150, 512, np.float32) for _ in range(2))
    out = np.empty((150, 8), np.int64)
    productkey_topk(s1, s2, 8, out)
    # PKM's rule from the plain scans: the k^2 sums of the halves' top-k, ranked by value
    # then slot (in float32 a pair outside them can tie a candidate's rounded sum)
    i1, i2 = _plain(s1, 8), _plain(s2, 8)
    r = np.arange(150)[:, None, None]
    sums = (s1[r, i1[:, :, None]] + s2[r, i2[:, None, :]]).reshape(150, -1)
    slots = (i1[:, :, None] * 512 + i2[:, None, :]).reshape(150, -1)
    order = np.lexsort((slots, -sums), axis=1)[:, :8]
    np.testing.assert_array_equal(out, np.take_along_axis(slots, order, axis=1))


def _families():
    return [
        (Voronoi(3000, 32, seed=1), 17),
        (CrossPolytope(2048, 32, seed=1, rotation="gaussian"), 9),
        (ProductKey(300**2, 32, seed=2), 12),
    ]


@pytest.mark.parametrize("m", [1, 63, 64, 129, 3001])
def test_threaded_parts_are_one_thread(m):
    """Parts on several threads (BLAS on one each) give the one-thread ids, bit for bit."""
    x = np.round(np.random.default_rng(m).standard_normal((m, 32)), 1).astype(np.float32)
    threads = numba.get_num_threads()
    for h, k in _families():
        got = topk_sets(h, x, k)
        numba.set_num_threads(1)
        try:
            ref = topk_sets(h, x, k)
        finally:
            numba.set_num_threads(threads)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(got[:, 0], h.hash(x))


#: The fork test's program: run in a fresh interpreter, away from the JAX threads of a test
#: worker (a fork of a process running JAX's threads may deadlock, and Python warns of it).
_FORK_CHILD = """
import os, sys
import numpy as np
from lshsim.hashing import make_family
from lshsim.hashing.topk import topk_sets
h = make_family("voronoi", 64, 32, seed=1)
x = np.random.default_rng(0).standard_normal((500, 32)).astype(np.float32)
ref = topk_sets(h, x, 3)
pid = os.fork()
if pid == 0:
    code = 1
    try:
        code = 0 if np.array_equal(topk_sets(h, x, 3), ref) else 2
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_a_forked_child_runs_topk_sets():
    """The parent's worker threads do not survive a fork: the child makes its own (and gets
    the parent's ids); in a fresh interpreter, whose only threads are the top-k pool's."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", _FORK_CHILD],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NUMBA_NUM_THREADS": "2"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-500:]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one thread: no parts")
def test_parts_check_the_values():
    """Each part finds its rows' range: a NaN in the last part is refused, and float32
    entries of 1e38 there (>= 2^64) send the whole batch through float64, as ``as_vectors``
    does (in float32 that row's scores overflow to infinities, which tie)."""
    h, k = Voronoi(300, 32, seed=1), 5
    x = np.random.default_rng(0).standard_normal((400, 32)).astype(np.float32)
    threads = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        bad = x.copy()
        bad[-1, 3] = np.nan
        with pytest.raises(ValueError, match="batch must be finite"):
            topk_sets(h, bad, k)
        big = x.copy()
        big[-1] = 1e38
        with np.errstate(over="ignore", invalid="ignore"):
            assert np.isinf(big[-1:] @ h.matrix.T.astype(np.float32)).any()
        np.testing.assert_array_equal(topk_sets(h, big, k), topk_sets(h, big.astype(np.float64), k))
    finally:
        numba.set_num_threads(threads)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_abs_max_is_numpys(dtype):
    """One pass over the bit patterns: the largest magnitude, inf for an infinity, NaN for
    a NaN (wherever they sit), signed zeros."""
    x = np.random.default_rng(1).standard_normal((37, 11)).astype(dtype) * 1e3
    assert abs_max(x) == np.abs(x).max()
    assert abs_max(np.array([[-0.0, 0.0]], dtype)) == 0.0
    x[20, 3] = -np.finfo(dtype).max
    assert abs_max(x) == np.finfo(dtype).max
    x[36, 10] = -np.inf
    assert abs_max(x) == np.inf
    x[0, 0] = np.nan
    assert np.isnan(abs_max(x))


def test_scratch_is_aligned_kept_per_thread_and_bounded():
    """Each thread reuses one huge-page-aligned scratch; a request over the bound is not kept."""
    a = scratch(1000, np.float32)
    assert a.ctypes.data % HUGE_PAGE == 0 and a.shape == (1000,) and a.dtype == np.float32
    b = scratch(300, np.float64)
    assert b.ctypes.data == a.ctypes.data  # the same memory, reused
    other = []
    t = threading.Thread(target=lambda: other.append(scratch(1000, np.float32).ctypes.data))
    t.start()
    t.join()
    assert other[0] % HUGE_PAGE == 0 and other[0] != a.ctypes.data
    big = scratch(SCRATCH_KEEP // 8 + 1, np.float64)  # one item over the bound
    assert big.ctypes.data % HUGE_PAGE == 0
    assert scratch(10, np.float32).ctypes.data == a.ctypes.data  # the kept one is unchanged
