"""The routing probe's theory for product keys and hashed n-grams.

The probe hooks of :class:`~lshsim.t5.lookups.productkey.ProductKey` and
:class:`~lshsim.t5.lookups.ngram.NGram` (:mod:`lshsim.t5.probe`); the rows have the same keys.

Product keys, top-1 (``topk = 1``)
    The measured event is "head 0's top-1 slot is the same for both sentences". The top-1
    slot is ``(argmax_i q1 . K1_i, argmax_j q2 . K2_j)`` of the query halves (exactly, for
    every ``k``), and at initialisation the sub-keys are i.i.d. ``N(0, 1)``, independent of
    the queries; so given the recorded queries the two halves are two independent Voronoi
    hashes with ``s = sqrt(n)`` cells and ``E[collision | queries] = P_vor(s, a1)
    P_vor(s, a2)`` at the measured half-cosines ``a1, a2``: the per-position prediction.
    ``at f`` is ``P_vor(s, f)^2``.
Product keys, top-k (``topk = k > 1``)
    The measured quantity is the overlap ``|T_k(x) ∩ T_k(y)| / k`` of head 0's selected
    slots. The prediction re-draws the sub-keys (``router_draws`` times, fresh ``N(0, 1)``)
    on the recorded queries and selects the brute-force top-k of all ``s^2`` sums (equal to
    PKM's rule; ``tests/t5/test_lookup_layers.py``): per position, the mean overlap over
    the draws (so ``router_draws >= 2`` is required); ``at f`` is not defined (NaN).
Hashed n-grams
    The measured event is "head 0's bucket is the same". Two positions whose ``N``-token
    windows are equal always collide; two distinct windows collide with probability
    ``1/m_0`` under a random hash: per position ``same + (1 - same)/m_0`` (``same``: the
    windows are equal), so the row's mean is the measured n-gram sharing ``q`` plus the hash
    term ``(1 - q)/m_0``. ``realised`` reports ``q``. The re-drawn lookups are fresh
    ``NGram`` functions (multipliers, salt) on the same tokens. ``at f``:
    ``q_f + (1 - q_f)/m_0`` with the hypergeometric ``q_f = s(s-1)...(s-N+1) /
    (l(l-1)...(l-N+1))`` (:func:`lshsim.theory.ngram_shared_probability`), ``s = round(f l)``
    (``l`` the length).

After training the sub-keys are learned and the product-key prediction becomes the
random-sub-key reference that the model departs from, as for a trained softmax router. The
n-gram hash never trains: it keeps agreeing.

References:
    Lample et al. 2019 (product keys); DeepSeek 2026, Engram (hashed n-grams); the paper's
    Theorem 1 and :mod:`lshsim.t5.probe`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lshsim import theory
from lshsim.t5.lookups.sizes import ngram_table_sizes
from lshsim.t5.usage import pair_weights, split_record, usage_metrics


def productkey_record(expert: dict) -> tuple[Any, Any]:
    """Product keys' ``(ids, vectors)``: head 0's slots ``[B, L, k]`` and query ``[B, L, d]``."""
    return expert["slots"][0][..., 0, :], expert["query"][0][..., 0, :]


def ngram_record(expert: dict) -> tuple[Any, Any]:
    """N-grams' ``(ids, vectors)``: all heads' buckets ``[B, L, H]`` and the layer input."""
    return expert["slots"][0], expert["layer_input"][0]


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosines of paired vectors over their last axis (0 where a vector is 0)."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    den = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.clip(np.einsum("...i,...i->...", a, b) / np.where(den > 0, den, 1.0), -1.0, 1.0)


def overlap_fraction(sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
    """``|A ∩ B| / k`` per position for slot sets ``[..., k]`` (distinct ids within a set)."""
    return (sa[..., :, None] == sb[..., None, :]).any(axis=-1).sum(axis=-1) / sa.shape[-1]


def _topk_slots(q: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """Brute-force top-k slots ``[P, k]`` (as sets) of all ``s^2`` half-score sums."""
    half = keys.shape[-1]
    s1 = q[:, :half] @ keys[0].T
    s2 = q[:, half:] @ keys[1].T
    if k == 1:
        return (np.argmax(s1, axis=1) * keys.shape[1] + np.argmax(s2, axis=1))[:, None]
    sums = (s1[:, :, None] + s2[:, None, :]).reshape(q.shape[0], -1)
    return np.argpartition(-sums, k - 1, axis=1)[:, :k]


def redrawn_productkey(
    s: int, k: int, qa: np.ndarray, qb: np.ndarray, draws: int, seed
) -> np.ndarray:
    """Per-draw, per-position top-k overlaps ``[draws, P]`` under fresh ``N(0, 1)`` sub-keys."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    qa = qa.astype(np.float32)
    qb = qb.astype(np.float32)
    out = []
    for child in seq.spawn(draws):
        keys = np.random.default_rng(child).standard_normal((2, s, qa.shape[1] // 2))
        keys = keys.astype(np.float32)
        out.append(overlap_fraction(_topk_slots(qa, keys, k), _topk_slots(qb, keys, k)))
    return np.array(out)


def same_windows(ta: np.ndarray, tb: np.ndarray, n: int) -> np.ndarray:
    """Whether the ``n``-token windows ending at each position are equal (0-padded, ``[S, L]``)."""
    eq = np.asarray(ta) == np.asarray(tb)
    out = eq.copy()
    for i in range(1, n):
        out[:, i:] &= eq[:, :-i]
    return out


def redrawn_ngram(
    n: int, modulus: int, ta: np.ndarray, tb: np.ndarray, draws: int, seed
) -> np.ndarray:
    """Collision rates ``[draws]`` of fresh one-head :class:`lshsim.hashing.NGram` functions.

    Each has table ``modulus`` and hashes the token rows ``ta``, ``tb`` left-padded with id 0.
    """
    from lshsim.hashing import make_family

    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    pad = np.zeros((ta.shape[0], n - 1), dtype=np.int64)
    pa = np.concatenate([pad, np.asarray(ta, np.int64)], axis=1)
    pb = np.concatenate([pad, np.asarray(tb, np.int64)], axis=1)
    rates = []
    for child in seq.spawn(draws):
        fam = make_family("ngram", modulus, 1, child, ngram=n, heads=1)
        rates.append(float(np.mean(fam.hash(pa) == fam.hash(pb))))
    return np.array(rates)


def _finish(
    out: dict[str, Any], sa, sb, n_slots: int, redrawn: float, v_router: float, wa=None, wb=None
) -> dict:
    weights = pair_weights(wa, wb, sa, sb)
    usage = usage_metrics(np.concatenate([sa.ravel(), sb.ravel()]), n_slots, weights)
    out.update(redrawn=redrawn, v_router=v_router, usage=usage)
    out["effective_buckets"] = usage["effective"]
    return out


def productkey_stats(
    name: str,
    overlap: float,
    config,
    rec_a: tuple[np.ndarray, np.ndarray],
    rec_b: tuple[np.ndarray, np.ndarray],
    tok_a: np.ndarray,
    tok_b: np.ndarray,
    *,
    router_draws: int,
    seed,
) -> dict[str, Any]:
    """:func:`lshsim.t5.probe.layer_stats` for a product-key layer.

    ``rec_a``/``rec_b`` are :func:`productkey_record`'s ``(ids, vectors)``. Besides the keys
    of the softmax/LSH stats, returns ``usage`` (:func:`lshsim.t5.usage.usage_metrics`) and, at
    ``k = 1``, ``half_cos`` ``[S, L, 2]`` (the prediction is computed for all layers at once in
    :func:`productkey_predictions`), otherwise ``per_position``.
    """
    (sa, xa, wa), (sb, xb, wb) = split_record(rec_a), split_record(rec_b)
    out: dict[str, Any] = {"name": name, "overlap": overlap, "cos": _cos(xa, xb)}
    redrawn, v_router = math.nan, 0.0
    k, s = config.topk, math.isqrt(config.num_buckets)
    out["collide"] = overlap_fraction(sa, sb)
    out["same"] = tok_a == tok_b
    half = xa.shape[-1] // 2
    out["half_cos"] = np.stack([_cos(xa[..., :half], xb[..., :half]),
                                _cos(xa[..., half:], xb[..., half:])], axis=-1)  # fmt: skip
    if k > 1 and router_draws < 2:
        raise ValueError("router_draws: the top-k product-key prediction needs >= 2")
    if router_draws > 1:
        d = xa.shape[-1]
        per = redrawn_productkey(s, k, xa.reshape(-1, d), xb.reshape(-1, d), router_draws, seed)
        rates = per.mean(axis=1)
        redrawn, v_router = float(rates.mean()), float(rates.var(ddof=1))
        if k > 1:
            out["per_position"] = per.mean(axis=0).reshape(sa.shape[:-1])
    return _finish(out, sa, sb, config.num_buckets, redrawn, v_router, wa, wb)


def ngram_stats(
    name: str,
    overlap: float,
    config,
    rec_a: tuple[np.ndarray, np.ndarray],
    rec_b: tuple[np.ndarray, np.ndarray],
    tok_a: np.ndarray,
    tok_b: np.ndarray,
    *,
    router_draws: int,
    seed,
) -> dict[str, Any]:
    """:func:`lshsim.t5.probe.layer_stats` for an n-gram layer (head 0's buckets).

    ``rec_a``/``rec_b`` are :func:`ngram_record`'s ``(ids, vectors)``; returns ``usage`` and
    ``per_position`` (``same + (1 - same)/m_0``) besides the softmax/LSH stats' keys.
    """
    (sa, xa, _), (sb, xb, _) = split_record(rec_a), split_record(rec_b)  # weight 1
    out: dict[str, Any] = {"name": name, "overlap": overlap, "cos": _cos(xa, xb)}
    redrawn, v_router = math.nan, 0.0
    m0 = ngram_table_sizes(config.num_buckets, config.lookup_heads)[0]
    sa, sb = sa[..., :1], sb[..., :1]
    out["collide"] = sa[..., 0] == sb[..., 0]
    same = same_windows(tok_a, tok_b, config.ngram)
    out["same"] = same
    out["per_position"] = same + (1 - same) / m0
    if router_draws > 1:
        rates = redrawn_ngram(config.ngram, m0, tok_a, tok_b, router_draws, seed)
        redrawn, v_router = float(rates.mean()), float(rates.var(ddof=1))
    return _finish(out, sa, sb, m0, redrawn, v_router)


@functools.lru_cache(maxsize=64)
def _voronoi(s: int, a: float) -> float:
    return theory.probability("voronoi", s, a)


def productkey_at_overlap(config, f: float, length: int) -> float:
    """The ``at f`` column: ``P_vor(sqrt n, f)^2`` at ``k = 1`` (top-k: not defined, NaN)."""
    if config.topk > 1:
        return math.nan
    return _voronoi(math.isqrt(config.num_buckets), f) ** 2


def ngram_at_overlap(config, f: float, length: int) -> float:
    """The ``at f`` column: ``q_f + (1 - q_f)/m_0``, ``q_f`` the hypergeometric n-gram sharing."""
    n = config.ngram
    q = theory.ngram_shared_probability(n, round(f * length), length) if n <= length else 0.0
    m0 = ngram_table_sizes(config.num_buckets, config.lookup_heads)[0]
    return q + (1 - q) / m0


def productkey_predictions(config, stats: Sequence[dict]) -> list[np.ndarray]:
    """Per-position predictions of every stat; those at ``k = 1`` in one theory call."""
    todo = [st for st in stats if "per_position" not in st]
    if todo:
        s = math.isqrt(config.num_buckets)
        flat = np.concatenate([st["half_cos"].reshape(-1) for st in todo])
        p = theory.probabilities("voronoi", s, flat)
        splits = np.cumsum([st["half_cos"].size for st in todo])[:-1]
        for st, part in zip(todo, np.split(p, splits), strict=True):
            st["per_position"] = part.reshape(st["half_cos"].shape).prod(axis=-1)
    return [np.asarray(st["per_position"], dtype=np.float64) for st in stats]


def ngram_predictions(config, stats: Sequence[dict]) -> list[np.ndarray]:
    """Per-position predictions of every stat (computed with the stats)."""
    return [np.asarray(st["per_position"], dtype=np.float64) for st in stats]
