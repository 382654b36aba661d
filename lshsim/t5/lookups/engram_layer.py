"""Engram as deployed (``lookup="engram"``; DeepSeek's ``engram_demo_v1.py``): the Flax layer.

One layer of Engram's module on the model's token ids ``[B, L]`` and layer input ``x [B, L, d]``
(the residual stream; one hyper-connection group, ``hc_mult = 1``):

1. **Hash** (:class:`lshsim.hashing.engram.EngramHash`, bit for bit Engram's
   ``NgramHashMapping``): the ids are compressed through the map built from
   ``cfg.engram_tokenizer``'s SentencePiece vocabulary (:func:`model_compress_table`; none:
   the raw ids), left-padded with the compressed pad id 0, and every order ``n = 2 .. N``
   (``N = cfg.ngram``) is hashed by ONE int64 multiply-XOR mix per order with the layer's
   multipliers (``default_rng(lookup_seed + 10007 g)``, ``g`` the layer's global index:
   encoder layers first, then decoder layers), its ``H`` heads taking the mix modulo primes
   drawn from one search over all orders and layers (the first after ``buckets - 1``). The
   hash runs on the host, as in Engram (NumPy there, the Numba kernel here), through
   :func:`jax.pure_callback`, so it is exact under ``jit`` without 64-bit JAX.
2. **Embed**: one table of ``sum p`` rows of width ``e = d / H`` (Engram's
   ``MultiHeadEmbedding``, rows of head ``i`` after those of heads ``< i``); the ``(N-1) H``
   rows of a token are concatenated to ``E = (N - 1) d``.
3. **Gate**: ``k = RMSNorm(W_k e + b_k)``, ``q = RMSNorm(x)``, ``a = k . q / sqrt(d)``, then
   Engram's signed square root ``a <- sign(a) sqrt(max(|a|, 1e-6))`` before the sigmoid:
   ``v = sigmoid(a) (W_v e + b_v)``.
4. **Short convolution** (``ShortConv``): ``out = v + SiLU(conv(RMSNorm_{1e-5}(v)))``, a
   depthwise causal convolution of kernel 4 and dilation ``N`` without bias.

Engram's ``nn.RMSNorm`` without ``eps`` (key and query) uses float32's machine epsilon; its
linear maps have biases (T5's have none). The output is added to the layer's output as every
partial expert is (Engram adds it to the residual before attention). Parity with a transcription
of Engram's torch module on the same weights: ``tests/t5/test_engram_lookup.py``.

References:
    DeepSeek 2026, "Engram" (arXiv 2601.07372, deepseek-ai/Engram, ``engram_demo_v1.py``).
"""

from __future__ import annotations

import functools
import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lshsim.t5 import sharded_lookup
from lshsim.t5.lookups.tables import param, rms

__all__ = [
    "CONV_KERNEL",
    "CONV_NORM_EPS",
    "GATE_NORM_EPS",
    "engram_buckets",
    "engram_layer",
    "engram_mapping",
    "model_compress_table",
    "signed_sqrt",
]

#: Engram's ``kernel_size`` (its config's default) and ``ShortConv``'s RMSNorm eps.
CONV_KERNEL = 4
CONV_NORM_EPS = 1e-5
#: ``nn.RMSNorm(d)`` without eps in float32: ``torch.finfo(float32).eps``.
GATE_NORM_EPS = float(np.finfo(np.float32).eps)
#: The model's pad id (T5 layout), Engram's ``pad_id`` before compression.
PAD_ID = 0


@functools.lru_cache(maxsize=8)
def model_compress_table(path: str, vocab_size: int) -> np.ndarray:
    """Engram's compressing map over the model's ``vocab_size`` ids, from a SentencePiece model.

    Ids of the SentencePiece pieces key on their normalised text
    (:func:`lshsim.hashing.engram.compress_table`); the ids above them (T5's sentinels
    ``<extra_id_k>``, then the padding rows) each keep an id of their own, as Engram's
    ``decode`` of a special token gives its distinct text.

    Args:
        path: the ``.model`` file (``cfg.engram_tokenizer``).
        vocab_size: the model's embedding rows.

    Returns:
        int64 ``[vocab_size]``: ``lookup[id]`` = the compressed id.
    """
    from pathlib import Path

    from lshsim.hashing.engram import compress_table, sentencepiece_texts

    if not Path(path).is_file():
        raise ValueError(f"engram_tokenizer: no such SentencePiece model {path!r}")
    try:
        texts, raw = sentencepiece_texts(path)
    except (OSError, RuntimeError) as exc:
        raise ValueError(
            f"engram_tokenizer: {path!r} is not a SentencePiece model ({exc})"
        ) from None
    if len(texts) > vocab_size:
        raise ValueError(
            f"engram_tokenizer: {len(texts)} pieces do not fit vocab_size {vocab_size}"
        )
    pieces = len(texts)
    extra = [f"<extra_id_{pieces + 99 - i}>" if i < pieces + 100 else f"<unused_{i}>"
             for i in range(pieces, vocab_size)]  # fmt: skip
    lookup, _ = compress_table(texts + extra, raw + extra)
    return lookup


@functools.lru_cache(maxsize=32)
def engram_mapping(config):
    """The model's :class:`~lshsim.hashing.engram.EngramHash`: every layer, one prime search.

    Layer ``g`` = ``stack * num_encoder_layers + layer``; table size ``buckets`` per order,
    ``H = lookup_heads`` heads, orders ``2 .. ngram``, seed ``lookup_seed``, pad id 0.
    """
    from lshsim.hashing.engram import EngramHash

    layers = range(config.num_encoder_layers + config.num_decoder_layers)
    kw = {
        "table_sizes": config.num_buckets,
        "max_ngram_size": config.ngram,
        "heads": config.lookup_heads,
        "layer_ids": tuple(layers),
        "pad_id": PAD_ID,
        "seed": config.lookup_seed,
    }
    if config.engram_tokenizer:
        lookup = model_compress_table(config.engram_tokenizer, config.vocab_size)
        return EngramHash(lookup=lookup, **kw)
    return EngramHash(config.vocab_size, **kw)


