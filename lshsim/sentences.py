"""The sentence-pair model of the paper's Theorem 1 (Sec. 4.1 and the supplement; DESIGN §4).

A vocabulary of ``V`` tokens has i.i.d. uniform unit embeddings in ``R^d``. A pair of
sentences of length ``l`` shares ``s = round_half_up(f l)`` tokens:

* the pair uses ``2l - s`` distinct token ids, drawn uniformly without replacement from
  ``[0, V)`` (so ``V >= 2l - s``); no token repeats inside a sentence;
* sentence 1 is ``l`` of them; sentence 2 is sentence 1 with ``l - s`` random positions
  replaced by the remaining ``l - s`` ids, so shared tokens sit at the same positions;
* each sentence's representation is the mean of its token embeddings, normalised to unit
  length (as a norm layer would).

Consequences used throughout: the token sets have Jaccard index ``s / (2l - s)``
(``= f / (2 - f)`` when ``f l`` is an integer); Token-ID routing agrees at exactly a fraction
``s / l`` of the positions; and the cosine of the two representations concentrates at about
``s / l`` with fluctuations ``O(1/sqrt(d))`` (:func:`cosine_moments` gives its mean and
variance to ``O(d^-2)``; :func:`sentence_cosines` samples it exactly at ``O(l)`` per pair).

Without an explicit table, each pair gets fresh i.i.d. embeddings for its ``2l - s`` distinct
tokens. Because the tokens of a pair are distinct, this has the same distribution as drawing
a random table and then a random pair, which is the probability space of the theorem.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lshsim._validate import check_float, check_int


def shared_tokens(overlap: float, length: int) -> int:
    """Number of shared tokens, ``round(f l)`` with halves rounded up."""
    overlap = check_float("overlap (f)", overlap, 0.0, 1.0)
    length = check_int("length (l)", length, 1)
    # f l is a rounded product: an exact half (0.7 * 45 = 31.5) can land an ulp below it, so
    # round half up with a relative slack of 1e-12, far above the rounding error (~1e-16)
    x = overlap * length
    return math.floor(x + 0.5 + 1e-12 * max(1.0, x))


def unit_vectors(shape: tuple[int, ...], dim: int, rng: np.random.Generator) -> np.ndarray:
    """I.i.d. uniform unit vectors in ``R^dim``: float64 array of shape ``shape + (dim,)``."""
    dim = check_int("dim (d)", dim, 1)
    while True:
        z = rng.standard_normal((*shape, dim))
        norms = np.linalg.norm(z, axis=-1, keepdims=True)
        if (norms > 0).all():  # a zero Gaussian vector has probability 0; redraw if it happens
            return z / norms


def embedding_table(vocab: int, dim: int, seed=0) -> np.ndarray:
    """A vocabulary table of ``vocab`` i.i.d. uniform unit vectors in ``R^dim`` (float64)."""
    vocab = check_int("vocab (V)", vocab, 1)
    dim = check_int("dim (d)", dim, 1)
    return unit_vectors((vocab,), dim, np.random.default_rng(seed))


def _distinct_ids(count: int, k: int, vocab: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` rows of ``k`` distinct ids, uniform in ``[0, vocab)`` and uniformly ordered."""
    if k * k <= vocab:  # a row has duplicates with probability <= k^2 / (2 V) <= 1/2
        ids = rng.integers(0, vocab, size=(count, k))
        while True:
            srt = np.sort(ids, axis=1)
            bad = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
            if bad.size == 0:
                return ids
            ids[bad] = rng.integers(0, vocab, size=(bad.size, k))
    rows = [rng.choice(vocab, size=k, replace=False) for _ in range(count)]
    return np.stack(rows) if rows else np.empty((0, k), dtype=np.int64)  # count = 0 is valid


@dataclass(frozen=True)
class SentencePairs:
    """A batch of sentence pairs.

    Attributes:
        tokens1, tokens2: int64[m, l] token ids; equal exactly at the shared positions.
        x1, x2: float64[m, d] unit-normalised mean embeddings (None if not embedded).
        shared: the number of shared tokens ``s`` per pair.
    """

    tokens1: np.ndarray
    tokens2: np.ndarray
    x1: np.ndarray
    x2: np.ndarray
    shared: int


