"""Greedy decoding with the model's own decoder: one jitted loop, no cache.

Step ``i`` runs the decoder over the whole ``[B, T]`` decoder input (the tokens generated so far,
zeros after them; position 0 holds the start token 0) and keeps the argmax at position ``i``;
causal self-attention makes the later positions irrelevant. That is ``T`` decoder passes of
length ``T``: cheap at the short targets of classification and extractive QA (T5's GLUE and
SuperGLUE targets are a few tokens; SQuAD answers tens), and it uses exactly the forward
pass the model is trained with, lookups included. After EOS a row emits padding.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from lshsim.t5.configs import T5Config
from lshsim.t5.model import T5

__all__ = ["greedy_decode", "make_greedy_decoder"]

EOS_ID = 1


def make_greedy_decoder(config: T5Config, length: int, mesh=None) -> Callable:
    """A jitted ``(params, encoder_tokens [B, L]) -> ids [B, length]`` greedy decoder.

    ``mesh``: trace and call it under this mesh (parameters sharded on it, see
    :class:`lshsim.t5.sharding.MeshJit`).
    """
    model = T5(config)

    def decode(params, enc):
        encoded = model.apply({"params": params}, enc, method=T5.encode)
        batch = enc.shape[0]
        dec_in = jnp.zeros((batch, length), jnp.int32)
        out = jnp.zeros((batch, length), jnp.int32)
        done = jnp.zeros((batch,), bool)

        def body(i, carry):
            dec_in, out, done = carry
            logits = model.apply({"params": params}, encoded, enc, dec_in, method=T5.decode)
            row = jax.lax.dynamic_index_in_dim(logits, i, axis=1, keepdims=False)
            tok = jnp.where(done, 0, jnp.argmax(row, axis=-1).astype(jnp.int32))
            out = out.at[:, i].set(tok)
            dec_in = dec_in.at[:, i + 1].set(tok, mode="drop")
            return dec_in, out, done | (tok == EOS_ID)

        _, out, _ = jax.lax.fori_loop(0, length, body, (dec_in, out, done))
        return out

    if mesh is None:
        return jax.jit(decode)
    from lshsim.t5.sharding import jit_on

    return jit_on(mesh, decode)


def greedy_decode(decoder: Callable, params, inputs: np.ndarray, batch: int) -> np.ndarray:
    """Decode ``inputs [N, L]`` in batches of ``batch`` (the last one padded); ``[N, T]`` ids."""
    n = inputs.shape[0]
    outs = []
    for start in range(0, n, batch):
        chunk = inputs[start : start + batch]
        if chunk.shape[0] < batch:
            pad = np.zeros((batch - chunk.shape[0], inputs.shape[1]), inputs.dtype)
            chunk = np.concatenate([chunk, pad])
        outs.append(np.asarray(jax.device_get(decoder(params, jnp.asarray(chunk)))))
    return np.concatenate(outs)[:n]
