"""Throughput of every ``family.hash(batch)`` kernel next to a NumPy baseline of the same work.

Each family in :data:`lshsim.hashing.FAMILIES` gets one benchmark group holding the kernel and
one (or two) NumPy baselines computed from the *same drawn parameters* (the family instance's
own planes / centres / signs / coefficients), so every benchmark also asserts that kernel and
baseline agree. Run the timings with::

    pytest tests/bench/micro --benchmark-enable --benchmark-columns=mean,stddev,ops

Under the default ``--benchmark-disable`` (pyproject ``addopts``) each benchmark body runs
once and the file is a quick correctness check: kernel ids == baseline ids, except on rows
whose baseline decision margin is within float32 rounding (BLAS may block the products
differently for a row tile than for the whole batch), and such rows must be rare.

The baselines do not repeat the library's input validation (``as_vectors``' finiteness
pass, ``as_token_ids``' range checks); that overhead is inside the kernel's time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from lshsim.hashing import FAMILIES, MERSENNE61, make_family
from lshsim.hashing.ngram import ngram_hash

# Relative decision margin (margin / rms score) below which kernel and baseline may disagree.
REL_TOL = 1e-4
# Largest fraction of rows allowed to disagree (each such row must also be a near-tie).
MAX_MISMATCH = 1e-3


def _rms(a: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(a, dtype=np.float64))))


def _top2_gap(scores: np.ndarray) -> np.ndarray:
    """Gap between the largest and second-largest entry of each row (float64)."""
    part = np.partition(scores.astype(np.float64), -2, axis=1)
    return part[:, -1] - part[:, -2]


def assert_ids_agree(
    got: np.ndarray,
    want: np.ndarray,
    n: int,
    rel_margin: Callable[[np.ndarray], np.ndarray] | None,
) -> None:
    """Kernel ids ``got`` equal baseline ids ``want`` up to rare near-ties.

    ``rel_margin(rows)`` returns the baseline's decision margin (relative to the score scale)
    of those rows; ``None`` demands exact equality (integer arithmetic).
    """
    assert got.dtype == np.int64
    assert got.shape == want.shape
    assert got.min() >= 0
    assert got.max() < n
    bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    if bad.size == 0:
        return
    assert rel_margin is not None, f"{bad.size} ids differ, first at row {bad[0]}"
    assert bad.size <= max(1, MAX_MISMATCH * got.size), f"{bad.size}/{got.size} ids differ"
    margins = rel_margin(bad)
    assert (margins <= REL_TOL).all(), (
        f"ids differ on rows {bad[margins > REL_TOL][:5]} whose margins "
        f"{margins[margins > REL_TOL][:5]} are not near-ties"
    )


@dataclass
class Case:
    """One benchmark group: a kernel, its baselines, and how to compare their outputs."""

    group: str
    n: int
    kernel: Callable[[], np.ndarray]
    warmup: Callable[[], object]  # the kernel on a few rows: compiles / loads the JIT
    baselines: dict[str, Callable[[], np.ndarray]]
    # baseline name -> relative-margin function of rows (None: exact equality required)
    margins: dict[str, Callable[[np.ndarray], np.ndarray] | None]
    results: dict[str, np.ndarray] = field(default_factory=dict)

    def result(self, name: str) -> np.ndarray:
        """Output of ``kernel`` or of baseline ``name``, computed at most once."""
        if name not in self.results:
            fn = self.kernel if name == "kernel" else self.baselines[name]
            self.results[name] = fn()
        return self.results[name]

    def check(self, name: str) -> None:
        """Assert kernel output agrees with baseline ``name``'s."""
        assert_ids_agree(self.result("kernel"), self.result(name), self.n, self.margins[name])


def _gaussian_batch(m: int, d: int, seed: int = 12345) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((m, d)).astype(np.float32)


# --------------------------------------------------------------------------- simhash


def simhash_case() -> Case:
    n, d, m = 2**16, 512, 16384
    h = make_family("simhash", n, d, seed=1)
    x = _gaussian_batch(m, d)
    g = h.planes.astype(np.float32)  # the kernel casts the planes to the batch dtype too
    powers = np.int64(1) << np.arange(h.k, dtype=np.int64)

    def baseline():
        return ((x @ g.T) > 0) @ powers

    def margin(rows):
        p = x[rows] @ g.T
        return np.abs(p).min(axis=1) / _rms(x[:256] @ g.T)

    return Case(
        group=f"simhash n=2^16 (k={h.k}) d={d} m={m} f32",
        n=n,
        kernel=lambda: h.hash(x),
        warmup=lambda: h.hash(x[:8]),
        baselines={"numpy": baseline},
        margins={"numpy": margin},
    )


