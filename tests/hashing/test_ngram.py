"""Hashed n-grams: the Numba kernel against the Python-int reference, NumPy and JAX bit-identity,
the moduli rule, the ideal-hash behaviour the theory assumes, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lshsim.hashing import NGram, make_family
from lshsim.hashing.ngram import is_prime, ngram_hash, ngram_moduli
from lshsim.testing import reference as ref

SEEDS = st.integers(0, 2**32 - 1)


def _ids(seed: int, shape: tuple[int, ...], hi: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, hi, size=shape, dtype=np.int64)


@given(
    seed=SEEDS,
    order=st.integers(1, 5),
    heads=st.integers(1, 4),
    m=st.one_of(st.integers(2, 50), st.integers(2, 2**31)),
    shape=st.tuples(st.integers(0, 4), st.integers(0, 9)),
    hi=st.sampled_from([3, 32128, 2**32]),
)
def test_kernel_matches_python_int_reference(seed, order, heads, m, shape, hi):
    """Kernel == reference: every window's bucket in every head, ids up to 2^32 - 1."""
    h = make_family("ngram", m, 1, seed, ngram=order, heads=heads)
    x = _ids(seed + 1, shape, hi)
    ids = h.hash(x)
    np.testing.assert_array_equal(ids, ref.ngram(h, x))
    windows = max(shape[1] - order + 1, 0)
    assert ids.shape == ((*shape[:1], windows, heads) if heads > 1 else (*shape[:1], windows))
    assert ids.dtype == np.int64
    assert (ids >= 0).all() and (ids < (h.moduli if heads > 1 else m)).all()


@given(seed=SEEDS, order=st.integers(1, 4), heads=st.integers(1, 3), m=st.integers(2, 2**31))
def test_numpy_array_hash_is_the_kernel_bit_for_bit(seed, order, heads, m):
    """``ngram_hash`` (uint32 array code, xp=numpy) == the kernel; with ``pad_id`` it is the
    kernel on the left-padded sequence, one bucket per position."""
    h = make_family("ngram", m, 1, seed, ngram=order, heads=heads)
    x = _ids(seed, (3, 7), 2**32)
    kern = h.hash(x).reshape(3, -1, heads)
    np.testing.assert_array_equal(ngram_hash(x, h.multipliers, h.salts, h.moduli), kern)
    padded = np.concatenate([np.full((3, order - 1), 5), x], axis=1)
    with_pad = ngram_hash(x, h.multipliers, h.salts, h.moduli, pad_id=5)
    assert with_pad.shape == (3, 7, heads)
    np.testing.assert_array_equal(with_pad, h.hash(padded).reshape(3, 7, heads))


