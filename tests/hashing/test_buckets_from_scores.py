"""``HashFamily.matrix`` and ``buckets_from_scores``: the kernels' ids from ``x @ matrix.T``.

The model side (``lshsim.t5.memory``) and the routing probe hash with these two instead of the
kernels; here they must give bit-identical ids to ``hash()`` (float64, so the two matrix
products round alike), ties and zero rows included, in NumPy and in ``jax.numpy``.
"""

from __future__ import annotations

import numpy as np
import pytest

from lshsim.hashing import make_family
from lshsim.hashing.base import signed_argmax_update

CASES = [
    ("simhash", 2, {}),
    ("simhash", 1024, {}),
    ("voronoi", 2, {}),
    ("voronoi", 300, {}),
    ("crosspolytope", 2, {"rotation": "gaussian"}),
    ("crosspolytope", 256, {"rotation": "gaussian"}),
]


def _batch(rows: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, d))
    x[:3] = 0.0  # all-zero scores: every family's tie rule at once
    x[3] = x[4]  # a repeated row
    return x


@pytest.mark.parametrize(("name", "n", "params"), CASES)
@pytest.mark.parametrize("d", [1, 7, 64])
def test_ids_equal_the_kernels(name, n, params, d):
    fam = make_family(name, n, d, seed=d, **params)
    x = _batch(2000, d, seed=n + d)
    scores = x @ fam.matrix.T
    ids = type(fam).buckets_from_scores(scores)
    assert ids.dtype.kind == "i" and ids.shape == (2000,)
    np.testing.assert_array_equal(ids, fam.hash(x))
    assert ((0 <= ids) & (ids < n)).all()


@pytest.mark.parametrize(("name", "n", "params"), CASES)
def test_matrix_shape_is_the_rule_width(name, n, params):
    fam = make_family(name, n, 5, seed=0, **params)
    k = {"simhash": n.bit_length() - 1, "voronoi": n, "crosspolytope": n // 2}[name]
    assert fam.matrix.shape == (k, 5) and fam.matrix.dtype == np.float64


def test_ties_keep_the_lower_id():
    cp = make_family("crosspolytope", 8, 3, seed=0)
    vo = make_family("voronoi", 4, 3, seed=0)
    s = np.array([[1.0, -1.0, 0.5, -0.5], [-2.0, 2.0, 2.0, 1.0], [0.0, -0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(type(cp).buckets_from_scores(s), [0, 1, 0])
    best, ids = np.full(3, -np.inf), np.zeros(3, dtype=np.int64)
    signed_argmax_update(s, 0, best, ids, 0, 4)  # the Gaussian kernel's own rule
    np.testing.assert_array_equal(ids, [0, 1, 0])
    np.testing.assert_array_equal(type(vo).buckets_from_scores(s), [0, 1, 0])
    sh = make_family("simhash", 16, 3, seed=0)
    np.testing.assert_array_equal(type(sh).buckets_from_scores(s), [5, 14, 0])


@pytest.mark.parametrize(("name", "n", "params"), CASES)
def test_jax_namespace_gives_the_same_ids(name, n, params):
    jnp = pytest.importorskip("jax.numpy")
    fam = make_family(name, n, 16, seed=1, **params)
    scores = (_batch(500, 16, seed=2) @ fam.matrix.T).astype(np.float32)
    rule = type(fam).buckets_from_scores
    got = np.asarray(rule(jnp.asarray(scores), jnp))
    np.testing.assert_array_equal(got, rule(scores))


@pytest.mark.parametrize(
    ("name", "n", "params"),
    [
        ("pstable", 16, {}),
        ("minhash", 16, {}),
        ("tokenid", 16, {}),
        ("crosspolytope", 16, {"rotation": "hadamard"}),
    ],
)
def test_families_without_a_matrix_say_so(name, n, params):
    fam = make_family(name, n, 8, seed=0, **params)
    with pytest.raises(NotImplementedError, match="matrix"):
        _ = fam.matrix
    if name != "crosspolytope":
        with pytest.raises(NotImplementedError, match=name):
            type(fam).buckets_from_scores(np.zeros((2, 3)))
