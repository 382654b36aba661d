"""Slow, obvious reference implementations of every hash family, and a Bartlett sampler.

The references serve the kernel tests and the peer benchmarks; the ``K x K`` Bartlett sampler
of the sentence-pair cosine serves the sentence tests.

Each reference rebuilds a family's hash from the parameters drawn on the instance and computes
it the plain way: Python loops and integers, NumPy ``argmax``, a Walsh-Hadamard *matrix*.

The one step shared with the library is the projection ``x @ W.T``, done in the dtype of the
batch as the library documents (float32 batches hash in single precision): a dot product
recomputed in another order or precision may round differently and flip a near-tie, so a
bit-identical comparison needs the same projection. Everything after it -- sign packing,
cell indices and their radix digits, argmax and its tie rule, the pseudo-random rotation, all
of min-hash -- is independent of the kernels.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import scipy.linalg

from lshsim.sentences import shared_tokens

#: The Mersenne prime 2^61 - 1, as a Python int.
P61 = 2**61 - 1


def project(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w.T`` in the dtype of ``x`` (float[m, rows(w)])."""
    return x @ np.ascontiguousarray(w, dtype=x.dtype).T


def int_root(n: int, k: int) -> int | None:
    """The integer ``r`` with ``r^k == n`` (exact bisection on Python ints), or None."""
    lo, hi = 1, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid**k <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo if lo**k == n else None


def simhash(h, x: np.ndarray) -> np.ndarray:
    """Bucket ``sum_j [g_j . x > 0] 2^j`` from ``h.planes``."""
    out = []
    for row in project(x, h.planes):
        out.append(sum(2**j for j, p in enumerate(row) if p > 0))
    return np.array(out, dtype=np.int64).reshape(x.shape[0])


def pstable(h, x: np.ndarray) -> np.ndarray:
    """Bucket ``sum_j (floor((g_j . x + b_j) / w) mod r) r^j`` with Python-int digits."""
    k, w = h.params["k"], h.params["w"]
    r = int_root(h.n, k)
    out = []
    for row in project(x, h.directions):
        bucket = 0
        for j in range(k):
            cell = math.floor((float(row[j]) + float(h.offsets[j])) / w)
            bucket += (cell % r) * r**j
        out.append(bucket)
    return np.array(out, dtype=np.int64).reshape(x.shape[0])


def voronoi(h, x: np.ndarray) -> np.ndarray:
    """Bucket ``argmax_i g_i . x`` from ``h.centres`` (numpy's argmax: ties go to the lowest)."""
    return np.argmax(project(x, h.centres), axis=1).astype(np.int64)


def topk(scores: np.ndarray, k: int) -> np.ndarray:
    """Top-``k`` columns of each row by a stable sort of ``-scores`` (ties: lower column)."""
    return np.argsort(-scores, axis=1, kind="stable")[:, :k].astype(np.int64)


def productkey(h, x: np.ndarray) -> np.ndarray:
    """Slot ``i * s + j`` of the two halves' argmaxes, from ``h.keys1``, ``h.keys2``."""
    half = h.d // 2
    i = project(x[:, :half], h.keys1).argmax(axis=1)
    j = project(x[:, half:], h.keys2).argmax(axis=1)
    return (i * h.s + j).astype(np.int64)


def productkey_topk(h, x: np.ndarray, k: int) -> np.ndarray:
    """PKM's top-``k`` by brute force: the top-``k`` of all ``s^2`` sums ``s1_i + s2_j``."""
    half = h.d // 2
    s1 = project(x[:, :half], h.keys1).astype(np.float64)
    s2 = project(x[:, half:], h.keys2).astype(np.float64)
    sums = (s1[:, :, None] + s2[:, None, :]).reshape(x.shape[0], h.s * h.s)  # column i * s + j
    return topk(sums, k)


def signed_argmax(y: np.ndarray) -> np.ndarray:
    """Cross-polytope bucket of rotated rows ``y`` (float[rows, m]).

    Id ``j`` for ``+e_j`` and ``j + m`` for ``-e_j``: the argmax over ``concat([y, -y])``, with
    numpy's rule that a tie goes to the lowest index.
    """
    return np.argmax(np.concatenate([y, -y], axis=1), axis=1).astype(np.int64)


def walsh_hadamard(v: np.ndarray) -> np.ndarray:
    """Unnormalised Walsh-Hadamard transform of the last axis, by the Sylvester recursion.

    ``H_2n [a; b] = [H_n a + H_n b; H_n a - H_n b]``. It adds the same pairs in the same
    order as any radix-2 butterfly, so it is bit-identical to one; a matrix product
    (:func:`walsh_hadamard_matrix`) agrees exactly on integers and to rounding otherwise, but
    an input confined to few directions (``d = 1``) has near-ties that rounding decides.
    """
    half = v.shape[-1] // 2
    if half == 0:
        return v.copy()
    a = walsh_hadamard(v[..., :half])
    b = walsh_hadamard(v[..., half:])
    return np.concatenate([a + b, a - b], axis=-1)


