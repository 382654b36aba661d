"""Hash kernels: bit-identical to slow references, LSH invariants, thread counts, bad input.

The references live in :mod:`lshsim.testing.reference`; each invariant test names its invariant.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest
import scipy.linalg
from hypothesis import example, given
from hypothesis import strategies as st

from lshsim.hashing import (
    FAMILIES,
    MERSENNE61,
    VECTOR_FAMILIES,
    CrossPolytope,
    MinHash,
    PStable,
    TokenID,
    get_family,
    make_family,
)
from lshsim.hashing.base import COL_TILE, ROW_TILE, row_tile
from lshsim.hashing.hyperplane import simhash_codes
from lshsim.hashing.minhash import TABLE_MIN_IDS, mulmod61
from lshsim.hashing.spherical import fwht_columns
from lshsim.sentences import sentence_pairs
from lshsim.testing import reference as ref

SEEDS = st.integers(0, 2**32 - 1)
DTYPES = st.sampled_from([np.float32, np.float64])

#: Every vector family, with the cross-polytope once per rotation.
VECTOR_CASES = [
    ("simhash", {}),
    ("pstable", {}),
    ("voronoi", {}),
    ("crosspolytope", {"rotation": "gaussian"}),
    ("crosspolytope", {"rotation": "hadamard"}),
]
VECTOR_IDS = ["simhash", "pstable", "voronoi", "crosspolytope-gaussian", "crosspolytope-hadamard"]
#: The families whose bucket depends only on the direction of ``x``.
SCALE_FREE_CASES = [c for c in VECTOR_CASES if c[0] != "pstable"]
SCALE_FREE_IDS = [i for i in VECTOR_IDS if i != "pstable"]


def gaussian(seed: int, m: int, d: int, dtype=np.float64) -> np.ndarray:
    """A fixed-seed standard Gaussian batch of shape ``(m, d)`` in ``dtype``."""
    return np.random.default_rng(seed).standard_normal((m, d)).astype(dtype)


@st.composite
def vector_params(draw, name: str, fixed: dict, max_n: int = 300):
    """A valid ``(n, params)`` for vector family ``name`` (``fixed`` params kept)."""
    params = dict(fixed)
    if name == "simhash":
        n = 2 ** draw(st.integers(1, 62))
    elif name == "pstable":
        if draw(st.booleans()):  # default k = log2(n)
            n = 2 ** draw(st.integers(1, 62))
        else:
            k = draw(st.integers(1, 5))
            n = draw(st.integers(2, 9)) ** k
            params["k"] = k
        params["w"] = draw(st.floats(0.25, 16.0))
    elif name == "voronoi":
        n = draw(st.integers(2, max_n))
    elif name == "productkey":  # n = s^2
        n = draw(st.integers(2, max(2, math.isqrt(max_n)))) ** 2
    else:
        n = 2 * draw(st.integers(1, max_n // 2))
    return n, params


@st.composite
def token_sets(draw, max_m: int = 12, max_l: int = 10):
    """An int64 ``(m, l)`` min-hash batch: ids anywhere in ``[0, p)``, negative padding, every
    row with at least one real id; small vocabularies give duplicates and shared tokens."""
    rng = np.random.default_rng(draw(SEEDS))
    m = draw(st.integers(0, max_m))
    length = draw(st.integers(1, max_l))
    hi = draw(st.sampled_from([3, 40, 2**32 + 5, MERSENNE61]))
    tokens = rng.integers(0, hi, size=(m, length), dtype=np.int64)
    pad = rng.random((m, length)) < draw(st.sampled_from([0.0, 0.4]))
    pad[np.arange(m), rng.integers(0, length, size=m)] = False
    tokens[pad] = rng.integers(-(2**40), 0, size=int(pad.sum()))
    return tokens


@st.composite
def token_arrays(draw):
    """A Token-ID batch: non-negative int ids of any shape (0-d to 3-D), possibly huge."""
    rng = np.random.default_rng(draw(SEEDS))
    shape = tuple(draw(st.lists(st.integers(0, 5), max_size=3)))
    hi = draw(st.sampled_from([7, 2**31, MERSENNE61]))
    dtype = draw(st.sampled_from([np.int64, np.int32, np.uint64])) if hi <= 2**31 else np.int64
    return rng.integers(0, hi, size=shape).astype(dtype)


@st.composite
def any_family(draw):
    """``(family, batch)`` for a random family with valid parameters and a matching batch."""
    name = draw(st.sampled_from(list(FAMILIES)))
    seed = draw(SEEDS)
    if name in VECTOR_FAMILIES:
        fixed = {}
        if name == "crosspolytope":
            fixed = {"rotation": draw(st.sampled_from(["gaussian", "hadamard"]))}
        n, params = draw(vector_params(name, fixed))
        d = 2 * draw(st.integers(1, 8)) if name == "productkey" else draw(st.integers(1, 16))
        batch = gaussian(draw(SEEDS), draw(st.integers(0, 30)), d, draw(DTYPES))
        return make_family(name, n, d, seed, **params), batch
    n = draw(st.one_of(st.integers(2, 1000), st.integers(2, 2**62)))
    if name == "minhash":
        return MinHash(n, 1, seed, k=draw(st.integers(1, 6))), draw(token_sets())
    return TokenID(n, 1, seed), draw(token_arrays())


# -- kernels against the references ---------------------------------------------------------


@pytest.mark.parametrize(("name", "fixed"), VECTOR_CASES, ids=VECTOR_IDS)
@given(data=st.data(), d=st.integers(1, 24), m=st.integers(0, 40), seed=SEEDS, dtype=DTYPES)
def test_vector_kernel_matches_reference(name, fixed, data, d, m, seed, dtype):
    """Kernel == reference: ids of random Gaussian batches equal the slow reference's exactly."""
    n, params = data.draw(vector_params(name, fixed), label="n, params")
    h = make_family(name, n, d, seed, **params)
    x = gaussian(data.draw(SEEDS, label="batch seed"), m, d, dtype)
    np.testing.assert_array_equal(h.hash(x), ref.reference_for(name)(h, x))