# --------------------------------------------------------------------------- pstable


def pstable_case() -> Case:
    n, k, w, d, m = 4**8, 8, 4.0, 512, 16384
    h = make_family("pstable", n, d, seed=2, k=k, w=w)
    r = h.radix
    x = _gaussian_batch(m, d)
    g = h.directions.astype(np.float32)
    b = h.offsets
    powers = np.int64(r) ** np.arange(k, dtype=np.int64)

    def baseline():
        cells = np.floor((x @ g.T + b) / w)  # float32 projections promoted to float64 by b
        return np.mod(cells, r).astype(np.int64) @ powers

    def margin(rows):
        t = (x[rows] @ g.T + b) / w
        return (np.abs(t - np.round(t)) * w).min(axis=1) / _rms(x[:256] @ g.T)

    return Case(
        group=f"pstable n=4^8 (k={k}, r={r}, w={w}) d={d} m={m} f32",
        n=n,
        kernel=lambda: h.hash(x),
        warmup=lambda: h.hash(x[:8]),
        baselines={"numpy": baseline},
        margins={"numpy": margin},
    )


# --------------------------------------------------------------------------- voronoi


def voronoi_case() -> Case:
    n, d, m = 1024, 512, 16384
    h = make_family("voronoi", n, d, seed=3)
    x = _gaussian_batch(m, d)
    wt = h.centres.astype(np.float32)

    def baseline():
        return (x @ wt.T).argmax(axis=1)

    def margin(rows):
        return _top2_gap(x[rows] @ wt.T) / _rms(x[:256] @ wt.T)

    return Case(
        group=f"voronoi n={n} d={d} m={m} f32",
        n=n,
        kernel=lambda: h.hash(x),
        warmup=lambda: h.hash(x[:8]),
        baselines={"numpy": baseline},
        margins={"numpy": margin},
    )


# --------------------------------------------------------------------------- cross-polytope


def _signed_argmax(y: np.ndarray) -> np.ndarray:
    """Cross-polytope id: ``j`` for ``+e_j``, ``j + m`` for ``-e_j`` (ties: lowest id)."""
    return np.concatenate([y, -y], axis=1).argmax(axis=1)


def crosspolytope_gaussian_case() -> Case:
    n, d, m = 1024, 512, 16384
    h = make_family("crosspolytope", n, d, seed=4, rotation="gaussian")
    x = _gaussian_batch(m, d)
    a = h.rotation.astype(np.float32)

    def baseline():
        return _signed_argmax(x @ a.T)

    def margin(rows):
        return _top2_gap(np.abs(x[rows] @ a.T)) / _rms(x[:256] @ a.T)

    return Case(
        group=f"crosspolytope gaussian n={n} d={d} m={m} f32",
        n=n,
        kernel=lambda: h.hash(x),
        warmup=lambda: h.hash(x[:8]),
        baselines={"numpy": baseline},
        margins={"numpy": margin},
    )


