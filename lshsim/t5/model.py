"""T5 v1.1 encoder-decoder in Flax (linen), as T5X's ``t5_1_1`` defines it.

Pre-norm RMSNorm (no mean, no bias, eps 1e-6, computed in float32), dense layers without
biases, gated-GELU feed-forward (tanh GELU of one branch times a linear branch), T5 relative
position bias (32 buckets up to distance 128; bidirectional in the encoder, causal in the
decoder; one table per stack, shared by its layers), no ``1/sqrt(d_kv)`` on attention logits
(it is folded into the query initialisation), an untied output projection without rescaling,
and final norms on both stacks.

Parameter tree (T5X names; kernels are ``[in, out]``)::

    token_embedder/embedding                          [vocab, d]   (encoder and decoder input)
    encoder/relpos_bias/rel_embedding                 [buckets, heads]
    encoder/layers_{i}/pre_attention_layer_norm/scale [d]
    encoder/layers_{i}/attention/{query,key,value}/kernel  [d, heads*d_kv]
    encoder/layers_{i}/attention/out/kernel           [heads*d_kv, d]
    encoder/layers_{i}/pre_mlp_layer_norm/scale       [d]
    encoder/layers_{i}/mlp/{wi_0,wi_1}/kernel         [d, d_ff]
    encoder/layers_{i}/mlp/wo/kernel                  [d_ff, d]
    encoder/encoder_norm/scale                        [d]
    decoder/...  (self_attention, encoder_decoder_attention, three pre-norms), decoder_norm,
    decoder/logits_dense/kernel                       [d, vocab]

With external memory (:mod:`lshsim.t5.memory`; ``n`` buckets, rank ``r``, ``K`` blocks)::

    token_embedder/embedding                          [vocab, d + e]  (e = (K-1) d by default)
    memory_projection/kernel                          [K-1, e/(K-1), d]  (divide-and-project)
    {encoder,decoder}/altup_{i}/{predict [K, K], correct [K]}   (sameup / altup)
    altup_projections/kernel, {encoder,decoder}/altup_unembed_projections/kernel  [K-1, d, d]
    {encoder,decoder}/altup_{i}/{router_norm, modality_router, prediction_coefs,
        correction_coefs}                             (gemma3n: lshsim.t5.altup_gemma3n)
    {encoder,decoder}/layers_{i}/expert/router        [d, n]          (softmax lookup)
    {encoder,decoder}/layers_{i}/expert/table         [n, d]          (rank 0)
    {encoder,decoder}/layers_{i}/expert/{wi [n, d, r], wo [n, r, d]}  (rank r)
    decoder/logits_dense/kernel                       [K d, vocab]    (memory_output wide)

Scanned (``scan_layers``, the default) each stack's ``layers_{i}`` are one subtree
``{encoder,decoder}/layers`` whose leaves gain a leading axis of the stack's depth (logical
axis ``layers``), a widened stack's ``altup_{i}`` going with its layer as ``layers/altup``;
see :mod:`lshsim.t5.scan`.

References:
    Raffel et al. 2020 (T5); Shazeer 2020, "GLU Variants Improve Transformer" (gated GELU);
    T5X ``t5x/examples/t5/network.py`` and ``layers.py``.
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lshsim.t5 import altup_gemma3n, memory, scan
from lshsim.t5.configs import T5Config
from lshsim.t5.layer_stack import RaggedParams, layer_data, memory_step, scanned_layers
from lshsim.t5.lookups import lookup_of
from lshsim.t5.memory_methods import get_method

#: Additive attention bias for masked positions (as T5X).
MASK_BIAS = -1e10


@jax.custom_vjp
def add_position_bias(logits: jax.Array, bias: jax.Array) -> jax.Array:
    """``logits [B, H, q, k] + bias [1, H, q, k]``; the bias gradient sums over the batch.

    The same value and gradient as ``logits + bias``. The gradient's batch sum is written as
    a product with a vector of ones: XLA:CPU reduces over the leading axis of ``[B, H, q, k]``
    about 25x slower than the equivalent matrix-vector product (17 ms vs 0.7 ms for tiny's
    batch of 32, measured; 7% of a train step before this change).
    """
    return logits + bias


def _add_position_bias_fwd(logits, bias):
    return logits + bias, logits.shape[0]


def _add_position_bias_bwd(batch, g):
    ones = jnp.ones((batch,), g.dtype)
    return g, jnp.einsum("b,bhqk->hqk", ones, g)[None]


add_position_bias.defvjp(_add_position_bias_fwd, _add_position_bias_bwd)


def _init(scale: float, mode: str = "fan_in", dist: str = "truncated_normal", axes=None):
    """T5X's variance-scaling initialiser (truncated normal for MLP and logits).

    ``axes``: the kernel's logical axis names (see :mod:`lshsim.t5.sharding`).
    """
    init = nn.initializers.variance_scaling(scale, mode, dist)
    return init if axes is None else nn.with_logical_partitioning(init, axes)


def relative_position_bucket(
    relative_position: np.ndarray, *, bidirectional: bool, num_buckets: int, max_distance: int
) -> np.ndarray:
    """Map ``memory_position - query_position`` to a bucket in ``[0, num_buckets)``.

    Half the buckets (per direction, when bidirectional) hold exact offsets; the rest are
    log-spaced up to ``max_distance``, beyond which all offsets share the last bucket. Computed
    on the host in float32, in the operation order of the Hugging Face T5 port (which matches
    T5X on every offset up to the lengths we use; tested).

    Args:
        relative_position: integer array of ``memory - query`` offsets.
        bidirectional: encoder (True) or causal decoder (False).
        num_buckets: number of buckets.
        max_distance: offsets at or beyond this share the last bucket.

    Returns:
        int32 array of the same shape.
    """
    rp = np.asarray(relative_position, dtype=np.int64)
    buckets = np.zeros_like(rp)
    if bidirectional:
        num_buckets //= 2
        buckets += (rp > 0).astype(np.int64) * num_buckets
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, 0)
    max_exact = num_buckets // 2
    is_small = rp < max_exact
    with np.errstate(divide="ignore"):
        ratio = np.log(rp.astype(np.float32) / np.float32(max_exact))
    scaled = (
        ratio / np.float32(np.log(max_distance / max_exact)) * np.float32(num_buckets - max_exact)
    )
    large = max_exact + np.where(is_small, 0, scaled).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return (buckets + np.where(is_small, rp, large)).astype(np.int32)


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x^2) + eps) * scale`` in float32, cast back to ``dtype``."""

    eps: float = 1e-6
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        """Normalise over the last axis."""
        scale = self.param("scale", nn.initializers.ones, (x.shape[-1],), jnp.float32)
        x32 = x.astype(jnp.float32)
        y = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + self.eps)
        return (y * scale).astype(self.dtype)


