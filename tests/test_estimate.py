"""The Monte-Carlo estimators against closed forms, each other, and bad input."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lshsim import estimate, theory
from lshsim.estimate import BLOCK, estimate_collision, wilson_interval
from lshsim.sentences import sentence_cosines, shared_tokens
from tests.stats import assert_agrees, assert_same_rate


@pytest.mark.parametrize("mode", ["full", "reduced"])
@pytest.mark.parametrize(("n", "a"), [(2, -0.5), (16, 0.0), (16, 0.9), (256, 0.95), (2**20, 0.99)])
def test_simhash_matches_closed_form(mode, n, a):
    """SimHash estimates agree with (1 - arccos(a)/pi)^k."""
    e = estimate_collision("simhash", n, cosine=a, dim=16, samples=3000, seed=11, mode=mode)
    assert_agrees(e.successes, e.samples, theory.simhash_probability(n, a))


@pytest.mark.parametrize("mode", ["full", "reduced"])
@pytest.mark.parametrize(
    ("n", "a", "params"),
    [
        (64, 0.9, {}),
        (1000, 0.5, {"k": 3}),
        (16, 0.0, {"k": 1, "w": 0.5}),
        (4, 0.7, {"k": 2, "w": 0.3}),
    ],
)
def test_pstable_matches_exact(mode, n, a, params):
    """p-stable estimates agree with Datar's formula plus the radix wrap-around terms."""
    e = estimate_collision("pstable", n, cosine=a, dim=8, samples=3000, seed=5, mode=mode, **params)
    exact = theory.pstable_probability(n, math.sqrt(2 - 2 * a), **params)
    assert_agrees(e.successes, e.samples, exact)


@pytest.mark.parametrize("f", [0.0, 0.25, 0.5, 0.9])
def test_minhash_matches_jaccard(f):
    """Min-hash of the token sets collides with the Jaccard index s/(2l - s) (n large)."""
    e = estimate_collision("minhash", 2**40, overlap=f, length=20, samples=4000, seed=2)
    assert_agrees(e.successes, e.samples, theory.jaccard(shared_tokens(f, 20), 20))


def test_minhash_concatenated_is_jaccard_power():
    """k concatenated min-hashes collide with Jaccard^k."""
    e = estimate_collision("minhash", 2**40, overlap=0.6, length=20, samples=4000, seed=3, k=3)
    assert_agrees(e.successes, e.samples, theory.jaccard(12, 20) ** 3)


def test_minhash_small_n_adds_about_one_over_n():
    """With few buckets, distinct minimisers still collide mod n: P = J + (1 - J)/n."""
    e = estimate_collision("minhash", 4, overlap=0.5, length=10, samples=6000, seed=4)
    j = theory.jaccard(5, 10)
    assert_agrees(e.successes, e.samples, j + (1 - j) / 4)


@pytest.mark.parametrize("f", [0.0, 0.3, 0.5, 1.0])
def test_tokenid_rate_is_exactly_f(f):
    """With n >= V every aligned position collides iff its token is shared: rate s/l exactly."""
    e = estimate_collision("tokenid", 1000, overlap=f, length=16, vocab=1000, samples=500, seed=1)
    s = shared_tokens(f, 16)
    assert e.samples == 500 * 16
    assert e.successes == 500 * s


def test_tokenid_small_table_only_adds_collisions():
    """With n < V distinct tokens share buckets: the rate is f + (1 - f)/n on random ids."""
    e = estimate_collision("tokenid", 8, overlap=0.5, length=16, vocab=32128, samples=1000, seed=1)
    assert_agrees(e.successes, e.samples, 0.5 + 0.5 / 8)


@pytest.mark.parametrize("family", ["voronoi", "crosspolytope"])
@pytest.mark.parametrize("mode", ["full", "reduced"])
def test_spherical_exact_points(family, mode):
    """Spherical LSH: P(a=1) = 1, P(a=-1) = 0, and P(a=0) = 1/n (independent argmaxes)."""
    n = 16
    one = estimate_collision(family, n, cosine=1.0, dim=8, samples=300, seed=1, mode=mode)
    assert one.successes == one.samples
    anti = estimate_collision(family, n, cosine=-1.0, dim=8, samples=300, seed=1, mode=mode)
    assert anti.successes == 0
    zero = estimate_collision(family, n, cosine=0.0, dim=8, samples=4000, seed=1, mode=mode)
    assert_agrees(zero.successes, zero.samples, 1 / n)