def fwht_rows(buf: np.ndarray) -> None:
    """Unnormalised Walsh-Hadamard transform of every row of ``buf`` (m x D), in place.

    The same butterflies ``(a, b) -> (a + b, a - b)`` at strides 1, 2, ..., D/2 as the kernel,
    vectorised over rows and blocks by a reshape, so the result is bitwise the kernel's.
    """
    rows, dim = buf.shape
    h = 1
    while h < dim:
        v = buf.reshape(rows, dim // (2 * h), 2, h)
        lo, hi = v[:, :, 0, :], v[:, :, 1, :]
        s = lo + hi
        np.subtract(lo, hi, out=hi)
        lo[...] = s
        h *= 2


def hadamard_rotate(x: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """``H S_R ... H S_1`` applied to the zero-padded rows of ``x``, in float64 (the kernel
    adds in the same order, in the batch's dtype: float32 here, so near-ties may differ)."""
    buf = np.zeros((x.shape[0], signs.shape[1]))
    buf[:, : x.shape[1]] = x
    for s in signs:
        buf *= s
        fwht_rows(buf)
    return buf


def crosspolytope_hadamard_case() -> Case:
    n, d, m = 2048, 1024, 4096
    h = make_family("crosspolytope", n, d, seed=5, rotation="hadamard")
    half = h.m
    x = _gaussian_batch(m, d)
    # The dense D x D matrix of the same rotation (row i = rotation of e_i; integer entries
    # <= D^2 = 2^20, exact in float32): a dense matmul costs what a dense Gaussian rotation of
    # that size costs, and its ids are comparable with the kernel's.
    dense = np.ascontiguousarray(hadamard_rotate(np.eye(d), h.signs)[:, :half], dtype=np.float32)
    assert np.array_equal(dense, np.round(dense))

    def baseline_fwht():
        return _signed_argmax(hadamard_rotate(x, h.signs)[:, :half])

    def baseline_dense():
        return _signed_argmax(x @ dense)

    def margin(rows):
        y = hadamard_rotate(x[rows], h.signs)[:, :half]
        return _top2_gap(np.abs(y)) / _rms(y)

    # Exact ties (|y_j| equal) go to the lowest id in both the kernel and numpy.argmax over
    # concat([y, -y]). The kernel rotates float32 batches in float32 (the float64 reference
    # adds in the same order), so ids may differ only on near-ties within float32 rounding.
    return Case(
        group=f"crosspolytope hadamard n={n} d={d} (D={h.signs.shape[1]}, 3 rounds) m={m} f32",
        n=n,
        kernel=lambda: h.hash(x),
        warmup=lambda: h.hash(x[:8]),
        baselines={"numpy_fwht_f64": baseline_fwht, "dense_matmul_f32": baseline_dense},
        margins={"numpy_fwht_f64": margin, "dense_matmul_f32": margin},
    )


# --------------------------------------------------------------------------- minhash

_P = np.uint64(MERSENNE61)
_M32 = np.uint64(0xFFFFFFFF)
_M29 = np.uint64((1 << 29) - 1)
_S61, _S32, _S29, _S3 = np.uint64(61), np.uint64(32), np.uint64(29), np.uint64(3)


def fold61(v: np.ndarray) -> np.ndarray:
    """Reduce uint64 ``v`` to ``[0, p)``, ``p = 2^61 - 1``, using ``2^61 = 1 (mod p)``."""
    v = (v & _P) + (v >> _S61)
    v = (v & _P) + (v >> _S61)
    return np.where(v >= _P, v - _P, v)


def mulmod61(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Exact ``(a x) mod p`` for uint64 ``a, x < 2^61``, vectorised, without wrapping uint64.

    NOTE: the naive ``(a * x + b) % p`` on uint64 is NOT a valid baseline: ``a x`` has up to
    122 bits and silently wraps modulo 2^64 (see ``test_minhash_baseline_is_exact``). Here
    ``a x = a1 x1 2^64 + (a1 x0 + a0 x1) 2^32 + a0 x0`` over 32-bit halves, with
    ``2^64 = 8`` and ``2^61 = 1 (mod p)``; every partial sum stays below 2^64.
    """
    a0, a1 = a & _M32, a >> _S32
    x0, x1 = x & _M32, x >> _S32
    mid = a1 * x0 + a0 * x1  # < 2^62
    s = ((a1 * x1) << _S3) + (mid >> _S29) + ((mid & _M29) << _S32) + fold61(a0 * x0)
    return fold61(s)


def numpy_minhash_ids(tokens, a, b, c, n, chunk=256):
    """Bucket ids of the min-hash family, vectorised over (rows, hashes, tokens) in chunks."""
    rows = tokens.shape[0]
    values = np.empty((rows, a.shape[0]), dtype=np.uint64)
    for r0 in range(0, rows, chunk):
        t = tokens[r0 : r0 + chunk]
        x = t.astype(np.uint64)[:, None, :]
        hv = fold61(mulmod61(a[None, :, None], x) + b[None, :, None])
        hv = np.where(t[:, None, :] >= 0, hv, _P)  # negative ids are padding
        values[r0 : r0 + chunk] = hv.min(axis=2)
    if a.shape[0] == 1:
        acc = values[:, 0]
    else:
        acc = np.zeros(rows, dtype=np.uint64)
        for j in range(a.shape[0]):
            acc = fold61(acc + mulmod61(c[j], values[:, j]))
    return (acc % np.uint64(n)).astype(np.int64)


def _token_sets(m: int, length: int, vocab: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, size=(m, length), dtype=np.int64)
    lengths = rng.integers(1, length + 1, size=m)  # pad each row to a random set size
    tokens[np.arange(length)[None, :] >= lengths[:, None]] = -1
    return tokens


def minhash_case() -> Case:
    n, k, m, length, vocab = 2**16, 128, 10_000, 20, 32128
    h = make_family("minhash", n, 1, seed=6, k=k)
    tokens = _token_sets(m, length, vocab)
    return Case(
        group=f"minhash n=2^16 k={k} m={m} sets x {length} tokens",
        n=n,
        kernel=lambda: h.hash(tokens),
        warmup=lambda: h.hash(tokens[:8]),
        baselines={"numpy_uint64_halves": lambda: numpy_minhash_ids(tokens, h.a, h.b, h.c, n)},
        margins={"numpy_uint64_halves": None},
    )


def test_minhash_baseline_is_exact():
    """The NumPy baseline's arithmetic equals Python-int arithmetic; the naive one does not."""
    rng = np.random.default_rng(0)
    a = rng.integers(1, MERSENNE61, size=4096, dtype=np.uint64)
    x = rng.integers(0, MERSENNE61, size=4096, dtype=np.uint64)
    b = rng.integers(0, MERSENNE61, size=4096, dtype=np.uint64)
    edge = np.array([0, 1, 2**32 - 1, 2**32, 2**61 - 2], dtype=np.uint64)
    a = np.concatenate([a, np.full(5, MERSENNE61 - 1, dtype=np.uint64), edge])
    x = np.concatenate([x, edge, np.full(5, MERSENNE61 - 1, dtype=np.uint64)])
    b = np.concatenate([b, edge, edge])
    exact = np.array(
        [(int(ai) * int(xi) + int(bi)) % MERSENNE61 for ai, xi, bi in zip(a, x, b, strict=True)],
        dtype=np.uint64,
    )
    assert np.array_equal(fold61(mulmod61(a, x) + b), exact)
    with np.errstate(over="ignore"):
        naive = (a * x + b) % _P  # wraps modulo 2^64
    assert not np.array_equal(naive, exact)


# --------------------------------------------------------------------------- tokenid


def tokenid_case() -> Case:
    n, shape, vocab = 8192, (65536, 64), 32128
    h = make_family("tokenid", n, 1)
    tokens = np.random.default_rng(8).integers(0, vocab, size=shape, dtype=np.int64)
    return Case(
        group=f"tokenid n={n} m={shape[0]}x{shape[1]} tokens",
        n=n,
        kernel=lambda: h.hash(tokens),
        warmup=lambda: h.hash(tokens[:8]),
        baselines={"numpy": lambda: tokens % n},
        margins={"numpy": None},
    )


# --------------------------------------------------------------------------- ngram


def ngram_case() -> Case:
    m, shape, vocab, order, heads = 160_651, (4096, 64), 32128, 3, 8
    h = make_family("ngram", m, 1, seed=9, ngram=order, heads=heads)
    tokens = np.random.default_rng(9).integers(0, vocab, size=shape, dtype=np.int64)

    def baseline():  # the uint32 array code (the JAX model's hash) run by NumPy
        return ngram_hash(tokens, h.multipliers, h.salts, h.moduli).astype(np.int64)

    return Case(
        group=f"ngram N={order} H={heads} m~{m} {shape[0]}x{shape[1]} tokens",
        n=int(h.moduli.max()) + 1,  # head h's ids lie in [0, m_h), m_h the primes >= m
        kernel=lambda: h.hash(tokens),
        warmup=lambda: h.hash(tokens[:8]),
        baselines={"numpy_uint32": baseline},
        margins={"numpy_uint32": None},
    )


def engram_case() -> Case:
    m, shape, vocab, order, heads = 5 * 129_280, (4096, 64), 129_280, 3, 8
    h = make_family("engram", m, 1, seed=10, ngram=order, heads=heads)
    tokens = np.random.default_rng(10).integers(0, vocab, size=shape, dtype=np.int64)

    def baseline():  # Engram's own NumPy: one int64 multiply-XOR mix, then % each prime
        mix = tokens[:, order - 1 :] * h.multipliers[0]
        for k in range(1, order):
            mix = mix ^ (tokens[:, order - 1 - k : shape[1] - k] * h.multipliers[k])
        return np.stack([mix % p for p in h.primes], axis=-1)

    return Case(
        group=f"engram N={order} H={heads} m~{m} {shape[0]}x{shape[1]} tokens",
        n=int(h.primes.max()) + 1,
        kernel=lambda: h.hash(tokens),
        warmup=lambda: h.hash(tokens[:8]),
        baselines={"numpy_int64": baseline},
        margins={"numpy_int64": None},
    )


def productkey_case() -> Case:
    n, d, m = 1024**2, 512, 16384
    h = make_family("productkey", n, d, seed=5)
    x = _gaussian_batch(m, d)
    k1, k2 = h.keys1.astype(np.float32), h.keys2.astype(np.float32)

    def baseline():
        return (x[:, :256] @ k1.T).argmax(axis=1) * h.s + (x[:, 256:] @ k2.T).argmax(axis=1)

    def margin(rows):
        g1 = _top2_gap(x[rows, :256] @ k1.T) / _rms(x[:256, :256] @ k1.T)
        g2 = _top2_gap(x[rows, 256:] @ k2.T) / _rms(x[:256, 256:] @ k2.T)
        return np.minimum(g1, g2)

    return Case(
        group=f"productkey n={n} (s=1024) d={d} m={m} f32",
        n=n,
        kernel=lambda: h.hash(x),
        warmup=lambda: h.hash(x[:8]),
        baselines={"numpy": baseline},
        margins={"numpy": margin},
    )


# --------------------------------------------------------------------------- the benchmarks

# case id -> (family name, builder)
CASES: dict[str, tuple[str, Callable[[], Case]]] = {
    "simhash": ("simhash", simhash_case),
    "pstable": ("pstable", pstable_case),
    "voronoi": ("voronoi", voronoi_case),
    "crosspolytope-gaussian": ("crosspolytope", crosspolytope_gaussian_case),
    "crosspolytope-hadamard": ("crosspolytope", crosspolytope_hadamard_case),
    "minhash": ("minhash", minhash_case),
    "tokenid": ("tokenid", tokenid_case),
    "ngram": ("ngram", ngram_case),
    "productkey": ("productkey", productkey_case),
    "engram": ("engram", engram_case),
}
# Baseline names per case (a name missing from its builder fails test_hash with KeyError).
BASELINES: dict[str, tuple[str, ...]] = {
    "simhash": ("numpy",),
    "pstable": ("numpy",),
    "voronoi": ("numpy",),
    "crosspolytope-gaussian": ("numpy",),
    "crosspolytope-hadamard": ("numpy_fwht_f64", "dense_matmul_f32"),
    "minhash": ("numpy_uint64_halves",),
    "tokenid": ("numpy",),
    "ngram": ("numpy_uint32",),
    "productkey": ("numpy",),
    "engram": ("numpy_int64",),
}


_LIVE: dict[str, Case] = {}


def get_case(case_id: str) -> Case:
    """The case's inputs and drawn parameters, built once (only the current case is kept alive,
    so the batches of earlier groups are freed), with the JIT already warmed up."""
    if case_id not in _LIVE:
        _LIVE.clear()
        c = _LIVE[case_id] = CASES[case_id][1]()
        c.warmup()
    return _LIVE[case_id]


def test_cases_cover_families():
    assert {fam for fam, _ in CASES.values()} == set(FAMILIES)
    assert set(BASELINES) == set(CASES)


# Baselines first, kernel last within a group: the kernel's check then finds every baseline's
# output already computed (disabled mode runs each body once, so nothing is done twice but
# the kernel, which is the cheaper side).
@pytest.mark.parametrize(
    ("case_id", "impl"),
    [
        pytest.param(
            cid, impl, marks=pytest.mark.benchmark(group=f"hash:{cid}"), id=f"{cid}-{impl}"
        )
        for cid in CASES
        for impl in (*BASELINES[cid], "kernel")
    ],
)
def test_hash(benchmark, case_id, impl):
    case = get_case(case_id)
    benchmark.extra_info["sizes"] = case.group
    fn = case.kernel if impl == "kernel" else case.baselines[impl]
    case.results[impl] = benchmark(fn)
    for name in case.baselines if impl == "kernel" else (impl,):
        case.check(name)
