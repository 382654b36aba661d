"""Hashed n-grams (``lookup="ngram"``; DeepSeek's Engram): ``H`` hash heads of the last ``N`` ids.

Each head hashes the ``N`` token ids ending at a position into its own table (the
:class:`lshsim.hashing.NGram` function, drawn from ``SeedSequence([lookup_seed, stack,
layer])``); the heads' rows are summed and read through Engram's gate
(:mod:`lshsim.t5.lookups.ngram_layer`). The probe predicts ``same + (1 - same)/m_0`` per
position (:mod:`lshsim.t5.lookups.probe_theory`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lshsim.t5.lookups.base import Lookup
from lshsim.t5.lookups.sizes import ngram_table_sizes

__all__ = ["NGRAM", "NGram"]


class NGram(Lookup):
    """Engram's hashed n-gram tables."""

    name = "ngram"
    label = "N-gram"
    help = "hashed n-grams: H heads hash the last N token ids (Engram)"
    flags = ("rank", "buckets", "ngram", "heads")
    cost_example = (
        "ngram N=2, 2 heads x 1024 rows", {"ngram": 2, "lookup_heads": 2, "buckets": 1024}
    )  # fmt: skip

    def validate(self, cfg, n: int) -> None:
        """A table size in ``[2, 2^31]`` (32-bit hashes); one slot per token."""
        if not 2 <= n <= 2**31:
            raise ValueError(f"buckets: ngram needs a table size in [2, 2^31], got {n}")
        super().validate(cfg, n)

    def expert_params(self, cfg) -> int:
        """``max(2r, 1) (sum_j m_j) d`` (values) + ``2 d`` (gate norms)."""
        d, r = cfg.d_model, cfg.expert_rank
        sizes = ngram_table_sizes(cfg.num_buckets, cfg.lookup_heads)
        return max(2 * r, 1) * d * sum(sizes) + 2 * d

    def layer_constants(self, cfg, stack: int, layer: int) -> dict[str, np.ndarray]:
        """The layer's hash draw: ``multipliers`` uint32 ``[H, N]`` and ``salts`` ``[H]``.

        The moduli depend on the table size and heads alone (the same in every layer).
        """
        from lshsim.t5.lookups.ngram_layer import ngram_family

        family = ngram_family(cfg, stack, layer)
        return {
            "multipliers": np.asarray(family.multipliers, np.uint32),
            "salts": np.asarray(family.salts, np.uint32),
        }

    def apply(self, module, x, token_ids, deterministic: bool = True):
        """Engram's layer (no jitter or dropout)."""
        from lshsim.t5.lookups.ngram_layer import ngram_layer
        from lshsim.t5.lookups.tables import slot_expert

        draw = self.constants(module)
        return slot_expert(module, x, token_ids, lambda *a: ngram_layer(*a, draw=draw))

    def probe_family(self, cfg) -> tuple[str | None, dict]:
        """Predicted by :mod:`~lshsim.t5.lookups.probe_theory` (window sharing + 1/m_0)."""
        return self.name, {}

    def probe_record(self, cfg, expert: dict) -> tuple[Any, Any]:
        """All heads' buckets and the layer input."""
        from lshsim.t5.lookups.probe_theory import ngram_record

        return ngram_record(expert)

    def probe_stats(self, name, overlap, cfg, rec_a, rec_b, tok_a, tok_b, *, router_draws, seed):
        """Head 0's collisions, equal windows, re-drawn hash functions."""
        from lshsim.t5.lookups.probe_theory import ngram_stats

        return ngram_stats(
            name, overlap, cfg, rec_a, rec_b, tok_a, tok_b, router_draws=router_draws, seed=seed
        )

    def probe_predictions(self, cfg, stats: Sequence[dict]) -> list[np.ndarray]:
        """``same + (1 - same)/m_0`` per position."""
        from lshsim.t5.lookups.probe_theory import ngram_predictions

        return ngram_predictions(cfg, stats)

    def probe_at_overlap(self, cfg, f: float, length: int) -> float:
        """``q_f + (1 - q_f)/m_0``."""
        from lshsim.t5.lookups.probe_theory import ngram_at_overlap

        return ngram_at_overlap(cfg, f, length)


NGRAM = NGram()
