"""Throughput of the reduced-mode samplers next to a vectorised NumPy sampler of the same work.

``Family.sample_reduced(n, cosines, rng)`` samples, per trial, the collision indicator of the
bivariate-normal projection pairs ``(u, v) = (z0, a z0 + sqrt(1 - a^2) z1)``. The NumPy
baselines draw all ``(T, cols, 2)`` normals in one call.

* simhash, pstable: the kernels draw the same normals from a generator with the same seed
  (``Generator.standard_normal`` gives the same stream whatever the chunking, and the kernels
  chunk over whole trials at these sizes), so the indicators must be *identical*.
* voronoi, crosspolytope: the kernels sample lazily (only the few pairs that can decide the
  argmaxes, exact in distribution but not the same stream), so the check is statistical:
  each sampler's count within 4.5 sigma of the sum of the exact probabilities of its trials
  (``lshsim.theory.probabilities``), and the two counts within 4.5 sigma of each other.

Run the timings with ``pytest tests/bench/micro --benchmark-enable``; under the default
``--benchmark-disable`` each body runs once as a correctness check.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from lshsim import theory
from lshsim.hashing import CrossPolytope, PStable, SimHash, Voronoi

SEED = 2024
#: Families whose kernel is exact in distribution only (compared statistically).
STATISTICAL = {"voronoi", "crosspolytope"}
Z_MAX = 4.5


def _pairs(cosines: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = cosines[:, None]
    s = np.sqrt(np.maximum(0.0, 1.0 - a * a))
    u = z[..., 0]
    return u, a * u + s * z[..., 1]


def numpy_voronoi(n, cosines, rng):
    u, v = _pairs(cosines, rng.standard_normal((cosines.shape[0], n, 2)))
    return u.argmax(axis=1) == v.argmax(axis=1)


def numpy_crosspolytope(n, cosines, rng):
    u, v = _pairs(cosines, rng.standard_normal((cosines.shape[0], n // 2, 2)))
    return np.concatenate([u, -u], axis=1).argmax(axis=1) == np.concatenate([v, -v], axis=1).argmax(
        axis=1
    )


def numpy_simhash(n, cosines, rng):
    k = n.bit_length() - 1
    u, v = _pairs(cosines, rng.standard_normal((cosines.shape[0], k, 2)))
    return ((u > 0) == (v > 0)).all(axis=1)


def numpy_pstable(n, cosines, rng, k, w):
    r = round(n ** (1.0 / k))
    u, v = _pairs(cosines, rng.standard_normal((cosines.shape[0], k, 2)))
    b = rng.random((cosines.shape[0], k)) * w
    return (np.mod(np.floor((u + b) / w), r) == np.mod(np.floor((v + b) / w), r)).all(axis=1)


# case id -> (description, sampler classmethod, numpy sampler, n, trials, cosine range, params)
CASES: dict[str, tuple] = {
    "voronoi": ("n=4096 T=512", Voronoi.sample_reduced, numpy_voronoi, 4096, 512, (0.8, 0.99), {}),
    "crosspolytope": (
        "n=4096 (2048 coords) T=512",
        CrossPolytope.sample_reduced,
        numpy_crosspolytope,
        4096,
        512,
        (0.8, 0.99),
        {},
    ),
    "simhash": (
        "n=2^16 (k=16) T=65536",
        SimHash.sample_reduced,
        numpy_simhash,
        2**16,
        65536,
        (0.9, 0.999),
        {},
    ),
    "pstable": (
        "n=4^8 (k=8, w=4) T=65536",
        PStable.sample_reduced,
        numpy_pstable,
        4**8,
        65536,
        (0.0, 0.99),
        {"k": 8, "w": 4.0},
    ),
}

_LIVE: dict[str, dict] = {}


def get_case(case_id: str) -> dict:
    """Cosines, the two samplers (fresh generator with the same seed per call) and a result cache;
    the JIT warmed up on a few trials."""
    if case_id not in _LIVE:
        _LIVE.clear()
        desc, sampler, baseline, n, trials, (lo, hi), params = CASES[case_id]
        cos = np.random.default_rng(7).uniform(lo, hi, trials)

        def kernel(cos=cos):
            return sampler(n, cos, np.random.default_rng(SEED), **params)

        def baseline_(cos=cos):
            return baseline(n, cos, np.random.default_rng(SEED), **params)

        kernel(cos[:4])  # compile / load the JIT outside the timing
        _LIVE[case_id] = {
            "kernel": kernel,
            "numpy": baseline_,
            "results": {},
            "sizes": desc,
            "family": sampler.__self__.name,
            "n": n,
            "cosines": cos,
        }
    return _LIVE[case_id]


def _result(case: dict, impl: str) -> np.ndarray:
    if impl not in case["results"]:
        case["results"][impl] = case[impl]()
    return case["results"][impl]


@pytest.mark.parametrize(
    ("case_id", "impl"),
    [
        pytest.param(
            cid, impl, marks=pytest.mark.benchmark(group=f"reduced:{cid}"), id=f"{cid}-{impl}"
        )
        for cid in CASES
        for impl in ("numpy", "kernel")
    ],
)
def test_reduced(benchmark, case_id, impl):
    case = get_case(case_id)
    benchmark.extra_info["sizes"] = case["sizes"]
    fn: Callable[[], np.ndarray] = case[impl]
    case["results"][impl] = benchmark(fn)
    got, want = _result(case, "kernel"), _result(case, "numpy")
    assert got.dtype == np.bool_
    assert got.shape == want.shape
    assert 0 < want.sum() < want.size  # collision rate not degenerate: the comparison has teeth
    if case_id not in STATISTICAL:
        assert np.array_equal(got, want), f"{(got != want).sum()} of {got.size} indicators differ"
        return
    p = theory.probabilities(case["family"], case["n"], case["cosines"])
    sd = math.sqrt(float(np.sum(p * (1 - p))))
    for name, hits in (("kernel", got), ("numpy", want)):
        z = (hits.sum() - p.sum()) / sd
        assert abs(z) < Z_MAX, f"{name}: {hits.sum()} collisions, expected {p.sum():.1f}"
    z_two = (got.sum() - want.sum()) / (sd * math.sqrt(2.0))
    assert abs(z_two) < Z_MAX, f"kernel {got.sum()} vs numpy {want.sum()} collisions"
