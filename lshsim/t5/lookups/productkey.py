"""Product keys (``lookup="productkey"``; Lample et al. 2019, PEER): ``n = s^2`` slots, top-k.

A query per head is split in halves, each scored against ``s`` learned sub-keys; PKM's top-k
picks ``k`` of the ``s^2`` slots, whose values (a row, or ``r`` neurons per slot) are weighted
by a softmax over the ``k`` scores (:mod:`lshsim.t5.lookups.productkey_layer`). At
initialisation the top-1 slot is a pair of Voronoi cells: the probe predicts
``P_vor(s, a1) P_vor(s, a2)`` at the measured half-cosines (:mod:`lshsim.t5.lookups.probe_theory`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lshsim.t5.lookups.base import Lookup

__all__ = ["PRODUCTKEY", "ProductKey"]


class ProductKey(Lookup):
    """Product-key memories (PKM; PEER's single-neuron experts at rank 1)."""

    name = "productkey"
    label = "Product keys"
    help = "product keys: n = s^2 slots, PKM's top-k of two sub-key halves"
    flags = ("rank", "buckets", "topk", "heads")
    cost_example = ("productkey 1024 slots, top-2", {"buckets": 1024, "topk": 2})

    def validate(self, cfg, n: int) -> None:
        """``n = s^2 >= 4``, ``1 <= k <= s``, an even ``d_model`` (the query is halved)."""
        s = math.isqrt(n)
        if s * s != n or s < 2:
            raise ValueError(f"buckets: productkey needs a perfect square s^2 >= 4, got {n}")
        if cfg.topk > s:
            raise ValueError(
                f"topk: productkey needs 1 <= k <= sqrt(buckets) = {s}, got {cfg.topk}"
            )
        if cfg.d_model % 2:
            raise ValueError(f"d_model: productkey halves the query, needs even, got {cfg.d_model}")

    def expert_params(self, cfg) -> int:
        """Query ``d h d``, its RMSNorm scale ``h d``, sub-keys ``h 2 s (d/2)``, values.

        The values: ``max(2r, 1) n d``.
        """
        d, r, n, h = cfg.d_model, cfg.expert_rank, cfg.num_buckets, cfg.lookup_heads
        values = max(2 * r, 1) * d
        return d * h * d + h * d + h * 2 * math.isqrt(n) * (d // 2) + values * n

    def apply(self, module, x, token_ids, deterministic: bool = True):
        """PKM's layer (no jitter or dropout)."""
        from lshsim.t5.lookups.productkey_layer import productkey_layer
        from lshsim.t5.lookups.tables import slot_expert

        return slot_expert(module, x, token_ids, productkey_layer)

    def probe_family(self, cfg) -> tuple[str | None, dict]:
        """Predicted by :mod:`~lshsim.t5.lookups.probe_theory` (Voronoi halves)."""
        return self.name, {}

    def check_probe(self, cfg, router_draws: int) -> None:
        """Top-k (``k > 1``) is predicted by re-drawn sub-keys: at least 2 draws."""
        if cfg.topk > 1 and router_draws < 2:
            raise ValueError(
                "router_draws: top-k product keys are predicted by re-drawn sub-keys, need >= 2"
            )

    def probe_record(self, cfg, expert: dict) -> tuple[Any, Any]:
        """Head 0's selected slots and query."""
        from lshsim.t5.lookups.probe_theory import productkey_record

        return productkey_record(expert)

    def probe_weights(self, cfg, expert: dict) -> Any:
        """Head 0's softmax weights of its selected slots."""
        return expert["weights"][0][..., 0, :]

    def probe_stats(self, name, overlap, cfg, rec_a, rec_b, tok_a, tok_b, *, router_draws, seed):
        """Slot overlaps, half-cosines, re-drawn sub-keys."""
        from lshsim.t5.lookups.probe_theory import productkey_stats

        return productkey_stats(
            name, overlap, cfg, rec_a, rec_b, tok_a, tok_b, router_draws=router_draws, seed=seed
        )

    def probe_predictions(self, cfg, stats: Sequence[dict]) -> list[np.ndarray]:
        """``P_vor(s, a1) P_vor(s, a2)`` per position (top-k: the re-drawn mean)."""
        from lshsim.t5.lookups.probe_theory import productkey_predictions

        return productkey_predictions(cfg, stats)

    def probe_at_overlap(self, cfg, f: float, length: int) -> float:
        """``P_vor(s, f)^2`` (top-k: NaN)."""
        from lshsim.t5.lookups.probe_theory import productkey_at_overlap

        return productkey_at_overlap(cfg, f, length)


PRODUCTKEY = ProductKey()
