"""The probe's score-weighted usage reads the weights the lookup applied.

A softmax layer weighs its bucket by the router probability; a product-key layer weighs its
top-k slots by the softmax of their scores. The recorded weights must be those (recomputed
here from the recorded inputs and the parameters), and the probe's ``_w`` metrics must be
:func:`lshsim.t5.usage.usage_metrics` of them.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from lshsim.t5 import probe  # noqa: E402
from lshsim.t5.usage import usage_metrics  # noqa: E402

from .test_probe import PROBED, _pairs  # noqa: E402


def test_softmax_weights_are_the_router_probability_and_feed_the_weighted_metrics():
    """Recorded weight = softmax(x W)[bucket]; kl_uniform_w / gini_xlm_w of a probe row equal
    the metrics of the two sentences' buckets with those weights (and differ from the
    unweighted ones: the router probabilities are not all equal)."""
    # test_probe's config, parameters, pairs and batch: its compiled recorder is reused
    config = PROBED.replace(lookup="softmax", buckets=16)
    params = probe.initial_params(config, 1)
    a, b = _pairs(config)
    rec_a = probe.record_layers(config, params, a, batch=3)
    rec_b = probe.record_layers(config, params, b, batch=3)
    bucket, x, w = rec_a["encoder/0"]
    router = np.asarray(params["encoder"]["layers_0"]["expert"]["router"], np.float64)
    logits = x.astype(np.float64) @ router
    prob = np.exp(logits - logits.max(-1, keepdims=True))
    prob /= prob.sum(-1, keepdims=True)
    want = np.take_along_axis(prob, bucket[..., None], axis=-1)[..., 0]
    np.testing.assert_allclose(w, want, rtol=1e-4)
    st = probe.layer_stats(
        "encoder/0", 0.5, config, rec_a["encoder/0"], rec_b["encoder/0"], a, b,
        router_draws=0, seed=0,
    )  # fmt: skip
    (_, _, wb) = rec_b["encoder/0"]
    ids = np.concatenate([bucket.ravel(), rec_b["encoder/0"][0].ravel()])
    ref = usage_metrics(ids, 16, np.concatenate([w.ravel(), wb.ravel()]))
    assert st["usage"]["kl_uniform_w"] == pytest.approx(ref["kl_uniform_w"], rel=1e-12)
    assert st["usage"]["gini_xlm_w"] == pytest.approx(ref["gini_xlm_w"], rel=1e-12)
    assert st["usage"]["gini_xlm_w"] != pytest.approx(st["usage"]["gini_xlm"], abs=1e-6)
