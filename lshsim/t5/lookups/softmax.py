"""The softmax router (``lookup="softmax"``): top-1 of a learned router, weighted by its output.

``i = argmax softmax(W x')`` and ``w`` the router probability of the chosen bucket, with
``W ~ N(0, 0.02^2)`` (``[d, n]``, parameter ``router``) and ``x' = x * U[1-eps, 1+eps]^d`` a
jittered *copy* of the input in training (the expert itself sees ``x``); optional Switch
load-balancing and router z losses (off by default), sown as ``aux_loss``. At initialisation
the router is a random Gaussian matrix: Voronoi LSH, the probe's theory.

References:
    Fedus et al. 2022 (Switch Transformer: top-1 routing, jitter, load balancing); Zoph et al.
    2022 (router z-loss).
"""

from __future__ import annotations

from lshsim.hashing import Voronoi
from lshsim.t5.lookups.routed import RoutedLookup

__all__ = ["ROUTER_STD", "SOFTMAX", "Softmax"]

#: Router initialisation standard deviation (the paper's supplement).
ROUTER_STD = 0.02


class Softmax(RoutedLookup):
    """The paper's softmax router."""

    name = "softmax"
    label = "Softmax"
    help = "top-1 of a learned softmax router (Voronoi LSH at initialisation)"
    flags = ("rank", "buckets", "router_jitter", "router_balance_loss", "router_z_loss")
    cost_example = ("softmax rank 128, 64 buckets", {"expert_rank": 128, "buckets": 64})

    def expert_params(self, cfg) -> int:
        """The router ``d n`` plus the table."""
        return cfg.d_model * cfg.num_buckets + super().expert_params(cfg)

    def sows_aux_losses(self, cfg) -> bool:
        """With a load-balancing or z-loss coefficient."""
        return cfg.router_balance_loss > 0 or cfg.router_z_loss > 0

    def needs_rng(self, cfg) -> bool:
        """With router jitter."""
        return cfg.router_jitter > 0

    def route(self, module, x2, token_ids, deterministic: bool):
        """Top-1 of ``softmax(x' W)`` and its probability; sows the router losses."""
        import flax.linen as nn
        import jax
        import jax.numpy as jnp

        cfg = module.config
        n = cfg.num_buckets
        router_init = nn.with_logical_partitioning(
            nn.initializers.normal(ROUTER_STD), ("embed", "buckets")
        )
        router = module.param("router", router_init, (x2.shape[-1], n), jnp.float32)
        xr = x2.astype(jnp.float32)  # a copy: the jitter never reaches the expert's input
        if not deterministic and cfg.router_jitter > 0:
            eps = cfg.router_jitter
            key = module.make_rng("dropout")
            xr = xr * jax.random.uniform(key, xr.shape, jnp.float32, 1 - eps, 1 + eps)
        logits = xr @ router
        probs = jax.nn.softmax(logits, axis=-1)
        bucket = jnp.argmax(logits, axis=-1).astype(jnp.int32)
        weight = jnp.take_along_axis(probs, bucket[:, None], axis=-1)[:, 0]
        if cfg.router_balance_loss > 0:
            frac = jnp.bincount(bucket, length=n) / bucket.shape[0]
            balance = n * jnp.sum(frac * jnp.mean(probs, axis=0))
            module.sow("aux_loss", "balance", cfg.router_balance_loss * balance)
        if cfg.router_z_loss > 0:
            z = jnp.mean(jax.nn.logsumexp(logits, axis=-1) ** 2)
            module.sow("aux_loss", "router_z", cfg.router_z_loss * z)
        return bucket, weight

    def probe_family(self, cfg) -> tuple[str | None, dict]:
        """Voronoi: a random Gaussian router's top-1."""
        return Voronoi.name, {}


SOFTMAX = Softmax()
