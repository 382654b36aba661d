"""Fixed LSH (``lookup="lsh"``): SimHash or cross-polytope of the layer input, weight 1.

SimHash with ``log2(buckets)`` fixed Gaussian hyperplanes (bucket ``sum_j [g_j . x > 0]
2^j``), or cross-polytope with a fixed Gaussian rotation to ``buckets/2`` coordinates. The
matrix of layer ``i`` of stack ``s`` (0: encoder, 1: decoder) is drawn exactly as the
:mod:`lshsim.hashing` family draws it from ``SeedSequence([lookup_seed, s, i])``, and the
bucket rule is the family's (``HashFamily.buckets_from_scores``), so the model's buckets equal
the NumPy family's; the family is also the probe's theory.

References:
    Charikar 2002 (SimHash); Andoni et al. 2015 (cross-polytope LSH).
"""

from __future__ import annotations

import functools

import numpy as np

from lshsim.hashing import CrossPolytope, SimHash, get_family
from lshsim.t5.lookups.routed import RoutedLookup

__all__ = ["LSH", "LSH_FAMILIES", "LSH_HASH_FAMILIES", "Lsh", "lsh_buckets", "lsh_projection"]

#: The :mod:`lshsim.hashing` family ``(name, parameters)`` of each ``lsh_family``: the model
#: draws its LSH matrix from it and buckets by its rule (``HashFamily.buckets_from_scores``).
LSH_HASH_FAMILIES = {
    cls.name: (cls.name, params)
    for cls, params in ((SimHash, {}), (CrossPolytope, {"rotation": "gaussian"}))
}
#: The ``lsh_family`` choices.
LSH_FAMILIES = tuple(LSH_HASH_FAMILIES)
#: A hash family's ``bucket_rule``, in words.
_BUCKET_RULES = {
    "any": "an integer >= 2",
    "power_of_two": "a power of two >= 2",
    "even": "an even number >= 2",
    "square": "a perfect square s^2, s >= 2",
}


@functools.lru_cache(maxsize=256)
def lsh_projection(config, d: int, stack: int, layer: int) -> np.ndarray:
    """The fixed LSH matrix of one layer, drawn as the NumPy hash family draws it.

    Args:
        config: a config with ``lookup == "lsh"``.
        d: the layer's input width.
        stack: 0 for the encoder, 1 for the decoder.
        layer: layer index within the stack.

    Returns:
        float64 ``[k, d]``: the family's :attr:`~lshsim.hashing.HashFamily.matrix`
        (SimHash's ``log2(buckets)`` hyperplanes, cross-polytope's ``buckets/2`` Gaussian
        rotation rows).
    """
    from lshsim.hashing import make_family

    seed = np.random.SeedSequence([config.lookup_seed, stack, layer])
    name, params = LSH_HASH_FAMILIES[config.lsh_family]
    return make_family(name, config.num_buckets, d, seed=seed, **params).matrix


def lsh_buckets(x, projection: np.ndarray, family: str):
    """Bucket ids ``[N]`` (int32) of rows ``x [N, d]`` under a fixed LSH matrix.

    ``family`` is the config's ``lsh_family``; the ids are its hash family's
    :meth:`~lshsim.hashing.HashFamily.buckets_from_scores` of ``x A^T``, as
    :mod:`lshsim.hashing` computes them.
    """
    import jax.numpy as jnp

    from lshsim.hashing import get_family

    proj = x.astype(jnp.float32) @ jnp.asarray(projection, jnp.float32).T
    rule = get_family(LSH_HASH_FAMILIES[family][0]).buckets_from_scores
    return rule(proj, jnp).astype(jnp.int32)


class Lsh(RoutedLookup):
    """The paper's fixed-LSH lookup."""

    name = "lsh"
    label = "LSH"
    help = "fixed SimHash or cross-polytope of the layer input (--lsh-family)"
    flags = ("rank", "buckets", "lsh_family", "lookup_seed")
    cost_example = ("lsh rank 128, 128 buckets", {"expert_rank": 128, "buckets": 128})

    def validate(self, cfg, n: int) -> None:
        """The hash family's own bucket rule (SimHash: a power of two; cross-polytope: even)."""
        family, params = LSH_HASH_FAMILIES[cfg.lsh_family]
        cls = get_family(family)
        try:
            cls.check_params(n, **params)
        except ValueError:
            need = _BUCKET_RULES.get(cls.bucket_rule, "a bucket count it accepts")
            raise ValueError(f"buckets: {cfg.lsh_family} needs {need}, got {n}") from None
        super().validate(cfg, n)

    def layer_constants(self, cfg, stack: int, layer: int) -> dict[str, np.ndarray]:
        """The layer's fixed matrix (:func:`lsh_projection`) in float32, ``[k, d]``."""
        return {"projection": lsh_projection(cfg, cfg.d_model, stack, layer).astype(np.float32)}

    def route(self, module, x2, token_ids, deterministic: bool):
        """The family's buckets of ``x2`` under the layer's fixed matrix, weight 1."""
        proj = self.constants(module)["projection"]
        return lsh_buckets(x2, proj, module.config.lsh_family), None

    def probe_family(self, cfg) -> tuple[str | None, dict]:
        """SimHash, or cross-polytope with a Gaussian rotation."""
        name, params = LSH_HASH_FAMILIES[cfg.lsh_family]
        return name, dict(params)


LSH = Lsh()
