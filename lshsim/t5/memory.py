"""External memory for T5: partial experts (section 3) and wide representations (section 6).

Partial experts
    Every encoder and decoder layer ``L`` becomes ``x -> L(x) + w(x) f_i(x)`` (the paper's
    Algorithm 1) where ``x`` is the layer input, ``i = lookup(x, token_id)`` a bucket of the
    layer's own table, and ``f_i`` the bucket's expert: a constant ``b_i`` (rank 0) or
    ``V_i relu(U_i^T x)`` with ``U_i, V_i in R^{d x r}`` (LeCun-normal). Extra parameters per
    layer: ``max(2 r, 1) * buckets * d``. The lookups:

    * ``tokenid``: ``i`` is the token id (the table is the vocabulary), ``w = 1``;
    * ``softmax``: top-1 of ``softmax(W x')``, ``w`` the router probability of the chosen
      bucket, ``W ~ N(0, 0.02^2)``, ``x' = x * U[1-eps, 1+eps]^d`` a jittered *copy* of the
      input in training (the expert itself sees ``x``); optional Switch load-balancing and
      router z losses (off by default);
    * ``lsh``: SimHash of ``x`` with ``log2(buckets)`` fixed Gaussian hyperplanes (bucket
      ``sum_j [g_j . x > 0] 2^j``), or cross-polytope with a fixed Gaussian rotation; ``w = 1``.
      The hyperplanes are drawn exactly as :class:`lshsim.hashing.SimHash` draws them from the
      same seed, so the model's buckets equal the NumPy family's.

    Each layer sows its buckets (``intermediates/.../expert/bucket``, shape ``[B, L]``) and
    its input (``.../expert/layer_input``) for the routing probe.

Wide representations (the simplified Predict-Compute-Correct algorithm, Algorithm 2)
    The input embedding is ``K d`` wide: ``K`` blocks ``x^1..x^K`` of width ``d``. Each layer
    predicts ``x_hat^i = sum_j p_ij x^j``, computes the layer on one block ``j*``, and corrects
    ``x_new^i = x_hat^i + g_i (L(x^{j*}) - x_hat^{j*})``; ``p`` (``K x K``) and ``g`` (``K``)
    are per-layer scalars starting at ``p = I``, ``g = 1``. ``altup`` picks ``j* = i mod K``
    (layer ``i`` counted within its stack), ``sameup`` always ``j* = 0``. ``sum`` adds the
    ``K`` blocks at the bottom and runs the plain model on the sum.

    With ``e`` extra embedding width that is not ``(K-1) d`` (divide-and-project), the extra
    ``e`` are split into ``K-1`` sub-blocks of ``e/(K-1)``, each projected to ``d`` by its own
    matrix (``memory_projection``, ``[K-1, e/(K-1), d]``), before the algorithm runs.

    The K blocks leave the stacks in one of two documented ways (``memory_cross`` for the
    encoder output read by cross-attention, ``memory_output`` for the logits):
    ``wide`` concatenates them (final RMSNorm over ``K d``), so the decoder's cross-attention
    keys and values and the output table read all ``K d``; ``sum`` collapses them to their sum
    (norm over ``d``), leaving those matrices at their baseline shapes.

    The paper's Table 3 is the ``wide``/``wide`` model: the output table is ``K d x vocab``
    (embedding parameters double at K=2) and the "one d x d matrix per layer" of extra
    non-embedding parameters is the decoder's cross-attention key and value kernels reading
    the ``K d``-wide encoder output: ``2 (K-1) d * heads * d_kv`` per decoder layer, i.e.
    ``2 d^2`` per decoder layer = ``d^2`` per layer when encoder and decoder are equally deep
    (S: 4 x 2 x 512^2 = 2.10M = 3.99E7 - 3.78E7).

References:
    The paper, Algorithms 1 and 2, sections 3 and 6, and the supplement; Fedus et al. 2022
    (Switch Transformer: top-1 routing, jitter, load balancing); Zoph et al. 2022 (router
    z-loss); Charikar 2002 (SimHash); Andoni et al. 2015 (cross-polytope LSH).
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lshsim.t5 import sharded_lookup
from lshsim.t5.configs import LSH_HASH_FAMILIES, T5Config
from lshsim.t5.lookups.ngram_layer import ngram_layer
from lshsim.t5.lookups.productkey_layer import productkey_layer
from lshsim.t5.lookups.sizes import BEYOND_LOOKUPS

#: Router initialisation standard deviation (the paper's supplement).
ROUTER_STD = 0.02


@functools.lru_cache(maxsize=256)
def lsh_projection(config: T5Config, d: int, stack: int, layer: int) -> np.ndarray:
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


def lsh_buckets(x: jax.Array, projection: np.ndarray, family: str) -> jax.Array:
    """Bucket ids ``[N]`` (int32) of rows ``x [N, d]`` under a fixed LSH matrix.

    ``family`` is the config's ``lsh_family``; the ids are its hash family's
    :meth:`~lshsim.hashing.HashFamily.buckets_from_scores` of ``x A^T``, as
    :mod:`lshsim.hashing` computes them.
    """
    from lshsim.hashing import get_family

    proj = x.astype(jnp.float32) @ jnp.asarray(projection.T, jnp.float32)
    rule = get_family(LSH_HASH_FAMILIES[family][0]).buckets_from_scores
    return rule(proj, jnp).astype(jnp.int32)


def _lecun(in_axis: int, out_axis: int, batch_axis=(), axes=None):
    """LeCun-normal; ``axes``: the parameter's logical axis names (:mod:`lshsim.t5.sharding`)."""
    init = nn.initializers.variance_scaling(
        1.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis
    )
    return init if axes is None else nn.with_logical_partitioning(init, axes)