class RelativePositionBias(nn.Module):
    """One stack's relative position bias table, ``[buckets, heads]``."""

    num_buckets: int
    max_distance: int
    num_heads: int
    bidirectional: bool
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, q_len: int, k_len: int) -> jax.Array:
        """Bias ``[1, heads, q_len, k_len]`` for queries at ``0..q_len-1``, keys ``0..k_len-1``."""
        table = self.param(
            "rel_embedding",
            nn.initializers.variance_scaling(1.0, "fan_avg", "uniform"),
            (self.num_buckets, self.num_heads),
            jnp.float32,
        )
        rel = np.arange(k_len)[None, :] - np.arange(q_len)[:, None]
        idx = relative_position_bucket(
            rel,
            bidirectional=self.bidirectional,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )
        bias = jnp.take(table, jnp.asarray(idx), axis=0)  # [q, k, heads]
        return jnp.transpose(bias, (2, 0, 1))[None].astype(self.dtype)


class Attention(nn.Module):
    """Multi-head attention without logit scaling (folded into the query init)."""

    config: T5Config

    @nn.compact
    def __call__(self, xq, xkv, bias, deterministic: bool = True):
        """Attend from ``xq [B, q, d]`` to ``xkv [B, k, d]``.

        ``bias = (position, mask)``: the stack's position bias ``[1, H, q, k]`` (None for
        cross-attention) and the additive mask ``[B, 1, q, k]``, both added to the logits.
        Kept apart rather than summed into one ``[B, H, q, k]`` array per stack, which cost
        a write and a read of that array per layer.
        """
        position, mask = bias
        cfg = self.config
        dt = jnp.dtype(cfg.dtype)
        inner = cfg.num_heads * cfg.d_kv
        dense = functools.partial(nn.Dense, use_bias=False, dtype=dt, param_dtype=jnp.float32)
        # T5X: normal(fan_in) kernels, the query's divided by sqrt(d_kv) (no logit scaling).
        qkv = ("embed", "heads")
        q = dense(inner, kernel_init=_init(1.0 / cfg.d_kv, dist="normal", axes=qkv), name="query")
        q = q(xq)
        k = dense(inner, kernel_init=_init(1.0, dist="normal", axes=qkv), name="key")(xkv)
        v = dense(inner, kernel_init=_init(1.0, dist="normal", axes=qkv), name="value")(xkv)
        b, lq, lk = xq.shape[0], xq.shape[1], xkv.shape[1]
        q = q.reshape(b, lq, cfg.num_heads, cfg.d_kv)
        k = k.reshape(b, lk, cfg.num_heads, cfg.d_kv)
        v = v.reshape(b, lk, cfg.num_heads, cfg.d_kv)
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32)
        if position is not None:
            logits = add_position_bias(logits, position)
        logits = logits + mask
        weights = jax.nn.softmax(logits, axis=-1)
        weights = nn.Dropout(cfg.dropout_rate)(weights, deterministic=deterministic)
        out = jnp.einsum("bhqk,bkhd->bqhd", weights.astype(dt), v).reshape(b, lq, inner)
        o_init = _init(1.0, dist="normal", axes=("heads", "embed"))
        return dense(cfg.d_model, kernel_init=o_init, name="out")(out)


