"""Engram as deployed (``lookup="engram"``; DeepSeek's ``engram_demo_v1.py``).

Orders ``2 .. N`` (``--ngram N``) hashed together by Engram's exact ``NgramHashMapping`` (one
multiplier set per layer shared by heads and orders, ``H`` prime heads per order from one prime
search over all orders and layers, ids compressed through the map of ``--engram-tokenizer``'s
SentencePiece vocabulary, windows left-padded), a multi-head table of width ``d / H`` per head,
the gate with the signed square root before the sigmoid, and the short causal convolution: the
layer is :mod:`lshsim.t5.lookups.engram_layer`. The hash as a family is
:class:`lshsim.hashing.engram.EngramHash`, its law :mod:`lshsim.laws.engram`.

The ``ngram`` lookup (:mod:`lshsim.t5.lookups.ngram`) stays the earlier Engram-style variant
(one order, independent heads, summed rows, the plain sigmoid gate).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from lshsim.t5.lookups.base import Lookup

__all__ = ["ENGRAM", "EngramLookup", "engram_layer_primes"]

#: Largest table size per order: the offsets of all ``(N - 1) H`` heads stay int32.
MAX_ROWS = 2**30


@functools.lru_cache(maxsize=64)
def engram_layer_primes(
    buckets: int, ngram: int, heads: int, layers: int
) -> tuple[tuple[int, ...], ...]:
    """Each layer's head primes, order-major: ``layers`` tuples of ``(ngram - 1) heads`` primes.

    Engram's search (:func:`lshsim.laws.engram.engram_primes`), the table size ``buckets`` for
    every order, layers ``0 .. layers - 1`` in order (encoder, then decoder).
    """
    from lshsim.laws.engram import engram_primes

    per = engram_primes([buckets] * (ngram - 1), heads, range(layers))
    return tuple(tuple(p for order in per[g] for p in order) for g in range(layers))


class EngramLookup(Lookup):
    """Engram's module as deployed: exact hash, multi-head table, signed-sqrt gate, short conv."""

    name = "engram"
    label = "Engram"
    help = (
        "Engram as deployed: orders 2..N hashed together (one int64 multiply-XOR mix per "
        "order, H prime heads), compressed ids, signed-sqrt gate, short causal convolution"
    )
    flags = ("buckets", "ngram", "heads", "lookup_seed", "engram_tokenizer")
    #: ``lshsim probe --lookup engram`` probes it; the routing study's figure (and the time of
    #: ``lshsim reproduce``) keeps the lookups it had
    in_routing_study = False
    cost_example = (
        "engram N=3, 2 heads x 1024 rows", {"ngram": 3, "lookup_heads": 2, "buckets": 1024}
    )  # fmt: skip

    def validate(self, cfg, n: int) -> None:
        """Rank 0, ``N >= 2``, ``H`` divides ``d``, a table size in ``[2, 2^30 / ((N - 1) H)]``."""
        if cfg.expert_rank != 0:
            raise ValueError(f"rank: the engram lookup has no rank experts, got {cfg.expert_rank}")
        if cfg.ngram < 2:
            raise ValueError(
                f"ngram: the engram lookup hashes orders 2..N, needs N >= 2, got {cfg.ngram}"
            )
        if cfg.d_model % cfg.lookup_heads:
            raise ValueError(
                f"heads (lookup_heads): engram's head width d/H needs H to divide d = "
                f"{cfg.d_model}, got {cfg.lookup_heads}"
            )
        top = MAX_ROWS // ((cfg.ngram - 1) * cfg.lookup_heads)
        if not 2 <= n <= top:
            raise ValueError(f"buckets: engram needs a table size in [2, {top}], got {n}")
        super().validate(cfg, n)

    def _layers(self, cfg) -> int:
        return cfg.num_encoder_layers + cfg.num_decoder_layers

    def layer_params(self, cfg, layer: int) -> int:
        """Layer ``g``'s parameters (``g``: encoder layers, then decoder layers).

        ``(sum p) d / H`` (table) + ``2 (E d + d)`` (key and value maps with biases, ``E =
        (N - 1) d``) + ``2 d`` (key and query norms) + ``d`` (conv norm) + ``4 d`` (conv).
        """
        from lshsim.t5.lookups.engram_layer import CONV_KERNEL

        d, h = cfg.d_model, cfg.lookup_heads
        primes = engram_layer_primes(cfg.num_buckets, cfg.ngram, h, self._layers(cfg))[layer]
        e = len(primes) * (d // h)
        return sum(primes) * (d // h) + 2 * (e * d + d) + 3 * d + CONV_KERNEL * d

    def expert_params(self, cfg) -> int:
        """Layer 0's count (the layers' tables differ by their primes: :meth:`stack_params`)."""
        return self.layer_params(cfg, 0)

    def stack_params(self, cfg) -> int:
        """Every layer's count summed (each layer has its own primes)."""
        return sum(self.layer_params(cfg, g) for g in range(self._layers(cfg)))

    def layer_constants(self, cfg, stack: int, layer: int) -> dict[str, np.ndarray]:
        """The layer's indices and its heads' row offsets in its table.

        ``local``: its index in its stack; ``global``: in Engram's ``layer_ids`` (the hash's
        layer); ``offsets``: int32 ``[(N - 1) H]``.
        """
        g = stack * cfg.num_encoder_layers + layer
        primes = engram_layer_primes(cfg.num_buckets, cfg.ngram, cfg.lookup_heads,
                                     self._layers(cfg))[g]  # fmt: skip
        return {
            "local": np.int32(layer),
            "global": np.int32(g),
            "offsets": np.concatenate([[0], np.cumsum(primes)[:-1]]).astype(np.int32),
        }

    def ragged_params(self, cfg, stack: int, layer: int) -> dict[str, tuple]:
        """The table, ``[sum of the layer's primes, d / H]``: its size is the layer's own."""
        import flax.linen as nn

        g = stack * cfg.num_encoder_layers + layer
        primes = engram_layer_primes(cfg.num_buckets, cfg.ngram, cfg.lookup_heads,
                                     self._layers(cfg))[g]  # fmt: skip
        shape = (sum(primes), cfg.d_model // cfg.lookup_heads)
        return {"table": (shape, nn.initializers.normal(1.0), ("buckets", None))}

    def apply(self, module, x, token_ids, deterministic: bool = True):
        """Engram's layer (:func:`lshsim.t5.lookups.engram_layer.engram_layer`)."""
        from lshsim.t5.lookups.engram_layer import engram_layer
        from lshsim.t5.lookups.tables import slot_expert

        draw = self.constants(module)

        def read_table(read):
            return self.ragged_param(module, "table", read)

        def layer(*a):
            return engram_layer(*a, draw=draw, read_table=read_table)

        return slot_expert(module, x, token_ids, layer)

    def probe_family(self, cfg) -> tuple[str | None, dict]:
        """Predicted by :mod:`~lshsim.t5.lookups.engram_probe` (the law on compressed ids)."""
        return self.name, {}

    def probe_record(self, cfg, expert: dict) -> tuple[Any, Any]:
        """All heads' hashes ``[B, L, (N - 1) H]`` and the layer input."""
        return expert["slots"][0], expert["layer_input"][0]

    def probe_stats(self, name, overlap, cfg, rec_a, rec_b, tok_a, tok_b, *, router_draws, seed):
        """Order 2's head 0: collisions, compressed window equality, re-drawn seeds."""
        from lshsim.t5.lookups.engram_probe import engram_stats

        return engram_stats(
            name, overlap, cfg, rec_a, rec_b, tok_a, tok_b, router_draws=router_draws, seed=seed
        )

    def probe_predictions(self, cfg, stats: Sequence[dict]) -> list[np.ndarray]:
        """``same + (1 - same) rho(p_0)`` per position."""
        from lshsim.t5.lookups.engram_probe import engram_predictions

        return engram_predictions(cfg, stats)

    def probe_at_overlap(self, cfg, f: float, length: int) -> float:
        """``q_f + (1 - q_f) rho(p_0)``."""
        from lshsim.t5.lookups.engram_probe import engram_at_overlap

        return engram_at_overlap(cfg, f, length)


ENGRAM = EngramLookup()