def test_jax_hash_is_the_kernel_bit_for_bit():
    """JAX (32-bit, inside jit, int32 ids) gives the kernel's buckets exactly, for several
    orders, heads and moduli including a power of two and a large prime."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    x = rng.integers(0, 32128, size=(4, 33))
    x[0, :5] = 2**31 - 1  # the largest int32 id
    for order, heads, m in ((1, 1, 2**16), (2, 4, 160_651), (3, 8, 1009), (5, 2, 2**31)):
        h = make_family("ngram", m, 1, order, ngram=order, heads=heads)
        fn = jax.jit(lambda t, h=h: ngram_hash(t, h.multipliers, h.salts, h.moduli, xp=jnp))
        got = np.asarray(fn(jnp.asarray(x, dtype=jnp.int32)))
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, h.hash(x).reshape(4, -1, heads))


def test_moduli_rule():
    """One head: m itself; H >= 2: the H smallest primes >= m, distinct and increasing
    (checked against trial division)."""

    def prime(k):
        return k > 1 and all(k % p for p in range(2, math.isqrt(k) + 1))

    assert ngram_moduli(1000) == (1000,)
    assert ngram_moduli(1000, 4) == (1009, 1013, 1019, 1021)
    for m in (2, 3, 24, 160_640, 2**31):
        for heads in (2, 5):
            mods = ngram_moduli(m, heads)
            assert len(mods) == heads and all(prime(p) for p in mods)
            below = [k for k in range(m, mods[-1] + 1) if prime(k)] if m < 10**6 else list(mods)
            assert list(mods) == below[:heads] and mods[0] >= m
    assert [k for k in range(2000) if is_prime(k)] == [k for k in range(2000) if prime(k)]
    assert is_prime(2**31 - 1) and not is_prime(2**31 + 1)


def test_same_seed_same_function_and_heads_differ():
    """Equal seeds give equal ids; the heads are different functions (own multipliers)."""
    x = _ids(3, (50, 12), 32128)
    a = make_family("ngram", 2**20, 1, 7, ngram=2, heads=3)
    b = make_family("ngram", 2**20, 1, 7, ngram=2, heads=3)
    np.testing.assert_array_equal(a.hash(x), b.hash(x))
    assert (a.multipliers % 2 == 1).all()
    assert len({tuple(r) for r in a.multipliers}) == 3


@pytest.mark.parametrize(("m", "heads", "pos", "other"), [(5, 3, 1, 13), (8, 1, 0, 10 + 2**16)])
def test_distinct_ngrams_collide_like_an_ideal_hash(m, heads, pos, other):
    """The ideal-hash model the theory assumes, on structured inputs (consecutive ids, windows
    differing in one position; and a power-of-two table with ids differing only above bit 16,
    which a multiply without the finaliser would map to the same low bits): over fresh
    functions a distinct pair collides in head h with probability 1/m_h, and in all H heads
    with prod 1/m_h (independent heads), within 4.5 standard errors; equal n-grams always
    collide."""
    trials = 40_000
    rng = np.random.default_rng(11)
    t1 = np.tile(np.array([[10, 11, 12]]), (trials, 1))
    t2 = t1.copy()
    t2[:, pos] = other  # the windows differ in one token only
    law = NGram.pair_collisions(m, t1, t2, rng, ngram=3, heads=heads)
    moduli = ngram_moduli(m, heads)
    probs = [1 / p for p in moduli]
    exp_all = math.prod(probs)
    se = math.sqrt(exp_all * (1 - exp_all) / trials)
    assert abs(law[-1] / trials - exp_all) <= 4.5 * se
    mean = sum(k * c for k, c in enumerate(law)) / trials
    se_mean = math.sqrt(sum(p * (1 - p) for p in probs) / trials)
    assert abs(mean - sum(probs)) <= 4.5 * se_mean
    same = NGram.pair_collisions(m, t1, t1.copy(), rng, ngram=3, heads=heads)
    assert same[-1] == trials


def test_short_and_empty_sequences():
    """l < N gives no window (shape [..., 0]); an empty batch gives an empty int64 array."""
    h = make_family("ngram", 16, 1, 0, ngram=3, heads=2)
    assert h.hash(np.zeros((4, 2), dtype=np.int64)).shape == (4, 0, 2)
    assert make_family("ngram", 16, 1).hash(np.zeros(0, dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: make_family("ngram", 8, 1).hash(np.array([1, -1, 2])), r"\[0, 2\^32\)"),
        (lambda: make_family("ngram", 8, 1).hash(np.array([1, 2**32])), r"\[0, 2\^32\)"),
        (lambda: make_family("ngram", 8, 1).hash(np.array([0.5, 1.0])), r"integer array"),
        (lambda: make_family("ngram", 8, 1, ngram=0), r"ngram \(N\)"),
        (lambda: make_family("ngram", 8, 1, ngram=65), r"ngram \(N\)"),
        (lambda: make_family("ngram", 8, 1, heads=0), r"heads \(H\)"),
        (lambda: make_family("ngram", 2**31 + 1, 1), r"n \(buckets\) must be <= 2\^31"),
        (lambda: ngram_moduli(1, 2), r"n \(buckets\)"),
    ],
)
def test_bad_input(call, match):
    """Each bad input raises a one-line ValueError naming the parameter."""
    with pytest.raises(ValueError, match=match):
        call()