class MLP(nn.Module):
    """Gated-GELU feed-forward: ``wo(gelu_tanh(wi_0 x) * wi_1 x)``."""

    config: T5Config

    @nn.compact
    def __call__(self, x, deterministic: bool = True):
        """Apply to ``x [..., d]``."""
        cfg = self.config
        dense = functools.partial(
            nn.Dense, use_bias=False, dtype=jnp.dtype(cfg.dtype), param_dtype=jnp.float32
        )
        # Tokens flattened to 2-D: XLA on CPU then computes the weight gradients without
        # materialising transposed copies of [B, L, d_ff] (16-25% of a CPU train step).
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        wi = _init(1.0, axes=("embed", "mlp"))
        h = jax.nn.gelu(dense(cfg.d_ff, kernel_init=wi, name="wi_0")(x), approximate=True)
        h = h * dense(cfg.d_ff, kernel_init=wi, name="wi_1")(x)
        h = nn.Dropout(cfg.dropout_rate)(h, deterministic=deterministic)
        wo = _init(1.0, axes=("mlp", "embed"))
        return dense(cfg.d_model, kernel_init=wo, name="wo")(h).reshape(shape)


def _expert(module: nn.Module, data, ragged):
    """The layer's partial expert (Algorithm 1's ``w(x) f_i(x)``), or ``None`` without a lookup.

    ``data``: the scanned layer's slice of :func:`layer_data` (``None`` unrolled: the lookup
    draws its layer's constants from ``module.index``); ``ragged``: a scanned stack's
    :class:`~lshsim.t5.layer_stack.RaggedParams` (``None``: the layer's own parameters).
    """
    cfg = module.config
    if cfg.lookup == "none":
        return None
    constants = None if data is None else data["constants"]
    return memory.PartialExpert(cfg, module.stack, module.index, constants, ragged, name="expert")


