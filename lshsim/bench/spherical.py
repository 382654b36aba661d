"""Issue 8, spherical hot paths: our kernels next to a peer, timed interleaved in one run.

Cases (``CASES[name](quick) -> rows`` of :mod:`lshsim.bench.timing`), run by
:mod:`lshsim.bench.peers` (one by hand: ``python experiments/bench_peers.py --only CASE``):

``crosspolytope_hadamard``
    ``make_family("crosspolytope", 2048, 1024, rotation="hadamard").hash`` on float32 rows
    (FALCONN's full rotation: ``n/2 = D = 1024`` kept coordinates, 3 rounds) against

    * the same family with ``rotation="gaussian"`` (a dense ``1024 x 1024`` BLAS product,
      what a user would otherwise run), goal >= 10x;
    * NumPy's dense float32 matmul with the *same* rotation as a ``D x D`` matrix (ids
      comparable with ours), goal >= 10x;
    * ``ffht.fht`` per round, goal: one of our rounds (sign flip + unnormalised FWHT of
      ``D = 1024``, float32) within 2x of ffht's transform of the same float32 rows. ffht is
      called once on the 2-D ``(rows, 1024)`` float32 array (``ffht.fht(x)``: ffht-unofficial
      0.3 returns a *new* array with every row transformed and leaves its input unchanged),
      (also with ``nthreads`` = our thread count; the faster counts), and, for information,
      in a Python loop of 1-D calls. Our round time is
      ``(t(3 rounds) - t(1 round)) / 2`` with the same kernel on ``signs[:3]`` and
      ``signs[:1]`` (median over timing rounds of the paired difference), so the
      transpose-in and the argmax cancel out. 4096 rows in both modes (see the case).

``voronoi_reduced``
    ``Voronoi.sample_reduced(4096, cosines, rng)`` (the lazy exact sampler) against a
    vectorised NumPy sampler of the same statistics (all ``(T, n, 2)`` normals, ``u = z0``,
    ``v = a z0 + s z1``, argmaxes compared), goal >= 5x; the Gaussian cross-polytope's
    reduced sampler at ``n = 4096`` as a second row. The indicators are not the same stream,
    so the checks are statistical (counts vs the exact probabilities, and vs each other).

``voronoi_exact``
    ``theory.log_probability("voronoi", 2^20, a, rtol=1e-6)`` per value: goal <= 50 ms at
    relative error <= 1e-6 (checked against ``rtol=1e-12``), several cosines.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from lshsim import theory
from lshsim.bench.timing import interleaved, row, speedup_row
from lshsim.hashing import make_family
from lshsim.hashing.spherical import (
    CrossPolytope,
    Voronoi,
    fwht_columns,
    hadamard_crosspolytope,
    lazy_sample,
)
from lshsim.testing import reference  # the float64 Hadamard reference of the kernel tests

Z_MAX = 4.5


def _ffht():
    try:
        import ffht
    except ModuleNotFoundError as e:  # pragma: no cover - depends on the environment
        raise ModuleNotFoundError(
            "peer 'ffht' missing: pip install ffht-unofficial", name="ffht"
        ) from e
    return ffht


def _ids_agree(got: np.ndarray, y64: np.ndarray) -> bool:
    """Ids equal the float64 reference's except on rare near-ties (margin < 1e-4 rms)."""
    want = reference.signed_argmax(y64)
    bad = np.flatnonzero(got != want)
    if bad.size == 0:
        return True
    part = np.partition(np.abs(y64[bad]), -2, axis=1)
    margin = (part[:, -1] - part[:, -2]) / math.sqrt(float(np.mean(y64 * y64)))
    return bool(bad.size <= max(1, 1e-3 * got.size) and (margin <= 1e-4).all())


