"""Hashing hot paths next to their peers (issue 8): SimHash, Voronoi top-1 and min-hash.

:mod:`lshsim.bench.peers` calls every entry of :data:`CASES` with ``quick`` (fewer timed
rounds, the same sizes). Every case times its contenders interleaved in one run
(:func:`lshsim.bench.timing.interleaved`), reports ratios of medians, and checks that ours and
the peer compute the same thing, so a fast wrong kernel cannot meet a goal:

* ``simhash``: m = 65536 float32 vectors, d = 512, k = 16 and 64 sign bits, against FAISS
  ``IndexLSH`` given *our* hyperplanes (its rotation matrix ``rrot.A``), whose codes must equal
  ours bit for bit, and against the SGEMM bound ``X @ G.T`` of the same shapes.
* ``voronoi``: top-1 of n = 1024 Gaussian centres, d = 512, m = 65536 float32 vectors,
  against NumPy ``(X @ W.T).argmax(1)``; same ids, and our peak extra memory (``tracemalloc``,
  which NumPy reports its buffers to) within one score tile plus a few arrays of m.
* ``minhash``: 128 hashes of 10^5 sets of 20 token ids against datasketch
  ``MinHash.bulk``; our values must equal exact Python-int arithmetic, and both signatures
  must estimate the pairs' Jaccard index alike (datasketch's values cannot equal ours: its
  permutations are different functions, see :func:`minhash_case`).

Run one case by hand with ``python experiments/bench_peers.py --only CASE [--quick]``.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from lshsim.bench.timing import interleaved, row, speedup_row
from lshsim.hashing import MinHash, SimHash, Voronoi, make_family
from lshsim.hashing.base import TILE_ENTRIES
from lshsim.hashing.hyperplane import simhash_codes
from lshsim.testing import reference  # the exact Python-int min-hash of the kernel tests

SEED = 20260821


def _gaussian(m: int, d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((m, d)).astype(np.float32)


def _import(module: str, package: str):
    try:
        return __import__(module)
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            f"the peer library '{module}' is missing: pip install {package}", name=module
        ) from err


# --------------------------------------------------------------------------- simhash


def _faiss_codes_as_ints(codes: np.ndarray) -> np.ndarray:
    """FAISS LSH codes (uint8[m, k/8], bit j of byte j//8 is bit j) as little-endian uint64."""
    out = np.zeros(codes.shape[0], dtype=np.uint64)
    for byte in range(codes.shape[1]):
        out |= codes[:, byte].astype(np.uint64) << np.uint64(8 * byte)
    return out


def _simhash_ours(x: np.ndarray, k: int) -> tuple[np.ndarray, Callable[[], Any], str]:
    """Our side of :func:`simhash_case` for ``k`` bits: (planes, zero-argument call, text)."""
    d = x.shape[1]
    if k <= 62:
        h = make_family("simhash", 2**k, d, seed=SEED + k)
        planes = h.planes

        def ours(h=h):
            return h.hash(x)

        ours_desc = f"lshsim SimHash(n=2^{k}).hash(x): int64 ids"
    else:  # n = 2^64 buckets do not fit int64 ids: the same kernel, uint64 codes
        planes = np.random.default_rng(SEED + k).standard_normal((k, d))

        def ours(planes=planes):
            return simhash_codes(x, planes)

        ours_desc = f"lshsim simhash_codes(x, planes[{k}]): uint64 codes"
    return planes, ours, ours_desc


def simhash_case(quick: bool) -> list[dict[str, Any]]:
    """SimHash codes, k = 16 (the family's ``hash``) and k = 64 (:func:`simhash_codes`).

    FAISS ``IndexLSH(d, k, rotate_data=True, train_thresholds=False)`` computes
    ``x @ A.T`` (its own SGEMM) and packs the signs ``> 0`` into bytes; its matrix ``A`` is
    replaced by our float32 planes, so the codes are comparable bit for bit (``same_codes``:
    every code equal, or at most 1e-4 of them off by a projection within float32 rounding of
    zero, where the two SGEMMs may round differently; the run reports the count).
    """
    faiss = _import("faiss", "faiss-cpu")
    m, d = 65536, 512
    rounds = 7 if quick else 25
    x = _gaussian(m, d, SEED)
    rows = []
    for k in (16, 64):
        planes, ours, ours_desc = _simhash_ours(x, k)
        g32 = np.ascontiguousarray(planes, dtype=np.float32)
        index = faiss.IndexLSH(d, k, True, False)
        faiss.copy_array_to_vector(g32.ravel(), index.rrot.A)
        g32t = g32.T

        fns = {
            "ours": ours,
            "faiss": lambda index=index: index.sa_encode(x),
            "sgemm": lambda g32t=g32t: x @ g32t,
        }
        got = ours().view(np.uint64)
        want = _faiss_codes_as_ints(fns["faiss"]())
        mismatches = int((got != want).sum())
        timings = interleaved(fns, rounds=rounds, warmup=1)
        sizes = {"m": m, "d": d, "k": k, "dtype": "float32", "rounds": rounds}
        checks = {"same_codes": mismatches <= 1e-4 * m}
        rows.append(
            speedup_row(
                f"simhash m={m} d={d} k={k} f32 vs FAISS IndexLSH",
                timings,
                "ours",
                "faiss",
                goal=1.0,
                ours=ours_desc,
                peer=(
                    f"faiss {faiss.__version__} IndexLSH(d, {k}, rotate_data=True, "
                    f"train_thresholds=False) with rrot.A = our planes; sa_encode(x); "
                    f"{faiss.omp_get_max_threads()} OpenMP threads"
                ),
                checks=checks,
                code_mismatches=mismatches,
                sizes=sizes,
            )
        )
        ours_s, bound_s = timings["ours"]["median"], timings["sgemm"]["median"]
        rows.append(
            row(
                f"simhash m={m} d={d} k={k} f32 vs SGEMM bound",
                ratio=bound_s / ours_s,
                goal=0.6,
                op=">=",
                measure="SGEMM time / our time (fraction of the bound reached)",
                ours=ours_desc,
                peer=f"numpy float32 x @ G.T, ({m} x {d}) @ ({d} x {k}) (OpenBLAS)",
                ours_s=ours_s,
                peer_s=bound_s,
                checks=checks,
                ours_iqr_s=timings["ours"]["iqr"],
                peer_iqr_s=timings["sgemm"]["iqr"],
                sizes=sizes,
            )
        )
    return rows


# --------------------------------------------------------------------------- voronoi


def _peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak traced allocation during ``fn()`` (NumPy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def voronoi_case(quick: bool) -> list[dict[str, Any]]:
    """Voronoi top-1 (softmax top-1 with a Gaussian router) against NumPy's argmax of X W^T.

    ``o_m_memory``: our peak extra memory is at most one score tile (``TILE_ENTRIES`` float32
    entries, 16 MiB) plus four arrays of m 8-byte values plus 1 MiB of slack, where NumPy's
    holds the m x n float32 score matrix (256 MiB here).
    """
    m, d, n = 65536, 512, 1024
    rounds = 4 if quick else 11
    x = _gaussian(m, d, SEED + 1)
    h = make_family("voronoi", n, d, seed=SEED + 2)
    w = np.ascontiguousarray(h.centres, dtype=np.float32)
    fns = {"ours": lambda: h.hash(x), "numpy": lambda: (x @ w.T).argmax(axis=1)}
    got, want = fns["ours"](), fns["numpy"]()
    differ = np.flatnonzero(got != want)
    # a differing id is allowed only where NumPy's own top-2 gap is within float32 rounding
    if differ.size:
        part = np.partition((x[differ] @ w.T).astype(np.float64), -2, axis=1)
        gaps = (part[:, -1] - part[:, -2]) / float(np.sqrt(np.mean(np.square(x[:64] @ w.T))))
        near_ties = bool((gaps <= 1e-4).all())
    else:
        near_ties = True
    peak_ours = _peak_bytes(fns["ours"])
    peak_numpy = _peak_bytes(fns["numpy"])
    bound = TILE_ENTRIES * 4 + 4 * m * 8 + 2**20
    timings = interleaved(fns, rounds=rounds, warmup=1)
    return [
        speedup_row(
            f"voronoi top-1 n={n} d={d} m={m} f32 vs numpy argmax",
            timings,
            "ours",
            "numpy",
            goal=1.0,
            ours="lshsim Voronoi(n=1024).hash(x): BLAS score tiles into one reused buffer, "
            "argmax per tile",
            peer="numpy (x @ W.T).argmax(axis=1), float32 (OpenBLAS)",
            checks={
                "same_ids": differ.size <= 1e-4 * m and near_ties,
                "o_m_memory": peak_ours <= bound,
            },
            id_mismatches=int(differ.size),
            peak_extra_bytes_ours=peak_ours,
            peak_extra_bytes_numpy=peak_numpy,
            score_matrix_bytes=m * n * 4,
            memory_bound_bytes=bound,
            memory_bound="one score tile (2^22 float32) + 4 arrays of m x 8 bytes + 1 MiB",
            sizes={"m": m, "d": d, "n": n, "dtype": "float32", "rounds": rounds},
        )
    ]


# --------------------------------------------------------------------------- minhash


def _pair_sets(pairs: int, length: int, vocab: int, seed: int) -> np.ndarray:
    """Return ``2 pairs`` rows of ``length`` ids, in pairs that share a known part.

    Row ``2i + 1`` repeats the first ``s_i`` ids of row ``2i`` (``s_i`` uniform in
    ``[0, length]``) and draws the rest afresh.
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, vocab, size=(pairs, length), dtype=np.int64)
    b = rng.integers(0, vocab, size=(pairs, length), dtype=np.int64)
    shared = rng.integers(0, length + 1, size=pairs)
    keep = np.arange(length)[None, :] < shared[:, None]
    b[keep] = a[keep]
    out = np.empty((2 * pairs, length), dtype=np.int64)
    out[0::2], out[1::2] = a, b
    return out


def _kwargs_text(kwargs: dict[str, Any]) -> str:
    return "".join(f", {a}={getattr(v, '__name__', repr(v))}" for a, v in kwargs.items())


def _jaccard_mae(sig: np.ndarray, truth: np.ndarray) -> float:
    est = (sig[0::2] == sig[1::2]).mean(axis=1)
    return float(np.abs(est - truth).mean())


#: What each datasketch contender of :func:`minhash_case` runs.
DATASKETCH_SETTINGS = {
    "datasketch_int_affine32": "hashfunc=int on Python-int ids, scheme='affine32' (default)",
    "datasketch_int_legacy": "hashfunc=int on Python-int ids, scheme='legacy' (mod p, uint64 wrap)",
    "datasketch_sha1_affine32": "default hashfunc sha1_hash32 on str(id).encode(), "
    "scheme='affine32' (out of the box)",
}


def _datasketch_inputs(lists: list[list[int]], quick: bool) -> dict[str, tuple[dict, list]]:
    """Contender name -> (``MinHash.bulk`` keyword arguments, its input sets)."""
    peers = {
        "datasketch_int_affine32": ({"hashfunc": int}, lists),
        "datasketch_int_legacy": ({"hashfunc": int, "scheme": "legacy"}, lists),
    }
    if not quick:
        peers["datasketch_sha1_affine32"] = ({}, [[str(t).encode() for t in r] for r in lists])
    return peers


def _true_jaccard(tokens: np.ndarray, n_pairs: int) -> np.ndarray:
    """Jaccard index of the first ``n_pairs`` set pairs (rows ``2i`` and ``2i + 1``)."""
    return np.array(
        [
            len(set(tokens[2 * i]) & set(tokens[2 * i + 1]))
            / len(set(tokens[2 * i]) | set(tokens[2 * i + 1]))
            for i in range(n_pairs)
        ]
    )


def minhash_case(quick: bool) -> list[dict[str, Any]]:
    """128 min-hashes of 10^5 sets of 20 ids, ours against datasketch ``MinHash.bulk``.

    Peers (datasketch's input prepared outside the timing: Python lists, as its API takes):

    * ``hashfunc=int`` on Python-int ids, the cheapest hash a user of integer tokens would
      pass, with the default scheme ``affine32`` (``fmix32(h) a + b mod 2^32``, ``a`` odd)
      and with ``scheme="legacy"`` (``(a h + b) % (2^61 - 1) & (2^32 - 1)`` on uint64: the
      product ``a h`` wraps mod 2^64 once ``a h >= 2^64``, so it is not the mod-p affine map
      it is written as);
    * full mode adds the out-of-the-box setting: SHA-1 (``sha1_hash32``) of each id's bytes.

    Ours is exact ``(a x + b) mod (2^61 - 1)``; datasketch's values are other functions
    (32-bit, different permutations), so the checks are: our values equal Python-int
    arithmetic on 256 rows (``ours_exact``), and on the first 2000 set pairs both signatures
    estimate the true Jaccard index with mean absolute error <= 0.05 (128 hashes give about
    0.03) and agree with each other to within 0.06 (``same_estimates``).
    """
    datasketch = _import("datasketch", "datasketch")
    pairs, length, vocab, k = 50_000, 20, 32128, 128
    tokens = _pair_sets(pairs, length, vocab, SEED + 3)
    h = make_family("minhash", 2**16, 1, seed=SEED + 4, k=k)
    peers = _datasketch_inputs(tokens.tolist(), quick)
    rounds = 3 if quick else 5
    buf = np.empty((tokens.shape[0], k), dtype=np.uint64)
    fns: dict[str, Callable[[], Any]] = {
        "ours": lambda: h.min_hashes(tokens),
        "ours_out": lambda: h.min_hashes(tokens, out=buf),
    }
    for key, (kwargs, data) in peers.items():
        fns[key] = lambda kwargs=kwargs, data=data: datasketch.MinHash.bulk(
            data, num_perm=k, **kwargs
        )

    # checks (untimed)
    ours_values = fns["ours"]()
    checked = 256
    exact = np.array(reference.min_hashes(h, tokens[:checked]), dtype=np.uint64)
    ours_exact = bool(np.array_equal(ours_values[:checked], exact))
    n_pairs = 2000
    truth = _true_jaccard(tokens, n_pairs)
    ours_est = (ours_values[0 : 2 * n_pairs : 2] == ours_values[1 : 2 * n_pairs : 2]).mean(1)
    ours_mae = _jaccard_mae(ours_values[: 2 * n_pairs], truth)

    h.min_hashes(tokens[:8])  # JIT loaded; datasketch needs no warm-up
    t0 = time.perf_counter()
    timings = interleaved(fns, rounds=rounds, warmup=0, paired=False)  # datasketch: seconds
    wall = time.perf_counter() - t0
    ours_exact = ours_exact and bool(np.array_equal(buf, ours_values))  # out= wrote the same

    sizes = {"m": 2 * pairs, "length": length, "vocab": vocab, "k": k, "rounds": rounds}
    threads = numba.get_num_threads()
    rows = []
    for key, (kwargs, data) in peers.items():
        sketches = datasketch.MinHash.bulk(data[: 2 * n_pairs], num_perm=k, **kwargs)
        sig = np.stack([s.hashvalues for s in sketches])
        peer_mae = _jaccard_mae(sig, truth)
        peer_est = (sig[0::2] == sig[1::2]).mean(1)
        agree = float(np.abs(ours_est - peer_est).mean())
        for ours_key, what in (
            ("ours", "a fresh uint64 output"),
            ("ours_out", "out= one reused buffer"),
        ):
            rows.append(
                speedup_row(
                    f"minhash k={k} m={2 * pairs} sets x {length} ids vs {key}"
                    + ("" if ours_key == "ours" else " (ours into a reused buffer)"),
                    timings,
                    ours_key,
                    key,
                    goal=50.0,
                    ours=f"lshsim MinHash(k={k}).min_hashes(tokens), {what}: uint64[m, {k}], "
                    f"exact mod 2^61 - 1, numba prange over rows "
                    f"({threads} threads)",
                    peer=f"datasketch {datasketch.__version__} MinHash.bulk(sets, num_perm={k}"
                    f"{_kwargs_text(kwargs)}): {DATASKETCH_SETTINGS[key]}",
                    checks={
                        "ours_exact": ours_exact,
                        "same_estimates": ours_mae <= 0.05 and peer_mae <= 0.05 and agree <= 0.06,
                    },
                    jaccard_mae_ours=ours_mae,
                    jaccard_mae_peer=peer_mae,
                    estimate_mean_abs_diff=agree,
                    timing_wall_s=wall,
                    sizes=sizes,
                )
            )
    return rows


#: Case name (the family benchmarked) -> function(quick) -> result rows.
CASES: dict[str, Callable[[bool], list[dict[str, Any]]]] = {
    SimHash.name: simhash_case,
    Voronoi.name: voronoi_case,
    MinHash.name: minhash_case,
}