def global_layer(config, stack: int, layer: int) -> int:
    """The layer's index in Engram's ``layer_ids``: the encoder's layers, then the decoder's."""
    return stack * config.num_encoder_layers + layer


def engram_buckets(tokens, config, stack: int, layer: int) -> jax.Array:
    """Engram's hashes of ``tokens [B, L]``: int32 ``[B, L, (N - 1) H]``, order-major.

    Computed on the host by the Numba kernel (:func:`jax.pure_callback`), exact under ``jit``.
    """
    return engram_hashes(tokens, config, global_layer(config, stack, layer))


def engram_hashes(tokens, config, g) -> jax.Array:
    """:func:`engram_buckets` of Engram's layer ``g`` (an int, or traced in a scanned stack)."""
    mapping = engram_mapping(config)
    heads = (config.ngram - 1) * config.lookup_heads

    def host(ids, layer):
        ids = np.asarray(ids)
        out = mapping.hash(ids.reshape(-1, ids.shape[-1]), int(np.asarray(layer).reshape(-1)[0]))
        return out.reshape(*ids.shape, heads).astype(np.int32)

    shape = jax.ShapeDtypeStruct((*tokens.shape, heads), jnp.int32)
    g = jnp.asarray(g, jnp.int32)
    return jax.pure_callback(host, shape, tokens, g, vmap_method="broadcast_all")


def signed_sqrt(a):
    """Engram's ``a.abs().clamp_min(1e-6).sqrt() * a.sign()``."""
    return jnp.sqrt(jnp.maximum(jnp.abs(a), 1e-6)) * jnp.sign(a)


def causal_conv(v, w, dilation: int):
    """Depthwise causal convolution: ``y_t = sum_k w_k v_{t - (K - 1 - k) dilation}``.

    ``v [B, L, d]``, ``w [K, d]`` (torch's ``Conv1d`` weight ``[d, 1, K]`` transposed), zero
    before the start: torch's ``padding = (K - 1) dilation`` cut to the first ``L`` outputs.
    """
    length = v.shape[1]
    y = jnp.zeros_like(v)
    for k in range(w.shape[0]):
        shift = (w.shape[0] - 1 - k) * dilation
        if shift >= length:
            continue
        shifted = jnp.pad(v, ((0, 0), (shift, 0), (0, 0)))[:, :length]
        y = y + shifted * w[k]
    return y


def _dense(module, name: str, fan_in: int, d: int):
    w = param(
        module,
        f"{name}_kernel",
        nn.initializers.variance_scaling(1.0, "fan_in", "truncated_normal"),
        (fan_in, d),
        ("mlp", "embed"),
    )
    b = param(module, f"{name}_bias", nn.initializers.zeros, (d,), ("embed",))
    return w, b


def engram_layer(module, x2, token_ids, cfg, dt, draw, read_table):
    """``(out [N, d], head 0's bucket [N], buckets [N, (N-1) H], {})``, Engram's forward.

    ``draw``: the layer's :meth:`~lshsim.t5.lookups.engram.EngramLookup.layer_constants`
    (its layer index and row offsets); ``read_table(read)``: ``read`` of the layer's table
    (:meth:`~lshsim.t5.lookups.Lookup.ragged_param`: its size is the layer's own).
    """
    batch, length = token_ids.shape
    d = x2.shape[-1]
    heads = (cfg.ngram - 1) * cfg.lookup_heads
    width = d // cfg.lookup_heads
    buckets = engram_hashes(token_ids, cfg, draw["global"]).reshape(-1, heads)
    rows = (buckets + jnp.asarray(draw["offsets"])).reshape(-1)
    emb = read_table(lambda table: sharded_lookup.gather_rows(table, rows))
    emb = emb.astype(dt).reshape(-1, heads * width)  # [N, E]
    wk, bk = _dense(module, "key", heads * width, d)
    wv, bv = _dense(module, "value", heads * width, d)
    sk = param(module, "key_norm_scale", nn.initializers.ones, (d,), ("embed",))
    sq = param(module, "query_norm_scale", nn.initializers.ones, (d,), ("embed",))
    key = rms(emb @ wk.astype(dt) + bk.astype(dt), sk, GATE_NORM_EPS)
    query = rms(x2, sq, GATE_NORM_EPS)
    gate = jax.nn.sigmoid(signed_sqrt(jnp.sum(key * query, axis=-1) / math.sqrt(d)))
    value = (gate[:, None] * (emb @ wv.astype(dt) + bv.astype(dt)).astype(jnp.float32)).astype(dt)
    sc = param(module, "conv_norm_scale", nn.initializers.ones, (d,), ("embed",))
    wc = param(
        module,
        "conv_kernel",
        nn.initializers.variance_scaling(1.0 / 3.0, "fan_in", "uniform", in_axis=0, out_axis=1),
        (CONV_KERNEL, d),
        (None, "embed"),
    )
    v3 = value.reshape(batch, length, d)
    normed = rms(v3, sc, CONV_NORM_EPS).astype(dt)
    conv = jax.nn.silu(causal_conv(normed, wc.astype(dt), cfg.ngram))
    out = (v3 + conv).reshape(-1, d)
    return out, buckets[:, 0], buckets, {}