def test_hadamard_crosspolytope_exact_points():
    """The Hadamard rotation keeps P(a=1) = 1 and P(a=-1) = 0 (it is an exact isometry)."""
    kw = {"dim": 12, "samples": 300, "seed": 3, "rotation": "hadamard"}
    assert estimate_collision("crosspolytope", 32, cosine=1.0, **kw).estimate == 1.0
    assert estimate_collision("crosspolytope", 32, cosine=-1.0, **kw).estimate == 0.0


@pytest.mark.parametrize(
    ("family", "params"),
    [("voronoi", {}), ("crosspolytope", {}), ("simhash", {}), ("pstable", {"k": 2})],
)
@pytest.mark.parametrize("what", [{"cosine": 0.7}, {"overlap": 0.6}])
def test_reduced_agrees_with_full(family, params, what):
    """Reduced sampling of the sufficient statistics matches hashing real vectors."""
    kw = {"dim": 24, "length": 8, "samples": 3000, **what, **params}
    full = estimate_collision(family, 64, mode="full", seed=7, **kw)
    red = estimate_collision(family, 64, mode="reduced", seed=8, **kw)
    assert_same_rate(full.successes, full.samples, red.successes, red.samples)


def test_hadamard_close_to_gaussian_rotation():
    """FALCONN's pseudo-random rotation routes like a Gaussian one (d = 64, n = 64)."""
    g = estimate_collision("crosspolytope", 64, cosine=0.8, dim=64, samples=3000, seed=1)
    h = estimate_collision(
        "crosspolytope", 64, cosine=0.8, dim=64, samples=3000, seed=2, rotation="hadamard"
    )
    assert_same_rate(g.successes, g.samples, h.successes, h.samples)


def test_same_seed_same_numbers_and_prefix_stability():
    """Same seed, same numbers; a longer run extends the shorter one block by block."""
    a = estimate_collision("voronoi", 32, overlap=0.5, samples=BLOCK + 10, seed=9, mode="reduced")
    b = estimate_collision("voronoi", 32, overlap=0.5, samples=BLOCK + 10, seed=9, mode="reduced")
    c = estimate_collision("voronoi", 32, overlap=0.5, samples=BLOCK, seed=9, mode="reduced")
    d = estimate_collision("voronoi", 32, overlap=0.5, samples=BLOCK + 10, seed=10, mode="reduced")
    assert (a.successes, a.estimate, a.ci_low) == (b.successes, b.estimate, b.ci_low)
    assert c.successes <= a.successes <= c.successes + 10
    assert d.successes != a.successes


@pytest.mark.parametrize(
    "root", [np.random.SeedSequence(9), np.random.SeedSequence(3, spawn_key=(2,))]
)
def test_lazy_block_seeds_are_the_spawned_children(root):
    """``block_seed(root, i)`` is child ``i`` of ``root.spawn``: the numbers are unchanged."""
    eager = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key).spawn(40)
    for i in (0, 1, 7, 39):
        lazy = estimate.block_seed(root, i)
        assert lazy.spawn_key == eager[i].spawn_key
        assert (lazy.generate_state(8) == eager[i].generate_state(8)).all()
    assert root.n_children_spawned == 0  # nothing spawned from the caller's root


def test_estimate_is_the_sum_over_eagerly_spawned_blocks():
    """An estimate equals its blocks run one by one on ``SeedSequence(seed).spawn(blocks)``."""
    samples, seed = 3 * BLOCK + 5, 11
    e = estimate_collision(
        "voronoi", 64, cosine=0.8, samples=samples, seed=seed, mode="reduced", threads=2
    )
    cls = estimate.get_family("voronoi")
    job = (cls, 64, "reduced", None, 0.8, 64, 32, 32128, {})
    children = np.random.SeedSequence(seed).spawn(4)
    hits = sum(
        estimate._run_block(i, c, samples=samples, chunk=BLOCK, job=job)[0]
        for i, c in enumerate(children)
    )
    assert e.successes == hits


_THREADS_SCRIPT = """
from lshsim.estimate import estimate_collision
for fam, kw in [("simhash", {}), ("voronoi", {}), ("crosspolytope", {"rotation": "hadamard"}),
                ("minhash", {}), ("pstable", {})]:
    e = estimate_collision(fam, 64, overlap=0.5, samples=300, seed=3, **kw)
    print(fam, e.successes)
print(estimate_collision("voronoi", 64, overlap=0.5, samples=300, seed=3, mode="reduced").successes)
"""