def _layer_step(module: nn.Module, x, layer_fn, data):
    """A layer module's output: ``layer_fn(x)`` unrolled, ``(x', None)`` scanned.

    A scanned widened layer runs its stack's step (:func:`memory_step`) inside itself.
    """
    if not module.scan:
        return layer_fn(x)
    if module.config.widened:
        return memory_step(module.config, x, layer_fn, data["index"], "altup"), None
    return layer_fn(x), None


class EncoderLayer(nn.Module):
    """Pre-norm self-attention then pre-norm MLP, each added to the residual stream.

    With a lookup, the layer's output gains the partial expert's ``w(x) f_i(x)`` of its input.
    """

    config: T5Config
    index: int = 0
    stack: int = 0
    scan: bool = False  # a body of nn.scan: returns (x, None)

    @nn.compact
    def __call__(self, x, bias, tokens=None, ragged=None, deterministic: bool = True, data=None):
        """One encoder layer on ``x [B, L, d]``; ``bias`` is position bias plus mask.

        ``data``: the scanned layer's slice of :func:`layer_data`, ``ragged`` the stack's
        :class:`~lshsim.t5.layer_stack.RaggedParams` (unrolled: ``None``).
        """
        cfg = self.config
        norm = functools.partial(RMSNorm, cfg.layer_norm_eps, jnp.dtype(cfg.dtype))
        drop = nn.Dropout(cfg.dropout_rate)
        # built here, called in ``layer`` (which a widened step may call from its own module)
        norm_a, attention = norm(name="pre_attention_layer_norm"), Attention(cfg, name="attention")
        norm_m, mlp = norm(name="pre_mlp_layer_norm"), MLP(cfg, name="mlp")
        expert = _expert(self, data, ragged)

        def layer(x):
            x_in = x
            h = norm_a(x)
            x = x + drop(attention(h, h, bias, deterministic), deterministic)
            x = x + drop(mlp(norm_m(x), deterministic), deterministic)
            return x if expert is None else x + expert(x_in, tokens, deterministic)

        return _layer_step(self, x, layer, data)


class DecoderLayer(nn.Module):
    """Pre-norm causal self-attention, cross-attention and MLP."""

    config: T5Config
    index: int = 0
    stack: int = 1
    scan: bool = False  # a body of nn.scan: returns (x, None)

    @nn.compact
    def __call__(
        self,
        x,
        encoded,
        self_bias,
        cross_bias,
        tokens=None,
        ragged=None,
        deterministic: bool = True,
        data=None,
    ):
        """One decoder layer on ``x [B, T, d]`` attending to ``encoded [B, L, d or K d]``."""
        cfg = self.config
        norm = functools.partial(RMSNorm, cfg.layer_norm_eps, jnp.dtype(cfg.dtype))
        drop = nn.Dropout(cfg.dropout_rate)
        # built here, called in ``layer`` (which a widened step may call from its own module)
        norm_s, attend_self = (
            norm(name="pre_self_attention_layer_norm"),
            Attention(cfg, name="self_attention"),
        )
        norm_c, attend_cross = (
            norm(name="pre_cross_attention_layer_norm"),
            Attention(cfg, name="encoder_decoder_attention"),
        )
        norm_m, mlp = norm(name="pre_mlp_layer_norm"), MLP(cfg, name="mlp")
        expert = _expert(self, data, ragged)

        def layer(x):
            x_in = x
            h = norm_s(x)
            x = x + drop(attend_self(h, h, self_bias, deterministic), deterministic)
            h = norm_c(x)
            x = x + drop(attend_cross(h, encoded, cross_bias, deterministic), deterministic)
            x = x + drop(mlp(norm_m(x), deterministic), deterministic)
            return x if expert is None else x + expert(x_in, tokens, deterministic)

        return _layer_step(self, x, layer, data)


