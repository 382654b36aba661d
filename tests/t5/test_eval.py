"""Held-out evaluation: ``evaluate_run(examples=...)``, span-content sums, ``lshsim eval``."""

from __future__ import annotations

import json

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.cli.main import main  # noqa: E402
from lshsim.t5 import checkpoint as ckpt  # noqa: E402
from lshsim.t5.loop import evaluate_run, train  # noqa: E402
from lshsim.t5.steps import cross_entropy  # noqa: E402

#: Keys of every evaluation ``evaluate_run`` reports, besides ``config`` and ``step``.
KEYS = {
    "loss",
    "accuracy",
    "tokens",
    "content_loss",
    "content_accuracy",
    "content_tokens",
    "examples",
    "held_out_chunks",
}


@pytest.fixture(scope="module")
def run(micro, small_corpus, tmp_path_factory):
    """A 3-step micro run (batch 4) and train's summary, unrolled (``--no-scan-layers``, as
    runs before scanning was the default): ``eval`` and ``eval --bands`` read it in its own
    layout (test_checkpoint_faults.py evaluates scanned runs)."""
    out = tmp_path_factory.mktemp("eval") / "run"
    cfg = micro.replace(scan_layers=False)
    res = train(cfg, out, steps=3, corpus=[small_corpus], learning_rate=0.1, progress=False)
    return out, res


def test_default_is_the_runs_own_evaluation(run):
    """No ``examples``: exactly train's final evaluation (4 batches of 4), content included."""
    out, res = run
    ev = evaluate_run(out)
    assert set(ev) == KEYS | {"config", "step"}
    assert (ev["config"], ev["step"], ev["examples"]) == ("micro", 3, 16)
    final = res["final_eval"]
    assert set(final) == {k for k in KEYS if "tokens" in k or "loss" in k or "accuracy" in k}
    assert {k: ev[k] for k in final} == final
    assert set(res["initial_eval"]) == set(final)
    assert 0 < ev["content_tokens"] < ev["tokens"]
    assert 0.0 <= ev["content_accuracy"] <= 1.0
    assert ev["held_out_chunks"] > 16


@pytest.mark.parametrize("batch_size", [None, 2, 16])
def test_first_four_batches_are_the_final_eval(run, batch_size):
    """The first 4 x batch examples are train's, however they are batched."""
    out, res = run
    ev = evaluate_run(out, examples=16, batch_size=batch_size)
    final = res["final_eval"]
    assert ev["examples"] == 16
    for key in ("loss", "content_loss"):
        assert ev[key] == pytest.approx(final[key], rel=1e-6)
    for key in ("accuracy", "tokens", "content_accuracy", "content_tokens"):
        assert ev[key] == final[key]


def test_more_examples_round_up_to_whole_batches(run):
    out, res = run
    ev = evaluate_run(out, examples=37, batch_size=8)
    assert ev["examples"] == 40
    assert ev["tokens"] > res["final_eval"]["tokens"]
    assert evaluate_run(out, examples=3)["examples"] == 3  # the batch shrinks to ``examples``


def _held_out_batch(out, n):
    """The first ``n`` held-out examples, built as the memory studies' script used to."""
    from lshsim.t5.data.corpus import load_corpus, split_documents
    from lshsim.t5.data.spans import build_dataset
    from lshsim.t5.data.tokenizer import Tokenizer

    _, opts = ckpt.read_run(out)
    _, eval_docs = split_documents(
        load_corpus(opts["corpus"]), opts["eval_fraction"], seed=opts["seed"]
    )
    tok = Tokenizer.load(out / ckpt.TOKENIZER_FILE)
    ds = build_dataset(
        eval_docs,
        tok,
        seed=opts["seed"] + 1,
        input_length=opts["input_length"],
        target_length=opts["target_length"],
        noise_density=opts["noise_density"],
        mean_span=opts["mean_span"],
    )
    return tok, ds.eval_batches(n, 1)[0]


def test_content_sums_match_a_numpy_recomputation_from_logits(run):
    """One batch of 3: per-token cross-entropy and argmax in float64, sentinels/EOS masked."""
    from lshsim.t5.model import T5
    from lshsim.t5.steps import abstract_state, make_optimizer

    out, _ = run
    config, opts = ckpt.read_run(out)
    opt = make_optimizer(config, opts["learning_rate"], opts["warmup_steps"])
    with ckpt.manager(out, read_only=True) as mngr:
        params = ckpt.restore(mngr, abstract_state(config, opt))["params"]
    tok, batch = _held_out_batch(out, 3)
    # One compiled forward pass (applied eagerly, each of its ops compiled a program of its own)
    forward = jax.jit(
        lambda p, enc, dec, tgt: T5(config).apply({"params": p}, enc, dec, tgt, deterministic=True)
    )
    logits = np.asarray(
        forward(
            params,
            batch["encoder_input_tokens"],
            batch["decoder_input_tokens"],
            batch["decoder_target_tokens"],
        ),
        np.float64,
    )
    special = {*tok.sentinel_ids, tok.eos_id}
    sums = {"loss": 0.0, "correct": 0, "n": 0, "c_loss": 0.0, "c_correct": 0, "c_n": 0}
    targets, weights = batch["decoder_target_tokens"], batch["decoder_loss_weights"]
    for b in range(targets.shape[0]):
        for t in range(targets.shape[1]):
            if weights[b, t] == 0:
                continue
            row, y = logits[b, t], int(targets[b, t])
            ce = np.log(np.sum(np.exp(row - row.max()))) + row.max() - row[y]
            ok = int(np.argmax(row) == y)
            prefixes = ("",) if y in special else ("", "c_")
            for p in prefixes:
                sums[p + "loss"] += ce
                sums[p + "correct"] += ok
                sums[p + "n"] += 1
    ev = evaluate_run(out, examples=3)
    assert ev["tokens"] == sums["n"] and ev["content_tokens"] == sums["c_n"]
    assert 0 < sums["c_n"] < sums["n"]
    assert ev["loss"] == pytest.approx(sums["loss"] / sums["n"], rel=1e-5)
    assert ev["accuracy"] == sums["correct"] / sums["n"]
    assert ev["content_loss"] == pytest.approx(sums["c_loss"] / sums["c_n"], rel=1e-5)
    assert ev["content_accuracy"] == sums["c_correct"] / sums["c_n"]
    assert 0.0 <= ev["content_accuracy"] <= 1.0


