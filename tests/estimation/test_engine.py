"""The estimation engine: thread counts, block order, per-pair sums, intervals, bad input."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import numpy as np
import pytest

from lshsim.estimate import estimate_collision
from lshsim.estimate_topk import estimate_topk_overlap
from lshsim.estimation import (
    BLOCK,
    COLLISION,
    Tally,
    TopkOverlap,
    check_inputs,
    interval,
    run,
    run_blocks,
    wilson_interval,
)
from lshsim.hashing import NGram, get_family
from lshsim.sentences import shared_tokens

DEFAULTS = {"overlap": None, "cosine": None, "dim": 16, "length": 12, "vocab": 32128}


def _inputs(family, n, samples=2 * BLOCK + 37, seed=5, mode="full", params=None, **kw):
    return check_inputs(
        family, n, dict(params or {}), **{**DEFAULTS, **kw}, samples=samples, seed=seed, mode=mode
    )


def _sums(t: Tally) -> tuple:
    return t.pairs, t.trials, t.total, t.squares


COLLISION_CASES = [
    ("simhash", 64, {"cosine": 0.7}, "full", {}),
    ("voronoi", 32, {"overlap": 0.5}, "full", {}),
    ("crosspolytope", 16, {"cosine": 0.6}, "reduced", {}),
    ("productkey", 16, {"overlap": 0.5}, "reduced", {}),
    ("productkey", 64, {"cosine": 0.5}, "full", {}),
    ("minhash", 64, {"overlap": 0.4}, "full", {}),
    ("tokenid", 8, {"overlap": 0.5}, "full", {}),
    ("ngram", 61, {"overlap": 0.6}, "full", {"ngram": 2, "heads": 2}),
]


@pytest.mark.parametrize(("family", "n", "what", "mode", "params"), COLLISION_CASES)
def test_collision_sums_do_not_depend_on_threads(family, n, what, mode, params):
    """1 and 2 worker threads give the same per-pair sums, bit for bit (3 blocks)."""
    inputs = _inputs(family, n, mode=mode, params=params, **what)
    one, two = (_sums(run(COLLISION, inputs, threads=t)) for t in (1, 2))
    assert one == two
    assert one[0] == inputs.samples


@pytest.mark.parametrize(
    ("family", "n", "k", "what"),
    [
        ("voronoi", 32, 3, {"cosine": 0.5}),
        ("crosspolytope", 16, 2, {"overlap": 0.5}),
        ("productkey", 64, 3, {"cosine": 0.5}),
    ],
)
def test_topk_sums_do_not_depend_on_threads(family, n, k, what):
    """The float sums of the top-k overlap are folded in block order: 1 and 2 threads agree."""
    inputs = _inputs(family, n, samples=2 * BLOCK + 5, dim=8, **what)
    stat = TopkOverlap.for_inputs(inputs, k)
    one, two = (run(stat, inputs, threads=t) for t in (1, 2))
    assert _sums(one) == _sums(two)
    assert interval("normal", one) == interval("normal", two)
    kw = {"samples": 2 * BLOCK + 5, "seed": 5, "dim": 8, "length": 12}
    est = estimate_topk_overlap(family, n, k, **kw, **what)
    assert (est.overlap, est.std_error, est.pairs, est.trials) == (
        one.total / one.pairs,
        interval("pairs", one).std_error,
        one.pairs,
        one.pairs * k,
    )
    # with the same weight on every pair, the ratio's delta-method standard error is the
    # normal rule's sample standard deviation over sqrt(pairs)
    assert est.std_error == pytest.approx(interval("normal", one).std_error, rel=1e-9)


def test_blocks_fold_in_block_order_whatever_finishes_first():
    """A slow block 0 finishes last, yet the fold sees the blocks as 0, 1, 2, ..."""
    release = threading.Event()

    def block(i, child):
        if i == 0:
            release.wait(5)
        elif i == 3:
            release.set()
        return i, 1

    root = np.random.SeedSequence(0)
    order = run_blocks(block, root, 9, 9, 3, lambda acc, r: [*acc, r], [])
    assert order == list(range(9))


def test_blocks_stay_within_a_window_of_the_first_unfolded():
    """Blocks run at most ``2 * threads`` ahead of the oldest unfolded block (flat memory)."""
    started, seen = [], []

    def block(i, child):
        started.append(i)
        if i == 0:  # slow: the other worker finishes every block it is allowed meanwhile
            threading.Event().wait(0.3)
            seen.extend(started)
        return None, 1

    run_blocks(block, np.random.SeedSequence(0), 50, 50, 2, lambda a, r: a, None)
    assert sorted(started) == list(range(50))
    assert max(seen) <= 3  # while block 0 held the window, no block beyond it started


def test_per_pair_sums_of_token_positions():
    """Token-ID with n >= V: each pair's l positions hold exactly s successes (sum of squares)."""
    inputs = _inputs("tokenid", 1000, samples=300, overlap=0.5, length=16, vocab=1000)
    t = run(COLLISION, inputs, threads=2)
    s = shared_tokens(0.5, 16)
    assert (t.pairs, t.trials, t.total, t.squares) == (300, 300 * 16, 300 * s, 300 * s * s)
    e = estimate_collision("tokenid", 1000, overlap=0.5, length=16, vocab=1000, samples=300)
    assert (e.pairs, e.trials, e.samples, e.successes) == (300, 300 * 16, 300 * 16, 300 * s)


