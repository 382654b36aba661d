"""The named mutations of Theorem 1's claims: one deliberately broken library function each.

``lshsim check --mutate`` runs every claim's check again inside its mutation's context, and
the check must then fail. Each mutation replaces one function of the library, through
:func:`lshsim.theorems.claim_types.replacing`, wherever the package binds it, so the claim's
check (which reaches it through the theory, the hash families or the sampler) sees the broken
version. They are small, plausible bugs: an off-by-one, a wrong constant, a dropped term.
"""

from __future__ import annotations

import math

from lshsim.hashing import SimHash
from lshsim.theorems.claim_types import Mutation, replacing

_SPHERICAL = "lshsim.laws.spherical"


def _voronoi(transform):
    """Replace ``voronoi_log_probability(t, a, rtol)`` by ``transform(original, t, a, rtol)``."""

    def broken(original):
        def voronoi_log_probability(buckets, cosine, rtol=1e-9):
            return transform(original, int(buckets), float(cosine), rtol)

        return voronoi_log_probability

    return replacing(f"{_SPHERICAL}.voronoi_log_probability", broken)


def _argmin_hash(original):
    def tiled_argmax(x, g, signed_half=0):
        return original(-x, g, signed_half)  # argmax of -scores: the argmin

    return tiled_argmax


def _simhash_extra_bit(original):
    def log_probability(family, n, cosine, **kw):
        log_p = original(family, n, cosine, **kw)
        if family != SimHash.name:
            return log_p
        k = int(n).bit_length() - 1
        return log_p * (k + 1) / k  # k + 1 independent sign bits instead of k

    return log_probability


def _scaled_distance(original):
    def pstable_direction_probability(distance, w, radix):
        return original(1.1 * distance, w, radix)

    return pstable_direction_probability


def _shared_minus_one(original):
    def shared_tokens(overlap, length):
        return max(0, original(overlap, length) - 1)

    return shared_tokens


def _laplace_without_gamma(original):
    def asymptotic_probability(family, n, cosine, *, refined=False):
        p = original(family, n, cosine, refined=refined)
        if not refined:
            return p
        return p / math.gamma(1.0 / (1.0 + cosine)) ** 2

    return asymptotic_probability


def _mean_without_first_order(original):
    def cosine_moments(overlap, length, dim):
        from lshsim import sentences

        _, var = original(overlap, length, dim)
        return sentences.shared_tokens(overlap, length) / length, var  # no -f(1-f)(..)/(2d)

    return cosine_moments


def _jaccard(denominator):
    def broken(original):
        def jaccard(shared, length):
            original(shared, length)  # same validation
            return shared / denominator(shared, length)

        return jaccard

    return broken


MUTATIONS: dict[str, Mutation] = {
    m.name: m
    for m in (
        Mutation(
            "voronoi-hash-argmin",
            "The Voronoi family's hash takes the argmin of the scores x.g_i instead of the argmax.",
            replacing("lshsim.hashing.base.tiled_argmax", _argmin_hash),
        ),
        Mutation(
            "voronoi-probability-exponent-n",
            "theory's exact Voronoi probability integrates Phi2^n instead of Phi2^(n-1), i.e. "
            "returns n/(n+1) P_vor(n+1, a).",
            _voronoi(lambda orig, t, a, rtol: math.log(t / (t + 1)) + orig(t + 1, a, rtol)),
        ),
        Mutation(
            "minhash-probability-uses-f",
            "theory's min-hash probability uses the per-token rate s/l in place of the Jaccard "
            "index s/(2l - s).",
            replacing("lshsim.laws.closed_forms.jaccard", _jaccard(lambda s, ln: ln)),
        ),
        Mutation(
            "jaccard-over-2l",
            "theory.jaccard divides the shared count by the token count 2l instead of the "
            "union's size 2l - s.",
            replacing("lshsim.laws.closed_forms.jaccard", _jaccard(lambda s, ln: 2 * ln)),
        ),
        Mutation(
            "simhash-extra-bit",
            "theory's exact SimHash log-probability at n = 2^k counts k + 1 sign bits.",
            replacing("lshsim.theory.families.log_probability", _simhash_extra_bit),
        ),
        Mutation(
            "pstable-distance-x1.1",
            "theory's p-stable per-direction probability is evaluated at 1.1 times the distance.",
            replacing("lshsim.laws.closed_forms.pstable_direction_probability", _scaled_distance),
        ),
        Mutation(
            "crosspolytope-probability-x1.01",
            "theory's exact cross-polytope probability is scaled by 1.01.",
            replacing(
                f"{_SPHERICAL}.crosspolytope_log_probability",
                lambda orig: lambda t, a, rtol=1e-9: orig(t, a, rtol) + math.log(1.01),
            ),
        ),
        Mutation(
            "voronoi-rho-x1.1",
            "theory's exact Voronoi log-probability is scaled by 1.1 (P^1.1: rho 10% too large).",
            _voronoi(lambda orig, t, a, rtol: 1.1 * orig(t, a, rtol)),
        ),
        Mutation(
            "voronoi-half-angle",
            "theory's exact Voronoi probability is evaluated at the cosine of half the angle.",
            _voronoi(lambda orig, t, a, rtol: orig(t, math.cos(0.5 * math.acos(a)), rtol)),
        ),
        Mutation(
            "laplace-form-without-gamma",
            "theory.asymptotic_probability(refined=True) drops the Gamma(1/(1+a))^2 factor.",
            replacing("lshsim.theory.rates.asymptotic_probability", _laplace_without_gamma),
        ),
        Mutation(
            "sampler-shares-one-token-less",
            "The sentence sampler's shared-token count is off by one: round(f l) - 1.",
            replacing("lshsim.sentences.shared_tokens", _shared_minus_one),
        ),
        Mutation(
            "voronoi-probability-x1.01",
            "theory's exact Voronoi probability is scaled by 1.01.",
            _voronoi(lambda orig, t, a, rtol: orig(t, a, rtol) + math.log(1.01)),
        ),
        Mutation(
            "voronoi-even-in-cosine",
            "theory's exact Voronoi probability is evaluated at |a| (as if it were even in a).",
            _voronoi(lambda orig, t, a, rtol: orig(t, abs(a), rtol)),
        ),
        Mutation(
            "cosine-mean-without-1/d-term",
            "lshsim.sentences.cosine_moments returns the mean f = s/l, without its "
            "-f(1-f)(1+f-1/l)/(2d) correction.",
            replacing("lshsim.sentences.cosine_moments", _mean_without_first_order),
        ),
    )
}