class PartialExpert(nn.Module):
    """One layer's lookup and expert table: returns ``w(x) f_i(x)`` for each token.

    Attributes:
        config: the model config (``lookup``, ``expert_rank``, ``buckets``, ...).
        stack: 0 (encoder) or 1 (decoder); with ``layer``, seeds the LSH projection.
        layer: the layer's index within its stack.
    """

    config: T5Config
    stack: int
    layer: int

    def _route(self, x, token_ids, deterministic):
        """``(bucket [N], weight [N] or None)`` for rows ``x [N, d]``."""
        cfg = self.config
        n = cfg.num_buckets
        if cfg.lookup == "tokenid":
            return token_ids.astype(jnp.int32), None
        if cfg.lookup == "lsh":
            proj = lsh_projection(cfg, x.shape[-1], self.stack, self.layer)
            return lsh_buckets(x, proj, cfg.lsh_family), None
        router_init = nn.with_logical_partitioning(
            nn.initializers.normal(ROUTER_STD), ("embed", "buckets")
        )
        router = self.param("router", router_init, (x.shape[-1], n), jnp.float32)
        xr = x.astype(jnp.float32)  # a copy: the jitter never reaches the expert's input
        if not deterministic and cfg.router_jitter > 0:
            eps = cfg.router_jitter
            key = self.make_rng("dropout")
            xr = xr * jax.random.uniform(key, xr.shape, jnp.float32, 1 - eps, 1 + eps)
        logits = xr @ router
        probs = jax.nn.softmax(logits, axis=-1)
        bucket = jnp.argmax(logits, axis=-1).astype(jnp.int32)
        weight = jnp.take_along_axis(probs, bucket[:, None], axis=-1)[:, 0]
        if cfg.router_balance_loss > 0:
            frac = jnp.bincount(bucket, length=n) / bucket.shape[0]
            balance = n * jnp.sum(frac * jnp.mean(probs, axis=0))
            self.sow("aux_loss", "balance", cfg.router_balance_loss * balance)
        if cfg.router_z_loss > 0:
            z = jnp.mean(jax.nn.logsumexp(logits, axis=-1) ** 2)
            self.sow("aux_loss", "router_z", cfg.router_z_loss * z)
        return bucket, weight

    @nn.compact
    def __call__(self, x, token_ids, deterministic: bool = True):
        """``w(x) f_i(x)`` for ``x [..., d]`` with ``token_ids [...]``."""
        cfg = self.config
        if cfg.lookup in BEYOND_LOOKUPS:  # product keys, hashed n-grams
            return slot_lookup(self, x, token_ids, deterministic)
        dt = jnp.dtype(cfg.dtype)
        shape, d, n, r = x.shape, x.shape[-1], cfg.num_buckets, cfg.expert_rank
        x2 = x.reshape(-1, d)
        self.sow("intermediates", "layer_input", x)
        bucket, weight = self._route(x2, token_ids.reshape(-1), deterministic)
        self.sow("intermediates", "bucket", bucket.reshape(shape[:-1]))
        if r == 0:
            init = _lecun(-1, -2, axes=("buckets", "embed"))
            table = self.param("table", init, (n, d), jnp.float32)
            out = sharded_lookup.gather_rows(table, bucket).astype(dt)
        else:
            wi_init = _lecun(1, 2, (0,), axes=("buckets", "embed", "rank"))
            wo_init = _lecun(1, 2, (0,), axes=("buckets", "rank", "embed"))
            wi = self.param("wi", wi_init, (n, d, r), jnp.float32).astype(dt)
            wo = self.param("wo", wo_init, (n, r, d), jnp.float32).astype(dt)
            mlp = functools.partial(expert_mlp, impl=cfg.expert_impl)
            out = sharded_lookup.expert_rows(mlp, x2.astype(dt), wi, wo, bucket)
        if weight is not None:
            out = out * weight[:, None].astype(dt)
        return out.reshape(shape)