def test_ngram_window_trials_per_pair():
    """n-grams: l - N + 1 trials per pair, and every pair's successes are at most that."""
    inputs = _inputs("ngram", 61, samples=500, overlap=0.6, length=10, params={"ngram": 3})
    t = run(COLLISION, inputs, threads=1)
    assert t.trials == 500 * 8
    assert t.total <= t.squares <= 8 * t.total  # 0 <= y_i <= 8 for every pair


@pytest.mark.parametrize(("ngram", "heads"), [(1, 1), (2, 3), (3, 2)])
def test_ngram_head_hits_are_the_pair_collisions_histogram(ngram, heads):
    """The engine's per-window detail draws what NGram.pair_collisions draws, in order."""
    rng = np.random.default_rng(3)
    t1 = rng.integers(0, 50, size=(40, 9))
    t2 = np.where(rng.random((40, 9)) < 0.6, t1, rng.integers(0, 50, size=(40, 9)))
    cls = get_family("ngram")
    law = cls.pair_collisions(97, t1, t2, np.random.default_rng(8), ngram=ngram, heads=heads)
    hits = NGram.head_hits(97, t1, t2, np.random.default_rng(8), ngram=ngram, heads=heads)
    assert hits.shape == (40, 9 - ngram + 1)
    assert np.array_equal(np.bincount(hits.ravel(), minlength=heads + 1), law)


def test_float_tally_sums_in_pair_order_however_cut():
    """Float values are summed one by one: one batch or several give the same bits."""
    values = np.random.default_rng(0).random(1000) / 3
    whole, parts = Tally(), Tally()
    whole.add(values, 1)
    for chunk in np.array_split(values, 7):
        parts.add(chunk, 1)
    assert _sums(whole) == _sums(parts)
    total = 0.0
    for v in values.tolist():
        total += v
    assert whole.total == total


def test_interval_rules():
    """Wilson on successes/trials; normal on the per-pair mean; other rules refused."""
    t = Tally(pairs=50, trials=200, total=37, squares=61, weights=200)
    w = interval("wilson", t)
    assert (w.estimate, (w.low, w.high)) == (37 / 200, wilson_interval(37, 200))
    f = Tally()
    f.add(np.array([0.0, 0.5, 1.0, 0.5]), 2, rates=True)
    nrm = interval("normal", f)
    assert nrm.estimate == 0.5
    assert nrm.std_error == pytest.approx(np.std([0, 0.5, 1, 0.5], ddof=1) / 2)
    with pytest.raises(ValueError, match="interval rule"):
        interval("bootstrap", t)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: _inputs("voronoi", 8, cosine=0.5, samples=0), r"^samples must be"),
        (lambda: _inputs("voronoi", 8, cosine=0.5, seed=-2), r"^seed must be"),
        (lambda: _inputs("voronoi", 8, cosine=0.5, dim=0), r"^dim \(d\) must be"),
        (lambda: _inputs("voronoi", 8, overlap=0.5, length=0), r"^length \(l\) must be"),
        (lambda: _inputs("voronoi", 8, cosine=2.0), r"^cosine must be"),
        (lambda: _inputs("voronoi", 8, overlap=-1.0), r"^overlap \(f\) must be"),
        (lambda: _inputs("voronoi", 8), r"^give exactly one of overlap \(f\) or cosine"),
        (lambda: _inputs("voronoi", 8, cosine=0.5, mode="exact"), r"^mode must be"),
        (lambda: _inputs("productkey", 16, cosine=0.5, dim=6 + 1), r"^dim \(d\) must be even"),
        (lambda: _inputs("ngram", 61, overlap=0.5, length=3, params={"ngram": 4}), r"^ngram"),
        (lambda: _inputs("minhash", 8, overlap=0.5, mode="reduced"), r"^mode='reduced'"),
        (
            lambda: _inputs("simhash", 8, overlap=0.5, dim=10**5, length=10**5, vocab=10**9),
            r"^dim \(d\) =",
        ),
        (lambda: run(COLLISION, _inputs("voronoi", 8, cosine=0.5), threads=0), r"^threads"),
        (lambda: TopkOverlap.for_inputs(_inputs("simhash", 8, cosine=0.5), 1), r"^topk applies"),
        (lambda: TopkOverlap.for_inputs(_inputs("voronoi", 8, cosine=0.5), 9), r"^topk \(k\)"),
        (lambda: TopkOverlap.for_inputs(_inputs("productkey", 64, cosine=0.5), 9), r"^topk \(k\)"),
        (
            lambda: estimate_topk_overlap("voronoi", 8, 2, cosine=0.5, dim=8, samples=1),
            r"^samples must be",
        ),
        (
            lambda: estimate_collision("voronoi", 8, cosine=0.5, samples=10, threads=2000),
            r"^threads must be",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_parameter(call, match):
    """Each bad input raises a one-line ValueError that starts with the parameter's name."""
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


ESTIMATION = [
    Path(__file__).resolve().parents[2] / "lshsim" / p
    for p in ("estimate.py", "estimate_topk.py", "estimation")
]


def test_no_private_names_cross_the_estimation_modules():
    """The estimation modules import no underscore name of another module, and none of theirs
    is imported elsewhere in the package."""
    root = ESTIMATION[0].parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module):
                continue
            ours = node.module.startswith("lshsim.estimat")  # estimate, _topk, estimation
            mine = any(path == p or p in path.parents for p in ESTIMATION)
            if (ours or mine) and any(a.name.startswith("_") for a in node.names):
                offenders.append(f"{path.relative_to(root)}: {node.module}")
    assert offenders == []
