"""Engram's hash as deployed: its table primes and its exact law on the sentence model.

Engram (DeepSeek, ``engram_demo_v1.py``, ``NgramHashMapping``) hashes the n-gram ending at
position ``t`` (orders ``n = 2 .. N``) with ONE multiplicative-XOR mix per order, in int64
(products wrap modulo ``2^64``)::

    mix_n(t) = XOR_{k < n} (x_{t-k} * m_k)          # x_{t-k} = pad id where t - k < 0
    head_j(t) = mix_n(t) mod p_{n,j}                # floor mod: in [0, p_{n,j})

so the ``H`` heads of an order share the mix and differ only in their prime. The primes
(:func:`engram_primes`) come from one search shared by every order and layer.

**The law** (:func:`engram_probability`, :func:`engram_heads_law`; derivation in
``proofs/ngram.md``, section 7). Sentence model of :mod:`lshsim.sentences`: two sentences of
``l`` tokens sharing ``s = round(f l)`` aligned positions, the pair's other ids distinct and
fresh. Position ``t`` of order ``n`` reads ``w = min(n, t + 1)`` real tokens (the rest is the
pad id, equal in both sentences); the two windows are equal iff those ``w`` positions are all
shared, with probability ``q = s (s-1) ... (s-w+1) / (l (l-1) ... (l-w+1))``. Equal windows
collide in every head. Otherwise the model: the two mixes are independent and uniform on a
range of ``R`` consecutive integers (``R = 2^63`` for valid compressed ids: every product is
below ``2^63``, see :func:`mix_range`). Head set ``S`` then collides iff the mixes agree modulo
``L_S = lcm(p_j, j in S)`` (Chinese remainder theorem; ``prod p_j`` for distinct primes), with
probability :func:`residue_match` ``(L_S, R) = (a R + b (a + 1)) / R^2`` where ``R = a L + b``:
``1/L`` plus ``b (L - b) / (L R^2)``, and exactly ``1/R`` once ``L >= R``. So

* one head: ``q + (1 - q) rho(p_j)``, ``rho(p) = 1/p + O(R^-2)``;
* every head: ``q + (1 - q) rho(prod_j p_j)``; the heads are nearly independent while
  ``prod p_j < R`` and collide *all together* beyond: with Engram's 8 primes near 646,400,
  ``prod p_j ~ 2^154 > 2^63``, so the all-heads rate of a distinct pair is ``2^-63``, the rate
  of equal mixes, not ``prod 1/p_j ~ 2^-154`` (both negligible next to ``q``);
* the number ``K`` of colliding heads, by inclusion-exclusion over head sets.

**On compressed ids** (``compress``: Engram's lookup ``old id -> compressed id``). The sentence
model draws *original* ids in ``[0, V_0)`` (``V_0 = len(compress)``); the hash reads their
compressed ids, so an unshared position is equal after compression when its two distinct ids
fall in one class. Position-wise equality of the ``w`` window positions, ``u`` of them unshared
(``P(U = u) = C(l - s, u) C(s, w - u) / C(l, w)``), has probability
``g(u) = u! [x^u] prod_k (sum_a n_k^(2a) x^a / a!) / V_0^(2u)`` (``n_k`` the class sizes,
``n^(j)`` the falling factorial: the ``2u`` ids of the unshared positions are a uniform
ordered sample of distinct ids, and class ``k`` takes ``a`` of the ``u`` pairs in
``n_k^(2a)`` ways), so :func:`compressed_window_probability` ``Q = sum_u P(U = u) g(u)``
replaces ``q`` in every formula above (``Q = q`` for a one-to-one map).

The uniform-mix model is an assumption about the real mix (distinct windows differing in one
position never have equal mixes, since ``x m`` is then exact and injective in ``x``); the
tests check the per-head, all-heads and head-count laws against the real kernel by Monte Carlo
at small primes. It is visibly off for a window holding ONE real token (``t = 0``, left-padded) at
a tiny prime and a tiny compressed vocabulary: ``x m XOR c mod 3`` over 6 compressed ids
collided in 0.780 of 6,000 pairs against the model's 0.736; from ``p = 11`` the same test
agrees within its interval.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from fractions import Fraction

from lshsim._validate import check_int
from lshsim.laws.ngram import is_prime, ngram_shared_probability
from lshsim.sentences import shared_tokens

__all__ = [
    "ENGRAM_PRIME_STEP",
    "INT64_MAX",
    "MAX_HEADS",
    "MAX_LAW_HEADS",
    "MAX_NGRAM",
    "MAX_TABLE",
    "compressed_window_probability",
    "engram_half_bound",
    "engram_heads_law",
    "engram_parts",
    "engram_primes",
    "engram_probability",
    "engram_summary",
    "mix_range",
    "next_prime",
    "residue_match",
    "window_tokens",
]

INT64_MAX = 2**63 - 1
#: Engram's layer-seed step: layer ``i`` draws its multipliers from ``seed + 10007 i``.
ENGRAM_PRIME_STEP = 10007
#: Limits: orders, heads, table sizes (``is_prime`` is exact below 3.4e14), heads of the law.
MAX_NGRAM = 64
MAX_HEADS = 64
MAX_TABLE = 2**40
MAX_LAW_HEADS = 16


def engram_half_bound(vocab: int) -> int:
    """``max(1, (int64 max // V) // 2)``: multipliers are ``2 r + 1``, ``r`` in ``[0, this)``."""
    vocab = check_int("vocab_size (compressed vocabulary)", vocab, 1, INT64_MAX)
    return max(1, (INT64_MAX // vocab) // 2)


def next_prime(start: int, seen: set[int]) -> int:
    """Engram's ``find_next_prime``: the smallest prime ``> start`` not in ``seen``."""
    k = start + 1
    while not (is_prime(k) and k not in seen):
        k += 1
    return k


def engram_primes(
    table_sizes: Sequence[int], heads: int, layer_ids: Iterable[int]
) -> dict[int, list[list[int]]]:
    """Every layer's head primes: ``{layer: [[primes of order 2], [order 3], ...]}``.

    One set of used primes is shared by all orders and layers, in layer order: head ``j`` of
    an order takes the next unused prime after head ``j - 1``'s (the first after
    ``table_sizes[n - 2] - 1``), so a later order or layer continues past the earlier ones.

    Args:
        table_sizes: Engram's ``engram_vocab_size``, one per order ``2 .. N``, in ``[2, 2^40]``.
        heads: ``H`` in ``[1, 64]``.
        layer_ids: the layers, in Engram's order.
    """
    sizes = [check_int("table_sizes", v, 2, MAX_TABLE) for v in table_sizes]
    heads = check_int("heads (H)", heads, 1, MAX_HEADS)
    seen: set[int] = set()
    out: dict[int, list[list[int]]] = {}
    for layer in layer_ids:
        per_order = []
        for size in sizes:
            start, primes = size - 1, []
            for _ in range(heads):
                p = next_prime(start, seen)
                seen.add(p)
                primes.append(p)
                start = p
            per_order.append(primes)
        out[int(layer)] = per_order
    return out


def mix_range(vocab: int) -> int:
    """``R = 2^B``: the mixes of ids in ``[0, V)`` lie in ``[0, 2^B)`` (the model's range).

    The largest product is ``(V - 1)(2 h - 1)`` with ``h`` :func:`engram_half_bound`, below
    ``2^63`` (no wrap), and an XOR of values below ``2^B`` stays below ``2^B`` (``R = 1`` at
    ``V = 1``: every id is 0).
    """
    top = (check_int("vocab (V)", vocab, 1, INT64_MAX) - 1) * (2 * engram_half_bound(vocab) - 1)
    return 2 ** top.bit_length()


def residue_match(modulus: int, span: int) -> Fraction:
    """``P(U = U' mod L)`` for ``U, U'`` i.i.d. uniform on ``span = R`` consecutive integers.

    With ``R = a L + b`` (``0 <= b < L``), ``b`` residues are hit ``a + 1`` times and ``L - b``
    residues ``a`` times, so the probability is ``(a R + b (a + 1)) / R^2``: ``1/L + b (L - b)
    / (L R^2)``, and ``1/R`` when ``L >= R`` (only equal values).
    """
    modulus = check_int("modulus (L)", modulus, 1)
    span = check_int("span (R)", span, 1)
    a, b = divmod(span, modulus)
    return Fraction(a * span + b * (a + 1), span * span)


def window_tokens(ngram: int, position: int | None) -> int:
    """Real tokens the window of order ``N`` at ``position`` reads: ``min(N, t + 1)``."""
    if position is None:
        return ngram
    return min(ngram, check_int("position (t)", position, 0) + 1)


def _class_sizes(compress) -> tuple[tuple[int, ...], int]:
    """``(sorted class sizes, V_0)`` of a lookup ``old id -> compressed id``."""
    try:
        ids = [int(v) for v in compress]
    except (TypeError, ValueError):
        raise ValueError(
            "compress must be a 1-D sequence of integer ids (old id -> new id)"
        ) from None
    if not ids or min(ids) < 0:
        raise ValueError("compress must be a non-empty map to ids >= 0")
    return tuple(sorted(Counter(ids).values())), len(ids)


def _pairs_in_classes(sizes: Sequence[int], u: int) -> int:
    """Ordered ``(a_1..a_u, b_1..b_u)``, all ``2u`` ids distinct, ``a_i ~ b_i`` (same class).

    ``u! [x^u] prod_k sum_a n_k^(2a) x^a / a!`` with exact fractions; classes of equal size
    are raised to their count at once.
    """

    def mul(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
        out = [Fraction(0)] * (u + 1)
        for i, x in enumerate(a):
            if x:
                for j in range(u + 1 - i):
                    out[i + j] += x * b[j]
        return out

    poly = [Fraction(1)] + [Fraction(0)] * u
    for size, count in Counter(sizes).items():
        base = [Fraction(math.perm(size, 2 * a), math.factorial(a)) for a in range(u + 1)]
        while count:  # base ** count, truncated at degree u
            if count & 1:
                poly = mul(poly, base)
            base, count = mul(base, base), count >> 1
    total = poly[u] * math.factorial(u)
    assert total.denominator == 1
    return int(total)


@functools.lru_cache(maxsize=256)
def _compressed_q(sizes: tuple[int, ...], vocab0: int, w: int, s: int, length: int) -> Fraction:
    q = Fraction(0)
    for u in range(max(0, w - s), min(w, length - s) + 1):
        p_u = Fraction(math.comb(length - s, u) * math.comb(s, w - u), math.comb(length, w))
        q += p_u * Fraction(_pairs_in_classes(sizes, u), math.perm(vocab0, 2 * u))
    return q


def compressed_window_probability(
    ngram: int, compress, overlap: float, length: int = 32, *, position: int | None = None
) -> float:
    """``Q``: aligned windows equal after compression (original ids of the sentence model).

    Args:
        ngram: the order ``n`` in ``[2, 64]``.
        compress: the lookup ``old id -> compressed id`` (``V_0 = len(compress) >= 2l - s``).
        overlap: ``f`` in ``[0, 1]``, ``s = round(f l)``.
        length: ``l``.
        position: None: a full window; else ``t`` (left-padded below ``n - 1``).

    Returns:
        ``sum_u P(U = u) g(u)`` (module docstring); ``q`` for a one-to-one map.
    """
    _, s = _check(ngram, overlap, length, position)
    sizes, vocab0 = _class_sizes(compress)
    if vocab0 < 2 * length - s:
        raise ValueError(f"compress must map at least 2l - s = {2 * length - s} ids, got {vocab0}")
    w = window_tokens(ngram, position)
    return float(_compressed_q(sizes, vocab0, w, s, length))


def _check(ngram, overlap, length, position, compress=None) -> tuple[float, int]:
    length = check_int("length (l)", length, 1)
    ngram = check_int("ngram (N)", ngram, 2, MAX_NGRAM)
    if position is None and ngram > length:
        raise ValueError(f"ngram (N) must be an integer in [2, l = {length}], got {ngram}")
    if position is not None:
        check_int("position (t)", position, 0, length - 1)
    s = shared_tokens(overlap, length)
    w = window_tokens(ngram, position)
    if compress is not None:
        return compressed_window_probability(ngram, compress, overlap, length, position=position), s
    return ngram_shared_probability(w, s, length), s


def _moduli(primes: Sequence[int]) -> list[int]:
    mods = [check_int("primes", p, 2) for p in primes]
    if not mods or len(mods) > MAX_HEADS:
        raise ValueError(f"primes must be 1 to {MAX_HEADS} moduli, got {len(mods)}")
    return mods


def engram_parts(
    ngram: int,
    primes: Sequence[int],
    overlap: float,
    length: int = 32,
    *,
    vocab: int = 129280,
    position: int | None = None,
    head: int | None = None,
    compress=None,
) -> tuple[float, float]:
    """``(q, rho)``: equal windows' probability, and distinct windows' collision probability.

    The aligned windows are equal with probability ``q``; distinct windows collide in every
    head (or in head ``head``) with probability ``rho``.

    ``rho`` is :func:`residue_match` of ``L = lcm(primes)`` (or ``primes[head]``) on the range
    ``R`` = :func:`mix_range` ``(vocab)`` (the uniform-mix model). Arguments as
    :func:`engram_probability`.
    """
    q, _ = _check(ngram, overlap, length, position, compress)
    mods = _moduli(primes)
    if head is not None:
        mods = [mods[check_int("head", head, 0, len(mods) - 1)]]
    return q, float(residue_match(math.lcm(*mods), mix_range(vocab)))


def engram_probability(
    ngram: int,
    primes: Sequence[int],
    overlap: float,
    length: int = 32,
    *,
    vocab: int = 129280,
    position: int | None = None,
    head: int | None = None,
    compress=None,
) -> float:
    """Collision rate of aligned windows in every head (or in head ``head`` alone).

    ``q + (1 - q) rho(L)``: ``L = lcm(primes)`` (every head) or ``primes[head]``, ``rho`` of
    :func:`residue_match` on the range ``R`` = :func:`mix_range` ``(vocab)``.

    Args:
        ngram: the order ``n`` in ``[2, 64]`` (at ``n = 1`` the mix ``x m`` is linear, so
            ``x m = x' m (mod p)`` iff ``p | (x - x') m``: not the uniform model).
        primes: the order's head moduli (Engram's: :func:`engram_primes`).
        overlap: ``f`` in ``[0, 1]``, ``s = round(f l)``.
        length: ``l``.
        vocab: the compressed vocabulary ``V`` (fixes ``R``).
        position: None: a full window (``t >= n - 1``); else ``t`` (left-padded below ``n - 1``).
        head: None: all heads; else one head's index.
        compress: None (ids are the compressed ids), or Engram's lookup ``old id -> compressed
            id`` applied to the sentence model's original ids: ``q`` becomes
            :func:`compressed_window_probability`, and ``vocab`` is the compressed vocabulary.
    """
    q, rho = engram_parts(
        ngram,
        primes,
        overlap,
        length,
        vocab=vocab,
        position=position,
        head=head,
        compress=compress,
    )
    return q + (1.0 - q) * rho


def engram_heads_law(
    ngram: int,
    primes: Sequence[int],
    overlap: float,
    length: int = 32,
    *,
    vocab: int = 129280,
    position: int | None = None,
    compress=None,
) -> list[float]:
    """``P(K = k)``, ``k = 0..H``: how many heads of the aligned windows agree.

    ``q 1{k = H} + (1 - q) sum_{|S| = k} sum_{T >= S} (-1)^{|T| - |S|} rho(lcm_T)``, exact
    fractions (``H <= 16``). Arguments as :func:`engram_probability`.
    """
    q, _ = _check(ngram, overlap, length, position, compress)
    mods = _moduli(primes)
    heads = len(mods)
    if heads > MAX_LAW_HEADS:
        raise ValueError(f"primes: the head-count law takes at most {MAX_LAW_HEADS} heads")
    span = mix_range(vocab)
    # at_least[j] = sum over |T| = j of P(every head of T agrees)
    at_least = [
        sum(
            (residue_match(math.lcm(1, *t), span) for t in itertools.combinations(mods, j)),
            Fraction(0),
        )
        for j in range(heads + 1)
    ]
    law = []
    for k in range(heads + 1):  # exactly k: sum_{j >= k} (-1)^{j-k} C(j, k) at_least[j]
        v = sum((-1) ** (j - k) * math.comb(j, k) * at_least[j] for j in range(k, heads + 1))
        law.append((1.0 - q) * float(v))
    law[-1] += q
    return law


def engram_summary(
    ngram: int,
    primes: Sequence[int],
    overlap: float,
    length: int = 32,
    *,
    vocab: int = 129280,
    position: int | None = None,
    compress=None,
) -> dict:
    """The law's parts as a JSON-ready dict.

    Keys: ``probability`` (every head), ``shared_probability`` (``q``), ``hash_term``
    (``rho(lcm)``), ``independent_hash_term`` (``prod 1/p_j``, the independent-heads value),
    ``head_probabilities`` (each head alone), ``heads_law`` (where ``H <= 16``),
    ``mix_range`` (``R``), ``primes``, ``shared``, ``tokens`` (real tokens in the window).
    """
    q, s = _check(ngram, overlap, length, position, compress)
    mods = _moduli(primes)
    span = mix_range(vocab)
    kw = {"vocab": vocab, "position": position, "compress": compress}
    return {
        "probability": engram_probability(ngram, mods, overlap, length, **kw),
        "shared_probability": q,
        "hash_term": float(residue_match(math.lcm(*mods), span)),
        "independent_hash_term": math.prod(1.0 / p for p in mods),
        "head_probabilities": [
            engram_probability(ngram, mods, overlap, length, head=j, **kw) for j in range(len(mods))
        ],
        "heads_law": (
            engram_heads_law(ngram, mods, overlap, length, **kw)
            if len(mods) <= MAX_LAW_HEADS
            else None
        ),
        "mix_range": span,
        "primes": list(mods),
        "shared": s,
        "tokens": window_tokens(ngram, position),
        "ngram": ngram,
    }
