"""Reduced top-k samplers and the product-key top-k law (issue 32): exact laws, the kernels."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import lshsim.laws.topk_reduced as tr
from lshsim import theory
from lshsim.estimate_topk import estimate_topk_overlap
from lshsim.hashing import get_family

#: two-sided 99.9% normal quantile (the fixed-seed checks' tolerance)
Z = 3.2905267314918945


@pytest.mark.parametrize(
    ("h", "k", "rho"), [(4.5, 4.9, 0.8), (1.0, 2.0, -0.5), (-1.0, 2.0, 0.3), (0.0, -0.7, 0.9)]
)
def test_upper_orthant_is_the_bivariate_normal_tail(h, k, rho):
    """Owen's T form against SciPy's bivariate normal CDF, P(X > h, Y > k) = F(-h, -k)."""
    ref = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf([-h, -k])
    assert tr.upper_orthant(h, k, rho) == pytest.approx(ref, rel=1e-8, abs=1e-15)


def test_rest_top_scores_invert_where_the_survival_underflows():
    """Regression: the rest's top y-score at a = 0.95, x below c = -0.3, equals the root of its
    survival found by brentq. Newton started where p underflows to 0 and never moved (2.80 for
    a root at 0.22), which biased PKM's top-k law by 0.0044 at n = 64^2, k = 32, a = 0.9 and by
    0.087 at a = 0.95 against brute-force top-k on Gaussian scores."""
    from scipy.optimize import brentq
    from scipy.special import log_ndtr

    c, a, m = -0.3, 0.95, 32
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    col = np.ones((8, 1))
    got = tr._rest_top_scores(m, m, c * col, float(log_ndtr(c)) * col, a * col, rng)[:, 0]
    rng.bit_generator.state = state
    steps = np.log(rng.random((8, m))) / (m - np.arange(m))
    targets = -np.expm1(np.cumsum(steps, axis=1))[:, 0]
    lb = np.array([float(log_ndtr(c))])
    for row, target in enumerate(targets):
        root = brentq(
            lambda w, t=target: (
                tr._rest_survival(np.array([w]), np.array([c]), lb, np.array([a]))[0] - t
            ),
            -10.0,
            10.0,
            xtol=1e-13,
        )
        assert got[row] == pytest.approx(root, abs=1e-8), (row, target)


@pytest.mark.parametrize(("n", "k", "a"), [(64, 3, 0.6), (4, 2, -0.3)])  # 2^20: claim B.tk3
def test_voronoi_reduced_topk_is_the_exact_law(n, k, a):
    """Mean overlap of 20,000 reduced draws within 3.29 standard errors of the quadrature."""
    c = get_family("voronoi").sample_topk_reduced(
        n, k, np.full(20_000, a), np.random.default_rng(1)
    )
    est, se = c.mean() / k, c.std() / k / np.sqrt(c.size)
    assert abs(est - theory.topk_overlap("voronoi", n, k, a)) <= Z * se


def test_productkey_reduced_topk_agrees_with_the_kernel():
    """PKM's reduced draws (20,000) against the full kernel's estimate (3,000 pairs, d = 16)."""
    n, k, a = 64, 3, 0.6
    c = get_family("productkey").sample_topk_reduced(
        n, k, np.full(20_000, a), np.random.default_rng(2)
    )
    est, se = c.mean() / k, c.std() / k / np.sqrt(c.size)
    full = estimate_topk_overlap("productkey", n, k, cosine=a, dim=16, samples=3000, seed=3)
    assert abs(est - full.overlap) <= Z * np.hypot(se, full.std_error)


def test_rest_scores_converge():
    """The safeguarded Newton inversion matches 200 steps to 1e-9 (a = 0.3, 0.8, -0.9)."""
    rng = np.random.default_rng(4)
    u, log_cdf = tr.top_order_statistics(1024, 8, rng, 300)
    for a in (0.3, 0.8, -0.9):
        args = (1016, 8, u[:, 7:8], log_cdf[:, 7:8], np.full((300, 1), a))
        w = tr._rest_top_scores(*args, np.random.default_rng(5))
        old, tr.NEWTON_STEPS = tr.NEWTON_STEPS, 200
        try:
            ref = tr._rest_top_scores(*args, np.random.default_rng(5))
        finally:
            tr.NEWTON_STEPS = old
        assert np.abs(w - ref).max() <= 1e-9 and np.all(np.diff(w, axis=1) <= 0)


def test_productkey_topk_law_and_reduced_estimates():
    """k = 1 is the exact product law; reduced mode runs at n = 2^20; cross-polytope refused."""
    pk = get_family("productkey")
    value, bound = pk.topk_law(256, 1, 0.6, 0.8)
    assert bound == 0.0 and value == pytest.approx(theory.productkey_probability(256, 0.6, 0.8))
    law, bound = tr.productkey_topk_law(256, 4, 0.8, 0.8, trials=2048)
    # the full kernel's mean over 40,000 pairs (d = 16, seeds 1 and 11): 0.3612 +- 0.0013
    assert 0 < bound < 0.05 and abs(law - 0.3612) < bound + Z * 0.0013
    est = estimate_topk_overlap("productkey", 2**20, 4, cosine=0.8, samples=600, mode="reduced")
    assert est.pairs == 600 and est.trials == 2400 and 0.0 < est.overlap < 0.3
    with pytest.raises(ValueError, match="reduced"):
        estimate_topk_overlap("crosspolytope", 16, 2, cosine=0.5, samples=10, mode="reduced")
    with pytest.raises(ValueError, match=r"topk \(k\)"):
        pk.topk_law(2**20, 33, 0.5, 0.5)


def test_cli_theory_and_simulate_reduced_topk(capsys):
    """theory --family productkey --topk k prints the law and its bound; simulate --mode
    reduced --topk runs at n = 2^20 (in process)."""
    import json

    from lshsim.cli.main import main

    argv = ["theory", "--family", "productkey", "--buckets", "16", "--cosine", "0.7"]
    assert main([*argv, "--topk", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    law, bound = get_family("productkey").topk_law(16, 4, 0.7, 0.7)
    assert (out["overlap"], out["error_bound"]) == (law, bound) and 0 < bound < 0.02
    argv = ["simulate", "--family", "voronoi", "--buckets", str(2**20), "--cosine", "0.9"]
    assert main([*argv, "--topk", "4", "--mode", "reduced", "--samples", "300", "--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert est["pairs"] == 300 and est["trials"] == 1200 and est["interval"] == "pairs"


def test_productkey_topk_on_sentences_is_the_reduced_estimate_on_sentences():
    """The sentence average (own half-cosines per draw) against simulate's reduced estimate."""
    from lshsim.laws.topk_sentences import productkey_topk_on_sentences

    law, se = productkey_topk_on_sentences(256, 4, 0.5, dim=16, length=32, trials=4000, seed=1)
    est = estimate_topk_overlap(
        "productkey", 256, 4, overlap=0.5, dim=16, length=32, samples=4000, seed=2, mode="reduced"
    )
    assert abs(law - est.overlap) <= Z * np.hypot(se, est.std_error)