def check_sentence_model(overlap: float, length: int, vocab: int, dim: int) -> int:
    """Validate the model's parameters; return the shared-token count ``s``."""
    s = shared_tokens(overlap, length)
    check_int("dim (d)", dim, 2)  # d = 1: a mean of ±1's can vanish, its direction undefined
    need = 2 * length - s
    if check_int("vocab (V)", vocab, 1) < need:
        raise ValueError(
            f"vocab (V) must be >= 2*length - shared = {need} so the pair's tokens are "
            f"distinct, got {vocab}"
        )
    return s


def sentence_pairs(
    count: int,
    overlap: float,
    *,
    length: int = 32,
    vocab: int = 32128,
    dim: int = 64,
    rng: np.random.Generator,
    table: np.ndarray | None = None,
    embed: bool = True,
) -> SentencePairs:
    """Draw ``count`` sentence pairs that share a fraction ``overlap`` of their tokens.

    Args:
        count: number of pairs, >= 0.
        overlap: ``f`` in [0, 1].
        length: ``l`` >= 1 tokens per sentence.
        vocab: ``V`` >= ``2l - s``.
        dim: ``d`` >= 2 (ignored when ``table`` is given; its width is used).
        rng: generator for the tokens (and embeddings when ``table`` is None).
        table: optional fixed float[V, d] embedding table.
        embed: when False only the tokens are drawn (``x1``, ``x2`` are None; ``dim`` unused).

    Returns:
        :class:`SentencePairs`.
    """
    count = check_int("count", count, 0)
    if table is not None:
        table = np.asarray(table, dtype=np.float64)
        if table.ndim != 2:
            raise ValueError(f"table must have shape (V, d), got {table.shape}")
        vocab, dim = table.shape
    s = check_sentence_model(overlap, length, vocab, dim if embed else 2)
    k = 2 * length - s
    ids = _distinct_ids(count, k, vocab, rng)
    tokens1 = ids[:, :length]
    tokens2 = tokens1.copy()
    # replace l - s uniformly chosen positions of sentence 1 by the pair's fresh ids
    positions = np.argsort(rng.random((count, length)), axis=1)[:, : length - s]
    np.put_along_axis(tokens2, positions, ids[:, length:], axis=1)
    if not embed:
        return SentencePairs(tokens1, tokens2, None, None, s)

    if table is not None:
        emb = table[ids]
    else:
        emb = unit_vectors((count, k), dim, rng)
    sum1 = emb[:, :length].sum(axis=1)
    removed = np.take_along_axis(emb[:, :length], positions[:, :, None], axis=1).sum(axis=1)
    sum2 = sum1 - removed + emb[:, length:].sum(axis=1)
    return SentencePairs(tokens1, tokens2, _normalise(sum1), _normalise(sum2), s)