def _hadamard_checks(
    ffht: Any,
    had: CrossPolytope,
    gauss: CrossPolytope,
    x: np.ndarray,
    xs: np.ndarray,
    dense: np.ndarray,
    out3: np.ndarray,
) -> dict[str, bool]:
    """The checks of :func:`crosspolytope_hadamard`, on the first 512 (FWHT: 64) rows.

    Ids vs the float64 reference (near-ties allowed), the dense matmul's ids, the Gaussian
    family's id range, ffht's transform == our FWHT on the same float32 rows, and the timed
    kernel's output == the hash's.
    """
    sub = slice(0, 512)
    y64 = reference.hadamard_rotation(had, x[sub])
    ours_ids = had.hash(x)
    gauss_ids = gauss.hash(x[sub])
    block = np.ascontiguousarray(xs[:64].T)
    fwht_columns(block)
    peer = ffht.fht(np.ascontiguousarray(xs[:64]))
    scale = float(np.abs(peer).max())
    return {
        "ids": _ids_agree(ours_ids[sub], y64),
        "dense": _ids_agree(reference.signed_argmax(x[sub] @ dense), y64),
        "gaussian_range": bool(((gauss_ids >= 0) & (gauss_ids < gauss.n)).all()),
        "fwht": bool(np.allclose(block.T, peer, rtol=0, atol=1e-5 * scale)),
        "kernel": bool(np.array_equal(out3, ours_ids)),
    }


def crosspolytope_hadamard(quick: bool) -> list[dict]:
    """Hadamard cross-polytope hash vs dense rotations and vs ffht per round."""
    ffht = _ffht()
    n, d = 2048, 1024
    # 4096 rows (16 MiB of float32) in both modes: ffht returns a new array, and at 64 MiB
    # (16384 rows) that array is a fresh mmap each call (above glibc's dynamic mmap
    # threshold), whose page faults made ffht 1.4x slower per row than here; the per-round
    # difference of two noisy totals needs many rounds
    rows = 4096
    rounds = 31 if quick else 81
    x = np.random.default_rng(12345).standard_normal((rows, d)).astype(np.float32)
    had = make_family("crosspolytope", n, d, seed=5, rotation="hadamard")
    gauss = make_family("crosspolytope", n, d, seed=5, rotation="gaussian")
    half = had.m
    dense = np.ascontiguousarray(reference.hadamard_rotation(had, np.eye(d)), dtype=np.float32)
    signs32 = np.ascontiguousarray(had.signs, dtype=np.float32)
    out3 = np.empty(rows, dtype=np.int64)
    out1 = np.empty(rows, dtype=np.int64)
    xs = x * signs32[0]  # ffht transforms the sign-flipped rows (one round's input)
    nthreads = numba.get_num_threads()
    threads = 4 * nthreads  # parallel work items of our kernel (the ids do not depend on it)

    fns: dict[str, Callable[[], object]] = {
        "ours": lambda: had.hash(x),
        "ours_3_rounds": lambda: hadamard_crosspolytope(x, signs32, half, out3, threads),
        "ours_1_round": lambda: hadamard_crosspolytope(x, signs32[:1], half, out1, threads),
        "gaussian_family": lambda: gauss.hash(x),
        "numpy_dense": lambda: reference.signed_argmax(x @ dense),
        "ffht_2d": lambda: ffht.fht(xs),
        "ffht_2d_threads": lambda: ffht.fht(xs, nthreads=nthreads),
        "ffht_loop": lambda: [ffht.fht(r) for r in xs],
    }
    t = interleaved(fns, rounds=rounds, warmup=1)

    ok = _hadamard_checks(ffht, had, gauss, x, xs, dense, out3)

    # per round: the median over timing rounds of the paired difference (adjacent calls)
    diffs = np.subtract(t["ours_3_rounds"]["times"], t["ours_1_round"]["times"]) / 2
    ours_round = float(np.median(diffs))
    # the faster of ffht on one thread and on as many threads as our kernel uses
    ffht_key = min(("ffht_2d", "ffht_2d_threads"), key=lambda k: t[k]["median"])
    sizes = {"rows": rows, "d": d, "n": n, "D": int(had.signs.shape[1]), "rounds": 3}
    desc = f"crosspolytope hadamard n={n} d={d} (D=1024, 3 rounds) m={rows} f32"
    ours_txt = "CrossPolytope(rotation='hadamard').hash (float32 buffer, radix-8 FWHT, prange)"
    rows_out = [
        speedup_row(
            f"{desc} vs gaussian rotation",
            t,
            "ours",
            "gaussian_family",
            goal=10.0,
            ours=ours_txt,
            peer="CrossPolytope(rotation='gaussian').hash, same n, d (dense BLAS sgemm)",
            checks={
                "ids_match_f64_reference": ok["ids"],
                "gaussian_ids_in_range": ok["gaussian_range"],
            },
            sizes=sizes,
        ),
        speedup_row(
            f"{desc} vs numpy dense matmul",
            t,
            "ours",
            "numpy_dense",
            goal=10.0,
            ours=ours_txt,
            peer="x @ R (the same rotation as a dense 1024 x 1024 float32 matrix) + argmax",
            checks={"ids_match_f64_reference": ok["ids"], "dense_ids_match_reference": ok["dense"]},
            sizes=sizes,
        ),
        row(
            f"hadamard round D=1024 m={rows} f32 vs ffht",
            ratio=ours_round / t[ffht_key]["median"],
            goal=2.0,
            op="<=",
            measure="our time per round / ffht time (one 2-D call, the faster thread count)",
            ours=(
                f"(t(3 rounds) - t(1 round)) / 2 of hadamard_crosspolytope on {nthreads} "
                "threads: sign flip + FWHT"
            ),
            peer=(
                "ffht.fht(x) / ffht.fht(x, nthreads=T) once on the (rows, 1024) float32 array "
                f"(returns a new array); used: {ffht_key}"
            ),
            ours_s=ours_round,
            peer_s=t[ffht_key]["median"],
            checks={"fwht_equals_ffht": ok["fwht"], "kernel_ids_equal_hash": ok["kernel"]},
            sizes=sizes,
            ratio_vs_ffht_loop=ours_round / t["ffht_loop"]["median"],
            ffht_loop_s=t["ffht_loop"]["median"],
            ffht_1_thread_s=t["ffht_2d"]["median"],
            ffht_threads_s=t["ffht_2d_threads"]["median"],
            threads=nthreads,
            ours_total_s=t["ours"]["median"],
            ours_1_round_s=t["ours_1_round"]["median"],
            ours_round_iqr_s=float(np.subtract(*np.percentile(diffs, [75, 25]))),
            ours_3_rounds_s=t["ours_3_rounds"]["median"],
        ),
    ]
    return rows_out