def test_cross_entropy_content_sums_leave_out_the_special_ids():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(2, 6, 9)).astype(np.float32) * 3
    targets = rng.integers(0, 9, (2, 6))
    weights = (rng.random((2, 6)) > 0.2).astype(np.float32)
    args = (jnp.asarray(logits), jnp.asarray(targets), jnp.asarray(weights), 1e-4)
    plain = jax.device_get(cross_entropy(*args))
    assert set(plain) == {"loss", "z_loss", "correct", "weight"}  # the training step's sums
    got = jax.device_get(cross_entropy(*args, special_ids=(1, 7, 8)))
    for k in plain:
        assert got[k] == plain[k]
    content = weights * ~np.isin(targets, [1, 7, 8])
    lse = np.log(np.exp(logits.astype(np.float64)).sum(-1))
    ce = lse - np.take_along_axis(logits, targets[..., None], -1)[..., 0]
    assert got["content_loss"] == pytest.approx((ce * content).sum(), rel=1e-5)
    assert got["content_correct"] == ((logits.argmax(-1) == targets) * content).sum()
    assert got["content_weight"] == content.sum()


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"examples": 0}, r"^examples must be an integer >= 1, got 0$"),
        ({"examples": -5}, r"^examples must be an integer >= 1"),
        ({"examples": 2.5}, r"^examples must be an integer, got 2.5$"),
        ({"examples": "8"}, r"^examples must be an integer"),
        ({"examples": True}, r"^examples must be an integer"),
        ({"examples": 8, "batch_size": 0}, r"^batch_size must be an integer >= 1"),
    ],
)
def test_bad_examples_are_refused(run, kw, message):
    with pytest.raises(ValueError, match=message):
        evaluate_run(run[0], **kw)


def test_cli_eval_examples(run, capsys):
    """``lshsim eval --examples``: JSON with the content keys, and a text line."""
    out, res = run
    assert main(["eval", "--run", str(out), "--examples", "20", "--json"]) == 0
    ev = json.loads(capsys.readouterr().out)
    assert set(ev) == KEYS | {"config", "step"}
    assert ev["examples"] == 20 and ev["tokens"] > res["final_eval"]["tokens"]
    assert main(["eval", "--run", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("\n") == 1
    assert f"span-content loss {res['final_eval']['content_loss']:.4f}" in text
    assert f"accuracy {res['final_eval']['content_accuracy']:.4f}" in text
    assert "(16 examples)" in text
    assert main(["eval", "--run", str(out), "--examples", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "lshsim: error: examples must be an integer >= 1, got 0\n"


def test_cli_eval_bands(run, capsys):
    """``lshsim eval --bands`` (issue 34): the span-content loss split by the target's
    frequency band in the training split; the bands' tokens add up to ``content_tokens`` and
    their token-weighted losses average to ``content_loss``; the top band holds
    ceil(1% of the types seen in training)."""
    import math

    from lshsim.t5 import loop
    from lshsim.t5.bands import token_counts
    from lshsim.t5.data.corpus import load_corpus, split_documents
    from lshsim.t5.options import TrainOptions

    out, _ = run
    assert main(["eval", "--run", str(out), "--bands", "--json"]) == 0
    ev = json.loads(capsys.readouterr().out)
    bands = ev["bands"]
    assert [b["band"] for b in bands] == ["top 1%", "next 9%", "rest"]
    assert sum(b["tokens"] for b in bands) == ev["content_tokens"]
    mean = sum(b["tokens"] * b["loss"] for b in bands) / ev["content_tokens"]
    assert mean == pytest.approx(ev["content_loss"], rel=1e-5)
    config, recorded = ckpt.read_run(out)
    opts = TrainOptions.from_dict(recorded)
    tok, _ = loop.held_out_dataset(config, opts, out)
    train_docs, _ = split_documents(load_corpus(list(opts.corpus)), opts.eval_fraction, opts.seed)
    seen = int(np.count_nonzero(token_counts(tok.encode_batch(train_docs), config.vocab_size)))
    assert bands[0]["types"] == math.ceil(0.01 * seen)