def walsh_hadamard_matrix(v: np.ndarray) -> np.ndarray:
    """The same transform as the product with the Sylvester matrix ``scipy.linalg.hadamard``."""
    return v @ scipy.linalg.hadamard(v.shape[-1]).astype(np.float64).T


def hadamard_rotation(h, x: np.ndarray) -> np.ndarray:
    """``y = (H S_3 H S_2 H S_1 [x, 0])[:m]`` in float64, ``[x, 0]`` zero-padded to ``D``."""
    rounds, dim = h.signs.shape
    y = np.zeros((x.shape[0], dim))
    y[:, : x.shape[1]] = x
    for r in range(rounds):
        y = walsh_hadamard(y * h.signs[r])
    return y[:, : h.n // 2]


def crosspolytope(h, x: np.ndarray) -> np.ndarray:
    """Cross-polytope bucket from ``h.rotation`` (projection or rotation rows) or ``h.signs``."""
    if h.params["rotation"] in ("gaussian-projection", "orthogonal"):
        return signed_argmax(project(x, h.rotation))
    return signed_argmax(hadamard_rotation(h, x))


def min_hashes(h, tokens: np.ndarray) -> list[list[int]]:
    """``M_j(row) = min over ids t >= 0 of (a_j t + b_j) mod p``, exact Python ints."""
    a = [int(v) for v in h.a]
    b = [int(v) for v in h.b]
    out = []
    for row in np.asarray(tokens):
        ids = [int(t) for t in row if t >= 0]
        out.append([min((aj * t + bj) % P61 for t in ids) for aj, bj in zip(a, b, strict=True)])
    return out


def minhash(h, tokens: np.ndarray) -> np.ndarray:
    """``k = 1``: ``M mod n``; ``k > 1``: ``(sum_j c_j M_j) mod p mod n``."""
    c = [int(v) for v in h.c]
    out = []
    for values in min_hashes(h, tokens):
        if len(values) == 1:
            out.append(values[0] % h.n)
        else:
            out.append(sum(cj * mj for cj, mj in zip(c, values, strict=True)) % P61 % h.n)
    return np.array(out, dtype=np.int64).reshape(len(out))


def tokenid(h, tokens: np.ndarray) -> np.ndarray:
    """``id mod n`` elementwise, same shape."""
    tokens = np.asarray(tokens)
    flat = [int(t) % h.n for t in tokens.reshape(-1)]
    return np.array(flat, dtype=np.int64).reshape(tokens.shape)


def _fmix32(v: int) -> int:
    """MurmurHash3's finaliser on a Python int, wrapping by hand at every step."""
    m = 0xFFFFFFFF
    v ^= v >> 16
    v = (v * 0x85EBCA6B) & m
    v ^= v >> 13
    v = (v * 0xC2B2AE35) & m
    return v ^ (v >> 16)


def ngram(h, tokens: np.ndarray) -> np.ndarray:
    """Each full window's bucket per head, Python ints: ``fmix32(s ^ XOR_j a_j x_{t-j}) mod m_h``.

    Shape ``[..., l - N + 1]`` (one head) or ``[..., l - N + 1, H]``, as :meth:`NGram.hash`.
    """
    tokens = np.asarray(tokens)
    mult = [[int(a) for a in row] for row in h.multipliers]
    salts = [int(s) for s in h.salts]
    moduli = [int(m) for m in h.moduli]
    order = len(mult[0])
    lead = tokens.shape[:-1] if tokens.ndim else ()
    rows = tokens.reshape(math.prod(lead), tokens.shape[-1] if tokens.ndim else 1)
    out = []
    for row in rows:
        ids = [int(t) for t in row]
        windows = []
        for t in range(order - 1, len(ids)):
            heads = []
            for a, s, m in zip(mult, salts, moduli, strict=True):
                v = s
                for j in range(order):
                    v ^= (a[j] * ids[t - j]) % 2**32
                heads.append(_fmix32(v) % m)
            windows.append(heads)
        out.append(windows)
    windows = max(rows.shape[1] - order + 1, 0)
    arr = np.array(out, dtype=np.int64).reshape(*lead, windows, len(moduli))
    return arr if len(moduli) > 1 else arr[..., 0]


def reference_for(family: str) -> Callable[..., np.ndarray]:
    """The slow reference of a registered family, ``reference(h, batch) -> ids``.

    Resolved from the family's ``reference`` attribute (``"module:function"``), so a family
    registered from outside the package brings its own.

    Raises:
        ValueError: unknown family, a family without a reference, or a ``reference`` that
            does not name a function.
    """
    from lshsim.hashing import get_family

    cls = get_family(family)
    spec = cls.reference
    if not spec:
        raise ValueError(
            f"family '{family}' has no reference implementation "
            f'(set {cls.__name__}.reference = "module:function")'
        )
    module, sep, name = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name) if sep and name else None
    except (ImportError, AttributeError):
        fn = None
    if not callable(fn):
        raise ValueError(
            f"family '{family}': reference {spec!r} does not name a function (module:function)"
        )
    return fn