def test_estimates_independent_of_thread_count():
    """The same seed gives the same counts with 1 and 2 Numba/BLAS threads.

    ``NUMBA_NUM_THREADS`` sets the estimator's default worker threads (blocks run
    concurrently), and the BLAS thread count changes how projections are split.
    """
    outs = []
    for threads in ("1", "2"):
        env = {
            "NUMBA_NUM_THREADS": threads,
            "OMP_NUM_THREADS": threads,
            "OPENBLAS_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads,
        }
        import os

        res = subprocess.run(
            [sys.executable, "-c", _THREADS_SCRIPT],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(res.stdout)
    assert outs[0] == outs[1]
    assert outs[0].count("\n") == 6


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"family": "nope", "n": 8, "cosine": 0.5}, "family must be one of"),
        ({"family": "simhash", "n": 1, "cosine": 0.5}, r"n \(buckets\)"),
        ({"family": "simhash", "n": 12, "cosine": 0.5}, "power of two"),
        ({"family": "crosspolytope", "n": 7, "cosine": 0.5}, "even"),
        ({"family": "pstable", "n": 10, "k": 2, "cosine": 0.5}, "r\\^k"),
        ({"family": "voronoi", "n": 8, "cosine": 1.5}, "cosine must be in"),
        ({"family": "voronoi", "n": 8, "overlap": -0.1}, r"overlap \(f\)"),
        ({"family": "voronoi", "n": 8, "overlap": 1.1}, r"overlap \(f\)"),
        ({"family": "voronoi", "n": 8}, "exactly one"),
        ({"family": "voronoi", "n": 8, "overlap": 0.5, "cosine": 0.5}, "exactly one"),
        ({"family": "voronoi", "n": 8, "cosine": 0.5, "samples": 0}, "samples"),
        ({"family": "voronoi", "n": 8, "cosine": 0.5, "dim": 0}, r"dim \(d\)"),
        ({"family": "voronoi", "n": 8, "cosine": 0.5, "dim": 1}, "dim"),
        ({"family": "voronoi", "n": 8, "overlap": 0.5, "length": 0}, r"length \(l\)"),
        ({"family": "voronoi", "n": 8, "overlap": 0.5, "vocab": 10}, r"vocab \(V\)"),
        ({"family": "voronoi", "n": 8, "cosine": 0.5, "mode": "fast"}, "mode must be"),
        ({"family": "minhash", "n": 8, "cosine": 0.5}, "cosine is not defined"),
        ({"family": "tokenid", "n": 8, "overlap": 0.5, "mode": "reduced"}, "not available"),
        (
            {
                "family": "crosspolytope",
                "n": 8,
                "cosine": 0.5,
                "mode": "reduced",
                "rotation": "hadamard",
            },
            "rotation='gaussian-projection'",
        ),
        ({"family": "voronoi", "n": 8, "cosine": 0.5, "bogus": 1}, "unknown parameter"),
        ({"family": "voronoi", "n": 8, "cosine": 0.5, "seed": -1}, "seed"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, match):
    """Bad input raises ValueError naming the parameter and its allowed range."""
    kwargs = dict(kwargs)
    family, n = kwargs.pop("family"), kwargs.pop("n")
    with pytest.raises(ValueError, match=match):
        estimate_collision(family, n, **kwargs)


def test_wilson_known_values():
    """Wilson intervals match textbook values."""
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.27753, abs=1e-5)
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == (pytest.approx(0.23659, abs=1e-5), pytest.approx(0.76341, abs=1e-5))


