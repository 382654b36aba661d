"""Min-hash of token sets (Broder 1997), with exact arithmetic modulo the Mersenne prime 2^61 - 1.

Each of the ``k`` hash functions is ``h(x) = (a x + b) mod p`` with ``p = 2^61 - 1``,
``a`` uniform in ``[1, p)`` and ``b`` uniform in ``[0, p)``. The product ``a x`` has up to 122
bits; it is computed exactly from 32-bit halves and folded with ``2^61 = 1 (mod p)``, never
wrapping a 64-bit integer (the bug in datasketch's ``(a * h + b) % p`` on uint64).

What collides, precisely. The min-hash of a set ``S`` under ``h`` is ``M(S) = min_{x in S} h(x)``.
For ``a != 0``, ``h`` is a bijection of ``[0, p)``, so ``M(S) = M(T)`` iff the two sets have the
same minimising token. With an ideal random permutation that happens with probability
``J = |S n T| / |S u T|`` (Jaccard). The bucket is

* ``k = 1`` (default): ``M(S) mod n``;
* ``k > 1``: ``(sum_i c_i M_i(S)) mod p mod n`` with random ``c_i in [1, p)``;

so two sets collide when all ``k`` minimisers agree (probability ``J^k`` for ideal min-wise
hashing), or, otherwise, when different min-hash values happen to agree modulo ``n`` (about
``1/n``). Hence ``P = J^k + (1 - J^k) eps`` with ``eps ~ 1/n``; the linear family is
2-universal, not exactly min-wise independent, and on random token ids its bias is far below
Monte-Carlo resolution (tested).

Input: an int array ``(m, l)`` of token ids in ``[0, 2^61 - 1)``; negative ids are padding and
are ignored, so rows of different lengths can share one array. Order and duplicates within a
row do not matter (it is a set).

References:
    A. Broder, "On the resemblance and containment of documents", 1997.
    M. Thorup, "High speed hashing for integers and strings", 2015 (Mersenne-prime reduction).
"""

from __future__ import annotations

import numba
import numpy as np

from lshsim._validate import as_token_ids, check_buckets, check_int
from lshsim.hashing.base import HashFamily, OverlapLaw, Param
from lshsim.laws.closed_forms import minhash_law
from lshsim.sentences import shared_tokens

#: The Mersenne prime 2^61 - 1.
MERSENNE61 = (1 << 61) - 1
_P = np.uint64(MERSENNE61)
_MASK32 = np.uint64(0xFFFFFFFF)
_MASK29 = np.uint64((1 << 29) - 1)
#: Batches of at least this many id slots use the byte tables for ids < 2^16 (building them
#: costs 512 k exact products, about what 128 tokens' hashes cost).
TABLE_MIN_IDS = 2048


@numba.njit(cache=True, inline="always")
def _fold(v):  # pragma: no cover - jit
    """Reduce a uint64 ``v < 2^64`` to ``[0, p)`` using ``2^61 = 1 (mod p)``."""
    v = (v & _P) + (v >> np.uint64(61))
    v = (v & _P) + (v >> np.uint64(61))
    if v >= _P:
        v -= _P
    return v


@numba.njit(cache=True, inline="always")
def mulmod61(a, x):  # pragma: no cover - jit
    """Exact ``(a * x) mod (2^61 - 1)`` for uint64 ``a, x < 2^61``.

    ``a = a1 2^32 + a0``, ``x = x1 2^32 + x0``:
    ``a x = a1 x1 2^64 + (a1 x0 + a0 x1) 2^32 + a0 x0`` with ``2^64 = 8`` and
    ``mid 2^32 = (mid >> 29) 2^61 + (mid mod 2^29) 2^32 = (mid >> 29) + (mid mod 2^29) 2^32``.
    Every partial sum stays below 2^63.
    """
    a0 = a & _MASK32
    a1 = a >> np.uint64(32)
    x0 = x & _MASK32
    x1 = x >> np.uint64(32)
    hi = (a1 * x1) << np.uint64(3)  # < 2^61
    mid = a1 * x0 + a0 * x1  # < 2^62
    lo = _fold(a0 * x0)  # < p
    s = hi + (mid >> np.uint64(29)) + ((mid & _MASK29) << np.uint64(32)) + lo
    return _fold(s)