def _normalise(v: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


#: Pairs per chunk of :func:`sentence_cosines`: its temporaries are a few float64[chunk]
#: arrays whatever ``count``, ``l`` and ``d``. A constant, so the numbers do not depend on it.
COSINE_CHUNK = 2**16


def sentence_cosines(
    count: int, overlap: float, *, length: int, dim: int, rng: np.random.Generator
) -> np.ndarray:
    """Sample the cosine of the two sentence representations: ``O(l)`` per pair, any ``d``.

    Split the pair's ``K = 2l - s`` token embeddings into three groups and sum each: ``P_S``
    over the ``s`` shared tokens, ``P_A`` over the ``l - s`` tokens only in sentence 1, ``P_B``
    over the ``l - s`` only in sentence 2. The sentence sums are ``S1 = P_S + P_A`` and
    ``S2 = P_S + P_B`` (the representations are their directions: the mean's ``1/l`` cancels).
    With the norms ``r_X = |P_X|`` and the cosines ``c_XY`` between the directions of ``P_X``
    and ``P_Y``::

        cos = (r_S^2 + r_S r_A c_SA + r_S r_B c_SB + r_A r_B c_AB)
              / sqrt((r_S^2 + r_A^2 + 2 r_S r_A c_SA) (r_S^2 + r_B^2 + 2 r_S r_B c_SB))

    Why sampling these six numbers is exact: the groups use disjoint tokens, so ``P_S``, ``P_A``
    and ``P_B`` are independent; each has a rotation-invariant law, so its direction is uniform
    and independent of its norm. The three norms and the three directions are therefore six
    independent pieces, each drawn exactly:

    * the norm of a sum of ``k`` uniform unit vectors, by a walk: ``r_1 = 1``,
      ``r_{j+1}^2 = r_j^2 + 1 + 2 r_j c_j`` with ``c_j`` the cosine between the partial sum and
      the next vector. By rotation invariance ``c_j`` is independent of the past and
      distributed as one coordinate of a uniform unit vector in ``R^d``,
      ``(c_j + 1) / 2 ~ Beta((d - 1)/2, (d - 1)/2)`` (arcsine at ``d = 2``), drawn as
      ``c_j = z / sqrt(z^2 + chi^2_{d-1})``, ``z ~ N(0, 1)`` (one coordinate of a normalised
      Gaussian vector; two draws, faster than NumPy's Beta). ``k = 0`` gives 0;
    * the Gram matrix of the three independent uniform directions: the Gaussian vectors that
      normalise to them, written in the orthonormal basis that Gram-Schmidt builds from them,
      form an upper-triangular ``q x 3`` matrix (``q = min(3, d)``) with independent entries,
      ``N(0, 1)`` above the diagonal and ``chi_{d - i}`` on it (Bartlett decomposition); the
      cosines are those of its columns.

    ``s = 0`` is ``r_S = 0`` (the cosine is then ``c_AB``); ``s = l`` gives exactly 1. Cost:
    about ``2 (2l - s)`` random numbers per pair, whatever ``d``. The loop runs over the walks'
    steps, vectorised over the pairs, in chunks of :data:`COSINE_CHUNK` pairs (bounded memory).

    Args:
        count: number of pairs, >= 0.
        overlap: ``f`` in [0, 1]; the pair shares ``s = round_half_up(f l)`` tokens.
        length: ``l`` >= 1 tokens per sentence.
        dim: ``d`` >= 2.
        rng: generator for the draws (the same seed gives the same cosines).

    Returns:
        float64[count] cosines in [-1, 1], distributed exactly as those of
        :func:`sentence_pairs` (for any ``vocab``: a pair's tokens are distinct).
    """
    count = check_int("count", count, 0)
    s = shared_tokens(overlap, length)
    dim = check_int("dim (d)", dim, 2)
    if s == length:  # the sentences are the same tokens: the same representation
        return np.ones(count)
    out = np.empty(count)
    for c0 in range(0, count, COSINE_CHUNK):
        m = min(COSINE_CHUNK, count - c0)
        out[c0 : c0 + m] = _cosine_chunk(m, s, length - s, dim, rng)
    return out


def _sum_norms(k: int, shape: tuple[int, ...], dim: int, rng: np.random.Generator) -> np.ndarray:
    """Norms of sums of ``k`` i.i.d. uniform unit vectors in ``R^dim``, by the norm walk."""
    if k == 0:
        return np.zeros(shape)
    r = np.ones(shape)
    for _ in range(k - 1):
        # c: cosine to the next vector, the first coordinate of a normalised Gaussian vector
        z = rng.standard_normal(shape)
        c = z / np.sqrt(z * z + 2.0 * rng.standard_gamma(0.5 * (dim - 1), size=shape))
        r = np.sqrt(np.maximum((r - 1.0) ** 2 + 2.0 * r * (1.0 + c), 0.0))  # max: rounding
    return r


def _sums_chunk(count: int, s: int, m: int, dim: int, rng: np.random.Generator):
    """``(|S1|^2, |S2|^2, <S1, S2>)`` of ``count`` pairs, ``s`` shared and ``m`` unshared tokens."""
    r_s = _sum_norms(s, (count,), dim, rng)
    r_a, r_b = _sum_norms(m, (2, count), dim, rng)
    # Bartlett factor of the directions of P_S, P_A, P_B: columns (t00, 0, 0), (t01, t11, 0)
    # and (t02, t12, t22), t22 = 0 when d = 2 (q = 2 rows). t00 > 0 cancels from the cosines.
    t01, t02, t12 = rng.standard_normal((3, count))
    t11 = np.sqrt(rng.chisquare(dim - 1, size=count))
    t22 = np.sqrt(rng.chisquare(dim - 2, size=count)) if dim > 2 else 0.0
    n1 = np.hypot(t01, t11)
    n2 = np.sqrt(t02 * t02 + t12 * t12 + t22 * t22)
    c_sa = t01 / n1
    c_sb = t02 / n2
    c_ab = (t01 * t02 + t11 * t12) / (n1 * n2)
    ss = r_s * r_s
    dot = ss + r_s * (r_a * c_sa + r_b * c_sb) + r_a * r_b * c_ab
    n1sq = np.maximum(ss + r_a * r_a + 2.0 * r_s * r_a * c_sa, 0.0)
    n2sq = np.maximum(ss + r_b * r_b + 2.0 * r_s * r_b * c_sb, 0.0)
    return n1sq, n2sq, dot


def _cosine_chunk(count: int, s: int, m: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """Cosines of ``count`` pairs with ``s`` shared and ``m >= 1`` unshared tokens each."""
    n1sq, n2sq, num = _sums_chunk(count, s, m, dim, rng)
    den = np.sqrt(n1sq * n2sq)
    # a sentence sum of exactly 0 (probability 0) normalises to 0, as in sentence_pairs
    cos = np.divide(num, den, out=np.zeros(count), where=den > 0)
    return np.clip(cos, -1.0, 1.0)


def sentence_sums(
    count: int, overlap: float, *, length: int, dim: int, rng: np.random.Generator
) -> np.ndarray:
    """Sample the Gram matrix of the two sentences' token-embedding sums ``S1``, ``S2``.

    The same exact ``O(l)`` construction as :func:`sentence_cosines` (which is
    ``<S1, S2> / (|S1| |S2|)`` of these, from the same draws when ``s < l``), for callers that
    need more than the cosine: the delta method of :func:`cosine_moments` is an expansion in
    ``x = (<S1, S2> - s) / l``, ``y = (|S1|^2 - l) / l`` and ``z = (|S2|^2 - l) / l``, whose
    first and second moments are known exactly (claim T1.g1 uses them as control variates).

    Args:
        count: number of pairs, >= 0.
        overlap: ``f`` in [0, 1]; the pair shares ``s = round_half_up(f l)`` tokens.
        length: ``l`` >= 1 tokens per sentence.
        dim: ``d`` >= 2.
        rng: generator for the draws.

    Returns:
        float64[count, 3]: columns ``|S1|^2``, ``|S2|^2``, ``<S1, S2>`` (unnormalised sums).
    """
    count = check_int("count", count, 0)
    s = shared_tokens(overlap, length)
    dim = check_int("dim (d)", dim, 2)
    out = np.empty((count, 3))
    for c0 in range(0, count, COSINE_CHUNK):
        m = min(COSINE_CHUNK, count - c0)
        out[c0 : c0 + m] = np.stack(_sums_chunk(m, s, length - s, dim, rng), axis=1)
    return out


#: Error constants of :func:`cosine_moments` and :func:`distance_moments` (fitted to the exact
#: sampler and rounded up; see their docstrings for where each holds): the mean of the cosine
#: is off by at most ``COSINE_MEAN_ERROR / d^2``, its variance by a relative
#: ``COSINE_VAR_ERROR / d``; the distance's mean and variance by relative
#: ``DISTANCE_MEAN_ERROR / d^2`` and ``DISTANCE_VAR_ERROR / d``.
COSINE_MEAN_ERROR = 0.5
COSINE_VAR_ERROR = 16.0
DISTANCE_MEAN_ERROR = 1.0
DISTANCE_VAR_ERROR = 10.0


def cosine_moments(overlap: float, length: int, dim: int) -> tuple[float, float]:
    """Mean and variance of the pair's cosine, to second order in ``1/sqrt(d)`` (delta method).

    With ``s = round_half_up(f l)`` shared tokens and ``f = s / l`` the *realised* ratio (not
    the requested ``overlap``)::

        mean ~ f - f (1 - f) (1 + f - 1/l) / (2d)
        var  ~ [(1 - f^2)^2 - f (1 - f) (2 - f) / l] / d

    Derivation: the off-diagonal Gram entries ``G_ij = <u_i, u_j>`` of the pair's unit
    embeddings have mean 0, variance ``1/d`` and are pairwise uncorrelated. Write
    ``cos = (f + x) / sqrt((1 + y)(1 + z))`` with ``x = (<S1, S2> - s) / l``,
    ``y = (|S1|^2 - l) / l``, ``z = (|S2|^2 - l) / l`` (``S1``, ``S2`` the token sums; all
    three are linear in the ``G_ij``), whose second moments follow by counting pairs:
    ``E x^2 = [2s(s-1) + 2s(l-s) + (l-s)^2] / (d l^2)``, ``E y^2 = E z^2 = 2(l-1) / (d l)``,
    ``E yz = 2s(s-1) / (d l^2)``, ``E xy = E xz = 2s(l-1) / (d l^2)``. Expanding to second
    order, ``mean ~ f - E xy + f (3 E y^2 + E yz) / 4`` and
    ``var ~ E x^2 - 2f E xy + f^2 (E y^2 + E yz) / 2``, which simplify to the above. The
    dropped terms are of third and higher order (triangles ``E[G_ij G_jk G_ki] = 1/d^2``,
    squares of second moments): ``O(d^-2)``, i.e. relative ``O(1/d)`` for the variance.

    Exact at ``f = 0`` (mean 0, variance ``1/d``: two independent uniform directions) and at
    ``f = 1`` (cosine 1, variance 0); for ``l = 1``, ``f`` is always 0 or 1. The vocabulary
    ``V`` does not enter: a pair's ``2l - s`` tokens are distinct, so their embeddings are
    i.i.d. uniform whatever ``V``.

    Error, measured against :func:`sentence_cosines` (2^20 pairs per case on the grid
    ``f in {0, 0.1, ..., 1}``, ``l in {1, 4, 16, 64}``, ``d in {4, 16, 64, 256, 1024}``, plus
    ``s = l - 1`` up to ``l = 1024``)::

        |mean - E cos|         <= COSINE_MEAN_ERROR / d^2 = 0.5 / d^2    (d >= 4, any l)
        |var - Var cos| / var  <= COSINE_VAR_ERROR / d = 16 / d         (see below)

    The worst mean error seen is ``0.24 / d^2`` (``s / l = 3/4``, ``d = 4`` to 32; from
    ``d = 64`` on it is below the Monte-Carlo noise of 2^20 to 2^24 pairs). The
    variance bound holds on the whole grid for ``d >= 4`` (worst ``10.4 / d``: ``f = 0.9``,
    ``l = 64``, ``d = 4``) and for every ``l`` once ``d >= 8`` (worst ``13.2 / d`` at ``d = 8``,
    ``8.6 / d`` at ``d >= 16``, both at ``s = l - 1``). Below ``d = 8``, with ``f`` near 1 and
    long sentences, it fails: ``1 - cos`` scales like ``1 / |P_S|^2`` (``P_S`` the sum of the
    shared embeddings) and ``E |P_S|^-4`` diverges at ``d <= 4``, so at ``d = 4``,
    ``s = l - 1`` the error is ``17 / d`` (``l = 16``), ``34 / d`` (``l = 64``), ``62 / d``
    (``l = 1024``), growing like ``log l``.

    Args:
        overlap: ``f`` in [0, 1].
        length: ``l`` >= 1 tokens per sentence.
        dim: ``d`` >= 2.

    Returns:
        ``(mean, variance)``: the mean lies in ``[0, 1]``, the variance in ``[0, 1/d]``.
    """
    s = shared_tokens(overlap, length)
    dim = check_int("dim (d)", dim, 2)
    f = s / length
    mean = f - f * (1.0 - f) * (1.0 + f - 1.0 / length) / (2.0 * dim)
    var = ((1.0 - f * f) ** 2 - f * (1.0 - f) * (2.0 - f) / length) / dim
    return mean, max(var, 0.0)


def distance_moments(overlap: float, length: int, dim: int) -> tuple[float, float]:
    """Mean and variance of the distance ``|x1 - x2| = sqrt(2 - 2 cos)`` of the representations.

    The delta method on ``g(c) = sqrt(2 - 2c)`` around the cosine's mean ``mu`` (variance
    ``v``, both from :func:`cosine_moments`), to second order: with ``a = 2 (1 - mu)``,
    ``g(mu) = sqrt(a)``, ``g'(mu) = -1 / sqrt(a)`` and ``g''(mu) = -a^(-3/2)``::

        mean ~ sqrt(a) - v / (2 a^(3/2))
        var  ~ v / a

    The expansion is in ``(cos - mu) / (1 - mu)``, whose spread is ``O(1/sqrt(d))`` for every
    ``f < 1`` (near ``f = 1`` both ``1 - mu`` and the cosine's spread scale with ``1 - f``), so
    the errors are relative, of order ``1/d^2`` for the mean and ``1/d`` for the variance.
    Measured as in :func:`cosine_moments`, for ``d >= 4`` and every ``l`` (to 1024)::

        |mean - E D| / mean  <= DISTANCE_MEAN_ERROR / d^2 = 1 / d^2
        |var - Var D| / var  <= DISTANCE_VAR_ERROR / d = 10 / d

    (worst seen: ``0.53 / d^2`` and ``7.9 / d``, both at ``s = l - 1``, ``d = 4`` to 8, the
    mean resolved up to ``d = 32``; the
    distance scales like ``1 / |P_S|``, whose square has a finite mean for ``d > 2``, so unlike
    the cosine's variance this bound does not grow with ``l``). ``f = 1`` gives ``(0, 0)``
    exactly; ``V`` does not enter (see :func:`cosine_moments`).

    Args:
        overlap: ``f`` in [0, 1].
        length: ``l`` >= 1 tokens per sentence.
        dim: ``d`` >= 2.

    Returns:
        ``(mean, variance)`` of the Euclidean distance between the two unit representations.
    """
    mu, v = cosine_moments(overlap, length, dim)
    a = 2.0 * (1.0 - mu)
    if a <= 0.0:
        return 0.0, 0.0
    return math.sqrt(a) - v / (2.0 * a**1.5), v / a


def cosine_pairs(
    count: int, cosine: float, dim: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pairs of unit vectors in ``R^dim`` at exactly the given cosine (to rounding).

    ``x`` is uniform on the sphere; ``y = a x + sqrt(1 - a^2) u`` with ``u`` a uniform unit
    vector orthogonal to ``x``.

    Returns:
        ``(x, y)``, two float64[count, dim] arrays.
    """
    count = check_int("count", count, 0)
    a = check_float("cosine", cosine, -1.0, 1.0)
    dim = check_int("dim (d)", dim, 1)
    if dim == 1 and abs(a) != 1.0:
        raise ValueError(f"cosine must be -1 or 1 when dim (d) = 1, got {cosine!r}")
    x = unit_vectors((count,), dim, rng)
    if dim == 1:
        return x, a * x
    while True:
        z = rng.standard_normal((count, dim))
        w = z - (z * x).sum(axis=1, keepdims=True) * x
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        if (norms > 0).all():
            break
    y = a * x + math.sqrt(max(0.0, 1.0 - a * a)) * (w / norms)
    return x, y
