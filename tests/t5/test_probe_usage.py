"""The probe's score-weighted usage reads the weights the lookup applied.

A softmax layer weighs its bucket by the router probability and sows it as ``weight``; a
product-key layer weighs its top-k slots by the softmax of their scores and sows them as
``weights``; :meth:`~lshsim.t5.lookups.Lookup.probe_weights` returns them (product keys: head
0's), and the probe's ``_w`` metrics are :func:`lshsim.t5.usage.usage_metrics` of them.
One layer each (no full model), so the test stays cheap.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from flax.core.meta import unbox  # noqa: E402

from lshsim.t5 import memory, probe  # noqa: E402
from lshsim.t5.lookups import lookup_of  # noqa: E402
from lshsim.t5.usage import usage_metrics  # noqa: E402

from .conftest import MICRO  # noqa: E402


def _layer(cfg, seed: int = 0):
    """One partial expert, its variables, inputs and the sown intermediates."""
    module = memory.PartialExpert(cfg, 0, 0)
    rng = np.random.default_rng(seed)
    ids = jnp.asarray(rng.integers(1, cfg.vocab_size, (3, 5)), jnp.int32)
    x = jnp.asarray(rng.standard_normal((3, 5, cfg.d_model)), jnp.float32)
    variables = unbox(module.init(jax.random.key(seed), x, ids))
    _, inter = module.apply(variables, x, ids, mutable=["intermediates"])
    return variables, x, inter["intermediates"]


def test_softmax_layer_sows_the_router_probability():
    """weight = softmax(x W)[bucket], and probe_weights returns it."""
    cfg = MICRO.replace(lookup="softmax", buckets=16)
    variables, x, inter = _layer(cfg)
    logits = np.asarray(x, np.float64) @ np.asarray(variables["params"]["router"])
    prob = np.exp(logits - logits.max(-1, keepdims=True))
    prob /= prob.sum(-1, keepdims=True)
    bucket = np.asarray(inter["bucket"][0])
    want = np.take_along_axis(prob, bucket[..., None], -1)[..., 0]
    got = np.asarray(lookup_of(cfg).probe_weights(cfg, inter))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_productkey_layer_sows_its_topk_softmax_weights():
    """Head 0's weights over its k slots: positive, summing to 1, the slots' shape."""
    cfg = MICRO.replace(lookup="productkey", buckets=64, topk=2, lookup_heads=2)
    _, _, inter = _layer(cfg, 1)
    w = np.asarray(lookup_of(cfg).probe_weights(cfg, inter))
    ids, _ = lookup_of(cfg).probe_record(cfg, inter)
    assert w.shape == np.shape(ids) == (3, 5, 2)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-5)
    assert (w > 0).all() and not np.allclose(w, 0.5)


def test_layer_stats_weigh_the_usage_with_the_recorded_weights():
    """kl_uniform_w / gini_xlm_w of a probe row equal the metrics of both sentences' buckets
    with their weights, and differ from the unweighted ones."""
    cfg = MICRO.replace(lookup="softmax", buckets=16)
    rng = np.random.default_rng(3)
    recs, toks = [], []
    for _ in range(2):
        b = rng.integers(0, 16, (4, 6))
        recs.append((b, rng.standard_normal((4, 6, 8)).astype(np.float32), rng.random((4, 6))))
        toks.append(rng.integers(3, 50, (4, 6)))
    st = probe.layer_stats("encoder/0", 0.5, cfg, *recs, *toks, router_draws=0, seed=0)
    ids = np.concatenate([r[0].ravel() for r in recs])
    ref = usage_metrics(ids, 16, np.concatenate([r[2].ravel() for r in recs]))
    for key in ("kl_uniform_w", "gini_xlm_w", "top90_w"):
        assert st["usage"][key] == pytest.approx(ref[key], rel=1e-12)
    assert st["usage"]["gini_xlm_w"] != pytest.approx(st["usage"]["gini_xlm"], abs=1e-6)