@numba.njit(cache=True, inline="always")
def _affine32(alo, ahi, b, x):  # pragma: no cover - jit
    """Exact ``(a x + b) mod p`` for ``x < 2^32``, ``a = ahi 2^29 + alo`` (``alo < 2^29``).

    ``a x = H 2^29 + L`` with ``H = ahi x < 2^64`` and ``L = alo x < 2^61`` (two 32 x 32-bit
    products, which vectorise to ``pmuludq``); ``H 2^29 = (H >> 32) 2^61 + (H mod 2^32) 2^29
    = (H >> 32) + (H mod 2^32) 2^29 (mod p)``. The sum stays below ``2^32 + 3 2^61 < 2^63``, one
    fold brings it below ``p + 4`` and ``min(v, v - p)`` (unsigned, wrapping) makes it canonical.
    """
    h = np.uint64(ahi) * x
    s = (h >> np.uint64(32)) + ((h & _MASK32) << np.uint64(29)) + np.uint64(alo) * x + b
    v = (s & _P) + (s >> np.uint64(61))
    return min(v, v - _P)


@numba.njit(cache=True, nogil=True, parallel=True)
def minhash_values(tokens, a, b, out):  # pragma: no cover - jit
    """``out[i, j] = min over tokens[i, t] >= 0 of (a_j tokens[i, t] + b_j) mod p``.

    Rows with no non-negative token get ``p`` (the caller rejects them). Rows run in parallel
    (``prange``); each row is computed alone, so the values do not depend on the thread count.
    The inner loop runs over the ``k`` hash functions, contiguously, so it vectorises, and
    takes four tokens per pass (padding slots repeat the row's first id, which leaves the
    minimum unchanged). Each row takes the cheapest exact path its largest id allows:

    * ids < 2^16 (a batch of at least ``TABLE_MIN_IDS`` slots): two byte tables per hash,
      ``lo[d, j] = (a_j d + b_j) mod p`` and ``hi[d, j] = a_j 256 d mod p`` (2 x 256 x k
      values, built once per call, L2-resident for k = 128); the hash of ``x = 256 h + l`` is
      ``lo[l, j] + hi[h, j] < 2p``, made canonical by ``min(s, s - p)`` (unsigned, wrapping);
    * ids < 2^32: the two-product :func:`_affine32`;
    * larger ids: the general :func:`mulmod61`.
    """
    m, length = tokens.shape
    k = a.shape[0]
    alo = np.empty(k, dtype=np.uint32)
    ahi = np.empty(k, dtype=np.uint32)
    for j in range(k):
        alo[j] = np.uint32(a[j] & _MASK29)
        ahi[j] = np.uint32(a[j] >> np.uint64(29))
    tables = m * length >= TABLE_MIN_IDS
    lo_tab = np.empty((256 if tables else 0, k), dtype=np.uint64)
    hi_tab = np.empty((256 if tables else 0, k), dtype=np.uint64)
    if tables:
        for d in range(256):
            for j in range(k):
                lo_tab[d, j] = _fold(mulmod61(a[j], np.uint64(d)) + b[j])
                hi_tab[d, j] = mulmod61(a[j], np.uint64(d << 8))
    for i in numba.prange(m):
        row = out[i]
        for j in range(k):
            row[j] = _P
        first = np.int64(-1)
        top = np.int64(0)
        for t in range(length):
            x = tokens[i, t]
            if x >= 0:
                if first < 0:
                    first = x
                top = max(top, x)
        if first < 0:
            continue
        if tables and top < 65536:
            for t in range(0, length, 4):
                x0 = tokens[i, t]
                x1 = tokens[i, t + 1] if t + 1 < length else first
                x2 = tokens[i, t + 2] if t + 2 < length else first
                x3 = tokens[i, t + 3] if t + 3 < length else first
                x0 = x0 if x0 >= 0 else first
                x1 = x1 if x1 >= 0 else first
                x2 = x2 if x2 >= 0 else first
                x3 = x3 if x3 >= 0 else first
                l0, h0 = lo_tab[x0 & 255], hi_tab[x0 >> 8]
                l1, h1 = lo_tab[x1 & 255], hi_tab[x1 >> 8]
                l2, h2 = lo_tab[x2 & 255], hi_tab[x2 >> 8]
                l3, h3 = lo_tab[x3 & 255], hi_tab[x3 >> 8]
                for j in range(k):
                    s0, s1 = l0[j] + h0[j], l1[j] + h1[j]
                    s2, s3 = l2[j] + h2[j], l3[j] + h3[j]
                    v01 = min(min(s0, s0 - _P), min(s1, s1 - _P))
                    v23 = min(min(s2, s2 - _P), min(s3, s3 - _P))
                    row[j] = min(row[j], min(v01, v23))
        elif top >> 32 == 0:
            for t in range(0, length, 4):
                x0 = tokens[i, t]
                x1 = tokens[i, t + 1] if t + 1 < length else first
                x2 = tokens[i, t + 2] if t + 2 < length else first
                x3 = tokens[i, t + 3] if t + 3 < length else first
                # the masks are no-ops (ids < 2^32) that let LLVM pick 32-bit multiplies
                u0 = np.uint64(x0 if x0 >= 0 else first) & _MASK32
                u1 = np.uint64(x1 if x1 >= 0 else first) & _MASK32
                u2 = np.uint64(x2 if x2 >= 0 else first) & _MASK32
                u3 = np.uint64(x3 if x3 >= 0 else first) & _MASK32
                for j in range(k):
                    lo, hi, bj = alo[j], ahi[j], b[j]
                    v01 = min(_affine32(lo, hi, bj, u0), _affine32(lo, hi, bj, u1))
                    v23 = min(_affine32(lo, hi, bj, u2), _affine32(lo, hi, bj, u3))
                    row[j] = min(row[j], min(v01, v23))
        else:
            for t in range(length):
                x = tokens[i, t]
                if x >= 0:
                    xu = np.uint64(x)
                    for j in range(k):
                        row[j] = min(row[j], _fold(mulmod61(a[j], xu) + b[j]))


