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
    its input (``.../expert/layer_input``) for the routing probe. Each lookup, these three and
    product keys and hashed n-grams, is one object of :data:`lshsim.t5.lookups.LOOKUPS` that
    builds its layer in :class:`PartialExpert`'s scope.

Wide representations (the simplified Predict-Compute-Correct algorithm, Algorithm 2)
    The input embedding is ``K d`` wide: ``K`` blocks ``x^1..x^K`` of width ``d``. Each layer
    predicts ``x_hat^i = sum_j p_ij x^j``, computes the layer on one block ``j*``, and corrects
    ``x_new^i = x_hat^i + g_i (L(x^{j*}) - x_hat^{j*})``; ``p`` (``K x K``) and ``g`` (``K``)
    are per-layer scalars starting at ``p = I``, ``g = 1``. ``altup`` picks ``j* = i mod K``
    (layer ``i`` counted within its stack), ``sameup`` always ``j* = 0``. ``sum`` adds the
    ``K`` blocks at the bottom and runs the plain model on the sum. The blocks are one stacked
    array ``[K, ..., d]``: the prediction is one contraction over the block axis, so the
    traced program (and its compile time) does not grow with ``K``.

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

from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax import lax

from lshsim.t5.configs import T5Config
from lshsim.t5.lookups import get_lookup

# the routed lookups' pieces are re-exported (``as``) where the model's tests and tools find them
from lshsim.t5.lookups.lsh import lsh_buckets as lsh_buckets
from lshsim.t5.lookups.lsh import lsh_projection as lsh_projection
from lshsim.t5.lookups.router_layer import expert_mlp as expert_mlp
from lshsim.t5.lookups.router_layer import lecun as _lecun
from lshsim.t5.lookups.softmax import ROUTER_STD as ROUTER_STD
from lshsim.t5.memory_methods import get_method


class PartialExpert(nn.Module):
    """One layer's lookup and expert table: returns ``w(x) f_i(x)`` for each token.

    The config's lookup (:data:`lshsim.t5.lookups.LOOKUPS`) builds the layer in this module's
    scope (its parameters are this module's: ``router``, ``table``, ``wi``, ``wo``, ...).

    Attributes:
        config: the model config (``lookup``, ``expert_rank``, ``buckets``, ...).
        stack: 0 (encoder) or 1 (decoder); with ``layer``, seeds the LSH projection.
        layer: the layer's index within its stack.
        constants: the layer's :meth:`~lshsim.t5.lookups.Lookup.layer_constants` as a
            scanned stack slices them (``None``: drawn from ``stack`` and ``layer``).
        ragged: in a scanned stack, every layer's :meth:`~lshsim.t5.lookups.Lookup.
            ragged_params` (a tuple, one dict per layer); ``None``: the layer's own.
    """

    config: T5Config
    stack: int
    layer: int
    constants: Any = None
    ragged: Any = None

    @nn.compact
    def __call__(self, x, token_ids, deterministic: bool = True):
        """``w(x) f_i(x)`` for ``x [..., d]`` with ``token_ids [...]``."""
        return get_lookup(self.config.lookup).apply(self, x, token_ids, deterministic)


class AltUpCoefficients(nn.Module):
    """One layer's predictor ``p [K, K]`` (starts at ``I``) and corrector ``g [K]`` (ones)."""

    k: int

    @nn.compact
    def __call__(self):
        """``(p, g)``."""
        p = self.param("predict", lambda _, s: jnp.eye(s[0], dtype=jnp.float32), (self.k, self.k))
        g = self.param("correct", nn.initializers.ones, (self.k,), jnp.float32)
        return p, g


def predict_compute_correct(x, layer_fn, p, g, block):
    """Algorithm 2 on the ``K`` blocks ``x [K, ..., d]`` (stacked; a sequence is stacked).

    Args:
        x: the blocks, ``[K, ..., d]``.
        layer_fn: the layer ``L``, ``[..., d] -> [..., d]``.
        p: the predictor ``[K, K]``.
        g: the corrector ``[K]``.
        block: the computed block ``j*``: an int, or an int32 scalar traced in a scanned stack
            (:func:`compute_block` of the scan's layer index).

    Returns:
        ``[K, ..., d]``: ``x_hat^i + g_i (L(x^{block}) - x_hat^{block})`` with
        ``x_hat^i = sum_j p_ij x^j``. The prediction is one contraction over the block axis
        and the correction one broadcast product, so the traced program and its compile time
        do not grow with ``K`` (an unrolled sum over blocks traced ``2 K^2`` equations per
        layer: ``small`` at ``K = 64`` did not compile in 8 minutes). Predict and correct
        are one custom-VJP function (:func:`_predict_correct`) whose backward pass is written
        as matrix products over the flattened blocks.

    References:
        The paper, Algorithm 2 (simplified Predict-Compute-Correct).
    """
    x = jnp.asarray(x) if not isinstance(x, (list, tuple)) else jnp.stack(x)
    p = jnp.asarray(p).astype(x.dtype)
    g = jnp.asarray(g).astype(x.dtype)
    block = jnp.asarray(block, jnp.int32)
    y = layer_fn(x[block])
    dtype = jnp.result_type(x, y)
    return _predict_correct(
        x.astype(dtype), y.astype(dtype), p.astype(dtype), g.astype(dtype), block
    )


