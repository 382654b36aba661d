"""Faults of a run directory: damaged checkpoints, fallback, non-finite runs, torn metrics.

Each damaged checkpoint gets its own one-line ``ValueError`` naming the run and the step;
``eval`` and ``train --resume`` pass over a damaged or non-finite latest checkpoint to the
newest good one with one warning line, and a resumed run's losses are the uninterrupted run's.
A run stopped on a non-finite value reports (and leaves as the newest) a checkpoint that
evaluates to a finite loss.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.cli.main import main  # noqa: E402
from lshsim.t5 import NonFiniteLossError  # noqa: E402
from lshsim.t5 import checkpoint as ckpt  # noqa: E402
from lshsim.t5 import steps as steps_mod  # noqa: E402
from lshsim.t5.loop import evaluate_run, restore_run, train  # noqa: E402

#: The base run: 8 steps, checkpoints every 2 (the default keeps 3: steps 4, 6, 8).
KW = {"checkpoint_every": 2, "eval_every": 100, "progress": False}


@pytest.fixture(scope="module")
def base(micro, small_corpus, tmp_path_factory):
    """An uninterrupted 8-step micro run and its train losses by step."""
    out = tmp_path_factory.mktemp("faults") / "base"
    train(micro, out, steps=8, corpus=[small_corpus], **KW)
    return out, _train_losses(out)


def _train_losses(out) -> dict[int, float]:
    return {r["step"]: r["loss"] for r in ckpt.read_metrics(out) if r["split"] == "train"}


def _copy(base, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(base[0], dst)
    return dst


def _truncate(step_dir):
    data = [p for p in (step_dir / "default").rglob("*") if p.is_file() and p.parent.name == "d"]
    biggest = max(data, key=lambda p: p.stat().st_size)
    os.truncate(biggest, biggest.stat().st_size // 2)


def _empty(path):
    path.write_bytes(b"")


#: Damage done to a checkpoint directory, and the reason its message gives.
DAMAGE = {
    "truncated": (_truncate, r"truncated data: \S+"),
    "manifest": (
        lambda d: _empty(d / "default" / "manifest.ocdbt"),
        "default/manifest.ocdbt is empty",
    ),
    "metadata": (lambda d: _empty(d / "default" / "_METADATA"), "default/_METADATA is empty"),
    "no-default": (lambda d: shutil.rmtree(d / "default"), "no default/ directory"),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_eval_of_a_damaged_checkpoint(base, tmp_path, capsys, kind):
    """``--step`` of a damaged checkpoint: one line naming run, step and reason (exit 2); the
    default (latest) falls back to the previous checkpoint with one warning line."""
    run = _copy(base, tmp_path)
    damage, reason = DAMAGE[kind]
    damage(run / "checkpoints" / "8")
    assert main(["eval", "--run", str(run), "--step", "8"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"lshsim: error: checkpoint: step 8 in {run} is unreadable (")
    assert re.search(rf"is unreadable \({reason}\)$", err[0])
    assert main(["eval", "--run", str(run), "--json"]) == 0
    cap = capsys.readouterr()
    err = cap.err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"lshsim: warning: checkpoint step 8 in {run} is unreadable (")
    assert err[0].endswith("; evaluating step 6")
    res = json.loads(cap.out)
    assert res["step"] == 6
    assert res["loss"] == evaluate_run(base[0], step=6)["loss"]


def test_wrong_step_names_the_steps_there_are(base, capsys):
    run = base[0]
    with pytest.raises(ValueError) as e:
        evaluate_run(run, step=7)
    assert str(e.value) == f"checkpoint: no checkpoint for --step 7 in {run} (steps: 4, 6, 8)"
    assert main(["eval", "--run", str(run), "--step", "7"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"lshsim: error: {e.value}"]


@pytest.mark.parametrize(
    ("kinds", "fallback"),
    [(("truncated",), 6), (("manifest",), 6), (("metadata", "no-default"), 4)],
)
@pytest.mark.slow
def test_resume_falls_back_to_the_newest_good_checkpoint(base, tmp_path, capsys, kinds, fallback):
    """A damaged latest checkpoint (or two): resume from the newest good one, warn once, and
    train exactly the losses of the uninterrupted run from there on."""
    run = _copy(base, tmp_path)
    for step, kind in zip((8, 6), kinds, strict=False):
        DAMAGE[kind][0](run / "checkpoints" / str(step))
    capsys.readouterr()
    res = train(micro_of(run), run, steps=8, resume=True, progress=False)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"lshsim: warning: checkpoint step 8 in {run} is unreadable (")
    assert err[0].endswith(f"; resuming from step {fallback}")
    assert res["initial_eval"] is None
    assert _train_losses(run) == base[1]  # steps after the fallback: bit for bit
    with ckpt.manager(run) as mngr:
        assert mngr.all_steps() == [4, 6, 8]
    assert evaluate_run(run)["loss"] == evaluate_run(base[0])["loss"]


def micro_of(run):
    return ckpt.read_run(run)[0]


def test_non_finite_checkpoints_are_passed_over(base, tmp_path, capsys):
    """Checkpoints with infinite parameters or a NaN held-out loss (as an older lshsim could
    leave) are passed over by ``eval`` and by ``restore_run`` (the probe's)."""
    run = _copy(base, tmp_path)
    _, _, state = restore_run(run, step=8)

    def scaled(step, factor):
        params = jax.tree.map(lambda p: p * factor, state["params"])
        return dict(state, step=jnp.asarray(step, jnp.int32), params=params)

    huge, inf = scaled(10, 1e10), scaled(12, jnp.inf)
    with ckpt.manager(run, max_to_keep=10) as mngr:
        ckpt.save(mngr, 10, huge)
        ckpt.save(mngr, 12, inf)
    with pytest.raises(ValueError, match=rf"^checkpoint: step 12 in {run} has non-finite param"):
        evaluate_run(run, step=12)
    capsys.readouterr()
    res = evaluate_run(run)
    assert res["step"] == 8
    assert capsys.readouterr().err.splitlines() == [
        f"lshsim: warning: checkpoint step 12 in {run} has non-finite parameters; step 10 has a "
        "non-finite held-out loss (nan); evaluating step 8"
    ]
    assert int(restore_run(run)[2]["step"]) == 10  # finite parameters: the probe can use it
    assert capsys.readouterr().err.splitlines() == [
        f"lshsim: warning: checkpoint step 12 in {run} has non-finite parameters; using step 10"
    ]


def test_no_usable_checkpoint(base, tmp_path):
    run = _copy(base, tmp_path)
    for step in (4, 6, 8):
        _empty(run / "checkpoints" / str(step) / "default" / "_METADATA")
    with pytest.raises(ValueError, match=r"; step 4 is unreadable .*: no usable checkpoint left$"):
        evaluate_run(run)


def _diverging(at: int, factor: float):
    """``make_train_step`` whose step ``at`` multiplies the updated parameters by ``factor``."""
    real = steps_mod.make_train_step

    def make(config, optimizer, seed=0, accumulate=1):
        step_fn = real(config, optimizer, seed, accumulate)

        def diverging(state, batch):
            new, metrics = step_fn(state, batch)
            blow = new["step"] == at
            params = jax.tree.map(lambda p: jnp.where(blow, p * factor, p), new["params"])
            metrics = dict(metrics, params_finite=steps_mod._all_finite(params))
            return dict(new, params=params), metrics

        return diverging

    return make


@pytest.mark.parametrize(
    ("factor", "eval_every", "message"),
    [
        # parameters at ~1e10 are finite: the next step's loss is not
        (1e10, 100, r"^loss: non-finite \(\S+\) at step 4; last good checkpoint: step 2 in "),
        # ... and neither is the held-out loss evaluated at the step that wrote them
        (
            1e10,
            1,
            r"^held-out loss: non-finite \(nan\) at step 3; last good checkpoint: step 2 in ",
        ),
        (
            math.inf,
            100,
            r"^parameters: non-finite after step 3 \(its loss \S+ was finite\); "
            r"last good checkpoint: step 2 in ",
        ),
    ],
)
def test_divergence_reports_a_checkpoint_that_evaluates_finite(
    micro, small_corpus, tmp_path, monkeypatch, factor, eval_every, message
):
    monkeypatch.setattr(steps_mod, "make_train_step", _diverging(3, factor))
    out = tmp_path / "div"
    with pytest.raises(NonFiniteLossError, match=message + re.escape(str(out)) + "$"):
        train(
            micro,
            out,
            steps=6,
            corpus=[small_corpus],
            checkpoint_every=1,
            eval_every=eval_every,
            progress=False,
        )
    with ckpt.manager(out) as mngr:
        assert mngr.all_steps() == [1, 2]  # the checkpoint of step 3 is not good: deleted
    ev = evaluate_run(out)
    assert ev["step"] == 2
    assert math.isfinite(ev["loss"])


def test_torn_last_metrics_line_is_dropped_on_resume(micro, base, tmp_path, capsys):
    """A run killed while appending a record leaves a torn last line: resume drops it."""
    run = _copy(base, tmp_path)
    path = run / "metrics.jsonl"
    n = len(path.read_text().splitlines())
    with open(path, "a") as f:
        f.write('{"step": 9, "split": "tr')
    with pytest.raises(ValueError) as e:
        ckpt.read_metrics(run)
    assert (
        str(e.value) == f"metrics: metrics.jsonl line {n + 1} in {run} is not a valid JSON record"
    )
    capsys.readouterr()
    train(micro, run, steps=8, resume=True, progress=False)
    assert capsys.readouterr().err.splitlines() == [
        f"lshsim: warning: metrics.jsonl line {n + 1} in {run} is not valid JSON (a torn "
        "record of a killed run); dropped it"
    ]
    assert _train_losses(run) == base[1]


def test_bad_metrics_line_inside_the_file_is_an_error(micro, base, tmp_path):
    run = _copy(base, tmp_path)
    path = run / "metrics.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:10]
    path.write_text("\n".join(lines) + "\n")
    message = f"^metrics: metrics.jsonl line 3 in {run} is not a valid JSON record$"
    with pytest.raises(ValueError, match=message):
        train(micro, run, steps=8, resume=True, progress=False)


def test_keep_checkpoints(micro, small_corpus, base, tmp_path):
    with ckpt.manager(base[0]) as mngr:
        assert mngr.all_steps() == [4, 6, 8]  # the default keeps 3
    with pytest.raises(ValueError, match=r"^keep_checkpoints must be an integer >= 2, got 1$"):
        train(micro, tmp_path / "k", steps=2, corpus=[small_corpus], keep_checkpoints=1, **KW)
    assert not (tmp_path / "k" / "run.json").exists()
    train(micro, tmp_path / "k", steps=6, corpus=[small_corpus], keep_checkpoints=2, **KW)
    with ckpt.manager(tmp_path / "k") as mngr:
        assert mngr.all_steps() == [4, 6]
    assert ckpt.read_run(tmp_path / "k")[1]["keep_checkpoints"] == 2
