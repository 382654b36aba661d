"""Exact collision law of hashed n-grams (:class:`lshsim.hashing.NGram`) on the sentence model.

The quantity (the aligned-position rate, as for Token-ID): for a pair of sentences of ``l``
tokens sharing ``s = round(f l)`` aligned positions, chosen uniformly at random (the sentence
model of :mod:`lshsim.sentences`: the other ``l - s`` positions hold fresh ids, all of the
pair's ids distinct), and a fresh hash function, the probability that position ``t`` of
sentence 1 and position ``t`` of sentence 2 get the same bucket, for a position ``t >= N - 1``
(a full window); every such position has the same law, so it is also the expected fraction of
the ``l - N + 1`` windows that collide.

* The window's ``N`` positions are all shared with probability (hypergeometric)
  ``q = s (s-1) ... (s-N+1) / (l (l-1) ... (l-N+1)) = C(s, N) / C(l, N)``; then the two
  n-grams are equal and collide in every head. Otherwise some position holds two distinct ids,
  the n-grams differ, and under the ideal-hash model (a distinct pair's hash values are
  independent and uniform, heads independent) head ``h`` collides with probability
  ``1 / m_h``, independently across heads.
* One head (``m_1 = m``): ``P = q + (1 - q) / m``.
* ``H`` heads: the number ``K`` of heads that collide has law
  ``P(K = k) = q 1{k = H} + (1 - q) PB(k; 1/m_1, ..., 1/m_H)`` (PB: Poisson-binomial), and
  ``P(K = H) = q + (1 - q) prod_h 1/m_h``.
* The other definition (the bucket of window ``t`` used by *any* window of sentence 2):
  ``q + (1 - q)(1 - (1 - 1/m)^(l - N + 1))`` (:func:`ngram_anywhere_probability`); both
  coincide for an injective lookup, which is why Token-ID's ``f`` can be read either way.
* ``N = 1``: ``q = s / l``, Token-ID's rate; the hashed rate adds ``(1 - s/l) / m`` (two
  distinct tokens share a hashed bucket), where :class:`~lshsim.hashing.TokenID` with
  ``n >= V`` is injective and adds nothing.
* ``l -> infinity`` at fixed ``f`` and ``N``: ``q -> f^N``, with
  ``q (1-f_l) N(N-1) / (2s) <= f_l^N - q <= (1-f_l) N(N-1) / (2 (l - N + 1))``, ``f_l = s/l``
  (:func:`ngram_limit_bounds`; proofs in ``proofs/ngram.md``).

References:
    X. Cheng et al. (DeepSeek), Engram, arXiv 2601.07372 (multi-head hashed n-grams).
"""

from __future__ import annotations

import math
from fractions import Fraction

from lshsim._validate import check_buckets, check_int
from lshsim.sentences import shared_tokens

__all__ = [
    "MAX_HEADS",
    "MAX_NGRAM",
    "MAX_TABLE",
    "is_prime",
    "ngram_anywhere_probability",
    "ngram_heads_law",
    "ngram_limit_bounds",
    "ngram_moduli",
    "ngram_probability",
    "ngram_shared_probability",
    "ngram_summary",
    "poisson_binomial",
]


#: Limits: n-gram order, heads, and the table size ``m`` (the moduli stay below ``2^32``).
MAX_NGRAM = 64
MAX_HEADS = 64
MAX_TABLE = 2**31


def is_prime(k: int) -> bool:
    """Deterministic Miller-Rabin for ``k < 3.4e14`` (bases 2, 3, 5, 7, 11, 13, 17)."""
    if k < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17)
    if k in small:
        return True
    if any(k % p == 0 for p in small):
        return False
    d, r = k - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in small:
        x = pow(a, d, k)
        if x in (1, k - 1):
            continue
        for _ in range(r - 1):
            x = x * x % k
            if x == k - 1:
                break
        else:
            return False
    return True