@jax.custom_vjp
def _predict_correct(x, y, p, g, block):
    """Predict and correct around a computed layer output: Algorithm 2 less the layer.

    Args:
        x: the blocks, ``[K, ..., d]``.
        y: the layer's output on block ``block``, ``[..., d]``.
        p: the predictor ``[K, K]``.
        g: the corrector ``[K]``.
        block: the computed block ``j*``, an int32 scalar (no cotangent).

    Returns:
        ``[K, ..., d]``: ``x_hat + g (y - x_hat^{block})`` with ``x_hat = p x``.
    """
    return _predict_correct_fwd(x, y, p, g, block)[0]


def _predict_correct_fwd(x, y, p, g, block):
    """The forward pass of :func:`_predict_correct` (the same arguments).

    Returns:
        ``(output, residuals)``: the output ``[K, ..., d]`` and ``(x, p, g, delta)`` with
        ``delta = y - x_hat^{block}``.
    """
    k = x.shape[0]
    x_hat = jnp.dot(p, x.reshape(k, -1)).reshape(x.shape)
    delta = y - x_hat[block]
    out = x_hat + g.reshape((-1,) + (1,) * (x.ndim - 1)) * delta[None]
    return out, (x, p, g, delta, block)


def _predict_correct_bwd(residuals, d_out):
    """The backward pass of :func:`_predict_correct`, as matrix products over ``[K, N]``.

    Autodiff of the einsum and the broadcast wrote the cotangents as reductions over the
    leading block axis and ``[N, K]`` transposes, which XLA's CPU backend runs several times
    slower than the products below. With :func:`collapse`'s sum as a product too, ``tiny``'s
    AltUp K = 2 step went from 1.16-1.19x to 1.04-1.06x the baseline collapsed and from
    1.22-1.25x to 1.12-1.14x wide (``bench_peers.py --quick --only altup``, 3 alternating
    runs each on 2 shared cores, load 1.8-5.4).

    Args:
        residuals: ``(x, p, g, delta, block)`` of the forward pass.
        d_out: the output's cotangent, ``[K, ..., d]``.

    Returns:
        The cotangents of ``(x, y, p, g)`` and ``None`` for the integer ``block``.
    """
    x, p, g, delta, block = residuals
    k = x.shape[0]
    flat = x.reshape(k, -1)
    d_out = d_out.reshape(k, -1)
    d_delta = jnp.dot(g, d_out)  # [N]: the cotangent of y, and minus that of x_hat^{block}
    d_g = jnp.dot(d_out, delta.reshape(-1))
    onehot = (jnp.arange(k) == block).astype(d_out.dtype)
    # d x_hat = d_out - onehot (x) d_delta; d x = p^T d x_hat; d p = d x_hat x^T
    d_x = jnp.dot(p.T, d_out) - p[block][:, None] * d_delta[None]
    d_p = lax.dot_general(d_out, flat, (((1,), (1,)), ((), ())))
    d_p = d_p - onehot[:, None] * jnp.dot(flat, d_delta)[None]
    return d_x.reshape(x.shape), d_delta.reshape(delta.shape), d_p, d_g, None


_predict_correct.defvjp(_predict_correct_fwd, _predict_correct_bwd)


def compute_block(config: T5Config, layer: int) -> int:
    """The block ``j*`` that layer ``layer`` computes: ``layer mod K`` (altup) or 0 (sameup)."""
    return get_method(config.memory).compute_block(layer, config.memory_k)


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


def embed_blocks(config: T5Config, embedded, projection: nn.Module | None):
    """Split a ``[..., embed_width]`` embedding into the ``K`` stacked blocks ``[K, ..., d]``."""
    d, k = config.d_model, config.memory_k
    if projection is None:
        blocks = embedded.reshape((*embedded.shape[:-1], k, d))
        return jnp.moveaxis(blocks, -2, 0)
    return jnp.concatenate([embedded[None, ..., :d], projection(embedded[..., d:])], axis=0)


def collapse(x, mode: str):
    """``K`` stacked blocks ``[K, ..., d]`` -> ``[..., K d]`` (``wide``) or ``[..., d]`` (``sum``).

    ``wide`` concatenates the blocks in order; ``sum`` adds them, as a product with a row of
    ones (XLA's CPU backend ran ``jnp.sum`` over the leading axis, fused with the last layer's
    correction, as a reduction several times slower than the product: ``tiny``'s collapsed
    AltUp K = 2 step 1.09-1.11x -> 1.06x the baseline in one process).

    Args:
        x: the blocks, ``[K, ..., d]``.
        mode: ``wide`` or ``sum``.

    Returns:
        ``[..., K d]`` (``wide``) or ``[..., d]`` (``sum``).
    """
    if mode == "sum":
        k = x.shape[0]
        return jnp.dot(jnp.ones((k,), x.dtype), x.reshape(k, -1)).reshape(x.shape[1:])
    return jnp.moveaxis(x, 0, -2).reshape((*x.shape[1:-1], x.shape[0] * x.shape[-1]))
