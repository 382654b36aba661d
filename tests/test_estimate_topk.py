"""Monte-Carlo top-k overlap: k = 1 is the collision estimate, seeds reproduce, CI covers."""

from __future__ import annotations

import pytest

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.estimate_topk import estimate_topk_overlap


@pytest.mark.parametrize(("family", "n"), [("voronoi", 50), ("productkey", 64)])
def test_k1_is_the_collision_estimate(family, n):
    """Same seeds, same pairs, same functions: the top-1 overlap is estimate_collision's rate."""
    top = estimate_topk_overlap(family, n, 1, cosine=0.6, dim=8, samples=1500, seed=4)
    col = estimate_collision(family, n, cosine=0.6, dim=8, samples=1500, seed=4)
    assert top.overlap == col.estimate == top.probability


def test_voronoi_topk_interval_covers_the_exact_value():
    """n = 32, k = 3, a = 0.5, 3000 pairs: the exact overlap lies within 4 standard errors."""
    est = estimate_topk_overlap("voronoi", 32, 3, cosine=0.5, dim=8, samples=3000, seed=2)
    exact = theory.voronoi_topk_overlap(32, 3, 0.5)
    assert abs(est.overlap - exact) <= 4.0 * est.std_error
    again = estimate_topk_overlap("voronoi", 32, 3, cosine=0.5, dim=8, samples=3000, seed=2)
    assert again.overlap == est.overlap


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"family": "simhash", "n": 8, "k": 1}, r"topk applies"),
        ({"family": "productkey", "n": 64, "k": 9}, r"topk \(k\)"),
        ({"family": "voronoi", "n": 8, "k": 0}, r"topk \(k\)"),
        ({"family": "crosspolytope", "n": 8, "k": 2, "rotation": "hadamard"}, r"rotation"),
    ],
)
def test_bad_input(kwargs, match):
    """One-line ValueErrors naming the parameter."""
    with pytest.raises(ValueError, match=match):
        estimate_topk_overlap(**kwargs, cosine=0.5, dim=8, samples=10)
