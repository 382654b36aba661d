"""Measured against predicted: real indexes on pairs of known similarity (``tests/tune``).

* :func:`jaccard_pairs` builds set pairs at an exact Jaccard index ``i / u`` (fresh ids per
  pair, so pairs share no token); :func:`datasketch_hits` inserts one side of each pair into
  datasketch's ``MinHashLSH(num_perm, params=(b, r))`` and queries with the other;
* :func:`shingle_pairs` edits documents of the embedded corpus and measures each pair's
  Jaccard index over word shingles exactly;
* :func:`index_hits` does the same with lshsim's own :class:`AmplifiedIndex` on unit vectors
  at an exact cosine;
* :func:`agreement` compares hits with the predicted probabilities: a Wilson interval where
  every pair has one probability, and ``z = (hits - sum p) / sqrt(sum p (1 - p))`` (the
  Poisson-binomial's mean and variance) in general.

One index serves all pairs of a check: a fresh random pair meets fixed functions as a fixed
pair meets fresh ones (the families are invariant under relabelling ids and under rotations),
so the pairs are independent trials.
"""

from __future__ import annotations

import math
import re

import numpy as np

from lshsim.estimation.intervals import Z95, wilson_interval
from lshsim.sentences import cosine_pairs
from lshsim.tune.index import AmplifiedIndex

__all__ = ["agreement", "datasketch_hits", "index_hits", "jaccard_pairs", "shingle_pairs"]


def jaccard_pairs(count: int, shared: int, union: int, rng: np.random.Generator):
    """``count`` pairs of id sets with ``|A n B| = shared`` and ``|A u B| = union``.

    Each pair takes ``union`` consecutive ids at a random offset inside its own block of
    ``2^20`` ids, so no two pairs share one (datasketch hashes each id's bytes, so consecutive
    ids are as good as any). The Jaccard index is ``shared / union`` exactly.

    Returns:
        ``(A, B)``: lists of ``count`` int arrays.
    """
    only = union - shared
    first, second = [], []
    for p in range(count):
        ids = (p << 20) + int(rng.integers(0, (1 << 20) - union)) + np.arange(union)
        common, rest = ids[:shared], ids[shared:]
        first.append(np.concatenate([common, rest[: (only + 1) // 2]]))
        second.append(np.concatenate([common, rest[(only + 1) // 2 :]]))
    return first, second


def datasketch_hits(first, second, *, num_perm: int, bands: int, rows: int, seed: int = 1):
    """Insert ``second[i]`` under key ``i`` and query with ``first[i]``: whether ``i`` is found.

    Args:
        first: the query side of each pair (iterables of ids).
        second: the indexed side.
        num_perm: datasketch's signature length.
        bands: ``b = L`` of ``params=(b, r)``.
        rows: ``r = k``.
        seed: the ``MinHash`` seed.

    Returns:
        bool[count].
    """
    from datasketch import MinHash, MinHashLSH

    def sketches(sets):
        return MinHash.bulk(
            [[str(t).encode() for t in s] for s in sets], num_perm=num_perm, seed=seed
        )

    lsh = MinHashLSH(num_perm=num_perm, params=(bands, rows))
    for i, m in enumerate(sketches(second)):
        lsh.insert(i, m)
    return np.array([i in lsh.query(m) for i, m in enumerate(sketches(first))])


_WORD = re.compile(r"\w+")


def shingles(text: str, width: int = 3) -> set[tuple[str, ...]]:
    """The set of ``width``-word shingles of ``text`` (lower-cased words)."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + width]) for i in range(len(words) - width + 1)}


def shingle_pairs(docs: list[str], edits, rng: np.random.Generator, width: int = 3):
    """Each document against a copy with a fraction of its words replaced by fresh ones.

    Args:
        docs: documents (those with fewer than ``width + 1`` words are skipped).
        edits: the replaced fraction of each document's words (one per document).
        rng: the generator.
        width: words per shingle.

    Returns:
        ``(A, B, jaccard)``: the shingle sets of the originals and the copies (as lists of
        strings) and their exact Jaccard indexes.
    """
    first, second, jac = [], [], []
    for doc, edit in zip(docs, edits, strict=False):
        words = _WORD.findall(doc.lower())
        if len(words) <= width:
            continue
        copy = list(words)
        for j in np.flatnonzero(rng.random(len(words)) < edit):
            copy[j] = f"~{rng.integers(1 << 40)}"
        a, b = shingles(" ".join(words), width), shingles(" ".join(copy), width)
        first.append([" ".join(s) for s in a])
        second.append([" ".join(s) for s in b])
        jac.append(len(a & b) / len(a | b))
    return first, second, np.array(jac)


def index_hits(
    family: str,
    n: int,
    cosine: float,
    count: int,
    *,
    dim: int,
    concat: int,
    tables: int,
    seed: int = 0,
    **params,
) -> np.ndarray:
    """Pairs at an exact cosine through :class:`AmplifiedIndex`: whether each is found.

    Returns:
        bool[count].
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    x, y = cosine_pairs(count, cosine, dim, rng)
    index = AmplifiedIndex(family, n, dim, concat, tables, seed, **params)
    index.insert(y)
    return np.array([i in found for i, found in enumerate(index.query(x))])


def agreement(hits: np.ndarray, predicted) -> dict:
    """Hits against predicted probabilities: the rate, its interval, the prediction and ``z``.

    Args:
        hits: bool[m].
        predicted: one probability, or float[m] (one per pair).

    Returns:
        ``{"pairs", "measured", "ci_low", "ci_high", "predicted", "z"}`` (a 95% Wilson interval
        of the rate; ``z`` from the Poisson-binomial's variance, 0 when it is 0 and the hits
        are as predicted).
    """
    hits = np.asarray(hits, dtype=bool)
    p = np.broadcast_to(np.asarray(predicted, dtype=np.float64), hits.shape)
    m, k = hits.size, int(hits.sum())
    lo, hi = wilson_interval(k, m, Z95)
    mean, var = float(p.sum()), float((p * (1 - p)).sum())
    if var > 0:
        z = (k - mean) / math.sqrt(var)
    else:
        z = 0.0 if k == round(mean) else math.inf
    return {
        "pairs": m,
        "measured": k / m,
        "ci_low": lo,
        "ci_high": hi,
        "predicted": mean / m,
        "z": z,
    }