def _run_layers(module: nn.Module, x, layer: type, args: tuple, count: int, deterministic: bool):
    """Apply ``count`` layers to the embedded ``x``; returns the stack's output before its norm.

    Unrolled, layer ``i`` is ``layer(config, i, name="layers_{i}")`` called on ``(h, *args)``,
    wrapped in a widened stack by :func:`memory_step` (coefficients ``altup_{i}``); with
    ``scan_layers`` the stack is one scanned ``layer`` (:func:`scanned_layers`) named
    ``layers`` that runs the same step inside each layer. Plain and ``sum`` models carry
    ``[B, L, d]``; ``sameup``/``altup``/``gemma3n`` carry ``K`` blocks (stacked, ``[K, B, L,
    d]``) through Algorithm 2, which the callers collapse as the config says
    (``memory_cross`` for the encoder, ``memory_output`` for the decoder).
    """
    cfg = module.config
    x = nn.Dropout(cfg.dropout_rate)(x, deterministic=deterministic)
    stack_id = 0 if layer is EncoderLayer else 1
    if cfg.scanned:
        data = layer_data(cfg, stack_id, count)
        stack = scanned_layers(layer, cfg, count, len(args))(cfg, scan=True, name="layers")
        return stack(x, *args, data)[0]
    for i in range(count):
        mod = layer(cfg, i, name=f"layers_{i}")

        def fn(h, mod=mod):
            return mod(h, *args)

        x = memory_step(cfg, x, fn, i, f"altup_{i}") if cfg.widened else fn(x)
    return x


def _ragged(cfg: T5Config, stack: int, count: int):
    """A scanned stack's per-layer parameters of another shape in each layer, else ``None``.

    Built in the calling stack's scope as ``ragged`` (:class:`~lshsim.t5.layer_stack.
    RaggedParams`); unrolled layers create their own.
    """
    lookup = lookup_of(cfg)
    if not cfg.scanned or lookup is None or not lookup.ragged_params(cfg, stack, 0):
        return None
    return RaggedParams(cfg, stack, count, name="ragged")()


def _leave_stack(cfg: T5Config, x, mode: str):
    """The stack's output as its final norm's input (``x`` itself when not widened).

    The paper's methods collapse the ``K`` blocks by ``mode``; Gemma 3n's unembedding
    projections average them.
    """
    if not cfg.widened:
        return x
    if not get_method(cfg.memory).wide_embedding:
        return altup_gemma3n.AltUpUnembed(cfg, name="altup_unembed_projections")(x)
    return memory.collapse(x, mode)


def _stack_bias(cfg: T5Config, *, bidirectional: bool) -> RelativePositionBias:
    """A stack's position-bias table (encoder: bidirectional; decoder: causal)."""
    return RelativePositionBias(
        cfg.relative_attention_num_buckets,
        cfg.relative_attention_max_distance,
        cfg.num_heads,
        bidirectional=bidirectional,
        name="relpos_bias",
    )


def _mask_bias(mask: jax.Array) -> jax.Array:
    """``0`` where attention is allowed, ``MASK_BIAS`` where not; ``[B, 1, q, k]``."""
    return jnp.where(mask[:, None], 0.0, MASK_BIAS).astype(jnp.float32)


class TokenEmbedding(nn.Module):
    """Token ids -> the bottom representation: ``[B, L, d]``, or K blocks of it when widened.

    ``sum`` memory adds the ``K`` blocks of the wide embedding (``memory_extra`` projected
    first when set); ``sameup``/``altup`` keep them apart for Algorithm 2.
    """

    config: T5Config
    table: nn.Module
    projection: nn.Module | None = None

    def __call__(self, tokens):
        """Embed ``tokens`` in the compute dtype."""
        cfg = self.config
        x = self.table(tokens).astype(jnp.dtype(cfg.dtype))
        if cfg.memory == "none":
            return x
        if not get_method(cfg.memory).wide_embedding:
            return self.projection(x)  # Gemma 3n: block 0 and its learned projections
        blocks = memory.embed_blocks(cfg, x, self.projection)
        return blocks if cfg.widened else memory.collapse(blocks, "sum")


