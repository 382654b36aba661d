"""The cross-polytope's three constructions: gaussian-projection, orthogonal, hadamard.

The orthogonal kernel against the slow reference, its rotation against Haar moments, the
deprecated ``gaussian`` alias, the ``m <= d`` rule, the exact ``d = 2`` law, and the refusals
of the reduced sampler and the exact theory where no exact law exists.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.hashing import CrossPolytope, make_family
from lshsim.hashing.spherical import ROTATIONS, haar_orthogonal
from lshsim.testing import reference as ref


@st.composite
def orthogonal_case(draw):
    """``(n, d)`` with ``n = 2m`` even and ``m <= d``."""
    d = draw(st.integers(1, 24))
    return 2 * draw(st.integers(1, d)), d


@settings(max_examples=40, deadline=None)
@given(
    case=orthogonal_case(),
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(0, 30),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_orthogonal_kernel_matches_reference(case, seed, m, dtype):
    """Kernel == reference: the signed argmax of ``x @ Q_m.T`` by ``numpy.argmax``."""
    n, d = case
    h = make_family("crosspolytope", n, d, seed, rotation="orthogonal")
    x = np.random.default_rng(seed + 1).standard_normal((m, d)).astype(dtype)
    np.testing.assert_array_equal(h.hash(x), ref.reference_for("crosspolytope")(h, x))


def test_orthogonal_rows_are_orthonormal_and_seeded():
    """The kept rows are the first ``m`` rows of an orthogonal matrix, the same for one seed."""
    for n, d in ((2, 1), (8, 4), (16, 40), (64, 32)):
        h = CrossPolytope(n, d, 3, rotation="orthogonal")
        assert h.matrix.shape == (n // 2, d)
        np.testing.assert_allclose(h.matrix @ h.matrix.T, np.eye(n // 2), atol=1e-12)
        np.testing.assert_array_equal(
            h.matrix, CrossPolytope(n, d, 3, rotation="orthogonal").matrix
        )


def test_haar_moments():
    """Haar on O(3): ``Q[0, 0]`` has mean 0 and ``E Q00^2 = 1/3``, ``E tr(Q)^2 = 1``; LAPACK's
    unfixed QR fails the first (its ``Q[0, 0]`` is never positive), so the test can fail."""
    rng = np.random.default_rng(11)
    draws = 4000
    qs = np.stack([haar_orthogonal(rng, 3) for _ in range(draws)])
    q00 = qs[:, 0, 0]
    tr2 = np.trace(qs, axis1=1, axis2=2) ** 2
    for sample, mean in ((q00, 0.0), (q00**2, 1 / 3), (tr2, 1.0)):
        assert abs(sample.mean() - mean) <= 4 * sample.std() / math.sqrt(draws)
    raw = np.stack([np.linalg.qr(rng.standard_normal((3, 3)))[0] for _ in range(200)])
    assert abs(raw[:, 0, 0].mean()) > 10 * q00.std() / math.sqrt(200)


def test_orthogonal_needs_m_at_most_d():
    with pytest.raises(ValueError, match=r"n \(buckets\) must be <= 2d for rotation='orthogonal'"):
        make_family("crosspolytope", 10, 4, rotation="orthogonal")


def test_gaussian_is_a_deprecated_alias_of_gaussian_projection():
    """The old spelling still works and draws the very same function."""
    old = make_family("crosspolytope", 64, 8, seed=4, rotation="gaussian")
    new = make_family("crosspolytope", 64, 8, seed=4, rotation="gaussian-projection")
    assert old.params == new.params == {"rotation": "gaussian-projection"}
    x = np.random.default_rng(0).standard_normal((50, 8))
    np.testing.assert_array_equal(old.hash(x), new.hash(x))
    assert CrossPolytope.check_params(8)["rotation"] == "gaussian-projection"
    assert ROTATIONS == ("gaussian-projection", "orthogonal", "hadamard")
    with pytest.raises(ValueError, match="rotation must be one of"):
        CrossPolytope.check_params(8, rotation="haar")


def test_orthogonal_exact_law_at_d_2():
    """At ``d = m = 2`` a rotation keeps the pair's angle ``theta``, and the four 90-degree
    cells give ``P = max(0, 1 - 2 theta / pi)`` exactly (0 at ``a = 0``), not the Gaussian
    projection's ``(1 - theta/pi)^2``: the Gaussian formula is not the orthogonal law."""
    for a, seed in ((0.0, 1), (0.5, 2)):
        exact = max(0.0, 1.0 - 2.0 * math.acos(a) / math.pi)
        e = estimate_collision(
            "crosspolytope", 4, cosine=a, dim=2, samples=4000, seed=seed, rotation="orthogonal"
        )
        sd = math.sqrt(max(exact * (1 - exact), 1e-12) / e.samples)
        assert abs(e.estimate - exact) <= 4 * sd
        gauss = theory.probability("crosspolytope", 4, a)
        assert abs(e.estimate - gauss) > 8 * math.sqrt(gauss * (1 - gauss) / e.samples)


@pytest.mark.parametrize("rotation", ["orthogonal", "hadamard"])
def test_no_exact_theory_or_reduced_sampler(rotation):
    with pytest.raises(ValueError, match=f"rotation='{rotation}'|the {rotation} rotation"):
        theory.log_probability("crosspolytope", 8, 0.5, rotation=rotation)
    with pytest.raises(ValueError, match="exact only for rotation='gaussian-projection'"):
        estimate_collision("crosspolytope", 8, cosine=0.5, dim=8, mode="reduced", rotation=rotation)
    alias = theory.probability("crosspolytope", 8, 0.5, rotation="gaussian")
    assert alias == theory.probability("crosspolytope", 8, 0.5)
