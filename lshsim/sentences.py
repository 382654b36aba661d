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
``s / l`` with fluctuations ``O(1/sqrt(d))``.

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


def sentence_cosines(
    count: int, overlap: float, *, length: int, dim: int, rng: np.random.Generator
) -> np.ndarray:
    """Sample the cosine of the two sentence representations at a cost independent of ``d``.

    Only the Gram matrix of the pair's ``K = 2l - s`` token embeddings matters. Writing the
    Gaussian vectors that normalise to them in the orthonormal basis that Gram-Schmidt builds
    from them gives an upper-triangular ``q x K`` matrix (``q = min(K, d)``) with independent
    entries: ``N(0, 1)`` above the diagonal and ``chi_{d - i}`` on it (Bartlett
    decomposition). Cost ``O(K min(K, d))`` per pair, exact in distribution.

    Returns:
        float64[count] cosines in [-1, 1].
    """
    count = check_int("count", count, 0)
    s = shared_tokens(overlap, length)
    dim = check_int("dim (d)", dim, 2)
    k = 2 * length - s
    q = min(k, dim)
    r = np.zeros((count, q, k))
    iu = np.triu_indices(q, 1, k)
    r[:, iu[0], iu[1]] = rng.standard_normal((count, iu[0].size))
    diag = np.arange(q)
    r[:, diag, diag] = np.sqrt(rng.chisquare(dim - diag, size=(count, q)))
    u = r / np.linalg.norm(r, axis=1, keepdims=True)  # columns are the unit embeddings
    shared = u[:, :, :s].sum(axis=2)
    a = shared + u[:, :, s:length].sum(axis=2)
    b = shared + u[:, :, length:].sum(axis=2)
    cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.clip(cos, -1.0, 1.0)


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
