"""PKM's pruned, parallel top-k kernel against brute force over all ``s^2`` sums.

The kernel stops a row of candidates at the first sum below the current ``k``-th best and
adds in the scores' dtype, so the checks use ties on purpose (small integer scores: many
equal sums, where the lower slot must win) and float32 scores (float32 sums, as PKM's torch
code adds them), over more rows than one parallel chunk.
"""

from __future__ import annotations

import numpy as np
import pytest

from lshsim.hashing.productkey import ProductKey
from lshsim.hashing.productkey_topk import productkey_topk
from lshsim.hashing.topk import topk_sets


def _brute(s1: np.ndarray, s2: np.ndarray, k: int) -> np.ndarray:
    """Top-``k`` slots ``i * s + j`` of all sums ``s1_i + s2_j`` (in their dtype): value
    descending, then slot ascending."""
    m, s = s1.shape
    sums = (s1[:, :, None] + s2[:, None, :]).reshape(m, s * s)  # column i * s + j
    order = np.lexsort((np.broadcast_to(np.arange(s * s), sums.shape), -sums), axis=1)
    return order[:, :k].astype(np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("s", "k"), [(2, 1), (5, 5), (9, 4), (16, 7)])
def test_ties_go_to_the_lower_slot(dtype, s, k):
    """Integer scores in [0, 3]: most sums tie; 150 rows."""
    rng = np.random.default_rng(s * 10 + k)
    s1 = rng.integers(0, 4, (150, s)).astype(dtype)
    s2 = rng.integers(0, 4, (150, s)).astype(dtype)
    out = np.empty((150, k), dtype=np.int64)
    productkey_topk(s1, s2, k, out)
    np.testing.assert_array_equal(out, _brute(s1, s2, k))


@pytest.mark.parametrize(("s", "k"), [(8, 8), (32, 5), (64, 16)])
def test_float32_queries_are_ranked_by_float32_sums(s, k):
    h = ProductKey(s * s, 16, seed=3)
    x = np.random.default_rng(s).standard_normal((200, 16)).astype(np.float32)
    s1, s2 = h.half_scores(x)
    assert s1.dtype == np.float32
    np.testing.assert_array_equal(topk_sets(h, x, k), _brute(s1, s2, k))
