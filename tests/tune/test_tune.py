"""``lshsim.tune``: the amplified law, both forms against independent references, the edges."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from datasketch.lsh import _false_negative_probability, _false_positive_probability
from scipy.integrate import quad

from lshsim import theory
from lshsim.hashing import FAMILIES, NoLaw
from lshsim.laws.ngram import ngram_shared_probability
from lshsim.theory.amplification import amplified
from lshsim.tune import make_amplifier, read_similarities, tune
from lshsim.tune.law import amplified_law

#: n for each cosine family (its bucket rule)
COSINE_N = {"simhash": 4, "pstable": 4, "voronoi": 16, "crosspolytope": 8, "productkey": 16}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_answers_or_says_why(family):
    """Each registered family has an amplification law whose atoms are a law, or one NoLaw."""
    cls = FAMILIES[family]
    s = np.array([0.0, 0.3, 0.7, 1.0])
    if not cls.has_law("amplification_law"):
        with pytest.raises(NoLaw, match=family):
            tune(family, buckets=16, threshold=0.5)
        return
    n = None if cls.similarity == "jaccard" else COSINE_N.get(family, 16)
    amp = make_amplifier(family, buckets=n)
    v, w = amp.atoms(s)
    assert v.shape == w.shape and v.shape[0] == s.size
    assert ((0 <= v) & (v <= 1)).all() and np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    single = amp.curve(s, 1, 1)
    assert np.all(np.diff(single) >= -1e-12)  # more similar, more collisions


@pytest.mark.parametrize("family", sorted(COSINE_N))
def test_recall_is_the_amplified_theory_law(family):
    """Reported recall = 1 - (1 - p^k)^L, p from ``lshsim theory``, to 1e-6 relative."""
    n = COSINE_N[family]
    t = tune(family, buckets=n, near=0.85, far=0.3, recall=0.9, false_positive=0.05)
    b = t.best
    if FAMILIES[family].halves:  # both halves at the cosine
        p1, p2 = (theory.productkey_probability(n, a) for a in (0.85, 0.3))
    else:
        p1, p2 = (theory.probability(family, n, a) for a in (0.85, 0.3))
    assert b.recall == pytest.approx(amplified(p1, b.k, b.L), rel=1e-6)
    assert b.false_positive == pytest.approx(amplified(p2, b.k, b.L), rel=1e-6)
    assert b.recall >= 0.9 and b.false_positive <= 0.05
    if b.L > 1:  # the smallest L meeting the recall at that k
        assert amplified(p1, b.k, b.L - 1) < 0.9


def test_sensitivity_optimum_is_the_cheapest_feasible_scheme():
    """Brute force over every (k, L) with k L <= 400: none feasible is cheaper."""
    points = 1000
    t = tune(
        "minhash", near=0.7, far=0.3, recall=0.9, false_positive=0.02, points=points, budget=400
    )
    best = None
    for k in range(1, 401):
        for big_l in range(1, 400 // k + 1):
            r, fp = amplified(0.7, k, big_l), amplified(0.3, k, big_l)
            if r >= 0.9 and fp <= 0.02:
                cost = k * big_l + big_l * points * 0.3**k
                if best is None or cost < best[0]:
                    best = (cost, k, big_l)
    assert (t.best.k, t.best.L) == best[1:]
    assert t.best.cost == pytest.approx(best[0], rel=1e-12)


def test_minimise_tables_takes_the_fewest_tables():
    t = tune("minhash", near=0.8, far=0.4, recall=0.9, false_positive=0.05, minimise="tables")
    for s in t.front:
        assert s.L >= t.best.L or s.false_positive > 0.05


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8, 0.9])
@pytest.mark.parametrize(("bands", "rows"), [(2, 3), (9, 7), (20, 6), (32, 4)])
def test_threshold_rates_are_datasketchs_areas_normalised(threshold, bands, rows):
    """FP = datasketch's area / t and FN = its area / (1 - t): the probabilities (#129)."""
    t = tune("minhash", threshold=threshold, budget=256)
    row = next(s for s in _all(t) if (s.k, s.L) == (rows, bands))
    fp = _false_positive_probability(threshold, bands, rows) / threshold
    fn = _false_negative_probability(threshold, bands, rows) / (1 - threshold)
    assert row.false_positive == pytest.approx(fp, rel=1e-10, abs=1e-13)
    assert row.false_negative == pytest.approx(fn, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize("threshold", [Fraction(0), Fraction(3, 10), Fraction(4, 5), Fraction(1)])
def test_minhash_rates_are_exact(threshold):
    """Every scheme's FP equals the rational integral to 1e-10, FN to 1e-15 absolute."""
    t = float(threshold)
    for row in _all(tune("minhash", threshold=t, budget=96))[::5]:
        k, big_l = row.k, row.L
        below = sum(
            math.comb(big_l, j) * (-1) ** (j + 1) * threshold ** (j * k + 1) / (j * k + 1)
            for j in range(1, big_l + 1)
        )  # int_0^t 1 - (1 - s^k)^L ds
        above = sum(
            math.comb(big_l, j) * (-1) ** j * (1 - threshold ** (j * k + 1)) / (j * k + 1)
            for j in range(big_l + 1)
        )  # int_t^1 (1 - s^k)^L ds
        fp = float(below / threshold) if threshold > 0 else 0.0
        fn = float(above / (1 - threshold)) if threshold < 1 else 0.0
        assert row.false_positive == pytest.approx(fp, rel=1e-10, abs=1e-300), (k, big_l)
        assert row.false_negative == pytest.approx(fn, rel=1e-10, abs=1e-15), (k, big_l)


def test_quadrature_path_agrees_with_the_closed_form():
    """min-hash through the generic nodes (a similarity sample on a fine grid) vs closed form."""
    grid = np.linspace(0, 1, 20001)
    sampled = tune("minhash", threshold=0.6, budget=32, similarities=(grid, np.ones_like(grid)))
    exact = tune("minhash", threshold=0.6, budget=32)
    for a, b in zip(_all(sampled), _all(exact), strict=True):
        assert a.false_positive == pytest.approx(b.false_positive, rel=2e-3, abs=1e-9)


def test_threshold_optimum_against_brute_force_with_scipy():
    """datasketch's search with normalised rates by scipy.quad picks lshsim's optimum."""
    threshold, budget, (wfp, wfn) = 0.6, 24, (0.3, 0.7)
    best = None
    for b in range(1, budget + 1):
        for r in range(1, budget // b + 1):
            fp = quad(lambda s, r=r, b=b: amplified(s, r, b), 0, threshold)[0] / threshold
            fn = quad(lambda s, r=r, b=b: 1 - amplified(s, r, b), threshold, 1)[0]
            fn /= 1 - threshold
            err = wfp * fp + wfn * fn
            if best is None or err < best[0] - 1e-12:
                best = (err, r, b)
    t = tune("minhash", threshold=threshold, budget=budget, weights=(wfp, wfn))
    assert (t.best.k, t.best.L) == best[1:]
    assert t.inputs["objective"] == pytest.approx(best[0], rel=1e-9)


def test_cosine_threshold_form_against_scipy():
    """The smooth laws' panels of Gauss-Legendre agree with adaptive quadrature."""
    t = tune("simhash", buckets=2, threshold=0.7, budget=16)
    b = t.best

    def law(a):
        return amplified(theory.probability("simhash", 2, a), b.k, b.L)

    fp = quad(law, 0, 0.7, epsabs=1e-13)[0] / 0.7
    fn = quad(lambda a: 1 - law(a), 0.7, 1, epsabs=1e-13)[0] / 0.3
    assert b.false_positive == pytest.approx(fp, rel=1e-8)
    assert b.false_negative == pytest.approx(fn, rel=1e-8)


def test_thresholds_zero_and_one_are_answered():
    """t = 1: every pair below, so all functions in one band (datasketch cannot: b < 2)."""
    top = tune("minhash", threshold=1.0, budget=64)
    assert (top.best.k, top.best.L, top.best.false_negative) == (64, 1, 0.0)
    assert top.best.false_positive == pytest.approx(1 / 65, rel=1e-12)  # int_0^1 s^64 ds
    assert any("b < 2" in note for note in top.notes)
    bottom = tune("minhash", threshold=0.0, budget=64)
    assert (bottom.best.k, bottom.best.L, bottom.best.false_positive) == (1, 64, 0.0)


def test_tokenid_is_not_amplified_and_ngram_only_loses_spurious_collisions():
    tok = make_amplifier("tokenid", buckets=64)
    assert tok.curve([0.5], 1, 1) == pytest.approx(tok.curve([0.5], 7, 30), rel=0, abs=0)
    ng = make_amplifier("ngram", buckets=64, ngram=2)
    q = ngram_shared_probability(2, 16, 32)
    assert ng.curve([0.5], 3, 5)[0] == pytest.approx(q + (1 - q) * amplified(1 / 64, 3, 5))


def test_amplified_law_broadcasts_like_the_scalar_law():
    v, w = np.array([[0.2, 0.9], [0.5, 1.0]]), np.array([[0.25, 0.75], [0.5, 0.5]])
    ks, ls = np.array([1, 3, 8]), np.array([2, 1, 40])
    out = amplified_law(v, w, ks, ls)
    for i in range(2):
        for j in range(3):
            ref = sum(w[i, a] * amplified(v[i, a], ks[j], ls[j]) for a in range(2))
            assert out[i, j] == pytest.approx(ref, rel=1e-14)


def test_similarity_file_values_and_histograms(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("# pairs\n0.2\n0.9 3\n\n0.2  # again\n")
    values, counts = read_similarities(f, 0.0, 1.0)
    assert values.tolist() == [0.2, 0.9] and counts.tolist() == [2.0, 3.0]
    t = tune("minhash", threshold=0.5, budget=8, similarities=f)
    assert t.best.false_positive == pytest.approx(amplified(0.2, t.best.k, t.best.L))
    assert t.best.false_negative == pytest.approx(1 - amplified(0.9, t.best.k, t.best.L))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("0.2 1 1\n", "expected"),
        ("x\n", "not a number"),
        ("1.5\n", r"in \[0, 1\]"),
        ("0.3 -1\n", "count"),
        ("# nothing\n", "no similarity"),
    ],
)
def test_bad_similarity_files_name_the_line(tmp_path, text, match):
    f = tmp_path / "s.txt"
    f.write_text(text)
    with pytest.raises(ValueError, match=match):
        tune("minhash", threshold=0.5, similarities=f)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"family": "minhash", "threshold": 0.5, "near": 0.9}, "two forms"),
        ({"family": "minhash", "near": 0.9, "far": 0.5}, "recall, false_positive missing"),
        ({"family": "voronoi", "threshold": 0.5}, "buckets"),
        ({"family": "minhash", "threshold": 0.5, "buckets": 8}, "buckets"),
        ({"family": "minhash", "threshold": 1.5}, "threshold"),
        ({"family": "minhash", "threshold": 0.5, "budget": 5000}, "budget"),
        ({"family": "minhash", "threshold": 0.5, "weights": (0, 0)}, "weights"),
        ({"family": "minhash", "threshold": 0.5, "k": 2}, "band size"),
        (
            {"family": "minhash", "near": 0.5, "far": 0.6, "recall": 0.9, "false_positive": 0.1},
            "far must be below near",
        ),
        (
            {"family": "minhash", "near": 0.9, "far": 0.5, "recall": 0.0, "false_positive": 0.1},
            "recall",
        ),
        (
            {
                "family": "minhash",
                "near": 0.6,
                "far": 0.5,
                "recall": 0.99,
                "false_positive": 1e-9,
                "budget": 64,
            },
            "no \\(k, L\\) within",
        ),
        ({"family": "nosuch", "threshold": 0.5}, "family"),
        ({"family": "minhash", "threshold": 0.5, "points": 10}, "points: not an option"),
        ({"family": "minhash", "threshold": 0.5, "minimise": "tables"}, "minimise"),
        (
            {
                "family": "minhash",
                "near": 0.9,
                "far": 0.5,
                "recall": 0.9,
                "false_positive": 0.1,
                "weights": (1, 1),
            },
            "weights: not an option of the sensitivity form",
        ),
    ],
)
def test_bad_input_is_one_line_naming_it(kwargs, match):
    with pytest.raises(ValueError, match=match) as err:
        tune(**kwargs)
    assert "\n" not in str(err.value)


def _all(tuning):
    """Every scheme the tuner searched, as rows with k, L, false_positive, false_negative."""
    c = tuning.candidates
    return [
        _Row(int(k), int(big_l), float(fp), float(fn))
        for k, big_l, fp, fn in zip(
            c["k"], c["L"], c["false_positive"], c["false_negative"], strict=True
        )
    ]


class _Row:
    def __init__(self, k, big_l, fp, fn):
        self.k, self.L, self.false_positive, self.false_negative = k, big_l, fp, fn


@pytest.mark.parametrize("family", ["tokenid", "ngram", "engram"])
def test_overlap_atoms_average_to_the_overlap_law(family):
    """One function (k = L = 1): the atoms' mean is the family's sentence-model law."""
    cls = FAMILIES[family]
    amp = make_amplifier(family, buckets=17, length=24)
    for f in (0.0, 0.25, 0.6, 1.0):
        law = cls.overlap_law(17, f, dim=8, length=24, vocab=32128, cosines=1, seed=0)
        assert amp.curve([f], 1, 1)[0] == pytest.approx(law.probability, rel=1e-14, abs=0)
