"""Scanned layers (``T5Config.scan_layers``): the parameter layout, the optimiser, the cost.

With ``scan_layers`` each stack's layers are one ``nn.scan`` (:func:`lshsim.t5.layer_stack.
scanned_layers`): the parameters of ``encoder/layers_0 .. layers_{L-1}`` become one subtree
``encoder/layers`` whose leaves carry a leading axis of ``L`` (the logical axis ``layers``,
never split). This module owns what follows from that layout:

- :func:`stack_layers` / :func:`unstack_layers`: a parameter (or gradient, or intermediates)
  tree from one layout to the other, exactly (the two models are the same function).
- :func:`per_layer`: an optax transformation applied to each layer's slice of the stacked
  leaves (``jax.vmap``) and as is to the rest, so Adafactor's factoring, update clipping and
  parameter scale are per layer, as on the unrolled model (T5X's Adafactor does the same with
  its ``factor_map`` over the scanned axis).
- :func:`loop_cost`: the FLOPs and bytes of a traced program whose scans XLA's cost analysis
  counts once (a scan's body is priced once whatever its length).

References:
    Flax ``nn.scan``; T5X ``adafactor.py`` (``HParamMap`` / ``factor_map``); MaxText
    ``scan_layers``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

__all__ = [
    "RAGGED_KEY",
    "SCAN_KEY",
    "LayerwiseState",
    "body_cost",
    "loop_cost",
    "per_layer",
    "ragged_paths",
    "stack_layers",
    "to_layout",
    "unstack_layers",
    "whole_cost",
    "xla_cost",
]

#: The scanned stack's parameter key (``encoder/layers``; unrolled: ``layers_{i}``).
SCAN_KEY = "layers"
#: A scanned stack's per-layer leaves of another shape in each layer (``ragged/layers_{i}``).
RAGGED_KEY = "ragged"
_UNROLLED = "layers_"
#: The other per-layer modules of an unrolled stack (``altup_{i}``: a widened stack's
#: coefficients) and their key inside the scanned layer (``layers/altup``).
_BESIDE = {"altup_": "altup"}


def _layer_count(stack: Mapping) -> int:
    return sum(1 for k in stack if _index(k, _UNROLLED) is not None)


def _index(key: str, prefix: str) -> int | None:
    """``i`` of ``{prefix}{i}``, else ``None`` (``altup_unembed_projections`` is no layer)."""
    rest = key[len(prefix) :] if key.startswith(prefix) else ""
    return int(rest) if rest.isdigit() else None


def _is_per_layer(key: str) -> bool:
    return any(_index(key, p) is not None for p in (_UNROLLED, *_BESIDE))


def stack_layers(tree: Mapping, ragged: tuple[tuple[str, ...], ...] = ()) -> dict:
    """The unrolled layout's ``{encoder,decoder}/layers_{i}`` stacked into ``.../layers``.

    A widened stack's ``altup_{i}`` goes with its layer, as ``layers/altup``; the ``ragged``
    leaves stay per layer, as ``ragged/layers_{i}/...``.

    Args:
        tree: a parameter-shaped tree of the unrolled model (parameters, gradients, sown
            intermediates): ``{"encoder": {"layers_0": ..., ...}, "decoder": {...}, ...}``.
        ragged: paths within a layer of leaves whose shape differs from layer to layer
            (:func:`ragged_paths`; Engram's ``("expert", "table")``).

    Returns:
        The scanned model's tree: each stack's ``layers_{i}`` replaced by ``layers``, whose
        leaves are the layers' leaves stacked on a new leading axis (NumPy leaves stay NumPy).
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    def stacked(*leaves):
        return np.stack(leaves) if isinstance(leaves[0], np.ndarray) else jnp.stack(leaves)

    out = dict(tree)
    for name, stack in tree.items():
        count = _layer_count(stack) if isinstance(stack, Mapping) else 0
        if not count:
            continue
        layers = []
        for i in range(count):
            layer = dict(stack[f"{_UNROLLED}{i}"])
            for prefix, key in _BESIDE.items():
                if f"{prefix}{i}" in stack:
                    layer[key] = stack[f"{prefix}{i}"]
            layers.append(layer)
        layers, apart = _split_ragged(layers, ragged)
        rest = {k: v for k, v in stack.items() if not _is_per_layer(k)}
        out[name] = {**rest, SCAN_KEY: jax.tree.map(stacked, *layers), **apart}
    return out


def ragged_paths(config) -> tuple[tuple[str, ...], ...]:
    """The paths within a layer of ``config``'s ragged parameters (``()``: none).

    The lookup's :meth:`~lshsim.t5.lookups.Lookup.ragged_params`, under the layer's
    ``expert``.
    """
    from lshsim.t5.lookups import lookup_of

    lookup = lookup_of(config)
    names = lookup.ragged_params(config, 0, 0) if lookup is not None else {}
    return tuple(("expert", name) for name in names)


def _split_ragged(layers: list[dict], ragged) -> tuple[list[dict], dict]:
    """``(layers, {RAGGED_KEY: ...})``: the ``ragged`` leaves moved out of the layers.

    They stay per layer, as ``ragged/layers_{i}/<path>`` (Engram's tables: a size per
    layer), beside the stacked rest; ``({}``, no key) without ragged leaves.
    """
    from flax.traverse_util import flatten_dict, unflatten_dict

    flat = [flatten_dict(layer) for layer in layers]
    odd = set(ragged) & set(flat[0])
    if not odd:
        return layers, {}
    kept = [unflatten_dict({p: v for p, v in f.items() if p not in odd}) for f in flat]
    ragged = {f"{_UNROLLED}{i}": unflatten_dict({p: f[p] for p in odd}) for i, f in enumerate(flat)}
    return kept, {RAGGED_KEY: ragged}


def _deep_merge(a: Mapping, b: Mapping) -> dict:
    """``a`` and ``b`` (disjoint leaves) as one nested dict."""
    out = dict(a)
    for key, value in b.items():
        out[key] = _deep_merge(out[key], value) if key in out else value
    return out


def unstack_layers(tree: Mapping) -> dict:
    """The inverse of :func:`stack_layers`: ``.../layers`` split into ``layers_{i}``."""
    import jax

    out = dict(tree)
    for name, stack in tree.items():
        if not isinstance(stack, Mapping) or SCAN_KEY not in stack:
            continue
        layers = stack[SCAN_KEY]
        count = jax.tree.leaves(layers)[0].shape[0]
        ragged = stack.get(RAGGED_KEY, {})
        rest = {k: v for k, v in stack.items() if k not in (SCAN_KEY, RAGGED_KEY)}
        for i in range(count):
            layer = jax.tree.map(lambda a, i=i: a[i], dict(layers))
            layer = _deep_merge(layer, ragged.get(f"{_UNROLLED}{i}", {}))
            for prefix, key in _BESIDE.items():
                if key in layer:
                    rest[f"{prefix}{i}"] = layer.pop(key)
            rest[f"{_UNROLLED}{i}"] = layer
        out[name] = rest
    return out


def to_layout(tree: Mapping, scanned: bool, ragged: tuple[tuple[str, ...], ...] = ()) -> dict:
    """``tree`` in the scanned (``True``) or unrolled layout, whichever it is in now.

    A checkpoint's parameters load into either model: the layout is read off the tree.
    ``ragged``: as :func:`stack_layers` (:func:`ragged_paths` of the model's config).
    """
    is_scanned = any(isinstance(s, Mapping) and SCAN_KEY in s for s in tree.values())
    if is_scanned == scanned:
        return dict(tree)
    return stack_layers(tree, ragged) if scanned else unstack_layers(tree)


def _split(tree):
    """``(groups, rest)``: one tree per ``layers`` subtree (with its dict path) and the others.

    Each group holds one stack's layers, whose leaves share one leading length (the encoder's
    and the decoder's may differ).
    """
    if not isinstance(tree, Mapping):
        return [], tree
    groups, rest = [], {}
    for key, value in tree.items():
        if key == SCAN_KEY:
            groups.append({key: value})
        elif isinstance(value, Mapping):
            inner, r = _split(value)
            groups.extend({key: g} for g in inner)
            rest[key] = r
        else:
            rest[key] = value
    return groups, rest


def _merge(a, b):
    """The union of two trees with disjoint leaves (a group of :func:`_split` and the rest)."""
    if not isinstance(a, Mapping):
        return a
    out = dict(b)
    for key, value in a.items():
        out[key] = _merge(value, b[key]) if key in b else value
    return out


class LayerwiseState(NamedTuple):
    """:func:`per_layer`'s state: the inner state over each layer's slice, and the rest's."""

    per_layer: Any
    rest: Any


def per_layer(tx):
    """``tx`` on each layer of the stacked ``layers`` subtrees, and on the other leaves.

    Args:
        tx: an ``optax.GradientTransformation`` whose update of a leaf reads that leaf only
            (Adafactor, Adam, ...): it is vmapped over the stacked leaves' leading axis.

    Returns:
        An ``optax.GradientTransformation`` over the scanned model's parameters giving, layer
        by layer, what ``tx`` gives on the unrolled model's (:func:`stack_layers`). Its state
        is a :class:`LayerwiseState`: a tuple of per-layer states, one per stack (leaves with
        its leading ``L`` axis, step counts too), and the rest's.
    """
    import jax
    import optax

    def init(params):
        groups, rest = _split(params)
        return LayerwiseState(tuple(jax.vmap(tx.init)(g) for g in groups), tx.init(rest))

    def update(updates, state, params=None):
        u_groups, u_rest = _split(updates)
        p_groups, p_rest = _split(params) if params is not None else ([None] * len(u_groups), None)
        out, s_rest = tx.update(u_rest, state.rest, p_rest)
        states = []
        for u, s, p in zip(u_groups, state.per_layer, p_groups, strict=True):
            if p is None:
                new, s = jax.vmap(lambda u, s: tx.update(u, s))(u, s)
            else:
                new, s = jax.vmap(tx.update)(u, s, p)
            states.append(s)
            out = _merge(new, out)
        return out, LayerwiseState(tuple(states), s_rest)

    return optax.GradientTransformation(init, update)


def _sub_jaxprs(eqn):
    """The jaxprs an equation calls (``pjit``, ``custom_vjp``, ``remat``, ``cond`` ...)."""
    from jax.extend.core import ClosedJaxpr, Jaxpr

    for value in eqn.params.values():
        items = value if isinstance(value, (tuple, list)) else (value,)
        for item in items:
            if isinstance(item, ClosedJaxpr):
                yield item.jaxpr
            elif isinstance(item, Jaxpr):
                yield item


def _scans(jaxpr) -> list:
    """The ``scan`` equations of ``jaxpr`` and of what it calls, not those inside a scan."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "scan":
            found.append(eqn)
        else:
            for sub in _sub_jaxprs(eqn):
                found.extend(_scans(sub))
    return found


def loop_cost(jaxpr, cost: Callable[[Any], tuple[float, float]]) -> tuple[float, float]:
    """What XLA's cost analysis of ``jaxpr`` leaves out: its scans' bodies past the first pass.

    XLA prices a loop's body once. For each scan of length ``n`` (outermost first, nested ones
    recursively), the whole program's count is the lowered program's plus ``n - 1`` more
    bodies, each with its own nested scans' extra passes: ``extra(J) = sum over scans s of
    (n_s - 1) C(body_s) + n_s extra(body_s)``.

    Args:
        jaxpr: a traced program's ``Jaxpr`` (``jax.stages.Traced.jaxpr.jaxpr``).
        cost: ``ClosedJaxpr -> (flops, bytes accessed)``, XLA's count of one lowered body.

    Returns:
        ``(flops, bytes accessed)`` to add to the lowered program's cost analysis; ``(0, 0)``
        without scans.
    """
    flops = accessed = 0.0
    for eqn in _scans(jaxpr):
        n = eqn.params["length"]
        body = eqn.params["jaxpr"]
        once = cost(body)
        inner = loop_cost(body.jaxpr, cost)
        flops += (n - 1) * once[0] + n * inner[0]
        accessed += (n - 1) * once[1] + n * inner[1]
    return flops, accessed


def xla_cost(cost) -> tuple[float, float]:
    """``(flops, bytes accessed)`` of an XLA cost analysis (``Lowered`` or ``Compiled``)."""
    if isinstance(cost, (list, tuple)):  # older JAX: one dict per computation
        cost = cost[0]
    cost = cost or {}
    return float(cost.get("flops", 0.0)), float(cost.get("bytes accessed", 0.0))


def whole_cost(traced, lowered) -> tuple[float, tuple[float, float]]:
    """``(flops, (flops factor, bytes factor))`` of a traced and lowered step, every loop counted.

    The factors take XLA's once-per-loop counts (of ``lowered``, or of its compiled program)
    to every pass: ``1.0`` for a program without scans.

    Args:
        traced: the step's ``jax.stages.Traced``.
        lowered: ``traced.lower()``.
    """
    looped = xla_cost(lowered.cost_analysis())
    extra = loop_cost(traced.jaxpr.jaxpr, body_cost)
    whole = tuple(x + e for x, e in zip(looped, extra, strict=True))
    return whole[0], tuple(w / x if x else 1.0 for w, x in zip(whole, looped, strict=True))


def body_cost(body) -> tuple[float, float]:
    """``(flops, bytes accessed)`` of one pass of a scan's body (a ``ClosedJaxpr``).

    The body is lowered on its own (unpartitioned) and priced by XLA's cost analysis of the
    lowered program: 2 s of CPU for ``base``'s micro-batch body, where tracing the one-batch
    step again took 10 s. The ``cost`` of :func:`loop_cost`.
    """
    import jax
    from jax.extend.core import jaxpr_as_fun

    return xla_cost(jax.jit(jaxpr_as_fun(body)).lower(*body.in_avals).cost_analysis())
