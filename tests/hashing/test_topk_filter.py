"""The group-filtered top-k scan and the threaded ``topk_sets`` against the plain scan.

The filter skips the groups whose maximum is below the ``k``-th largest group maximum; the
checks use many ties (small integers, signed zeros), NaNs and infinities, where an inexact
skip or a changed insertion order would show, and row lengths around the group sizes.
"""

from __future__ import annotations

import os
import sys

import numba
import numpy as np
import pytest

from lshsim.hashing import CrossPolytope, Voronoi
from lshsim.hashing.productkey import ProductKey
from lshsim.hashing.topk import (
    productkey_topk,
    scores_topk,
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


def test_group_counts():
    assert topk_groups(1024, 8) == 64
    assert topk_groups(16384, 32) == 256
    assert topk_groups(128, 32) == 0  # fewer than 2k groups: the plain scan
    for c in (1, 5, 100, 10_000):
        for k in (1, 4, 32):
            g = topk_groups(c, k)
            assert g == 0 or 2 * k <= g <= c // 4


@pytest.mark.parametrize("kind", ["normal", "ties"])
def test_productkey_filtered_halves(kind):
    """Rows of 512 sub-key scores: both halves through the filter, then PKM's merge."""
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
