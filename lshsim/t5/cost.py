"""FLOPs per token from XLA's own cost analysis of the compiled forward and training passes.

Nothing is allocated: the functions are lowered on abstract parameters and batches
(``jax.ShapeDtypeStruct``) and compiled for the local backend, and the compiled executable's
``cost_analysis()["flops"]`` is divided by the tokens of the batch (encoder plus decoder
tokens; ``ragged`` experts are priced as their grouped matmul,
:func:`lshsim.t5.experts.priced_on_host`, not as the CPU's dense fallback). The forward pass
is the teacher-forced model on one span-corruption batch at the
config's ``input_length`` (and the targets length span corruption gives it); the training pass
is the gradient of the loss (cross-entropy plus z-loss, router losses when configured), without
the optimiser update.

:func:`comparison` prices the variants the paper compares against the plain config: AltUp with
K=2 and K=4, SameUp, Sum, each lookup (the paper's three, product keys and hashed n-grams),
and a plain transformer whose layers are K times wider (:func:`widened_transformer`), the
quadratic cost AltUp avoids.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from lshsim._validate import check_int
from lshsim.t5.budget import check_lengths
from lshsim.t5.configs import T5Config, get_config
from lshsim.t5.data.spans import compute_input_and_target_lengths
from lshsim.t5.experts import priced_on_host
from lshsim.t5.lookups import LOOKUPS
from lshsim.t5.scan import body_cost, loop_cost, xla_cost

__all__ = ["check_lengths", "comparison", "comparison_configs", "flops_per_token"]


def _flops(fn, *args) -> float:
    """XLA's FLOPs of ``jax.jit(fn)(*args)``, every pass of its scans counted.

    XLA's cost analysis prices a loop's body once: the scanned layers of ``scan_layers``
    (forward and backward) get their other passes from :func:`lshsim.t5.scan.loop_cost`.
    """
    traced = jax.jit(fn).trace(*args)
    flops, _ = xla_cost(traced.lower().compile().cost_analysis())
    return flops + loop_cost(traced.jaxpr.jaxpr, body_cost)[0]


def flops_per_token(
    config: T5Config | str,
    *,
    input_length: int | None = None,
    target_length: int | None = None,
    batch_size: int = 1,
) -> dict[str, Any]:
    """XLA's FLOPs per token of ``config``'s forward pass and of its loss gradient.

    Args:
        config: a config or its name.
        input_length: encoder tokens (default: the config's); see :func:`check_lengths`.
        target_length: decoder tokens (default: what span corruption needs).
        batch_size: examples in the priced batch (FLOPs per token barely depend on it).

    Returns:
        ``{"flops_per_token", "train_flops_per_token", "input_length", "target_length",
        "batch_size"}``.
    """
    from lshsim.t5.model import T5
    from lshsim.t5.params import abstract_params
    from lshsim.t5.steps import make_objective

    cfg = get_config(config)
    input_length, target_length = check_lengths(input_length, target_length)
    batch_size = check_int("batch_size", batch_size, 1)
    length = input_length or cfg.input_length
    targets = target_length or compute_input_and_target_lengths(length)[1]
    tokens = batch_size * (length + targets)
    params = abstract_params(cfg)
    model = T5(cfg)

    def spec(n):
        return jax.ShapeDtypeStruct((batch_size, n), jnp.int32)

    batch = {
        "encoder_input_tokens": spec(length),
        "decoder_input_tokens": spec(targets),
        "decoder_target_tokens": spec(targets),
        "decoder_loss_weights": jax.ShapeDtypeStruct((batch_size, targets), jnp.float32),
    }

    def forward(p, b):
        return model.apply(
            {"params": p},
            b["encoder_input_tokens"],
            b["decoder_input_tokens"],
            b["decoder_target_tokens"],
        )

    objective = make_objective(cfg)

    def loss(p, b, key):
        return objective(p, b, key)[0]

    key = jax.eval_shape(lambda: jax.random.key(0))
    with priced_on_host():  # ragged experts: the grouped matmul's FLOPs, not CPU's fallback
        fwd = _flops(forward, params, batch)
        train = _flops(jax.grad(loss), params, batch, key)
    return {
        "flops_per_token": fwd / tokens,
        "train_flops_per_token": train / tokens,
        "input_length": length,
        "target_length": targets,
        "batch_size": batch_size,
    }


def widened_transformer(config: T5Config, k: int) -> T5Config:
    """A plain transformer ``k`` times wider: ``d_model``, heads and ``d_ff`` all times ``k``."""
    return config.replace(
        name=f"{config.name}-x{k}",
        d_model=k * config.d_model,
        num_heads=k * config.num_heads,
        d_ff=k * config.d_ff,
        memory="none",
        lookup="none",
    )


def comparison_configs(config: T5Config | str) -> dict[str, T5Config]:
    """The priced variants of a plain ``config``, by name (``baseline`` first)."""
    base = get_config(config).replace(memory="none", lookup="none")
    out = {"baseline": base}
    out["altup K=2"] = base.replace(memory="altup", memory_k=2)
    out["altup K=4"] = base.replace(memory="altup", memory_k=4)
    out["altup K=2 (collapsed)"] = base.replace(
        memory="altup", memory_k=2, memory_cross="sum", memory_output="sum"
    )
    out["sameup K=2"] = base.replace(memory="sameup", memory_k=2)
    out["sum K=2"] = base.replace(memory="sum", memory_k=2)
    for name, lookup in LOOKUPS.items():  # each lookup's example (its ``cost_example``)
        label, changes = lookup.cost_example
        out[label] = base.replace(lookup=name, **changes)
    out["plain width 2d"] = widened_transformer(base, 2)
    out["plain width 4d"] = widened_transformer(base, 4)
    return out


def comparison(config: T5Config | str, **kwargs: Any) -> list[dict[str, Any]]:
    """:func:`flops_per_token` of every :func:`comparison_configs` variant.

    Each row also has its ratios to the baseline (``ratio``, ``train_ratio``).
    """
    rows = []
    for name, cfg in comparison_configs(config).items():
        rows.append({"name": name, **flops_per_token(cfg, **kwargs)})
    base = rows[0]
    for row in rows:
        row["ratio"] = row["flops_per_token"] / base["flops_per_token"]
        row["train_ratio"] = row["train_flops_per_token"] / base["train_flops_per_token"]
    return rows
