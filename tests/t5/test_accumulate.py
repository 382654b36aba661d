"""Gradient accumulation: k micro-batches make the same update as the whole batch."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from lshsim.t5.options import TrainOptions  # noqa: E402
from lshsim.t5.steps import init_state, make_optimizer, make_train_step, split_micro  # noqa: E402

B, L, T = 8, 16, 8


def _batch():
    """A batch whose examples carry different numbers of target tokens (weights 0/1), so a
    per-micro-batch mean would give a different loss and gradient than the whole batch's."""
    rng = np.random.default_rng(0)
    weights = (rng.random((B, T)) < np.linspace(0.2, 1.0, B)[:, None]).astype(np.int32)
    return {
        "encoder_input_tokens": rng.integers(1, 300, (B, L)).astype(np.int32),
        "decoder_input_tokens": rng.integers(1, 300, (B, T)).astype(np.int32),
        "decoder_target_tokens": rng.integers(1, 300, (B, T)).astype(np.int32),
        "decoder_loss_weights": weights,
    }


@pytest.fixture(scope="module")
def steps(micro):
    """The initial state and the state and metrics after one step with k = 1 and k = 4."""
    opt = make_optimizer(micro, learning_rate=1.0)
    state = init_state(micro, opt, 0)
    batch = _batch()
    out = {k: jax.jit(make_train_step(micro, opt, 0, k))(state, batch) for k in (1, 4)}
    return state, out


def test_accumulated_update_equals_full_batch(steps):
    """One T5 Adafactor step with 4 micro-batches moves every parameter as the whole batch does.

    Tolerance: the two differ only in the order float32 sums are taken (the gradient over 4
    micro-batches is added up in another order), a few ulps of each gradient entry; Adafactor's
    first step is g / sqrt(g^2 + 1e-30) clipped, so the update's error is relative to the
    update: 1e-4 of the largest update of each tensor, plus 2 ulps of the parameter itself.
    """
    state, out = steps
    before = jax.tree_util.tree_leaves(state["params"])
    one = jax.tree_util.tree_leaves(out[1][0]["params"])
    four = jax.tree_util.tree_leaves(out[4][0]["params"])
    for p0, p1, p4 in zip(before, one, four, strict=True):
        p0, p1, p4 = (np.asarray(x, np.float64) for x in (p0, p1, p4))
        update = np.abs(p1 - p0).max()
        assert update > 1e-3  # the step moved the tensor, so equality is not vacuous
        ulp = 2 * np.spacing(np.abs(p1).astype(np.float32)).astype(np.float64)
        assert np.all(np.abs(p4 - p1) <= 1e-4 * update + ulp)


def test_accumulated_metrics_equal_full_batch(steps):
    """Loss, z-loss and accuracy are token means over the whole batch for any k."""
    _, out = steps
    m1, m4 = jax.device_get(out[1][1]), jax.device_get(out[4][1])
    assert set(m1) == set(m4)
    for key in m1:
        np.testing.assert_allclose(float(m4[key]), float(m1[key]), rtol=1e-6, err_msg=key)
    assert int(out[4][0]["step"]) == 1


def test_split_micro_is_strided():
    """Micro-batch j holds examples j, j + k, ...; a k not dividing the batch is refused."""
    x = np.arange(8 * 3).reshape(8, 3)
    parts = np.asarray(split_micro({"x": x}, 4)["x"])
    assert parts.shape == (4, 2, 3)
    np.testing.assert_array_equal(parts[1], x[[1, 5]])
    with pytest.raises(ValueError, match="accumulate must divide the batch"):
        split_micro({"x": x}, 3)


def test_options_validate_accumulate(micro):
    assert TrainOptions.from_config(micro, batch_size=8, accumulate=4).to_dict()["accumulate"] == 4
    with pytest.raises(ValueError, match="accumulate must divide the batch"):
        TrainOptions.from_config(micro, batch_size=6, accumulate=4)
    with pytest.raises(ValueError, match="accumulate must be an integer >= 1"):
        TrainOptions.from_config(micro, accumulate=0)
    assert (
        TrainOptions.from_dict({"batch_size": 4, "input_length": 8, "warmup_steps": 1}).accumulate
        == 1
    )