class _References(Mapping):
    """Live view: family name -> its reference, for every family with one (registry order)."""

    def _names(self) -> tuple[str, ...]:
        from lshsim.hashing import family_names

        return family_names(lambda c: bool(c.reference))

    def __getitem__(self, family: str) -> Callable[..., np.ndarray]:
        if family not in self._names():
            raise KeyError(family)
        return reference_for(family)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return f"REFERENCES{list(self._names())}"


#: Reference of each family that has one, by registry name (derived from the families'
#: ``reference`` attributes; :func:`reference_for` is the function behind it).
REFERENCES: Mapping[str, Callable[..., np.ndarray]] = _References()


def naive_affine_uint64(a: int, x: int, b: int) -> int:
    """The datasketch formula ``(a x + b) % p`` on uint64 arrays, which wraps past 2^64."""
    av = np.array([a], dtype=np.uint64)
    xv = np.array([x], dtype=np.uint64)
    bv = np.array([b], dtype=np.uint64)
    return int(((av * xv + bv) % np.uint64(P61))[0])


def sentence_cosines_bartlett(
    count: int, overlap: float, *, length: int, dim: int, rng: np.random.Generator
) -> np.ndarray:
    """The pair's cosine from the full Gram matrix of its ``K = 2l - s`` token embeddings.

    The library's former sampler, kept as an independent route to the same distribution as
    :func:`lshsim.sentences.sentence_cosines`. Writing the Gaussian vectors that normalise to
    the embeddings in the orthonormal basis that Gram-Schmidt builds from them gives an
    upper-triangular ``q x K`` matrix (``q = min(K, d)``) with independent entries: ``N(0, 1)``
    above the diagonal and ``chi_{d - i}`` on it (Bartlett decomposition). Its normalised
    columns are the embeddings in that basis; the sentences sum their first ``l`` columns and
    the ``s`` shared plus the last ``l - s``. Cost ``O(K min(K, d))`` per pair.
    """
    s = shared_tokens(overlap, length)
    k = 2 * length - s
    q = min(k, dim)
    r = np.zeros((count, q, k))
    iu = np.triu_indices(q, 1, k)
    r[:, iu[0], iu[1]] = rng.standard_normal((count, iu[0].size))
    diag = np.arange(q)
    r[:, diag, diag] = np.sqrt(rng.chisquare(dim - diag, size=(count, q)))
    u = r / np.linalg.norm(r, axis=1, keepdims=True)  # columns are the unit embeddings
    shared = u[:, :, :s].sum(axis=2)
    a = shared + u[:, :, s:length].sum(axis=2)
    b = shared + u[:, :, length:].sum(axis=2)
    cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.clip(cos, -1.0, 1.0)


def topk_overlap_grid(n: int, k: int, a: float, step: float = 0.01, lim: float = 8.0) -> float:
    """Voronoi top-k overlap ``E|T_k(x) ∩ T_k(y)| / k`` by brute force on a tensor grid.

    Independent of :mod:`lshsim.laws.topk`: the grid is in ``(u, v)`` (not rotated), the
    both-above cell ``p11(u, v) = int_u^inf phi(t) Q((v - a t) / sqrt(1 - a^2)) dt`` is a
    cumulative trapezoid sum over ``t`` (no Owen's T), and the multinomial sum uses
    ``math.comb`` and plain powers. Accurate to about ``1e-5`` relative at small ``n``.
    """
    from scipy.special import ndtr

    grid = np.arange(-lim, lim + step / 2, step)
    s = math.sqrt(1.0 - a * a)
    phi = np.exp(-0.5 * grid * grid) / math.sqrt(2.0 * math.pi)
    # integrand[t, j] = phi(t) Q((v_j - a t) / s); p11[i, j] = sum over t >= u_i (trapezoid)
    f = phi[:, None] * ndtr(-(grid[None, :] - a * grid[:, None]) / s)
    tail = np.cumsum(f[::-1], axis=0)[::-1] * step
    p11 = tail - 0.5 * step * (f + f[-1:])  # trapezoid: half weight at both ends
    q = ndtr(-grid)
    p10 = np.maximum(q[:, None] - p11, 0.0)
    p01 = np.maximum(q[None, :] - p11, 0.0)
    p00 = np.maximum(1.0 - q[:, None] - q[None, :] + p11, 0.0)
    total = np.zeros_like(p11)
    for i in range(k):
        for j in range(k - i):
            for c in range(k - i):
                r = n - 1 - i - j - c
                if r >= 0:
                    coef = (
                        math.comb(n - 1, i) * math.comb(n - 1 - i, j) * math.comb(n - 1 - i - j, c)
                    )
                    total += coef * p11**i * p10**j * p01**c * p00**r
    dens = np.exp(-(grid[:, None] ** 2 - 2 * a * grid[:, None] * grid[None, :] + grid[None, :] ** 2)
                  / (2 * s * s)) / (2 * math.pi * s)  # fmt: skip
    return float(n * (dens * total).sum() * step * step / k)