# --------------------------------------------------------------------------- reduced sampler


def _numpy_reduced(cols: int, cosines: np.ndarray, rng: np.random.Generator, signed: bool):
    a = cosines[:, None]
    s = np.sqrt(np.maximum(0.0, 1.0 - a * a))
    z = rng.standard_normal((cosines.shape[0], cols, 2))
    u = z[..., 0]
    v = a * u + s * z[..., 1]
    if signed:
        return np.concatenate([u, -u], axis=1).argmax(axis=1) == np.concatenate(
            [v, -v], axis=1
        ).argmax(axis=1)
    return u.argmax(axis=1) == v.argmax(axis=1)


def _stat_checks(family: str, n: int, cos: np.ndarray, ours: np.ndarray, peer: np.ndarray):
    p = theory.probabilities(family, n, cos)
    sd = math.sqrt(float(np.sum(p * (1 - p))))
    z_ours = float((ours.sum() - p.sum()) / sd)
    z_peer = float((peer.sum() - p.sum()) / sd)
    z_two = float((ours.sum() - peer.sum()) / (sd * math.sqrt(2.0)))
    checks = {
        "ours_vs_exact_|z|<4.5": abs(z_ours) < Z_MAX,
        "numpy_vs_exact_|z|<4.5": abs(z_peer) < Z_MAX,
        "ours_vs_numpy_|z|<4.5": abs(z_two) < Z_MAX,
    }
    return checks, {"z_ours": z_ours, "z_numpy": z_peer, "z_two_sample": z_two}


