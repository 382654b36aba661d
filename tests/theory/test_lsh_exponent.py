"""The LSH exponent ``rho_lsh = ln(1/p1) / ln(1/p2)`` against independent computations.

SimHash and p-stable in closed form from first principles, Voronoi and the cross-polytope
against the dblquad + Plackett references of ``test_spherical``; its bad input, one line each.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import norm

from lshsim import theory
from tests.theory.test_spherical import _crosspolytope_by_dblquad, _voronoi_by_dblquad

COSINES = st.floats(-0.999, 0.999, allow_nan=False)


def _simhash(k: int, a: float) -> float:
    return (1.0 - math.acos(a) / math.pi) ** k


@settings(max_examples=60)
@given(k=st.integers(1, 62), a=COSINES, b=COSINES)
def test_simhash_rho_lsh_closed_form(k, a, b):
    """SimHash: ``rho_lsh = ln(1 - t1/pi) / ln(1 - t2/pi)``, the same at every ``n = 2^k``."""
    a, far = max(a, b), min(a, b)
    if a - far < 1e-6:
        return
    expect = math.log(_simhash(1, a)) / math.log(_simhash(1, far))
    assert theory.rho_lsh("simhash", 2**k, a, far=far) == pytest.approx(expect, rel=1e-12)


def _pstable_direction(dist: float, w: float, r: int) -> float:
    """P(floor((g.x + b)/w) = floor((g.y + b)/w) mod r): a 1-D quadrature over the projected
    gap ``z ~ N(0, dist^2)`` of ``sum_j max(0, 1 - |z - j r w| / w)``, independent of the
    library's closed form."""

    def integrand(z):
        wrap = sum(max(0.0, 1.0 - abs(z - j * r * w) / w) for j in range(-8, 9))
        return wrap * norm.pdf(z, scale=dist)

    val, _ = integrate.quad(integrand, -12 * dist, 12 * dist, points=[0.0], limit=200)
    return val


def test_pstable_rho_lsh_by_quadrature():
    """p-stable (w = 4, radix 2): ``rho_lsh = ln q(a) / ln q(far)``, ``k`` cancels, and it is not
    ``rho`` (``P(n, 0) != 1/n``): 0.674 against 0.321 at ``a = 0.5``."""
    q1 = _pstable_direction(math.sqrt(2 - 2 * 0.5), 4.0, 2)
    q2 = _pstable_direction(math.sqrt(2.0), 4.0, 2)
    for n in (2, 2**10):
        got = theory.rho_lsh("pstable", n, 0.5)
        assert got == pytest.approx(math.log(q1) / math.log(q2), rel=1e-8)
        assert abs(got - theory.rho("pstable", n, 0.5)) > 0.3


@pytest.mark.parametrize(
    ("family", "n", "a", "far"),
    [("voronoi", 3, 0.8, 0.3), ("crosspolytope", 6, 0.8, -0.5)],
)
def test_spherical_rho_lsh_matches_dblquad(family, n, a, far):
    """Voronoi and cross-polytope against the independent dblquad references."""
    ref = _voronoi_by_dblquad if family == "voronoi" else _crosspolytope_by_dblquad
    expect = math.log(ref(n, a)) / math.log(ref(n, far))
    assert theory.rho_lsh(family, n, a, far=far) == pytest.approx(expect, rel=1e-7)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cosine": 0.5, "far": 1.5}, r"far must be in \[-1, 1\]"),
        ({"cosine": 0.5, "far": math.nan}, "far must be"),
        ({"cosine": 0.5, "far": 0.5}, r"far must be in \[-1, cosine\)"),
        ({"cosine": 0.2, "far": 0.7}, r"far must be in \[-1, cosine\)"),
        ({"cosine": 0.5, "far": -1.0}, r"far: P\(n, far\) = 0"),
        ({"cosine": 1.5}, "cosine must be"),
    ],
)
def test_rho_lsh_bad_input_is_one_line(kwargs, match):
    with pytest.raises(ValueError, match=match) as err:
        theory.rho_lsh("voronoi", 16, **kwargs)
    assert "\n" not in str(err.value)
