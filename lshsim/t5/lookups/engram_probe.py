"""The routing probe's theory for the ``engram`` lookup (Engram as deployed).

The measured event is "head 0 of order 2 has the same bucket" at aligned positions of two
sentences. Its theory is the law on compressed ids (:mod:`lshsim.laws.engram`, E.2 and E.3
of ``proofs/ngram.md``): two positions whose *compressed* 2-token windows are equal (the pad
before the start equal in both) always collide; otherwise the two int64 mixes agree modulo
the layer's prime ``p_0`` with probability ``rho(p_0)`` (:func:`~lshsim.laws.engram.
residue_match` on the mix range of the compressed vocabulary, ``1/p_0`` up to ``O(R^-2)``).
Per position: ``same + (1 - same) rho(p_0)``, ``same`` measured on the compressed tokens; the
re-drawn lookups are Engram's hash with other seeds (new multipliers, same primes) on the same
tokens; ``at f``: ``q_f + (1 - q_f) rho(p_0)`` with the hypergeometric 2-gram sharing of
uncompressed ids (compression only raises it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lshsim.t5.usage import split_record, usage_metrics

__all__ = ["engram_at_overlap", "engram_predictions", "engram_stats", "head0_rate"]


def _global_layer(config, name: str) -> int:
    stack, index = name.split("/")
    return (0 if stack == "encoder" else config.num_encoder_layers) + int(index)


def head0_rate(config, layer: int) -> tuple[int, float]:
    """``(p_0, rho(p_0))``: layer ``layer``'s order-2 head-0 prime and its distinct-window rate."""
    from lshsim.laws.engram import mix_range, residue_match
    from lshsim.t5.lookups.engram_layer import engram_mapping

    mapping = engram_mapping(config)
    p0 = mapping.primes(layer)[2][0]
    return p0, float(residue_match(p0, mix_range(mapping.vocab_size)))


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    den = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.clip(np.einsum("...i,...i->...", a, b) / np.where(den > 0, den, 1.0), -1.0, 1.0)


def _same_2grams(ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """Whether the compressed 2-token windows ending at each position are equal (pad equal)."""
    eq = ca == cb
    out = eq.copy()
    out[:, 1:] &= eq[:, :-1]
    return out


def engram_stats(
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
    """:func:`lshsim.t5.probe.layer_stats` for an engram layer (order 2, head 0).

    Args:
        name: ``"encoder/i"`` or ``"decoder/i"`` (the layer's primes).
        overlap: the nominal ``f``.
        config: the model config.
        rec_a: ``(hashes [S, L, (N - 1) H], input [S, L, d], None)`` of the first sentences.
        rec_b: the same for the second sentences.
        tok_a: the (original) tokens of the layer's positions, ``[S, L]``.
        tok_b: the same for the second sentences.
        router_draws: re-drawn hash seeds for the router part of the interval (< 2: none).
        seed: seeds those draws.

    Returns:
        The keys of the other lookups' stats, with ``per_position`` and ``usage``.
    """
    from lshsim.hashing.engram import EngramHash
    from lshsim.t5.lookups.engram_layer import engram_mapping

    (sa, xa, _), (sb, xb, _) = split_record(rec_a), split_record(rec_b)
    layer = _global_layer(config, name)
    p0, rho = head0_rate(config, layer)
    mapping = engram_mapping(config)
    same = _same_2grams(mapping.compress(tok_a), mapping.compress(tok_b))
    out: dict[str, Any] = {"name": name, "overlap": overlap, "cos": _cosines(xa, xb)}
    out["collide"] = sa[..., 0] == sb[..., 0]
    out["same"] = same
    out["per_position"] = same + (1 - same) * rho
    redrawn, v_router = float("nan"), 0.0
    if router_draws > 1:
        seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        rates = []
        for child in seq.spawn(router_draws):
            h = EngramHash(
                mapping.vocab_size,
                lookup=mapping.lookup,
                table_sizes=mapping.table_sizes,
                max_ngram_size=mapping.max_ngram_size,
                heads=mapping.heads,
                layer_ids=mapping.layer_ids,
                pad_id=0,
                seed=int(child.generate_state(1, np.uint64)[0] >> np.uint64(2)),
            )
            a = h.hash(np.asarray(tok_a, np.int64), layer)[..., 0]
            b = h.hash(np.asarray(tok_b, np.int64), layer)[..., 0]
            rates.append(float(np.mean(a == b)))
        redrawn, v_router = float(np.mean(rates)), float(np.var(rates, ddof=1))
    usage = usage_metrics(np.concatenate([sa[..., 0].ravel(), sb[..., 0].ravel()]), p0)
    out.update(redrawn=redrawn, v_router=v_router, usage=usage)
    out["effective_buckets"] = usage["effective"]
    return out


def engram_predictions(config, stats: Sequence[dict]) -> list[np.ndarray]:
    """Per-position predictions of every stat (computed with the stats)."""
    return [np.asarray(st["per_position"], dtype=np.float64) for st in stats]


def engram_at_overlap(config, f: float, length: int) -> float:
    """``q_f + (1 - q_f) rho(p_0)`` (layer 0's prime), ``q_f`` the hypergeometric 2-gram sharing."""
    from lshsim import theory

    q = theory.ngram_shared_probability(2, round(f * length), length) if length >= 2 else 0.0
    return q + (1 - q) * head0_rate(config, 0)[1]
