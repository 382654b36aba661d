"""A router tap: what the probe needs from any model that routes tokens.

A :class:`RouterTap` names a router, says how many experts (buckets, slots) it chooses among
and how many it picks per token, which random-router law it is compared with, and holds one
function: token ids ``[B, T]`` and their mask in, one :class:`Capture` per routing layer
out. The adapters build taps from Hugging Face MoE models (:mod:`lshsim.probe.hf`), from a
product-key memory or any torch module (:mod:`lshsim.probe.modules`) and from token-id hash
mappings such as Engram's (:mod:`lshsim.probe.modules`); ``lshsim probe --tap module:factory``
loads a user's own (:func:`load_tap`).

The laws (the family whose exact probability is the random-router baseline):

* ``voronoi``: a softmax router (top-1 or top-k of ``W x``); a Gaussian ``W`` is Voronoi LSH;
* ``productkey``: a product-key memory, the capture's inputs are its query (two halves);
* ``ngram``: a hash of the token ids (no weights, no inputs): equal windows always collide,
  distinct ones with probability ``1/m`` (``m`` the head-0 table size of the layer).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from lshsim.hashing import NGram, ProductKey, Voronoi

__all__ = ["LAWS", "Capture", "RouterTap", "load_tap", "top_experts"]

#: the laws a tap may name (the families' own names)
LAWS = (Voronoi.name, ProductKey.name, NGram.name)


def top_experts(scores: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` best-scored experts of the last axis, best first (ties: the lower index)."""
    return np.argsort(-np.asarray(scores), axis=-1, kind="stable")[..., :k]


@dataclasses.dataclass(frozen=True)
class Capture:
    """One routing layer's view of a batch.

    Attributes:
        choice: ``int64[B, T, k]``, the experts (slots, buckets) picked, best first.
        inputs: ``float32[B, T, d]``, the router's input (a product key's query), or ``None``
            for a hash of token ids.
        tokens: ``int64[B, T]``, the token each position carries (``None``: the input ids;
            a decoder reading its input shifted right gives the shifted ids).
    """

    choice: np.ndarray
    inputs: np.ndarray | None = None
    tokens: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class RouterTap:
    """A router the probe can measure.

    Attributes:
        name: what the router is (``"mixtral"``, a folder, a user's label).
        experts: experts (buckets, slots) per layer; for ``ngram``, head 0's table size of the
            first layer (``moduli`` gives each layer's).
        top_k: experts picked per token.
        law: one of :data:`LAWS`.
        capture: ``(ids int64[B, T], mask bool[B, T]) -> {layer: Capture}``, layers in order;
            names ``"stack/index"`` (``"layers/3"``, ``"encoder/1"``) or any string.
        vocab: ids the model accepts (``None``: any).
        tokenizer: the model's own tokenizer (a Hugging Face one), or ``None``.
        ngram: the n-gram order of head 0 (``ngram`` law).
        moduli: ``{layer: head-0 table size}`` (``ngram`` law).
        notes: lines the probe prints above its table (how the tap was built).
    """

    name: str
    experts: int
    top_k: int
    law: str
    capture: Callable[[np.ndarray, np.ndarray], Mapping[str, Capture]]
    vocab: int | None = None
    tokenizer: Any = None
    ngram: int = 0
    moduli: Mapping[str, int] | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if self.law not in LAWS:
            raise ValueError(f"law: expected one of {', '.join(LAWS)}, got {self.law!r}")
        if int(self.experts) < 2:
            raise ValueError(f"experts: need at least 2, got {self.experts}")
        if not 1 <= int(self.top_k) <= int(self.experts):
            raise ValueError(f"top_k: need 1 <= top_k <= experts, got {self.top_k}")
        if self.law == NGram.name and (self.ngram < 1 or not self.moduli):
            raise ValueError("ngram: a hash tap needs its order (ngram) and moduli per layer")


def load_tap(spec: str, **kwargs) -> RouterTap:
    """The tap a user's factory builds: ``"package.module:factory"`` called with ``kwargs``.

    Raises:
        ValueError: a malformed spec, a module or attribute that is missing, or a factory that
            does not return a :class:`RouterTap` (each message names ``--tap``).
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name.strip() or not attr.strip():
        raise ValueError(f"tap: expected module:factory, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"tap: cannot import {module_name!r} ({err})") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ValueError(f"tap: {module_name} has no callable {attr!r}")
    try:
        tap = factory(**kwargs)
    except TypeError as err:
        raise ValueError(f"tap: {spec} cannot be called without arguments ({err})") from None
    if not isinstance(tap, RouterTap):
        raise ValueError(f"tap: {spec} returned {type(tap).__name__}, not a lshsim.probe.RouterTap")
    return tap