def ngram_moduli(m: int, heads: int = 1) -> tuple[int, ...]:
    """The table size of every head: ``(m,)`` for one head, else the ``H`` smallest primes ``>= m``.

    Args:
        m: buckets, in ``[2, 2^31]``.
        heads: ``H`` in ``[1, 64]``.

    Returns:
        ``H`` distinct moduli, increasing; each below ``2^32``.
    """
    m = check_int("n (buckets)", m, 2, MAX_TABLE)
    heads = check_int("heads (H)", heads, 1, MAX_HEADS)
    if heads == 1:
        return (m,)
    out: list[int] = []
    k = m
    while len(out) < heads:
        if is_prime(k):
            out.append(k)
        k += 1
    return tuple(out)


def _check_order(ngram: int, length: int) -> tuple[int, int]:
    length = check_int("length (l)", length, 1)
    if check_int("ngram (N)", ngram, 1) > length:
        raise ValueError(f"ngram (N) must be an integer in [1, l = {length}], got {ngram}")
    return int(ngram), length


def ngram_shared_probability(ngram: int, shared: int, length: int) -> float:
    """``q = s (s-1) ... (s-N+1) / (l (l-1) ... (l-N+1))``: all ``N`` window positions shared.

    Computed as an exact fraction and rounded once (so ``N = 1`` gives ``s / l`` to the bit).

    Args:
        ngram: ``N`` in ``[1, l]``.
        shared: ``s`` in ``[0, l]``.
        length: ``l >= 1``.

    Returns:
        ``q`` in ``[0, 1]`` (0 when ``s < N``).
    """
    ngram, length = _check_order(ngram, length)
    shared = check_int("shared (s)", shared, 0, length)
    return float(Fraction(math.perm(shared, ngram), math.perm(length, ngram)))


def poisson_binomial(probs) -> list[float]:
    """Law of the number of successes of independent trials with success probabilities ``probs``.

    Returns:
        ``[P(K = 0), ..., P(K = len(probs))]`` by the usual convolution.
    """
    law = [1.0]
    for p in probs:
        nxt = [0.0] * (len(law) + 1)
        for k, v in enumerate(law):
            nxt[k] += v * (1.0 - p)
            nxt[k + 1] += v * p
        law = nxt
    return law


def _check(ngram, m, overlap, length, heads) -> tuple[float, tuple[int, ...], int]:
    """``(q, moduli, s)`` after validating every argument."""
    ngram, length = _check_order(ngram, length)
    m = check_buckets(m)
    if m > MAX_TABLE:
        raise ValueError(f"n (buckets) must be <= 2^31 for family 'ngram', got {m}")
    heads = check_int("heads (H)", heads, 1, MAX_HEADS)
    s = shared_tokens(overlap, length)
    return ngram_shared_probability(ngram, s, length), ngram_moduli(m, heads), s


def ngram_heads_law(
    ngram: int, m: int, overlap: float, length: int = 32, *, heads: int = 1
) -> list[float]:
    """``P(K = k)``, ``k = 0..H``: the number of heads in which a window's buckets agree.

    ``q 1{k = H} + (1 - q) PB(k; 1/m_1, ..., 1/m_H)`` with the moduli of
    :func:`lshsim.hashing.ngram.ngram_moduli` (see the module docstring).

    Args:
        ngram: ``N`` in ``[1, l]``.
        m: buckets, ``[2, 2^31]``.
        overlap: ``f`` in ``[0, 1]`` (``s = round(f l)``).
        length: ``l``.
        heads: ``H`` in ``[1, 64]``.

    Returns:
        ``H + 1`` probabilities summing to 1.
    """
    q, moduli, _ = _check(ngram, m, overlap, length, heads)
    law = [(1.0 - q) * p for p in poisson_binomial([1.0 / mh for mh in moduli])]
    law[-1] += q
    return law