def slot_lookup(module: nn.Module, x, token_ids, deterministic: bool = True):
    """A product-key or n-gram lookup's output ``[..., d]`` (``x [..., d]``, ``token_ids [B, L]``).

    Called from :class:`PartialExpert` (whose scope holds the parameters); sows, beside
    ``layer_input`` and ``bucket`` (product keys: head 0's top-1 slot; n-grams: head 0's
    bucket, offset-free), ``slots`` (``[..., h, k]`` selected slots, or ``[..., H]`` buckets)
    and, for product keys, ``query`` (``[..., h, d]``, the scored vectors).
    """
    del deterministic  # no jitter or dropout in these lookups
    cfg = module.config
    dt = jnp.dtype(cfg.dtype)
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    module.sow("intermediates", "layer_input", x)
    if cfg.lookup == "productkey":
        out, bucket, slots, q = productkey_layer(module, x2, cfg, dt)
        module.sow("intermediates", "query", q.reshape((*shape[:-1], *q.shape[1:])))
    else:
        out, bucket, slots = ngram_layer(module, x2, token_ids, cfg, dt)
    module.sow("intermediates", "bucket", bucket.reshape(shape[:-1]))
    module.sow("intermediates", "slots", slots.reshape((*shape[:-1], *slots.shape[1:])))
    return out.astype(dt).reshape(shape)


def expert_mlp(x, wi, wo, bucket, impl: str = "gather"):
    """``V_b relu(U_b^T x)`` per row: ``x [N, d]``, ``wi [n, d, r]``, ``wo [n, r, d]``.

    ``gather`` materialises each row's ``U_b, V_b`` (``N d r`` memory; fast on CPU);
    ``ragged`` sorts the rows by bucket and multiplies with ``jax.lax.ragged_dot`` (``N d``
    memory; on CPU it is slow beyond a few buckets: 0.7 s vs 0.05 s at 128 buckets, N=4096,
    d=128, r=16, forward and backward).
    """
    if impl == "gather":
        h = jax.nn.relu(jnp.einsum("nd,ndr->nr", x, jnp.take(wi, bucket, axis=0)))
        return jnp.einsum("nr,nrd->nd", h, jnp.take(wo, bucket, axis=0))
    order = jnp.argsort(bucket)
    sizes = jnp.bincount(bucket, length=wi.shape[0]).astype(jnp.int32)
    h = jax.nn.relu(jax.lax.ragged_dot(x[order], wi, sizes))
    y = jax.lax.ragged_dot(h, wo, sizes)
    return jnp.zeros_like(y).at[order].set(y)


class AltUpCoefficients(nn.Module):
    """One layer's predictor ``p [K, K]`` (starts at ``I``) and corrector ``g [K]`` (ones)."""

    k: int

    @nn.compact
    def __call__(self):
        """``(p, g)``."""
        p = self.param("predict", lambda _, s: jnp.eye(s[0], dtype=jnp.float32), (self.k, self.k))
        g = self.param("correct", nn.initializers.ones, (self.k,), jnp.float32)
        return p, g


def predict_compute_correct(x, layer_fn, p, g, block: int) -> list:
    """Algorithm 2 on ``K`` blocks ``x`` (a sequence of ``[..., d]`` arrays, or ``[K, ..., d]``).

    Returns the list of ``x_hat^i + g_i (L(x^{block}) - x_hat^{block})`` with
    ``x_hat^i = sum_j p_ij x^j``. The blocks stay separate arrays: XLA then fuses each
    block's predict and correct into one elementwise loop and the backward pass needs no
    slicing of a stacked array.
    """
    k = len(x)
    p = p.astype(x[0].dtype)
    g = g.astype(x[0].dtype)

    def predict(i):
        return sum(p[i, j] * x[j] for j in range(k))

    delta = layer_fn(x[block]) - predict(block)
    return [predict(i) + g[i] * delta for i in range(k)]


def compute_block(config: T5Config, layer: int) -> int:
    """The block ``j*`` that layer ``layer`` computes: ``layer mod K`` (altup) or 0 (sameup)."""
    return layer % config.memory_k if config.memory == "altup" else 0


class MemoryProjection(nn.Module):
    """Divide-and-project: ``K-1`` matrices ``[e/(K-1), d]`` taking the extra width to blocks."""

    config: T5Config

    @nn.compact
    def __call__(self, extra):
        """``extra [..., e]`` -> ``[K-1, ..., d]``."""
        cfg = self.config
        k1 = cfg.memory_k - 1
        sub = cfg.memory_extra // k1
        init = _lecun(1, 2, (0,), axes=(None, None, "embed"))
        kernel = self.param("kernel", init, (k1, sub, cfg.d_model), jnp.float32)
        kernel = kernel.astype(extra.dtype)
        parts = extra.reshape((*extra.shape[:-1], k1, sub))
        return jnp.einsum("...ks,ksd->k...d", parts, kernel)


def embed_blocks(config: T5Config, embedded, projection: nn.Module | None) -> list:
    """Split a ``[..., embed_width]`` embedding into a list of ``K`` blocks ``[..., d]``."""
    d, k = config.d_model, config.memory_k
    if projection is None:
        return [embedded[..., j * d : (j + 1) * d] for j in range(k)]
    return [embedded[..., :d], *projection(embedded[..., d:])]


def collapse(x, mode: str):
    """``K`` blocks -> ``[..., K d]`` (``wide``: concatenated) or ``[..., d]`` (``sum``)."""
    if mode == "sum":
        return sum(x[1:], x[0])
    return jnp.concatenate(list(x), axis=-1)