@numba.njit(cache=True, nogil=True, parallel=True)
def combine_buckets(values, c, n, out):  # pragma: no cover - jit
    """``out[i] = (sum_j c_j values[i, j]) mod p mod n`` (for ``k = 1``: ``values[i, 0] mod n``).

    Rows run in parallel; each row's sum is exact, so the ids do not depend on the threads.
    """
    m, k = values.shape
    nn = np.uint64(n)
    for i in numba.prange(m):
        if k == 1:
            acc = values[i, 0]
        else:
            acc = np.uint64(0)
            for j in range(k):
                acc = _fold(acc + mulmod61(c[j], values[i, j]))
        out[i] = np.int64(acc % nn)


class MinHash(HashFamily):
    """Min-hash bucket of each token set, from ``k`` concatenated min-hashes (default 1).

    Params:
        k: number of min-hashes combined into the bucket (default 1: ``P ~ Jaccard``;
            ``k``: ``P ~ Jaccard^k``).

    ``hash(tokens)`` takes an int array ``(m, l)`` (negative = padding) and returns int64[m].
    """

    name = "minhash"
    help = "min-hash of the token set, exact mod 2^61-1; k concatenated min-hashes"
    parameters = (
        Param("k", int, "minhash: concatenated min-hashes (default 1)", metavar="K", draw=(1, 8)),
    )
    reference = "lshsim.testing.reference:minhash"
    overlap_law_is_exact = True
    input_kind = "token_sets"
    similarity = "jaccard"
    law_is_similarity = True

    @classmethod
    def amplification_law(cls, n, similarities, *, length=32, vocab=32128, **params):
        """One atom, the Jaccard index ``J``: one min-hash value agrees with probability ``J``.

        Under ideal min-wise hashing; a band of ``k`` values compared for equality, as
        datasketch's ``MinHashLSH`` bands a signature, collides with probability ``J^k`` (its
        values are 32-bit or wider, so distinct minimisers agree by chance with probability
        at most about ``2^-32`` per value, which the law leaves out). ``n`` plays no part (a
        band is keyed by its values, not folded mod ``n``); the tuner chooses the band, so
        ``k`` must stay 1.
        """
        if cls.check_params(n, **params)["k"] != 1:
            raise ValueError("k (min-hashes) must be 1 here: the band size is what is tuned")
        j = np.asarray(similarities, dtype=np.float64)
        return j[:, None], np.ones_like(j)[:, None]

    @classmethod
    def overlap_law(cls, n, overlap, *, dim, length, vocab, cosines, seed, **params):
        """``J^k + (1 - J^k) / n``, ``J = s / (2l - s)`` the Jaccard index of the token sets."""
        p = cls.check_params(n, **params)
        return OverlapLaw(minhash_law(p["n"], shared_tokens(overlap, length), length, p["k"]))

    @classmethod
    def check_params(cls, n, k=1, **params):
        """Validate ``n`` in ``[2, 2^62]`` and ``k >= 1``."""
        if params:
            raise ValueError(f"unknown parameter(s) for minhash: {', '.join(params)}")
        return {"n": check_buckets(n), "k": check_int("k (min-hashes)", k, 1, 4096)}

    def _draw(self, rng):
        k = self.params["k"]
        self.a = rng.integers(1, MERSENNE61, size=k, dtype=np.uint64)
        self.b = rng.integers(0, MERSENNE61, size=k, dtype=np.uint64)
        self.c = rng.integers(1, MERSENNE61, size=k, dtype=np.uint64)

    def min_hashes(self, tokens, out: np.ndarray | None = None) -> np.ndarray:
        """The ``k`` min-hash values of each row: uint64[m, k] in ``[0, 2^61 - 1)``.

        Args:
            tokens: int ``(m, l)`` token ids, negative = padding; every row needs an id >= 0.
            out: optional C-contiguous uint64 ``(m, k)`` array to write the values into (for
                callers hashing a stream of batches into one buffer; a fresh array is
                allocated otherwise). On a ``ValueError`` about an empty row it may already
                hold partial results.

        Returns:
            uint64[m, k] (``out`` when given).
        """
        tokens = as_token_ids(tokens, "batch", ndim=2)
        shape = (tokens.shape[0], self.params["k"])
        if out is None:
            out = np.empty(shape, dtype=np.uint64)
        elif not (
            isinstance(out, np.ndarray)
            and out.dtype == np.uint64
            and out.shape == shape
            and out.flags.c_contiguous
            and out.flags.writeable
        ):
            raise ValueError(f"out must be a writeable C-contiguous uint64 array of shape {shape}")
        if tokens.shape[0] and tokens.shape[1] == 0:
            raise ValueError("batch rows must each hold at least one token id >= 0")
        minhash_values(tokens, self.a, self.b, out)
        # a row with a real id has values < p; only a row of padding keeps the start value p
        if tokens.shape[0] and (out[:, 0] == _P).any():
            raise ValueError("batch rows must each hold at least one token id >= 0")
        return out

    def _hash(self, tokens):
        values = self.min_hashes(tokens)
        out = np.empty(values.shape[0], dtype=np.int64)
        combine_buckets(values, self.c, self.n, out)
        return out