def ngram_probability(
    ngram: int, m: int, overlap: float, length: int = 32, *, heads: int = 1
) -> float:
    """Collision rate of an aligned window in every head: ``q + (1 - q) prod_h 1/m_h``.

    One head: ``q + (1 - q)/m`` (the issue's rate). Arguments as :func:`ngram_heads_law`.
    """
    q, moduli, _ = _check(ngram, m, overlap, length, heads)
    return q + (1.0 - q) * math.prod(1.0 / mh for mh in moduli)


def ngram_anywhere_probability(ngram: int, m: int, overlap: float, length: int = 32) -> float:
    """One head, the other definition: P[window t's bucket is used by *some* window of s2].

    ``q + (1 - q) (1 - (1 - 1/m)^(l - N + 1))``. An unshared window of sentence 1 holds an id
    that occurs nowhere in sentence 2 (the pair's ids are distinct), so its n-gram differs from
    all ``l - N + 1`` n-grams of sentence 2, and those differ from each other (no id repeats
    inside a sentence); under the ideal hash their buckets are independent and uniform. With
    one bucket per token (Token-ID, ``n >= V``) both definitions give ``f``; hashed, this one
    is larger than :func:`ngram_probability` by ``(1 - q)((1 - (1 - 1/m)^w) - 1/m)``.
    Arguments as :func:`ngram_heads_law` (one head).
    """
    q, moduli, _ = _check(ngram, m, overlap, length, 1)
    windows = length - ngram + 1
    return q + (1.0 - q) * -math.expm1(windows * math.log1p(-1.0 / moduli[0]))


def ngram_limit_bounds(ngram: int, shared: int, length: int) -> tuple[float, float]:
    """Bounds on ``f_l^N - q`` (``f_l = s / l``): ``(lower, upper)``, both ``O(N^2 / l)``.

    ``upper = (1 - f_l) N (N-1) / (2 (l - N + 1))`` for every ``s``; ``lower =
    q (1 - f_l) N (N-1) / (2 s)`` for ``s >= N`` (0 otherwise). So ``q -> f^N`` as
    ``l -> infinity``; with the requested ``f``, ``|f_l - f| <= 1/(2l)`` adds ``N / (2l)``.
    """
    ngram, length = _check_order(ngram, length)
    shared = check_int("shared (s)", shared, 0, length)
    f = shared / length
    pairs = ngram * (ngram - 1) / 2.0
    upper = (1.0 - f) * pairs / (length - ngram + 1)
    q = ngram_shared_probability(ngram, shared, length)
    lower = q * (1.0 - f) * pairs / shared if shared >= ngram else 0.0
    return lower, upper


def ngram_summary(ngram: int, m: int, overlap: float, length: int = 32, *, heads: int = 1) -> dict:
    """Every number ``lshsim theory --family ngram`` prints, as a JSON-ready dict.

    Keys: ``probability`` (all heads), ``shared_probability`` (``q``), ``hash_term``
    (``prod 1/m_h``, a distinct pair colliding in every head), ``f_power`` (``f_l^N``),
    ``limit_bounds`` (:func:`ngram_limit_bounds`), ``heads_law``, ``head_fraction``
    (``E K / H``), ``moduli``, ``shared``, ``windows`` (``l - N + 1``).
    """
    q, moduli, s = _check(ngram, m, overlap, length, heads)
    law = ngram_heads_law(ngram, m, overlap, length, heads=heads)
    return {
        "probability": ngram_probability(ngram, m, overlap, length, heads=heads),
        "shared_probability": q,
        "hash_term": math.prod(1.0 / mh for mh in moduli),
        "f_power": (s / length) ** ngram,
        "limit_bounds": list(ngram_limit_bounds(ngram, s, length)),
        "heads_law": law,
        "head_fraction": sum(k * p for k, p in enumerate(law)) / len(moduli),
        "moduli": list(moduli),
        "shared": s,
        "windows": length - ngram + 1,
        "ngram": ngram,
        "heads": len(moduli),
    }