@given(st.integers(1, 10**6).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_point_estimate_and_is_symmetric(kn):
    """The interval lies in [0, 1], contains k/n, and mirrors under k -> n - k."""
    k, n = kn
    lo, hi = wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    lo2, hi2 = wilson_interval(n - k, n)
    assert lo2 == pytest.approx(1 - hi, abs=1e-12) and hi2 == pytest.approx(1 - lo, abs=1e-12)


def test_calibration_of_the_interval():
    """95% intervals from independent seeds cover the exact SimHash value about 95% of the time."""
    exact = theory.simhash_probability(64, 0.8)
    runs = 200
    covered = 0
    for seed in range(runs):
        e = estimate_collision("simhash", 64, cosine=0.8, samples=400, seed=seed, mode="reduced")
        covered += e.ci_low <= exact <= e.ci_high
    # binomial(200, 0.95): mean 190, sd 3.1; Wilson intervals are close to nominal here
    assert 178 <= covered <= 200, covered


def test_progress_bar_on_stderr_only_for_long_runs(capsys, monkeypatch):
    """progress=True draws a bar on stderr once a run passes the delay; stdout stays clean."""
    e = estimate_collision("voronoi", 4, cosine=0.5, samples=100, seed=0, progress=True)
    quick = capsys.readouterr()
    assert e.seconds < estimate.PROGRESS_DELAY  # sanity: this run is short
    assert quick.out == "" and quick.err == ""  # shorter than the delay: no bar at all
    monkeypatch.setattr(estimate, "PROGRESS_DELAY", 0.0)
    estimate_collision("voronoi", 4, cosine=0.5, samples=2 * BLOCK, seed=0, progress=True)
    shown = capsys.readouterr()
    assert shown.out == "" and "voronoi n=4" in shown.err and "/2048" in shown.err


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"family": "voronoi", "n": 8, "cosine": 0.5, "dim": 2**31 + 1}, r"dim \(d\)"),
        ({"family": "tokenid", "n": 8, "overlap": 0.5, "length": 2**31 + 1}, r"length \(l\)"),
        ({"family": "minhash", "n": 8, "overlap": 0.5, "vocab": 2**62}, r"vocab \(V\)"),
        (
            {
                "family": "simhash",
                "n": 8,
                "overlap": 0.5,
                "length": 10**5,
                "dim": 10**5,
                "vocab": 10**9,
            },
            r"dim \(d\) = 100000 and length \(l\) = 100000 are too large",
        ),
        ({"family": "voronoi", "n": 2**31, "cosine": 0.5, "mode": "reduced"}, "<= 2\\^30"),
        ({"family": "voronoi", "n": 2**40, "cosine": 0.5}, "Gaussian table"),
        (
            {"family": "crosspolytope", "n": 2**30, "cosine": 0.5, "rotation": "hadamard"},
            "padded dimension",
        ),
        ({"family": "pstable", "n": 4, "k": 1, "w": 1e-300, "cosine": 0.5}, r"w \(width\)"),
    ],
)
def test_oversized_input_is_refused_up_front(kwargs, match):
    """Sizes that cannot run (memory, int64 ids, float precision) fail fast, naming the input."""
    kwargs = dict(kwargs)
    family, n = kwargs.pop("family"), kwargs.pop("n")
    with pytest.raises(ValueError, match=match):
        estimate_collision(family, n, samples=2, **kwargs)


def test_chunked_blocks_are_deterministic_and_agree(monkeypatch):
    """Blocks cut into small chunks (large d * l) stay deterministic and statistically right."""
    monkeypatch.setattr(estimate, "WORK_BYTES", 8 * 2 * 64 * 16 * 7)  # 7 pairs per chunk
    kw = {"overlap": 0.5, "dim": 16, "length": 32, "samples": 3000, "seed": 4}
    a = estimate_collision("simhash", 64, **kw)
    b = estimate_collision("simhash", 64, **kw)
    assert a.successes == b.successes
    monkeypatch.undo()
    ref = estimate_collision("simhash", 64, mode="reduced", **{**kw, "seed": 5})
    assert_same_rate(a.successes, a.samples, ref.successes, ref.samples)


def test_reported_params_include_defaults():
    """The estimate records the parameters actually used, defaults included."""
    e = estimate_collision("pstable", 64, cosine=0.5, samples=10)
    assert e.params == {"k": 6, "w": 4.0}
    e = estimate_collision("crosspolytope", 64, cosine=0.5, samples=10)
    assert e.params == {"rotation": "gaussian-projection"}


@pytest.mark.parametrize("mode", ["full", "reduced"])
@pytest.mark.parametrize(("f", "n"), [(0.3, 16), (0.75, 256)])
def test_simhash_overlap_matches_closed_form_averaged_over_cosines(mode, f, n):
    """Overlap mode: SimHash collides at E_c[(1 - arccos(c)/pi)^k] over the sentence cosines.

    The average is taken over 100 000 independent draws of the pair cosine (its own standard
    error is far below the estimate's), so the sentence model, the pooling and the kernel are
    checked end to end against the closed form.
    """
    rng = np.random.default_rng(99)
    cos = np.concatenate(
        [sentence_cosines(10_000, f, length=16, dim=32, rng=rng) for _ in range(10)]
    )
    k = n.bit_length() - 1
    exact = float(np.mean((1 - np.arccos(cos) / math.pi) ** k))
    e = estimate_collision(
        "simhash", n, overlap=f, dim=32, length=16, samples=4000, seed=6, mode=mode
    )
    assert_agrees(e.successes, e.samples, exact)


@pytest.mark.parametrize(
    ("family", "kw"),
    [
        ("voronoi", {"overlap": 0.5, "mode": "reduced"}),
        ("crosspolytope", {"cosine": 0.6, "rotation": "hadamard"}),
        ("minhash", {"overlap": 0.4}),
        ("tokenid", {"overlap": 0.4}),
    ],
)
def test_worker_threads_do_not_change_the_numbers(family, kw):
    """Blocks carry their own seeds: 1, 2 or 5 worker threads give identical counts."""
    runs = [
        estimate_collision(family, 64, samples=3 * BLOCK + 7, seed=12, threads=t, **kw)
        for t in (1, 2, 5)
    ]
    assert len({(e.successes, e.samples) for e in runs}) == 1