@pytest.mark.parametrize(("name", "fixed"), VECTOR_CASES, ids=VECTOR_IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d", [1, 3, 8])
@pytest.mark.parametrize("n", [2, 6, 16, 64])
def test_ties_match_reference(name, fixed, dtype, d, n):
    """Kernel == reference on tie-prone inputs (zero, one-hot, small integer vectors): ties go
    to the lowest id, as ``numpy.argmax`` does (the Hadamard rotation makes exact ties)."""
    if name == "pstable":
        fixed = {"k": 2, "w": 1.0} if n in (16, 64) else {"k": 1}
    if name == "simhash" and n == 6:
        n = 8
    h = make_family(name, n, d, 5, **fixed)
    rng = np.random.default_rng(d * 1000 + n)
    x = np.concatenate(
        [np.zeros((1, d)), np.eye(d), -np.eye(d), rng.integers(-2, 3, size=(40, d))]
    ).astype(dtype)
    ids = h.hash(x)
    np.testing.assert_array_equal(ids, ref.reference_for(name)(h, x))
    assert ids[0] == 0  # the zero vector ties everywhere (pstable: b < w gives cell 0)


#: The drawn table of each vector family that :func:`test_integer_tables_match_reference`
#: replaces (the Hadamard rotation's ±1 signs are integers already).
TABLES = {"simhash": "planes", "pstable": "directions", "voronoi": "centres"}


@pytest.mark.parametrize(("name", "fixed"), VECTOR_CASES, ids=VECTOR_IDS)
@given(data=st.data(), d=st.integers(1, 6), seed=SEEDS, dtype=DTYPES)
def test_integer_tables_match_reference(name, fixed, data, d, seed, dtype):
    """Kernel == reference with exact ties everywhere: small-integer tables and batches make
    zero projections and equal scores common; zero counts as negative (SimHash) and every
    argmax tie goes to the lowest id (Voronoi, cross-polytope ``+e_j``/``-e_j``)."""
    n, params = data.draw(vector_params(name, fixed, max_n=40), label="n, params")
    h = make_family(name, n, d, seed, **params)
    rng = np.random.default_rng(seed)
    attr = "rotation" if name == "crosspolytope" else TABLES[name]
    if hasattr(h, attr):  # set before the first hash, which caches the table's cast
        setattr(h, attr, rng.integers(-2, 3, size=getattr(h, attr).shape).astype(np.float64))
    x = rng.integers(-2, 3, size=(30, d)).astype(dtype)
    np.testing.assert_array_equal(h.hash(x), ref.reference_for(name)(h, x))


@pytest.mark.parametrize(("name", "fixed"), VECTOR_CASES, ids=VECTOR_IDS)
def test_tiled_batches_match_reference(name, fixed):
    """Kernel == reference across tiles: batches of several row tiles (``ROW_TILE`` rows for
    SimHash/p-stable, ``row_tile(cols)`` for the argmax families) and Voronoi / Gaussian
    cross-polytope tables of two column tiles (``COL_TILE`` rows each), every tile large
    enough that many rows find their winner in it."""
    cols = COL_TILE + COL_TILE // 2
    n = {"simhash": 2**10, "pstable": 3**4, "voronoi": cols}.get(name, 2 * cols)
    params = dict(fixed, k=4) if name == "pstable" else fixed
    if fixed.get("rotation") == "hadamard":
        n = 200
    tile = ROW_TILE if name in ("simhash", "pstable") else row_tile(cols)
    x = gaussian(12, 2 * tile + tile // 2, 6)
    h = make_family(name, n, 6, 11, **params)
    np.testing.assert_array_equal(h.hash(x), ref.reference_for(name)(h, x))


@pytest.mark.parametrize("name", list(FAMILIES))
def test_reference_resolves_and_is_covered(name):
    """Each registered family's ``reference`` ("module:function") resolves to a function
    (:func:`~lshsim.testing.reference.reference_for`, the same one ``REFERENCES`` gives), or is
    empty and ``reference_for`` says so; a vector family with one has a ``VECTOR_CASES`` entry,
    so the kernel-against-reference tests above run on it (a family that reads two halves
    needs an even ``d``: product keys' kernel-against-reference test is in test_productkey)."""
    cls = FAMILIES[name]
    if not cls.reference:
        assert name not in ref.REFERENCES
        with pytest.raises(ValueError, match=f"family '{name}' has no reference"):
            ref.reference_for(name)
        return
    fn = ref.reference_for(name)
    assert callable(fn) and ref.REFERENCES[name] is fn
    if cls.input_kind == "vectors" and not cls.halves:
        assert name in {case[0] for case in VECTOR_CASES}


def test_reference_for_names_a_bad_reference():
    """A reference that names no function, or an unknown family, is a one-line ValueError."""
    from lshsim.hashing import SimHash, register_family, unregister_family

    class Broken(SimHash):
        name = "broken-reference-example"
        reference = "lshsim.testing.reference:no_such_function"

    register_family(Broken)
    try:
        with pytest.raises(ValueError, match="does not name a function"):
            ref.reference_for(Broken.name)
    finally:
        unregister_family(Broken.name)
    with pytest.raises(ValueError, match="family must be one of"):
        ref.reference_for("no-such-family")


def test_hadamard_rotation_layout():
    """Hadamard rotation: 3 rounds of ±1 signs on ``D`` = the next power of two >= max(d, m)."""
    for n, d, dim in [(2, 1, 1), (2, 5, 8), (64, 5, 32), (66, 5, 64), (8, 16, 16), (8, 17, 32)]:
        h = CrossPolytope(n, d, 0, rotation="hadamard")
        assert h.signs.shape == (3, dim)
        assert set(np.unique(h.signs)) <= {-1.0, 1.0}


def test_hadamard_rotation_is_a_scaled_isometry():
    """Reference check: each round ``H S`` multiplies norms by ``sqrt(D)`` (so ``y`` is a
    rotation of ``x`` up to ``D^(3/2)``, truncated to its first ``m`` coordinates)."""
    h = CrossPolytope(2 * 16, 16, 3, rotation="hadamard")  # m = D = 16: all coordinates kept
    x = gaussian(4, 50, 16)
    y = ref.hadamard_rotation(h, x)
    np.testing.assert_allclose(
        np.linalg.norm(y, axis=1), 16**1.5 * np.linalg.norm(x, axis=1), rtol=1e-12
    )


@pytest.mark.parametrize("dim", [1, 2, 4, 8, 64, 256])
def test_fwht_kernel_is_the_hadamard_matrix(dim):
    """Kernel == reference: the in-place fast Walsh-Hadamard transform equals the Sylvester
    Hadamard matrix product (exactly on integers, to rounding on Gaussian vectors)."""
    hmat = scipy.linalg.hadamard(dim)
    rng = np.random.default_rng(dim)
    ints = rng.integers(-5, 6, size=dim).astype(np.float64)
    buf = ints.copy()[:, None]
    fwht_columns(buf)
    np.testing.assert_array_equal(buf[:, 0], hmat @ ints)
    np.testing.assert_array_equal(ref.walsh_hadamard(ints), hmat @ ints)
    np.testing.assert_array_equal(ref.walsh_hadamard_matrix(ints), hmat @ ints)
    zs = rng.standard_normal((dim, 3))  # three columns transformed together
    buf = zs.copy()
    fwht_columns(buf)
    for c in range(3):
        np.testing.assert_allclose(buf[:, c], hmat @ zs[:, c], rtol=0, atol=1e-12 * dim)
        np.testing.assert_array_equal(buf[:, c], ref.walsh_hadamard(zs[:, c]))  # same bits


@given(
    tokens=token_sets(),
    n=st.one_of(st.integers(2, 64), st.integers(2, 2**62)),
    k=st.integers(1, 6),
    seed=SEEDS,
)
def test_minhash_kernel_matches_reference(tokens, n, k, seed):
    """Kernel == reference: min-hash values and buckets equal exact Python-int arithmetic."""
    h = MinHash(n, 1, seed, k=k)
    values = h.min_hashes(tokens)
    assert values.dtype == np.uint64
    assert values.tolist() == ref.min_hashes(h, tokens)
    np.testing.assert_array_equal(h.hash(tokens), ref.minhash(h, tokens))


def test_minhash_extreme_ids_match_reference():
    """Kernel == reference on the extreme ids 0, 1, 2^32 - 1, 2^32 and p - 1 = 2^61 - 2."""
    edge = [0, 1, 2**32 - 1, 2**32, 2**61 - 2]
    rows = [[t, -1, -1, -1, -1] for t in edge] + [edge, edge[::-1]]  # -1: padding
    tokens = np.array(rows, dtype=np.int64)
    for k in (1, 4):
        h = MinHash(2**62, 1, 9, k=k)
        assert h.min_hashes(tokens).tolist() == ref.min_hashes(h, tokens)
        np.testing.assert_array_equal(h.hash(tokens), ref.minhash(h, tokens))


def test_minhash_128_hashes_match_reference():
    """Kernel == reference at the benchmark's shape: 128 hashes, 20-slot rows with padding,
    vocabulary ids (< 2^32, the four-tokens-per-pass path) next to rows holding one id >= 2^32
    (the general path), and rows whose only real id sits in the last slot."""
    rng = np.random.default_rng(31)
    tokens = rng.integers(0, 32128, size=(40, 20), dtype=np.int64)
    tokens[rng.random(tokens.shape) < 0.3] = -1
    tokens[:, 7] = rng.integers(0, 32128, size=40)
    tokens[5, 3] = 2**32
    tokens[6, 19] = MERSENNE61 - 1
    tokens[7, :19] = -5
    tokens[7, 19] = 12345
    tokens[8, :] = 2**32 - 1
    h = MinHash(2**62, 1, 17, k=128)
    assert h.min_hashes(tokens).tolist() == ref.min_hashes(h, tokens)
    np.testing.assert_array_equal(h.hash(tokens), ref.minhash(h, tokens))


def test_minhash_byte_tables_match_reference():
    """Kernel == reference on a batch large enough for the byte tables (ids < 2^16): ids at the
    byte and table edges (0, 255, 256, 65535) and rows that leave the table path (65536,
    2^32 - 1, 2^32, p - 1), padding, and row lengths that are not a multiple of four."""
    assert 120 * 19 >= TABLE_MIN_IDS
    rng = np.random.default_rng(41)
    tokens = rng.integers(0, 65536, size=(120, 19), dtype=np.int64)
    tokens[rng.random(tokens.shape) < 0.25] = -2
    tokens[:, 4] = rng.choice([0, 255, 256, 65535], size=120)
    tokens[10, 7] = 65536
    tokens[11, 0] = 2**32 - 1
    tokens[12, 18] = 2**32
    tokens[13, 3] = MERSENNE61 - 1
    tokens[14, :] = -1
    tokens[14, 18] = 65535
    h = MinHash(2**62, 1, 23, k=128)
    assert h.min_hashes(tokens).tolist() == ref.min_hashes(h, tokens)
    np.testing.assert_array_equal(h.hash(tokens), ref.minhash(h, tokens))


def test_minhash_out_buffer():
    """``min_hashes(tokens, out=buf)`` writes the same values into ``buf`` and returns it;
    a buffer of the wrong shape, dtype or layout is refused, naming ``out``."""
    tokens = np.array([[3, 9, -1], [2**40, 5, 7]], dtype=np.int64)
    h = MinHash(2**20, 1, 4, k=5)
    buf = np.full((2, 5), 7, dtype=np.uint64)
    assert h.min_hashes(tokens, out=buf) is buf
    assert buf.tolist() == ref.min_hashes(h, tokens)
    bad = [np.empty((2, 4), np.uint64), np.empty((2, 5), np.int64), np.empty((5, 2), np.uint64).T]
    for b in bad:
        with pytest.raises(ValueError, match="out must be"):
            h.min_hashes(tokens, out=b)


@pytest.mark.parametrize("k", [1, 16, 62, 63, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_simhash_codes_match_reference(k, dtype):
    """``simhash_codes`` == Python-int sign bits up to k = 64 (bit 63 included), on integer
    data (exact projections, zeros among them: bit 0), and == ``SimHash.hash`` for k <= 62."""
    rng = np.random.default_rng(k)
    d = 7
    planes = rng.integers(-2, 3, size=(k, d)).astype(np.float64)
    x = rng.integers(-2, 3, size=(50, d)).astype(dtype)
    codes = simhash_codes(x, planes)
    assert codes.dtype == np.uint64
    want = [sum(1 << j for j, p in enumerate(row) if p > 0) for row in ref.project(x, planes)]
    assert codes.tolist() == want
    if k <= 62:
        h = make_family("simhash", 2**k, d, 0)
        h.planes = planes
        np.testing.assert_array_equal(h.hash(x), codes.view(np.int64))


def test_simhash_codes_rejects_bad_planes():
    """``simhash_codes`` names ``planes`` when k is outside [1, 64] or a plane is not finite."""
    x = np.zeros((2, 3))
    for planes in (np.zeros((65, 3)), np.zeros((0, 3)), np.zeros(3)):
        with pytest.raises(ValueError, match="planes must have shape"):
            simhash_codes(x, planes)
    with pytest.raises(ValueError, match="planes must be finite"):
        simhash_codes(x, np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match=r"batch must have shape \(m, 3\)"):
        simhash_codes(np.zeros((2, 4)), np.ones((2, 3)))


@given(tokens=token_arrays(), n=st.one_of(st.integers(2, 100), st.integers(2, 2**62)))
def test_tokenid_kernel_matches_reference(tokens, n):
    """Kernel == reference: Token-ID buckets are ``id mod n``, shape preserved."""
    ids = TokenID(n, 1).hash(tokens)
    assert ids.shape == tokens.shape
    np.testing.assert_array_equal(ids, ref.tokenid(TokenID(n, 1), tokens))


MULMOD_EDGES = [0, 1, 2, 3, 2**29 - 1, 2**32 - 1, 2**32, 2**32 + 1, 2**61 - 2, MERSENNE61]


def test_mulmod61_edges():
    """``mulmod61(a, x) == (a x) mod (2^61 - 1)`` exactly on every pair of edge values."""
    for a in MULMOD_EDGES:
        for x in MULMOD_EDGES:
            assert mulmod61(np.uint64(a), np.uint64(x)) == (a * x) % MERSENNE61, (a, x)


def test_mulmod61_random():
    """``mulmod61(a, x) == (a x) mod (2^61 - 1)`` on random 61-bit and mixed-size operands."""
    rng = np.random.default_rng(2024)
    a = rng.integers(0, 2**61, size=2000, dtype=np.uint64)
    x = rng.integers(0, 2**61, size=2000, dtype=np.uint64)
    x[:500] >>= rng.integers(0, 61, size=500, dtype=np.uint64)
    for ai, xi in zip(a, x, strict=True):
        assert mulmod61(ai, xi) == (int(ai) * int(xi)) % MERSENNE61, (int(ai), int(xi))


@pytest.mark.parametrize(
    ("a", "x", "b"), [(2**61 - 2, 2**61 - 3, 0), (2**40 + 7, 2**30 + 3, 12345), (2**33, 2**32, 1)]
)
def test_naive_uint64_affine_hash_wraps(a, x, b):
    """The bug being avoided: ``(a x + b) % p`` on uint64 wraps once ``a x >= 2^64`` and gives
    a wrong value; the min-hash of the single token ``x`` is the exact one."""
    exact = (a * x + b) % MERSENNE61
    assert a * x >= 2**64
    assert ref.naive_affine_uint64(a, x, b) != exact
    h = MinHash(2**62, 1, 0)
    h.a[:] = a
    h.b[:] = b
    assert int(h.min_hashes(np.array([[x]]))[0, 0]) == exact


# -- invariants -------------------------------------------------------------------------------


@given(case=any_family())
def test_ids_in_range_and_int64(case):
    """Range: every family returns int64 ids in ``[0, n)``, one per row (Token-ID: per id)."""
    h, batch = case
    ids = h.hash(batch)
    assert ids.dtype == np.int64
    expected_shape = batch.shape if h.input_kind == "tokens" else (batch.shape[0],)
    assert ids.shape == expected_shape
    assert ((ids >= 0) & (ids < h.n)).all()


@given(case=any_family(), pick_seed=SEEDS)
def test_identical_inputs_collide(case, pick_seed):
    """Consistency: rows that are copies of one another get the same id within a batch."""
    h, base = case
    if base.ndim == 0 or base.shape[0] == 0:
        return
    idx = np.random.default_rng(pick_seed).integers(0, base.shape[0], size=3 * base.shape[0])
    ids = h.hash(base[idx])
    for u in np.unique(idx):
        group = ids[idx == u]
        assert (group == group[0]).all()
    np.testing.assert_array_equal(h.hash(base[idx]), ids)  # and again: deterministic


@pytest.mark.parametrize(("name", "fixed"), VECTOR_CASES, ids=VECTOR_IDS)
@given(data=st.data(), d=st.integers(1, 16), seed=SEEDS, perm_seed=SEEDS)
def test_rows_hash_independently(name, fixed, data, d, seed, perm_seed):
    """Row-wise: a row's id does not depend on the rest of the batch (permute and split it)."""
    n, params = data.draw(vector_params(name, fixed), label="n, params")
    h = make_family(name, n, d, seed, **params)
    x = gaussian(seed + 1, 25, d)
    ids = h.hash(x)
    rng = np.random.default_rng(perm_seed)
    perm = rng.permutation(25)
    np.testing.assert_array_equal(h.hash(x[perm]), ids[perm])
    cut = int(rng.integers(0, 26))
    np.testing.assert_array_equal(np.concatenate([h.hash(x[:cut]), h.hash(x[cut:])]), ids)
    np.testing.assert_array_equal(h.hash(np.asfortranarray(x)), ids)  # memory layout


@pytest.mark.parametrize(("name", "fixed"), SCALE_FREE_CASES, ids=SCALE_FREE_IDS)
@given(
    data=st.data(),
    d=st.integers(1, 16),
    seed=SEEDS,
    dtype=DTYPES,
    power=st.integers(-20, 20).filter(lambda e: e != 0),
)
def test_positive_scaling_invariance(name, fixed, data, d, seed, dtype, power):
    """Scale invariance: SimHash, Voronoi and cross-polytope (both rotations) give ``x`` and
    ``2^e x`` the same id (a power of two scales every float exactly, so equality is exact)."""
    n, params = data.draw(vector_params(name, fixed), label="n, params")
    h = make_family(name, n, d, seed, **params)
    x = gaussian(seed ^ 0x5EED, 30, d, dtype)
    scaled = x * dtype(2.0**power)
    np.testing.assert_array_equal(scaled / dtype(2.0**power), x)  # the scaling was exact
    np.testing.assert_array_equal(h.hash(scaled), h.hash(x))


def test_pstable_is_not_scale_invariant():
    """Control for the scaling test: p-stable cells depend on the norm, so scaling moves ids."""
    h = PStable(2**8, 8, 0)
    x = gaussian(1, 50, 8)
    assert (h.hash(4 * x) != h.hash(x)).any()


@given(tokens=token_sets(), k=st.integers(1, 4), seed=SEEDS, perm_seed=SEEDS)
def test_minhash_order_invariance(tokens, k, seed, perm_seed):
    """Set semantics, order: permuting the tokens within each row leaves the id unchanged."""
    h = MinHash(2**40, 1, seed, k=k)
    rng = np.random.default_rng(perm_seed)
    shuffled = np.take_along_axis(tokens, np.argsort(rng.random(tokens.shape), axis=1), axis=1)
    np.testing.assert_array_equal(h.hash(shuffled), h.hash(tokens))


@given(tokens=token_sets(), k=st.integers(1, 4), seed=SEEDS, dup_seed=SEEDS)
def test_minhash_duplicate_invariance(tokens, k, seed, dup_seed):
    """Set semantics, duplicates: appending repeats of a row's own tokens leaves its id."""
    h = MinHash(2**40, 1, seed, k=k)
    rng = np.random.default_rng(dup_seed)
    cols = rng.integers(0, tokens.shape[1], size=(tokens.shape[0], 2 * tokens.shape[1]))
    repeated = np.concatenate([tokens, np.take_along_axis(tokens, cols, axis=1)], axis=1)
    np.testing.assert_array_equal(h.hash(repeated), h.hash(tokens))


@given(tokens=token_sets(), k=st.integers(1, 4), seed=SEEDS, pad_seed=SEEDS)
def test_minhash_padding_invariance(tokens, k, seed, pad_seed):
    """Set semantics, padding: inserting negative (padding) entries leaves the id unchanged."""
    h = MinHash(2**40, 1, seed, k=k)
    rng = np.random.default_rng(pad_seed)
    width = tokens.shape[1] + int(rng.integers(1, 6))
    padded = np.full((tokens.shape[0], width), -1, dtype=np.int64)
    for i, row in enumerate(tokens):
        where = np.sort(rng.choice(width, size=tokens.shape[1], replace=False))
        padded[i, where] = row
    np.testing.assert_array_equal(h.hash(padded), h.hash(tokens))


def test_minhash_sees_a_changed_token():
    """Control for the set tests: replacing one token of each row changes some ids."""
    h = MinHash(2**40, 1, 0)
    tokens = np.random.default_rng(0).integers(0, 2**40, size=(200, 4))
    other = tokens.copy()
    other[:, 0] += 1
    assert (h.hash(other) != h.hash(tokens)).any()


#: Per family: a bucket count and parameters where two different functions are told apart.
SEED_CASES = [
    ("simhash", 2**16, {}),
    ("pstable", 2**16, {}),
    ("voronoi", 64, {}),
    ("crosspolytope", 64, {"rotation": "gaussian"}),
    ("crosspolytope", 64, {"rotation": "hadamard"}),
    ("minhash", 2**16, {"k": 1}),
    ("minhash", 2**16, {"k": 3}),
]


def _seed_batch(name: str) -> np.ndarray:
    if name == "minhash":
        return np.random.default_rng(3).integers(0, 2**40, size=(64, 8))
    return gaussian(3, 64, 16)


@pytest.mark.parametrize(("name", "n", "params"), SEED_CASES, ids=lambda v: str(v))
@given(seeds=st.lists(SEEDS, min_size=2, max_size=2, unique=True))
def test_seed_determines_function(name, n, params, seeds):
    """Seeding: equal seeds (int or SeedSequence) give equal ids; different seeds give a
    different function (ids differ somewhere on 64 random inputs, almost surely)."""
    s1, s2 = seeds
    x = _seed_batch(name)
    ids = make_family(name, n, 16, s1, **params).hash(x)
    np.testing.assert_array_equal(make_family(name, n, 16, s1, **params).hash(x), ids)
    seq = np.random.SeedSequence(s1)
    np.testing.assert_array_equal(make_family(name, n, 16, seq, **params).hash(x), ids)
    assert (make_family(name, n, 16, s2, **params).hash(x) != ids).any()


def test_tokenid_ignores_seed():
    """Seeding, Token-ID: there is no randomness, every seed gives ``id mod n``."""
    tokens = np.arange(1000)
    for seed in (0, 1, 2**31):
        np.testing.assert_array_equal(TokenID(97, 1, seed).hash(tokens), tokens % 97)


@given(
    frac=st.tuples(st.integers(1, 64), st.integers(0, 64)).map(lambda t: (min(t), t[0])),
    length=st.integers(1, 64),
    extra_vocab=st.integers(0, 300),
    extra_n=st.one_of(st.just(0), st.integers(0, 2**40)),
    count=st.integers(1, 20),
    seed=SEEDS,
)
@example(frac=(7, 10), length=45, extra_vocab=0, extra_n=0, count=5, seed=0)
@example(frac=(1, 2), length=5, extra_vocab=0, extra_n=0, count=5, seed=0)
@example(frac=(1, 1), length=8, extra_vocab=0, extra_n=0, count=5, seed=0)
@example(frac=(0, 1), length=8, extra_vocab=0, extra_n=0, count=5, seed=0)
def test_tokenid_pairs_collide_at_shared_fraction(frac, length, extra_vocab, extra_n, count, seed):
    """Token-ID rate: with ``n >= V`` aligned sentence pairs collide at exactly
    ``round_half_up(f l) / l`` of their positions (f = i/q, rounded from the exact rational)."""
    i, q = frac
    s = math.floor(Fraction(i, q) * length + Fraction(1, 2))
    vocab = 2 * length - s + extra_vocab
    pairs = sentence_pairs(
        count, i / q, length=length, vocab=vocab, rng=np.random.default_rng(seed), embed=False
    )
    h = TokenID(max(2, vocab + extra_n), 1)  # n >= V (and n >= 2 when V = 1)
    agree = h.hash(pairs.tokens1) == h.hash(pairs.tokens2)
    assert (agree.sum(axis=1) == s).all()


def test_tokenid_small_n_only_adds_collisions():
    """Token-ID with ``n < V``: distinct tokens may share a bucket, so positions agree at
    least ``s`` times and, for a small ``n``, strictly more often somewhere."""
    pairs = sentence_pairs(200, 0.25, length=16, vocab=1000, rng=np.random.default_rng(1))
    h = TokenID(8, 1)
    agree = (h.hash(pairs.tokens1) == h.hash(pairs.tokens2)).sum(axis=1)
    assert (agree >= pairs.shared).all()
    assert (agree > pairs.shared).any()


# -- thread counts ----------------------------------------------------------------------------

THREAD_SCRIPT = textwrap.dedent(
    """
    import hashlib

    import numpy as np

    from lshsim.hashing import FAMILIES, make_family

    CASES = {
        "simhash": [(2**20, {})],
        "pstable": [(3**5, {"k": 5}), (2**12, {})],
        "voronoi": [(2100, {})],
        "crosspolytope": [(4200, {"rotation": "gaussian"}), (64, {"rotation": "hadamard"})],
        "minhash": [(1000, {"k": 3})],
        "tokenid": [(97, {})],
        "ngram": [(97, {"ngram": 3, "heads": 2})],
        "productkey": [(48**2, {})],
        "engram": [(97, {"ngram": 3, "heads": 2})],
    }
    rng = np.random.default_rng(7)
    x = rng.standard_normal((9000, 24))  # several row tiles for the argmax families
    tokens = rng.integers(-3, 2**50, size=(300, 12))
    tokens[:, 0] = np.abs(tokens[:, 0])
    vocab = rng.integers(-3, 32128, size=(3000, 20))  # ids < 2^32: min-hash's fast path
    vocab[:, 0] = np.abs(vocab[:, 0])
    for name in FAMILIES:
        for n, params in CASES[name]:
            h = make_family(name, n, 24, 3, **params)
            batches = [x, x.astype(np.float32)] if h.input_kind == "vectors" else [tokens, vocab]
            for b in batches:
                if h.input_kind == "sequences":  # 32-bit ids (n-gram families)
                    b = np.abs(b) % 2**32
                ids = h.hash(np.abs(b) if name == "tokenid" else b)
                print(name, n, b.dtype, hashlib.sha256(ids.tobytes()).hexdigest())
    """
)


def test_ids_independent_of_thread_counts():
    """Threads: NUMBA/OPENBLAS/OMP/MKL thread counts of 1 and 2 give the same ids, every
    family (fixed batches over the tile sizes, float32 and float64)."""
    outputs = []
    for threads in ("1", "2"):
        env = dict(os.environ)
        for var in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            env[var] = threads
        env["MKL_NUM_THREADS"] = threads
        proc = subprocess.run(
            [sys.executable, "-c", THREAD_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    lines = outputs[0].splitlines()
    assert {line.split()[0] for line in lines} == set(FAMILIES)
    assert outputs[0] == outputs[1]


# -- bad input ----------------------------------------------------------------------------------


def _n8(name):
    """8 buckets, or the nearest valid count (product keys: 16 = 4^2)."""
    return 16 if name == "productkey" else 8


def _hash(name, batch, n=None, d=4, **params):
    n = _n8(name) if n is None else n
    return lambda: make_family(name, n, d, 0, **params).hash(batch)


BAD_INPUT = [
    # bucket counts
    *[(lambda nm=nm: make_family(nm, 1, 4), r"n \(buckets\)") for nm in FAMILIES],
    *[(lambda nm=nm: make_family(nm, -4, 4), r"n \(buckets\)") for nm in FAMILIES],
    (lambda: make_family("voronoi", 8.5, 4), r"n \(buckets\) must be an integer"),
    (lambda: make_family("voronoi", True, 4), r"n \(buckets\) must be an integer"),
    (lambda: make_family("voronoi", 2**62 + 1, 4), r"n \(buckets\)"),
    (lambda: make_family("simhash", 12, 4), r"n \(buckets\) must be a power of two"),
    (lambda: make_family("crosspolytope", 7, 4), r"n \(buckets\) must be even"),
    (lambda: make_family("pstable", 12, 4), r"n \(buckets\) must be a power of two.*unless k"),
    (lambda: make_family("pstable", 10, 4, k=2), r"n \(buckets\) must be r\^k.*k=2"),
    (lambda: make_family("pstable", 64, 4, k=4), r"n \(buckets\) must be r\^k.*k=4"),
    (lambda: make_family("voronoi", 2**20, 2**10), r"n \(buckets\) too large"),
    # dimension, seed and family parameters
    *[(lambda nm=nm: make_family(nm, _n8(nm), 0), r"d \(dimension\)") for nm in FAMILIES],
    (lambda: make_family("productkey", 8, 4), r"n \(buckets\) must be a perfect square"),
    (lambda: make_family("productkey", 16, 5), r"d \(dimension\) must be even"),
    (lambda: make_family("simhash", 8, -1), r"d \(dimension\)"),
    (lambda: make_family("simhash", 8, 2.5), r"d \(dimension\)"),
    (lambda: make_family("simhash", 8, 4, seed=-1), r"seed"),
    (lambda: make_family("pstable", 8, 4, k=0), r"k \(directions\)"),
    (lambda: make_family("pstable", 8, 4, w=0.0), r"w \(width\)"),
    (lambda: make_family("pstable", 8, 4, w=float("nan")), r"w \(width\)"),
    (lambda: make_family("minhash", 8, 4, k=0), r"k \(min-hashes\)"),
    (lambda: make_family("crosspolytope", 8, 4, rotation="fft"), r"rotation must be"),
    *[
        (lambda nm=nm: make_family(nm, 8, 4, bogus=1), rf"unknown parameter\(s\) for {nm}: bogus")
        for nm in FAMILIES
    ],
    (lambda: get_family("lsh"), r"family must be one of .*simhash"),
    (lambda: make_family("SimHash", 8, 4), r"family must be one of"),
    # vector batches
    *[
        (_hash(nm, np.array([[0.0, np.nan, 1, 2]])), r"batch must be finite")
        for nm in VECTOR_FAMILIES
    ],
    (_hash("simhash", np.array([[0.0, np.inf, 1, 2]])), r"batch must be finite"),
    (_hash("voronoi", np.array([[0.0, -np.inf, 1, 2]], dtype=np.float32)), r"batch must be finite"),
    *[
        (_hash(nm, np.ones((3, 4), dtype=np.int64)), r"batch must have dtype")
        for nm in VECTOR_FAMILIES
    ],
    (_hash("simhash", np.ones((3, 4), dtype=np.complex128)), r"batch must have dtype"),
    (_hash("simhash", np.ones((3, 4), dtype=np.float16)), r"batch must have dtype"),
    (_hash("voronoi", np.ones((3, 4), dtype=bool)), r"batch must have dtype"),
    *[(_hash(nm, np.ones(4)), r"batch must have shape \(m, 4\)") for nm in VECTOR_FAMILIES],
    (_hash("simhash", np.ones((3, 5))), r"batch must have shape \(m, 4\)"),
    (_hash("crosspolytope", np.ones((2, 3, 4))), r"batch must have shape \(m, 4\)"),
    (_hash("crosspolytope", np.ones((3, 5)), rotation="hadamard"), r"batch must have shape"),
    # token batches
    (_hash("minhash", np.array([[1, 2], [-1, -1]])), r"batch rows must each hold .* >= 0"),
    (_hash("minhash", np.empty((2, 0), dtype=np.int64)), r"batch rows must each hold"),
    (_hash("minhash", np.array([1, 2, 3])), r"batch must be 2-D"),
    (_hash("minhash", np.array([[1.0, 2.0]])), r"batch must be an integer array"),
    (_hash("minhash", np.array([[1, MERSENNE61]])), r"batch token ids must be < 2\^61 - 1"),
    (_hash("tokenid", np.array([3, -1, 2])), r"batch token ids must be >= 0"),
    (_hash("tokenid", np.array([0.5])), r"batch must be an integer array"),
    (_hash("tokenid", np.array([2**64 - 1], dtype=np.uint64)), r"batch token ids must be <"),
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_raises_value_error_naming_parameter(call, match):
    """Validation: each bad input raises ValueError whose message names the parameter."""
    with pytest.raises(ValueError, match=match):
        call()


def test_pstable_k1_accepts_any_large_n():
    """Regression: ``k = 1`` means ``r = n``; ``n > 2^53`` must not be lost to float rounding,
    and the digit ``cell mod n`` must be exact (negative cells map to ``n - 1``, ``n - 2``...)."""
    for n in (2**62, 2**62 - 1000, 10**18 + 9):
        h = PStable(n, 3, 0, k=1, w=0.5)
        assert h.radix == n
        x = gaussian(5, 300, 3)
        ids = h.hash(x)
        np.testing.assert_array_equal(ids, ref.pstable(h, x))
        assert (ids > n // 2).any()  # some negative cells, mapped to n - |c|


@pytest.mark.parametrize("name", list(FAMILIES))
def test_empty_batch_gives_empty_ids(name):
    """An empty batch hashes to an empty int64 array (no special-casing needed by callers)."""
    cls = FAMILIES[name]
    h = make_family(name, 16, 4, seed=0)
    if cls.input_kind == "vectors":
        batch = np.zeros((0, 4))
    elif cls.input_kind == "token_sets":
        batch = np.zeros((0, 0), dtype=np.int64)
    else:
        batch = np.zeros(0, dtype=np.int64)
    ids = h.hash(batch)
    assert ids.dtype == np.int64 and ids.shape == (0,)


@pytest.mark.parametrize("name", ["voronoi", "crosspolytope", "simhash"])
def test_float32_huge_entries_do_not_overflow(name):
    """float32 entries near 2^125 are hashed in float64: scale invariance survives."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((500, 16)).astype(np.float32)
    h = make_family(name, 64, 16, seed=1)
    np.testing.assert_array_equal(h.hash(x * np.float32(2.0**125)), h.hash(x))


def test_big_endian_floats_are_accepted():
    """A non-native byte order is converted, not rejected."""
    x = np.random.default_rng(0).standard_normal((20, 8))
    h = make_family("voronoi", 32, 8, seed=0)
    np.testing.assert_array_equal(h.hash(x.astype(">f8")), h.hash(x))


def test_pstable_kernel_refuses_inexact_cells():
    """Cell indices past 2^52 would be rounded: the kernel raises, naming w (width)."""
    h = make_family("pstable", 4, 3, seed=0, k=1, w=1e-9)
    with pytest.raises(ValueError, match=r"w \(width\)"):
        h.hash(np.full((1, 3), 1e300))