class Encoder(nn.Module):
    """Embedding lookup, ``num_encoder_layers`` layers and the final norm."""

    config: T5Config
    embedder: nn.Module

    @nn.compact
    def __call__(self, tokens, deterministic: bool = True):
        """Encode ``tokens [B, L]`` (0 = padding) to ``[B, L, d]``."""
        cfg = self.config
        x = self.embedder(tokens)
        valid = tokens > 0
        length = tokens.shape[1]
        position = _stack_bias(cfg, bidirectional=True)(length, length)
        bias = (position, _mask_bias(valid[:, :, None] & valid[:, None, :]))

        ragged = _ragged(cfg, 0, cfg.num_encoder_layers)
        args = (bias, tokens, ragged, deterministic)
        x = _run_layers(self, x, EncoderLayer, args, cfg.num_encoder_layers, deterministic)
        x = _leave_stack(cfg, x, cfg.memory_cross)
        x = RMSNorm(cfg.layer_norm_eps, jnp.dtype(cfg.dtype), name="encoder_norm")(x)
        return nn.Dropout(cfg.dropout_rate)(x, deterministic=deterministic)


class Decoder(nn.Module):
    """Embedding lookup, causal layers with cross-attention, final norm and output projection."""

    config: T5Config
    embedder: nn.Module

    @nn.compact
    def __call__(
        self,
        encoded,
        encoder_tokens,
        decoder_input_tokens,
        decoder_target_tokens=None,
        deterministic: bool = True,
    ):
        """Float32 logits ``[B, T, vocab]`` (teacher forcing)."""
        cfg = self.config
        x = self.embedder(decoder_input_tokens)
        t = decoder_input_tokens.shape[1]
        causal = jnp.tril(jnp.ones((t, t), dtype=bool))[None]
        enc_valid = encoder_tokens > 0
        if decoder_target_tokens is None:
            dec_valid = jnp.ones(decoder_input_tokens.shape, dtype=bool)
        else:
            dec_valid = decoder_target_tokens > 0
        position = _stack_bias(cfg, bidirectional=False)(t, t)
        self_bias = (position, _mask_bias(causal & dec_valid[:, :, None] & dec_valid[:, None, :]))
        cross_bias = (None, _mask_bias(dec_valid[:, :, None] & enc_valid[:, None, :]))

        ragged = _ragged(cfg, 1, cfg.num_decoder_layers)
        args = (encoded, self_bias, cross_bias, decoder_input_tokens, ragged, deterministic)
        x = _run_layers(self, x, DecoderLayer, args, cfg.num_decoder_layers, deterministic)
        x = _leave_stack(cfg, x, cfg.memory_output)
        x = RMSNorm(cfg.layer_norm_eps, jnp.dtype(cfg.dtype), name="decoder_norm")(x)
        x = nn.Dropout(cfg.dropout_rate)(x, deterministic=deterministic)
        # The output projection runs in float32 whatever the compute dtype (T5X's
        # ``logits_dense``, ``dtype=jnp.float32`` "for stability"): the decoder output is cast
        # up and the float32 kernel is used as is. In bfloat16 the logits were otherwise
        # rounded to 8 significant bits, an error of up to 2^-8 |z| per logit: 0.12 at |z| = 30.
        logits = nn.Dense(
            cfg.vocab_size,
            use_bias=False,
            dtype=jnp.float32,
            param_dtype=jnp.float32,
            kernel_init=_init(1.0, axes=("embed", "vocab")),
            name="logits_dense",
        )(x.astype(jnp.float32))
        return logits


