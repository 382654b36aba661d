"""How a stack runs its layers: a widened stack's step around each layer, and the scan.

- :func:`memory_step`: one layer of a widened stack (the paper's Algorithm 2, or Gemma 3n's
  AltUp) around the layer, its coefficients a module of the caller's scope;
- :func:`layer_data`: what differs from layer to layer beside the parameters (the layer's
  index, so a widened stack's computed block, and the lookup's per-layer constants),
  stacked for the scan to slice;
- :func:`scanned_layers`: a layer class as one ``nn.scan`` over a stack (``scan_layers``).

:mod:`lshsim.t5.model` builds its stacks from these; :mod:`lshsim.t5.scan` owns the
parameter layout they produce.

References:
    Flax ``nn.scan``; MaxText's and T5X's ``scan_layers``; the paper, Algorithm 2.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import numpy as np

from lshsim.t5 import altup_gemma3n, memory
from lshsim.t5.configs import T5Config
from lshsim.t5.lookups import lookup_of
from lshsim.t5.memory_methods import get_method

__all__ = ["SCAN_SAVES", "RaggedParams", "layer_data", "memory_step", "scanned_layers"]


def memory_step(config: T5Config, x, layer_fn, index, name: str):
    """One layer of a widened stack: Algorithm 2 (or Gemma 3n's AltUp) around ``layer_fn``.

    The layer's coefficients are a module called ``name`` in the caller's scope
    (``altup_{i}`` in an unrolled stack, ``altup`` inside the scanned layer).

    Args:
        config: a widened model's config.
        x: the ``K`` stacked blocks ``[K, B, L, d]``.
        layer_fn: the layer, ``[B, L, d] -> [B, L, d]``.
        index: the layer's index in its stack (an int, or traced in a scanned stack).
        name: the coefficient module's name.

    Returns:
        The blocks after the layer, ``[K, B, L, d]``.
    """
    block = memory.compute_block(config, index)
    if not get_method(config.memory).wide_embedding:
        k, d, eps = config.memory_k, config.d_model, config.layer_norm_eps
        return altup_gemma3n.Gemma3nAltUp(k, d, eps, name=name)(x, layer_fn, block)
    p, g = memory.AltUpCoefficients(config.memory_k, name=name)()
    return memory.predict_compute_correct(x, layer_fn, p, g, block)


#: What the scanned layers' backward pass keeps of the forward (the rest is recomputed):
#: matrix products' outputs (JAX's ``checkpoint_dots`` rematerialisation policy).
SCAN_SAVES = jax.checkpoint_policies.checkpoint_dots


def scanned_layers(layer: type[nn.Module], config: T5Config, count: int, args: int) -> type:
    """``layer`` as one ``nn.scan`` over ``count`` layers (``config.scanned``).

    Every variable collection gains a leading ``layers`` axis (parameters, the probe's
    ``intermediates``, the router's ``aux_loss``); dropout draws are split per layer; the
    ``args`` arguments after the carried ``x`` are the same for every layer, and one more,
    :func:`layer_data`, is sliced per layer (its index and its lookup's constants). The
    backward pass keeps each layer's matrix products (:data:`SCAN_SAVES`) and recomputes the
    elementwise rest, as XLA's fusion does on the unrolled layers: without it the scan stored
    every elementwise intermediate of every layer (``base`` Token-ID r5 on 1 x 2: 60.1 GB per
    device, against 47.0 GB with it and 45.4 GB unrolled; FLOPs per step 1.102e14 with it,
    1.099e14 without).

    Args:
        layer: :class:`EncoderLayer` or :class:`DecoderLayer`.
        config: the model config.
        count: layers in the stack.
        args: number of arguments after ``x`` (broadcast to every layer).

    Returns:
        The scanned module class; build it with ``scan=True`` and call it like ``layer`` with
        the stack's :func:`layer_data` last: it returns ``(x, None)``.

    References:
        Flax ``nn.scan``; MaxText's and T5X's ``scan_layers``.
    """
    # the last argument, ``deterministic``, is a Python bool (static); ``self`` is argument 0
    body = nn.remat(layer, policy=SCAN_SAVES, prevent_cse=False, static_argnums=(args + 1,))
    return nn.scan(
        body,
        variable_axes={True: 0},
        split_rngs={"params": True, "dropout": True},
        in_axes=(*(nn.broadcast,) * args, 0),
        length=count,
        metadata_params={nn.PARTITION_NAME: "layers"},
    )


def layer_data(config: T5Config, stack: int, count: int) -> dict:
    """What differs between a stack's layers beside their parameters, stacked over the layers.

    Args:
        config: the model config.
        stack: 0 (encoder) or 1 (decoder).
        count: the stack's layers.

    Returns:
        ``{"index": int32 [count], "constants": ...}``: the layers' indices (a widened stack's
        computed block is a function of it) and the lookup's per-layer constants
        (:meth:`lshsim.t5.lookups.Lookup.layer_constants`, each stacked on a leading axis).
    """
    lookup = lookup_of(config)
    per = [lookup.layer_constants(config, stack, i) if lookup else {} for i in range(count)]
    constants = jax.tree.map(lambda *a: np.stack(a), *per) if per and per[0] else {}
    return {"index": np.arange(count, dtype=np.int32), "constants": constants}


class _Params(nn.Module):
    """Parameters ``(name, shape, initialiser, logical axis names)``, in this scope."""

    specs: tuple

    @nn.compact
    def __call__(self) -> dict:
        """``{name: parameter}``."""
        from lshsim.t5.lookups.tables import param

        return {
            name: param(self, name, init, shape, names) for name, shape, init, names in self.specs
        }


class _LayerRagged(nn.Module):
    """One layer's ragged parameters under ``expert`` (the path the unrolled layer gives them)."""

    specs: tuple

    @nn.compact
    def __call__(self) -> dict:
        """``{name: parameter}``."""
        return _Params(self.specs, name="expert")()


class RaggedParams(nn.Module):
    """A scanned stack's parameters of another shape in each layer (Engram's tables).

    ``ragged/layers_{i}/expert/{name}`` for each of the lookup's
    :meth:`~lshsim.t5.lookups.Lookup.ragged_params`: kept per layer beside the scan (the
    optimiser treats each as its own leaf, as unrolled), read by the layer through
    :meth:`~lshsim.t5.lookups.Lookup.ragged_param`.

    Attributes:
        config: the model config.
        stack: 0 (encoder) or 1 (decoder).
        count: the stack's layers.
    """

    config: T5Config
    stack: int
    count: int

    @nn.compact
    def __call__(self) -> tuple[dict, ...]:
        """One ``{name: parameter}`` per layer."""
        lookup = lookup_of(self.config)
        out = []
        for i in range(self.count):
            specs = lookup.ragged_params(self.config, self.stack, i)
            spec = tuple((name, *value) for name, value in specs.items())
            out.append(_LayerRagged(spec, name=f"layers_{i}")())
        return tuple(out)
