"""Theorem 1's 14 claims: id, the paper's wording, the precise statement, check and mutation.

Proofs, or the grid where a statement is numerical, are in ``proofs/theorem1.md``; each
claim's property test is ``tests/theorems/test_claims.py::test_<part>``.
"""

from __future__ import annotations

import functools

from lshsim.sentences import COSINE_MEAN_ERROR, COSINE_VAR_ERROR, DISTANCE_MEAN_ERROR
from lshsim.theorems.claim_types import (
    EXACT,
    EXACT_RESIDUALS,
    MONTE_CARLO,
    SEEDED_THEORY,
    Claim,
)
from lshsim.theorems.theorem1 import ordering, rates, routing, sentence
from lshsim.theorems.theorem1.mutations import MUTATIONS
from lshsim.theorems.theorem1.ordering import ANALYTIC_C, ANALYTIC_FROM, TIE_CONSTANT
from lshsim.theorems.theorem1.rates import (
    D3_COEF_ATOL,
    GAP_RATE_HI,
    GAP_RATE_LO,
    LAPLACE_LOG_ERR,
    PSTABLE_HI,
    PSTABLE_LO,
    SIMHASH_LO,
    SPHERICAL_HI,
    SPHERICAL_KAPPA,
    SPHERICAL_LO,
)

#: A point's Monte-Carlo estimate next to its exact value: the estimate, its standard error and
#: trials are seeded Monte Carlo, the z-score mixes both (the exact value, the default, is exact)
_ESTIMATES = {
    "*/estimate": MONTE_CARLO,
    "*/se": MONTE_CARLO,
    "*/trials": MONTE_CARLO,
    "*/z_score": SEEDED_THEORY,
}
#: What each claim's evidence promises (``lshsim compare``): exact theory, seeded Monte Carlo,
#: or Monte Carlo next to quadrature values (:mod:`lshsim.studies.kinds`).
EVIDENCE_KINDS: dict[str, dict] = {
    "T1.a1": {"": MONTE_CARLO},  # seeded routers and inputs: counts of rows
    "T1.a2": {"": EXACT_RESIDUALS, **_ESTIMATES},
    "T1.b1": {"": EXACT_RESIDUALS, **_ESTIMATES},
    "T1.b2": {"": EXACT_RESIDUALS},  # the sampled pairs are seeded integers
    "T1.c1": {"": EXACT_RESIDUALS},
    "T1.c2": {"": EXACT_RESIDUALS},
    "T1.d1": {"": EXACT_RESIDUALS},
    "T1.d2": {"": EXACT_RESIDUALS},
    "T1.d3": {
        "": EXACT_RESIDUALS,
        "*/theta^2 coefficient at theta=1e-3, 1e-4": {"kind": "exact", "atol": D3_COEF_ATOL},
    },
    "T1.d4": {"": EXACT_RESIDUALS},
    "T1.e1": {
        "": EXACT_RESIDUALS,
        "n >= V: mean rate (must be s/l)": MONTE_CARLO,
        "n >= V: pairs whose rate != s/l": MONTE_CARLO,
        **_ESTIMATES,
    },
    "T1.f1": {"": EXACT_RESIDUALS},
    "T1.f2": {"": EXACT_RESIDUALS},
    "T1.g1": {"": MONTE_CARLO, "bounds x d^2 or x d (mean, var, distance)": EXACT},
}


def _claim(cid: str, part: str, statement: str, check, mutation: str) -> Claim:
    return Claim(
        id=cid,
        part=part,
        statement=" ".join(statement.split()),
        test=f"tests/theorems/test_claims.py::test_{cid[3:]}",
        check=check,
        mutation=MUTATIONS[mutation],
        quick_check=functools.partial(check, quick=True),
        kinds=EVIDENCE_KINDS[cid],
    )


_SOFTMAX = "1: Softmax lookup can be viewed as spherical LSH"
_SOFTMAX_RATE = "2: Softmax collides with probability n^-O(1-f)"
_HYPERPLANE = "2: hyperplane LSH collides with probability n^-O(sqrt(1-f))"