def _steps_table(signed: bool) -> dict[str, float]:
    out = {}
    for n in (4096, 2**20, 2**30):
        for a in (0.0, 0.5, 0.9, 0.99):
            cols = n // 2 if signed else n
            steps = lazy_sample(cols, np.full(2000, a), np.random.default_rng(1), signed)[1]
            out[f"n={n} a={a}"] = float(steps.mean())
    return out


def voronoi_reduced(quick: bool) -> list[dict]:
    """Lazy reduced samplers (voronoi, Gaussian cross-polytope) vs NumPy, n = 4096."""
    n, trials = 4096, 512
    rounds = 5 if quick else 15
    check_trials = 4000 if quick else 20000
    cos = np.random.default_rng(7).uniform(0.8, 0.99, trials)
    out = []
    for cls, signed in ((Voronoi, False), (CrossPolytope, True)):
        family = cls.name
        cols = n // 2 if signed else n
        fns = {
            "ours": lambda cls=cls: cls.sample_reduced(n, cos, np.random.default_rng(2024)),
            "numpy": lambda cols=cols, signed=signed: _numpy_reduced(
                cols, cos, np.random.default_rng(2024), signed
            ),
        }
        t = interleaved(fns, rounds=rounds, warmup=1)
        cc = np.random.default_rng(8).uniform(0.0, 0.99, check_trials)
        ours = cls.sample_reduced(n, cc, np.random.default_rng(1))
        peer = np.concatenate(
            [
                _numpy_reduced(cols, cc[i : i + 512], np.random.default_rng([2, i]), signed)
                for i in range(0, check_trials, 512)
            ]
        )
        checks, zs = _stat_checks(family, n, cc, ours, peer)
        out.append(
            speedup_row(
                f"{family} reduced sampler n={n} T={trials} cos~U(0.8,0.99) vs numpy",
                t,
                "ours",
                "numpy",
                goal=5.0,
                ours=f"{cls.__name__}.sample_reduced (lazy exact sampler)",
                peer="NumPy: (T, cols, 2) normals, u = z0, v = a z0 + s z1, argmaxes compared",
                checks=checks,
                check_trials=check_trials,
                steps_per_trial=_steps_table(signed),
                **zs,
            )
        )
    return out


# --------------------------------------------------------------------------- exact theory


def voronoi_exact(quick: bool) -> list[dict]:
    """Exact Voronoi (and cross-polytope) probability at n = 2^20, rtol 1e-6, per value."""
    n = 2**20
    cosines = (-0.5, 0.0, 0.3, 0.8, 0.99, 0.999)
    rounds = 3 if quick else 9
    out = []
    for family in (Voronoi.name, CrossPolytope.name):
        t = interleaved(
            {
                "ours": lambda f=family: [
                    theory.log_probability(f, n, a, rtol=1e-6) for a in cosines
                ]
            },
            rounds=rounds,
            warmup=1,
        )
        per_value = t["ours"]["median"] / len(cosines)
        errs = {}
        for a in cosines:
            fast = theory.log_probability(family, n, a, rtol=1e-6)
            tight = theory.log_probability(family, n, a, rtol=1e-12)
            errs[a] = abs(math.expm1(fast - tight))
        out.append(
            row(
                f"exact {family} probability n=2^20 rtol=1e-6, cosines {cosines}",
                ratio=per_value / 0.050,
                goal=1.0,
                op="<=",
                measure="our time per value / 50 ms",
                ours="theory.log_probability(family, 2^20, a, rtol=1e-6)",
                peer="the 50 ms budget (checked against our rtol=1e-12 quadrature)",
                ours_s=per_value,
                peer_s=0.050,
                checks={"rel_err<=1e-6": max(errs.values()) <= 1e-6},
                rel_errs={str(a): e for a, e in errs.items()},
            )
        )
    return out


CASES: dict[str, Callable[[bool], list[dict]]] = {
    "crosspolytope_hadamard": crosspolytope_hadamard,
    "voronoi_reduced": voronoi_reduced,
    "voronoi_exact": voronoi_exact,
}
