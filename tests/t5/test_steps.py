"""Training: T5's Adafactor against a NumPy reference, the loss, exact resume, failures."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.t5 import NonFiniteLossError  # noqa: E402
from lshsim.t5 import checkpoint as ckpt  # noqa: E402
from lshsim.t5.loop import evaluate_run, train  # noqa: E402
from lshsim.t5.steps import (  # noqa: E402
    cross_entropy,
    init_state,
    make_optimizer,
    make_train_step,
    rsqrt_schedule,
)


def _adafactor_reference(param, grads, lr):
    """T5's Adafactor (Shazeer & Stern 2018) in NumPy: decay 1 - t^-0.8, factored second moments
    for matrices whose two dimensions are >= 128, update clipping at RMS 1, step scaled by
    max(RMS(param), 1e-3), no momentum. Returns the parameter after each gradient."""
    p = param.astype(np.float64).copy()
    factored = p.ndim == 2 and min(p.shape) >= 128
    vr, vc, v = np.zeros(p.shape[0]), np.zeros(p.shape[1] if p.ndim == 2 else 1), np.zeros(p.shape)
    out = []
    for t, g in enumerate(grads, start=1):
        g = g.astype(np.float64)
        decay = 1 - t**-0.8
        g2 = g * g + 1e-30
        if factored:
            vr = decay * vr + (1 - decay) * g2.mean(axis=1)
            vc = decay * vc + (1 - decay) * g2.mean(axis=0)
            u = g / np.sqrt(np.outer(vr / vr.mean(), vc))
        else:
            v = decay * v + (1 - decay) * g2
            u = g / np.sqrt(v)
        u = u / max(1.0, np.sqrt(np.mean(u * u)) / 1.0)
        scale = max(np.sqrt(np.mean(p * p)), 1e-3)
        p = p - lr * scale * u
        out.append(p.copy())
    return out


@pytest.mark.parametrize("shape", [(160, 130), (130, 7), (9,)])
def test_optimizer_is_t5_adafactor(micro, shape):
    rng = np.random.default_rng(0)
    param = rng.normal(size=shape).astype(np.float32)
    grads = [rng.normal(size=shape).astype(np.float32) * s for s in (1.0, 3.0, 0.1)]
    opt = make_optimizer(micro.replace(warmup_steps=4), learning_rate=0.02)
    state = jax.jit(opt.init)(jnp.asarray(param))
    p = jnp.asarray(param)
    ref = _adafactor_reference(param, grads, lr=0.02 / 2.0)  # rsqrt(max(step, 4)) = 1/2

    @jax.jit  # one program per shape (eagerly, each of the update's ops compiled its own)
    def update(g, state, p):
        upd, state = opt.update(g, state, p)
        return p + upd, state

    for g, want in zip(grads, ref, strict=True):
        p, state = update(jnp.asarray(g), state, p)
        np.testing.assert_allclose(np.asarray(p), want, rtol=2e-5, atol=1e-6)


def test_rsqrt_schedule():
    s = rsqrt_schedule(1.0, 10000)
    assert float(s(0)) == pytest.approx(0.01)
    assert float(s(10000)) == pytest.approx(0.01)
    assert float(s(40000)) == pytest.approx(0.005)


def test_cross_entropy_matches_numpy():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(2, 5, 11)).astype(np.float32) * 3
    targets = rng.integers(0, 11, (2, 5))
    weights = (rng.random((2, 5)) > 0.3).astype(np.float32)
    args = (jnp.asarray(logits), jnp.asarray(targets), jnp.asarray(weights))
    got = jax.device_get(jax.jit(cross_entropy, static_argnums=3)(*args, 1e-4))
    m = logits.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[..., 0]
    ce = lse - np.take_along_axis(logits, targets[..., None], -1)[..., 0]
    assert got["loss"] == pytest.approx((ce * weights).sum(), rel=1e-5)
    assert got["z_loss"] == pytest.approx((1e-4 * lse**2 * weights).sum(), rel=1e-5)
    assert got["correct"] == ((logits.argmax(-1) == targets) * weights).sum()
    assert got["weight"] == weights.sum()


def test_accuracy_counts_a_target_tied_for_the_maximum():
    """Correct = the target's logit is the largest: argmax's rule except on exact ties."""
    logits = jnp.asarray([[[1.0, 3.0, 3.0, 0.0], [2.0, 1.0, 0.0, 2.0]]])
    targets = jnp.asarray([[2, 1]])
    got = jax.jit(cross_entropy, static_argnums=3)(logits, targets, jnp.ones((1, 2)), 0.0)
    assert float(got["correct"]) == 1.0  # row 0: tied max (argmax says 1); row 1: not max


def _batch(cfg, rng, b=4, li=16, lt=8):
    tgt = rng.integers(3, cfg.vocab_size, (b, lt)).astype(np.int32)
    tgt[:, -2:] = 0
    dec = np.concatenate([np.zeros((b, 1), np.int32), tgt[:, :-1]], axis=1)
    return {
        "encoder_input_tokens": rng.integers(3, cfg.vocab_size, (b, li)).astype(np.int32),
        "decoder_input_tokens": dec,
        "decoder_target_tokens": tgt,
        "decoder_loss_weights": (tgt > 0).astype(np.float32),
    }


def test_step_overfits_one_batch(micro):
    cfg = micro.replace(warmup_steps=1)
    opt = make_optimizer(cfg, learning_rate=0.1)
    step = jax.jit(make_train_step(cfg, opt))
    state = init_state(cfg, opt, 0)
    batch = _batch(cfg, np.random.default_rng(2))
    losses = []
    for _ in range(30):
        state, m = step(state, batch)
        losses.append(float(m["loss"]))
        assert bool(m["finite"])
    assert int(state["step"]) == 30
    assert losses[-1] < 0.5 * losses[0]


def _train_records(out):
    return [r for r in ckpt.read_metrics(out) if r["split"] == "train"]


def test_resume_after_kill_reproduces_losses_exactly(micro, small_corpus, tmp_path):
    kw = dict(corpus=[small_corpus], checkpoint_every=3, eval_every=100, progress=False)
    full = train(micro, tmp_path / "a", steps=7, **kw)

    class Killed(Exception):
        pass

    def kill(step, record):
        if step == 5:  # after the checkpoint at 3, before the one at 6
            raise Killed

    with pytest.raises(Killed):
        train(micro, tmp_path / "b", steps=7, on_step=kill, **kw)
    with ckpt.manager(tmp_path / "b") as mngr:
        assert mngr.latest_step() == 3
    resumed = train(micro, tmp_path / "b", steps=7, resume=True, **kw)
    a, b = _train_records(tmp_path / "a"), _train_records(tmp_path / "b")
    assert [r["step"] for r in b] == list(range(1, 8))
    assert [r["loss"] for r in a] == [r["loss"] for r in b]  # bit for bit
    assert resumed["final_eval"] == full["final_eval"]
    assert resumed["initial_eval"] is None
    # lshsim eval of the finished run gives the run's own final held-out numbers
    ev = evaluate_run(tmp_path / "a")
    assert ev["step"] == 7
    assert ev["loss"] == pytest.approx(full["final_eval"]["loss"], rel=1e-6)


def test_training_lowers_held_out_loss(micro, small_corpus, tmp_path):
    res = train(
        micro, tmp_path / "r", steps=40, corpus=[small_corpus], learning_rate=0.1, progress=False
    )
    assert res["final_eval"]["loss"] < res["initial_eval"]["loss"] - 1.0
    assert res["final_eval"]["accuracy"] > res["initial_eval"]["accuracy"]


def test_non_finite_loss_stops_and_keeps_no_bad_checkpoint(micro, small_corpus, tmp_path):
    """At learning rate 1e38 the first update already diverges: the checkpoint step 1 wrote has
    a NaN held-out loss, so it is not good and is not kept (a divergence after good checkpoints
    keeps those: tests/t5/test_checkpoint_faults.py)."""
    out = tmp_path / "nan"
    with pytest.raises(
        NonFiniteLossError,
        match=r"^(held-out )?loss: non-finite .* at step \d+; last good checkpoint: none in ",
    ):
        train(
            micro,
            out,
            steps=6,
            corpus=[small_corpus],
            learning_rate=1e38,
            checkpoint_every=1,
            progress=False,
        )
    with ckpt.manager(out) as mngr:
        steps = mngr.all_steps()
    assert not steps  # nothing after the last good state (none)
    records = _train_records(out)
    assert records
    assert all(np.isfinite(r["loss"]) for r in records)


def test_existing_run_and_other_config_are_refused(micro, small_corpus, tmp_path):
    out = tmp_path / "r"
    train(micro, out, steps=1, corpus=[small_corpus], progress=False)
    with pytest.raises(ValueError, match="already holds a training run; pass --resume"):
        train(micro, out, steps=2, corpus=[small_corpus], progress=False)
    other = micro.replace(name="micro2", d_ff=96)
    with pytest.raises(ValueError, match=r"^checkpoint: .* trained with config 'micro'.*d_ff"):
        train(other, out, steps=2, resume=True, progress=False)
    with pytest.raises(ValueError, match=r"^batch: the run in .* used 4"):
        train(micro, out, steps=2, resume=True, batch_size=8, progress=False)
    # a checkpoint whose shapes do not fit the recorded config
    _, opts = ckpt.read_run(out)
    ckpt.write_run(out, other.replace(name="micro"), opts)
    with pytest.raises(ValueError, match=r"^checkpoint: step 1 .* does not fit this model"):
        evaluate_run(out)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"steps": 0}, "^steps must be"),
        ({"corpus": ["/nonexistent/x.txt"]}, "^corpus: no such file"),
        ({"input_length": 3}, "^input_length"),
        ({"batch_size": 0}, "^batch must be"),
        ({"learning_rate": -1.0}, "^learning_rate must be"),
    ],
)
def test_bad_options(micro, small_corpus, tmp_path, kw, message):
    args = {"steps": 2, "corpus": [small_corpus], "progress": False, **kw}
    with pytest.raises(ValueError, match=message):
        train(micro, tmp_path / "x", **args)
    assert not (tmp_path / "x" / "run.json").exists()


def test_empty_corpus(micro, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(ValueError, match=r"^corpus: "):
        train(micro, tmp_path / "x", steps=2, corpus=[empty], progress=False)


@pytest.mark.slow
def test_sharded_step_equals_single_device_step(small_corpus, tmp_path_factory):
    """Three data-parallel steps on 4 forced CPU devices equal one device's: run in the
    subprocess of tests/t5/test_sharding.py's checks (``check_data_parallel`` in
    tests/t5/sharding_checks.py), once per test run for both files."""
    from .sharding_checks import run_once

    res = run_once(tmp_path_factory, small_corpus)["data_parallel"]
    assert res["devices"] == 4
    assert res["batch_devices_4"] == 4 and res["batch_devices_1"] == 1
    np.testing.assert_allclose(res["loss_4"], res["loss_1"], rtol=1e-5)
    for a, b in zip(res["params_4"], res["params_1"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
