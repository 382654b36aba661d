"""The joint law of the two half-cosines of a sentence pair (product keys on the sentence model).

Product keys hash the halves ``x[:d/2]`` and ``x[d/2:]`` of a representation separately, so on
the sentence model (:mod:`lshsim.sentences`) their collision rate depends on the pair of
half-cosines ``(A1, A2)``: the cosines between the first halves, and between the second
halves, of the two sentence sums (the normalisation of the mean scales a half and leaves its
cosine unchanged). :func:`half_cosines` samples that pair exactly, at ``O(l)`` per pair.

Why it is exact. A token embedding is ``e = g / |g|``, ``g ~ N(0, I_d)``. Its halves are
``w u1`` and ``sqrt(1 - w^2) u2`` with ``w^2 = |g1|^2 / |g|^2 ~ Beta(d/4, d/4)`` and ``u1,
u2`` uniform unit vectors of ``R^(d/2)``, the three independent (a Gaussian vector's
direction is independent of its norm, and ``|g1|^2, |g2|^2`` are independent chi-squares).
So, given every token's weight ``w_t``, half 1 of each sentence sum is a sum of independent
uniformly directed vectors of lengths ``w_t`` and half 2 one of lengths ``sqrt(1 - w_t^2)``,
the two halves independent of each other. Each half is then the construction of
:func:`lshsim.sentences.sentence_cosines` in ``R^(d/2)`` with weighted steps: the norm of a
group's sum by the walk ``R^2 <- R^2 + L^2 + 2 R L c`` (``c`` one coordinate of a uniform
unit vector of ``R^(d/2)``, independent of the past by rotation invariance), the three group
directions by a Bartlett factor. The halves are dependent only through the shared weights:
as ``d -> inf``, ``w_t^2 -> 1/2`` (variance ``1 / (2d + 4)``) and ``A1, A2`` become independent,
each distributed as the sentence cosine at dimension ``d/2``.
"""

from __future__ import annotations

import math

import numpy as np

from lshsim._validate import check_int
from lshsim.sentences import COSINE_CHUNK, cosine_pairs, shared_tokens

__all__ = ["half_cosine_pairs", "half_cosines"]


def _weighted_norms(lengths: np.ndarray, dim: int, rng: np.random.Generator) -> np.ndarray:
    """Norms of sums of vectors with lengths ``lengths[j]`` (``[k, count]``), uniform directions."""
    k, count = lengths.shape
    if k == 0:
        return np.zeros(count)
    r = lengths[0].copy()
    for j in range(1, k):
        z = rng.standard_normal(count)
        c = z / np.sqrt(z * z + 2.0 * rng.standard_gamma(0.5 * (dim - 1), size=count))
        step = lengths[j]
        r = np.sqrt(np.maximum(r * r + step * step + 2.0 * r * step * c, 0.0))
    return r


def _half_cosine(r_s, r_a, r_b, dim: int, rng: np.random.Generator) -> np.ndarray:
    """The cosine of ``P_S + P_A`` and ``P_S + P_B`` from the group norms; directions Bartlett."""
    count = r_s.shape[0]
    t01, t02, t12 = rng.standard_normal((3, count))
    t11 = np.sqrt(rng.chisquare(dim - 1, size=count))
    t22 = np.sqrt(rng.chisquare(dim - 2, size=count)) if dim > 2 else 0.0
    n1 = np.hypot(t01, t11)
    n2 = np.sqrt(t02 * t02 + t12 * t12 + t22 * t22)
    c_sa, c_sb = t01 / n1, t02 / n2
    c_ab = (t01 * t02 + t11 * t12) / (n1 * n2)
    ss = r_s * r_s
    dot = ss + r_s * (r_a * c_sa + r_b * c_sb) + r_a * r_b * c_ab
    n1sq = np.maximum(ss + r_a * r_a + 2.0 * r_s * r_a * c_sa, 0.0)
    n2sq = np.maximum(ss + r_b * r_b + 2.0 * r_s * r_b * c_sb, 0.0)
    den = np.sqrt(n1sq * n2sq)
    return np.clip(np.divide(dot, den, out=np.zeros(count), where=den > 0), -1.0, 1.0)


def _chunk(count: int, s: int, m: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    half = dim // 2
    # each token's squared weight in half 1: |g1|^2 / |g|^2 ~ Beta(d/4, d/4)
    w2 = {g: rng.beta(0.25 * dim, 0.25 * dim, size=(k, count)) for g, k in (("S", s), ("A", m))}
    w2["B"] = rng.beta(0.25 * dim, 0.25 * dim, size=(m, count))
    out = np.empty((count, 2))
    for col, lengths in enumerate(
        ({g: np.sqrt(v) for g, v in w2.items()}, {g: np.sqrt(1.0 - v) for g, v in w2.items()})
    ):
        r_s = _weighted_norms(lengths["S"], half, rng)
        r_a = _weighted_norms(lengths["A"], half, rng)
        r_b = _weighted_norms(lengths["B"], half, rng)
        out[:, col] = _half_cosine(r_s, r_a, r_b, half, rng)
    return out


def half_cosines(
    count: int, overlap: float, *, length: int, dim: int, rng: np.random.Generator
) -> np.ndarray:
    """Sample the two half-cosines of ``count`` sentence pairs exactly (module docstring).

    Args:
        count: number of pairs, >= 0.
        overlap: ``f`` in [0, 1]; the pair shares ``s = round_half_up(f l)`` tokens.
        length: ``l`` >= 1 tokens per sentence.
        dim: ``d``, even and >= 4 (each half has ``d/2 >= 2`` coordinates).
        rng: generator for the draws (the same seed gives the same cosines).

    Returns:
        float64[count, 2]: the cosines of the first halves and of the second halves.
    """
    count = check_int("count", count, 0)
    s = shared_tokens(overlap, length)
    dim = check_int("dim (d)", dim, 4)
    if dim % 2:
        raise ValueError(f"dim (d) must be even for product keys (two halves), got {dim}")
    if s == length:
        return np.ones((count, 2))
    out = np.empty((count, 2))
    for c0 in range(0, count, COSINE_CHUNK):
        m = min(COSINE_CHUNK, count - c0)
        out[c0 : c0 + m] = _chunk(m, s, length - s, dim, rng)
    return out


def half_cosine_pairs(
    count: int, a1: float, a2: float, dim: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pairs of unit vectors of ``R^dim`` whose halves have cosines ``a1`` and ``a2``.

    Each half is a pair of :func:`lshsim.sentences.cosine_pairs` in ``R^(dim/2)``, scaled by
    ``1/sqrt 2``; the full cosine is ``(a1 + a2) / 2`` (``a`` when ``a1 = a2 = a``).

    Returns:
        ``(x, y)``, two float64[count, dim] arrays.
    """
    dim = check_int("dim (d)", dim, 2)
    if dim % 2:
        raise ValueError(f"dim (d) must be even for product keys (two halves), got {dim}")
    x1, y1 = cosine_pairs(count, a1, dim // 2, rng)
    x2, y2 = cosine_pairs(count, a2, dim // 2, rng)
    scale = 1.0 / math.sqrt(2.0)
    return np.concatenate([x1, x2], axis=1) * scale, np.concatenate([y1, y2], axis=1) * scale