class T5(nn.Module):
    """The T5 v1.1 encoder-decoder. ``__call__`` returns teacher-forced logits."""

    config: T5Config

    def setup(self):
        """Shared input embedding, encoder and decoder stacks."""
        cfg = self.config
        self.token_embedder = nn.Embed(
            cfg.vocab_size,
            cfg.embed_width,
            embedding_init=nn.with_logical_partitioning(
                nn.initializers.normal(1.0), ("vocab", "embed")
            ),
            param_dtype=jnp.float32,
            name="token_embedder",
        )
        self.memory_projection = None
        if cfg.memory != "none" and not get_method(cfg.memory).wide_embedding:
            self.memory_projection = altup_gemma3n.AltUpProjections(cfg, name="altup_projections")
        elif cfg.memory != "none" and cfg.memory_extra:
            self.memory_projection = memory.MemoryProjection(cfg)
        self.embed = TokenEmbedding(cfg, self.token_embedder, self.memory_projection)
        self.encoder = Encoder(cfg, self.embed, name="encoder")
        self.decoder = Decoder(cfg, self.embed, name="decoder")

    def encode(self, encoder_input_tokens, deterministic: bool = True):
        """Encoder output ``[B, L, d]``."""
        return self.encoder(encoder_input_tokens, deterministic)

    def decode(
        self,
        encoded,
        encoder_input_tokens,
        decoder_input_tokens,
        decoder_target_tokens=None,
        deterministic: bool = True,
    ):
        """Decoder logits given an encoder output."""
        return self.decoder(
            encoded,
            encoder_input_tokens,
            decoder_input_tokens,
            decoder_target_tokens,
            deterministic,
        )

    def __call__(
        self,
        encoder_input_tokens,
        decoder_input_tokens,
        decoder_target_tokens=None,
        deterministic: bool = True,
    ):
        """Logits ``[B, T, vocab]`` in float32."""
        encoded = self.encode(encoder_input_tokens, deterministic)
        return self.decode(
            encoded,
            encoder_input_tokens,
            decoder_input_tokens,
            decoder_target_tokens,
            deterministic,
        )


def _boxed_params(config: T5Config, rng: jax.Array) -> dict:
    """Initialised parameters with their logical axis names (``nn.LogicallyPartitioned``)."""
    tokens = jnp.ones((1, 8), jnp.int32)
    return T5(config).init(rng, tokens, tokens)["params"]


def init_params(config: T5Config, rng: jax.Array) -> dict:
    """Initialised parameters (a plain nested dict of arrays under no ``params`` key).

    The logical axis names the model gives its parameters are stripped (see
    :func:`param_specs`); the values are those of the unannotated model. A scanned model's
    are the unrolled model's from the same ``rng``, stacked (:func:`lshsim.t5.scan.
    stack_layers`): the layout does not change a run's numbers. Its draws are the
    unrolled model's because Flax derives each parameter's key from its path
    (``encoder/layers_3/...``), which a scan's layers do not have.
    """
    if config.scanned:
        unrolled = init_params(config.replace(scan_layers=False), rng)
        return scan.stack_layers(unrolled, scan.ragged_paths(config))
    return nn.meta.unbox(_boxed_params(config, rng))


def param_shapes(config: T5Config) -> dict:
    """:func:`init_params`'s tree as ``jax.ShapeDtypeStruct`` leaves, allocating nothing.

    Traced from the model's own ``init`` in the config's layout: a scanned model's tree is
    the unrolled one's, stacked, and tracing it skips tracing every unrolled layer first
    (``large``: 1.5 -> 0.2 s of CPU); tests/t5/test_params.py checks the two trees agree.

    Args:
        config: the model config.

    Returns:
        The parameter tree of shapes and dtypes.
    """
    return nn.meta.unbox(jax.eval_shape(lambda: _boxed_params(config, jax.random.key(0))))


def param_specs(config: T5Config) -> dict:
    """The parameters' logical ``PartitionSpec`` tree (same structure as :func:`init_params`).

    Axis names: ``vocab``, ``embed``, ``mlp``, ``heads``, ``buckets``, ``rank`` (``None``:
    never split); parameters without names (norms, position bias, AltUp scalars, LSH-free
    small tables) get ``PartitionSpec()``. :data:`lshsim.t5.mesh_axes.RULES` maps the names to
    mesh axes. Nothing is allocated.
    """
    boxed = jax.eval_shape(lambda: _boxed_params(config, jax.random.key(0)))
    return nn.get_partition_spec(boxed)
