"""The lookups that route each token to one bucket of a table: the paper's three.

``tokenid``, ``softmax`` and ``lsh`` differ only in how they pick the bucket ``i`` (and the
weight ``w``) of a token (:meth:`RoutedLookup.route`); the table and its read are shared
(:func:`lshsim.t5.lookups.router_layer.routed_expert`), and so is the probe: one bucket per
token, compared with a hash family's collision probability at the measured cosine
(:mod:`lshsim.t5.lookups.router_probe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lshsim.t5.lookups.base import Lookup

__all__ = ["RoutedLookup"]


class RoutedLookup(Lookup):
    """A lookup whose layer reads one table row (or rank-``r`` expert) per token."""

    def route(self, module, x2, token_ids, deterministic: bool):
        """``(bucket int32 [N], weight [N] or None)`` of rows ``x2 [N, d]``, ids ``[N]``."""
        raise NotImplementedError

    def apply(self, module, x, token_ids, deterministic: bool = True):
        """The routed expert's output (:func:`~lshsim.t5.lookups.router_layer.routed_expert`)."""
        from lshsim.t5.lookups.router_layer import routed_expert

        return routed_expert(self, module, x, token_ids, deterministic)

    def probe_stats(
        self,
        name: str,
        overlap: float,
        cfg,
        rec_a: tuple[np.ndarray, np.ndarray],
        rec_b: tuple[np.ndarray, np.ndarray],
        tok_a: np.ndarray,
        tok_b: np.ndarray,
        *,
        router_draws: int,
        seed,
    ) -> dict[str, Any]:
        """Bucket collisions, cosines and re-drawn lookups (:func:`~.router_probe.router_stats`)."""
        from lshsim.t5.lookups.router_probe import router_stats

        family, params = self.probe_family(cfg)
        return router_stats(
            name, overlap, cfg.num_buckets, family, params, rec_a, rec_b, tok_a, tok_b,
            router_draws=router_draws, seed=seed,
        )  # fmt: skip

    def probe_predictions(self, cfg, stats: Sequence[dict]) -> list[np.ndarray]:
        """The family's probability at every measured cosine (token equality: ``same``)."""
        from lshsim.t5.lookups.router_probe import router_predictions

        family, params = self.probe_family(cfg)
        return router_predictions(family, cfg.num_buckets, params, stats)

    def probe_at_overlap(self, cfg, f: float, length: int) -> float:
        """The family's probability at cosine ``f`` (token equality: ``f``)."""
        from lshsim.t5.lookups.router_probe import router_at_overlap

        family, params = self.probe_family(cfg)
        return router_at_overlap(family, cfg.num_buckets, params, f)
