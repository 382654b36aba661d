"""Grouped experts: where ``auto`` runs ``ragged``, and ragged priced as its grouped matmul.

Their equality with ``gather`` (values and gradients, one device and a 2 x 2 mesh) is
:func:`tests.t5.sharding_checks.check_ragged`; the model's forward pass with either is
tests/t5/test_memory.py's.
"""

from __future__ import annotations

import contextlib

import pytest

pytest.importorskip("jax")

import jax
import jax.numpy as jnp

from lshsim.t5.experts import priced_on_host, resolve_expert_impl
from lshsim.t5.lookups.router_layer import expert_mlp
from lshsim.t5.plan import target_config
from tests.t5.conftest import MICRO


@pytest.mark.parametrize(
    ("platform", "want"),
    [
        ("gpu", "ragged"),
        ("cuda", "ragged"),
        ("tpu", "ragged"),
        ("accelerator", "ragged"),
        ("cpu", "gather"),
    ],
)
def test_auto_is_ragged_on_an_accelerator_and_gather_on_cpu(platform, want):
    assert resolve_expert_impl("auto", platform) == want
    assert resolve_expert_impl("gather", platform) == "gather"  # an explicit choice is kept
    assert resolve_expert_impl("ragged", platform) == "ragged"


def test_an_unknown_implementation_is_refused():
    with pytest.raises(ValueError, match="expert_impl: unknown value 'dense'"):
        resolve_expert_impl("dense", "cpu")


def test_the_plan_assumes_its_accelerator():
    cfg = MICRO.replace(lookup="softmax", buckets=16, expert_rank=4)
    assert cfg.expert_impl == "auto" and target_config(cfg).expert_impl == "ragged"
    assert target_config(cfg.replace(expert_impl="gather")).expert_impl == "gather"


def _flops(impl: str, priced: bool) -> float:
    """XLA's FLOPs of one expert layer's value and gradients (64 tokens, 16 buckets, r = 8)."""
    n, d, r, tokens = 16, 32, 8, 64
    x = jax.ShapeDtypeStruct((tokens, d), jnp.float32)
    wi = jax.ShapeDtypeStruct((n, d, r), jnp.float32)
    wo = jax.ShapeDtypeStruct((n, r, d), jnp.float32)
    bucket = jax.ShapeDtypeStruct((tokens,), jnp.int32)

    def loss(x, wi, wo, bucket):
        return jnp.sum(expert_mlp(x, wi, wo, bucket, impl) ** 2)

    fn = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    with priced_on_host() if priced else contextlib.nullcontext():
        cost = fn.lower(x, wi, wo, bucket).compile().cost_analysis()
    return float(cost["flops"])


def test_ragged_experts_are_priced_as_their_grouped_matmul():
    """On CPU, ragged_dot lowers to a product over all 16 buckets (about 16 x the expert
    FLOPs); priced as the grouped matmul it costs what gather does (the plan and cost)."""
    gather = _flops("gather", priced=False)
    assert _flops("ragged", priced=True) == pytest.approx(gather, rel=0.1)
    assert _flops("ragged", priced=False) > 4 * gather  # the CPU fallback, not priced