CLAIMS: tuple[Claim, ...] = (
    _claim(
        "T1.a1",
        _SOFTMAX,
        """For any router W in R^{n x d}, input x and temperature tau > 0, the top-1 expert
        argmax_i softmax(W x / tau)_i equals argmax_i <w_i, x>; with W the Voronoi family's
        Gaussian centres it is exactly the Voronoi bucket.""",
        routing.check_a1,
        "voronoi-hash-argmin",
    ),
    _claim(
        "T1.a2",
        _SOFTMAX,
        """With a random router (i.i.d. N(0, sigma^2) entries, any sigma, any d >= 2), the
        probability that unit inputs at cosine a take the same top-1 expert is
        P_vor(n, a) = n E[Phi2(U, V; a)^(n-1)], (U, V) standard bivariate normal with
        correlation a.""",
        routing.check_a2,
        "voronoi-probability-exponent-n",
    ),
    _claim(
        "T1.b1",
        "1: Token-ID lookup can be viewed as min-hash",
        """Min-hash of the token sets of two l-token sentences sharing s tokens collides
        with probability J + (1 - J)/n, J = s / (2l - s) = f / (2 - f) when f l is an integer
        (ideal min-wise hashing into n buckets).""",
        routing.check_b1,
        "minhash-probability-uses-f",
    ),
    _claim(
        "T1.b2",
        "2: Token-ID collides at rate f (set versus token)",
        """For two l-token sentences sharing s tokens, the per-position Token-ID rate s/l = f
        exceeds the token sets' Jaccard index J = s/(2l - s) = f/(2 - f) for 0 < s < l, with
        equality at s = 0 and s = l; the gap f(1 - f)/(2 - f) is largest at f = 2 - sqrt(2),
        where it is 3 - 2 sqrt(2) = 0.1716. The fraction f of the paper is the per-token
        rate.""",
        routing.check_b2,
        "jaccard-over-2l",
    ),
    _claim(
        "T1.c1",
        _HYPERPLANE,
        f"""SimHash with n = 2^k buckets (every k >= 1) at cosine f in [0, 1):
        {SIMHASH_LO:.4f} = sqrt(2)/(pi ln 2) <= rho_sh(f) / sqrt(1 - f) <= 1, where
        rho_sh(f) = -log2(1 - arccos(f)/pi) is the same at every k; the ratio decreases in f,
        from 1 at f = 0 to the lower bound as f -> 1, and exceeds it by at most
        (1 - {SIMHASH_LO:.4f}) sqrt(1 - f).""",
        rates.check_c1,
        "simhash-extra-bit",
    ),
    _claim(
        "T1.c2",
        _HYPERPLANE,
        f"""Datar et al. p-stable hyperplanes (w = 4, radix 2, n = 2^k, every k >= 1) at the
        unit-vector distance sqrt(2(1 - f)), f in [0, 1): rho is the same at every k,
        rho / sqrt(1 - f) -> 2/(sqrt(pi) w ln 2) = 0.4069 as f -> 1 (proven), and
        {PSTABLE_LO} <= rho / sqrt(1 - f) <= {PSTABLE_HI} (numerical: a 400-point grid of f
        at k = 1, 5, 24).""",
        rates.check_c2,
        "pstable-distance-x1.1",
    ),
    _claim(
        "T1.d1",
        _SOFTMAX_RATE,
        """For every n >= 2 and f in [0, 1), Voronoi (softmax, random router) and
        cross-polytope (n = 2m, m the rotated dimension) satisfy rho(n, f) >= (1 - f)/(1 + f)
        >= (1 - f)/2, i.e. P <= n^-((1 - f)/(1 + f)) (Borell's hypercontractivity).""",
        rates.check_d1,
        "crosspolytope-probability-x1.01",
    ),
    _claim(
        "T1.d2",
        _SOFTMAX_RATE,
        f"""In the spherical regime (1 - f) ln n >= {SPHERICAL_KAPPA:g}, 2^4 <= n <= 2^24:
        {SPHERICAL_LO} <= rho_vor(n, f) / (1 - f) <= {SPHERICAL_HI}. Proven for the lower
        bound where f <= 1/3 (T1.d1: the ratio is >= 1/(1 + f)); otherwise numerical, checked
        at every n = 16 ... 24, then at integers (odd and even) about 1.5 times apart up to
        2^24, at f = u (1 - 1/ln n), u in {{0.3, 0.55, 1}}.""",
        rates.check_d2,
        "voronoi-rho-x1.1",
    ),
    _claim(
        "T1.d3",
        "2: Softmax collides with probability n^-O(1-f) (where it fails)",
        """Outside that regime the rate n^-O(1-f) fails. At fixed n >= 2 and angle
        theta = arccos f in (0, pi/2): |1 - P_vor(n, f) - lambda_n theta| <= 4/(pi sqrt 3)
        M (M - 1) tan^2 theta, M = n(n - 1)/2, with lambda_n = n(n - 1)/sqrt(pi)
        int phi^2 Phi^(n-2) > 0 the rate of argmax changes (Rice's formula); so
        rho_vor(n, f)/(1 - f) ~ 2 lambda_n / (theta ln n) -> infinity as f -> 1
        (n = 2^10: above the regime's upper bound by f = 0.9999).""",
        rates.check_d3,
        "voronoi-half-angle",
    ),
    _claim(
        "T1.d4",
        "2: Softmax collides with probability n^-O(1-f) (limit)",
        f"""Numerical (checked at f in {{0.1, 0.3, 0.5, 0.7, 0.9}} and n = 2^k, k in
        {{4, 8, 12, 16, 20, 24, 32, 40, 48, 56, 62}}; property-tested over the whole range):
        for f in [0.1, 0.9] and n = 2^k, 4 <= k <= 62, the gap rho_vor(n, f) - (1 - f)/(1 + f)
        is positive and decreasing in n, and {GAP_RATE_LO} <= gap ln n / ln ln n <=
        {GAP_RATE_HI} (consistent with gap = Theta(ln ln n / ln n), which is not proven); the
        Laplace form P_L = Gamma(1/(1+f))^2 exp(f t^2/(1+f)) / (n sqrt(1 - f^2)), n Q(t) = 1
        (a heuristic derivation, no error bound), has a log error |log P - log P_L| that
        decreases over n = 2^8, 2^12, ..., 2^24 and is <= {LAPLACE_LOG_ERR} at n = 2^24.""",
        rates.check_d4,
        "laplace-form-without-gamma",
    ),
    _claim(
        "T1.e1",
        "2: Token-ID collides at rate f",
        """Token-ID (bucket = id mod n) routes aligned positions of two sentences sharing
        s = round(f l) tokens to the same bucket at rate exactly s/l = f for every n >= V,
        independent of n; for n < V the rate is f + (1 - f) eps(n, V), eps the fraction of
        ordered pairs of distinct ids in [0, V) congruent mod n (about 1/n).""",
        routing.check_e1,
        "sampler-shares-one-token-less",
    ),
    _claim(
        "T1.f1",
        "3: Token-ID >= Softmax for large n and small f",
        f"""At n >= 2 buckets, Token-ID >= Softmax (f >= P_vor(n, f)) exactly when f >= f_n,
        the unique tie in (0, 1), and 1 < n f_n, n f_n = 1/(1 - W1) + O(1/n) -> 1 with
        W1 = M_n^2/(n - 1) (proven); n f_n < {ANALYTIC_C} for every n >= {ANALYTIC_FROM}
        (proven) and n f_n <= 3 f_3 = 1.7023 for 2 <= n < {ANALYTIC_FROM} (quadrature), so
        sup_n n f_n = 3 f_3 < {TIE_CONSTANT}. Hence Softmax wins for n <= 1/f and Token-ID for
        n >= {TIE_CONSTANT}/f. That Token-ID wins exactly from n*(f) on, 1/f < n*(f) <
        1 + {TIE_CONSTANT}/f, also needs P_vor(n, f) to decrease in n: a conjecture, checked
        at n = 2 ... 24 and on a grid to 2^20, f in {{0.1, 0.5, 0.9}}. Below the tie the order
        reverses (f = 0.5, n = 3: P_vor = 0.535 > 0.5).""",
        ordering.check_f1,
        "voronoi-probability-x1.01",
    ),
    _claim(
        "T1.f2",
        "3: Softmax >= hyperplane LSH",
        """For n = 2^k >= 4: P_vor(n, a) > P_sh(n, a) for a in (0, 1), and the order reverses
        for negative cosines, P_vor(n, a) < P_sh(n, a) for a in (-1, 0) (numerical: checked at
        k in {2, 3, 5, 8, 12, 16, 20, 24}, seven positive and six negative cosines, and
        property-tested for k <= 24); they are equal at n = 2 (both are one random
        hyperplane, proven) and at a in {0, 1}.""",
        ordering.check_f2,
        "voronoi-even-in-cosine",
    ),
    _claim(
        "T1.g1",
        "proof: the dot product of the two averages is f, distance O(sqrt(1-f))",
        f"""In the sentence model (i.i.d. uniform unit token embeddings in R^d, l tokens,
        s = round(f l) shared, normalised means), with f = s/l: E cos = f - f(1 - f)(1 + f
        - 1/l)/(2d) + e_m with |e_m| <= {COSINE_MEAN_ERROR}/d^2 (d >= 4); Var cos =
        [(1 - f^2)^2 - f(1 - f)(2 - f)/l]/d (1 + e_v) with |e_v| <= {COSINE_VAR_ERROR:g}/d
        (d >= {sentence.VAR_FROM_DIM}); and the distance sqrt(2 - 2 cos) has mean
        sqrt(2(1 - mu)) - Var/(2 (2(1 - mu))^(3/2)) within a relative
        {DISTANCE_MEAN_ERROR:g}/d^2 (mu the mean above), so cosine ~ f and distance ~
        sqrt(2(1 - f)) up to O(1/d). The constants are numerical: checked at 10 points
        (d = 4 to 1024, s = l - 1 up to l = 256) with control-variate estimates whose
        4-standard-error intervals lie inside each bound.""",
        sentence.check_g1,
        "cosine-mean-without-1/d-term",
    ),
)
