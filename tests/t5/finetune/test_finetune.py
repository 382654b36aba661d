"""Fine-tuning runs: the synthetic keyword task, resume equality, mixtures, the CLI's errors."""

from __future__ import annotations

import json
import shutil

import pytest

jax = pytest.importorskip("jax")

from lshsim.cli.main import main  # noqa: E402
from lshsim.t5 import checkpoint as ckpt  # noqa: E402
from lshsim.t5.finetune.run import finetune  # noqa: E402
from tests.t5.finetune import formats  # noqa: E402
from tests.t5.finetune.conftest import TUNED  # noqa: E402


@pytest.mark.slow
def test_keyword_task_reaches_90_percent(pretrained, keyword, tmp_path):
    """A SST-2-format task decided by a keyword: >= 90% dev accuracy (greedy decoding, label
    words mapped back) within 300 steps and 60 s. Learning rate 1e-2 (the paper's 1e-3 needs
    more steps on a 2-step-pretrained micro model)."""
    traces = []

    def count(event, duration, **kwargs):
        traces.extend([event] if event == "/jax/core/compile/jaxpr_trace_duration" else [])

    jax.monitoring.register_event_duration_secs_listener(count)
    try:
        res = finetune(
            pretrained,
            "sst2",
            keyword,
            tmp_path / "ft",
            steps=120,
            batch_size=16,
            learning_rate=1e-2,
            eval_every=120,
            log_every=40,
        )
    finally:
        jax.monitoring.unregister_event_duration_listener(count)
    acc = res["dev"]["sst2"]["accuracy"]
    print(
        f"keyword task: dev accuracy {acc:.1f}% after {res['step']} steps "
        f"(steps {res['seconds']:.1f} s), {len(traces)} JAX traces"
    )
    assert acc >= 90.0
    assert len(traces) < 120  # nothing traced (so compiled) again at every step
    dev = [r for r in ckpt.read_metrics(tmp_path / "ft") if r["split"] == "dev"]
    assert dev == [{"step": 120, "split": "dev", "task": "sst2", "accuracy": acc, "score": acc}]
    run = json.loads((tmp_path / "ft" / ckpt.RUN_FILE).read_text())
    assert run["config"]["dropout_rate"] == 0.1
    assert run["train"]["kind"] == "finetune" and run["train"]["pretrained_step"] == 2
    # the unrolled pretrained run, fine-tuned in the default (scanned) layout
    assert ckpt.read_run(pretrained)[0].scan_layers is False
    assert run["config"]["scan_layers"] is True


def test_resume_equals_uninterrupted(pretrained, keyword, tuned, tmp_path):
    """2 steps, then resumed to 4: the same losses, dev metrics and parameters as 4 at once.

    The 2 steps are the session's ``tuned`` run (``TUNED``'s options), copied."""
    kw = TUNED
    whole = finetune(pretrained, "sst2", keyword, tmp_path / "a", steps=4, **kw)
    shutil.copytree(tuned, tmp_path / "b")
    with pytest.raises(ValueError, match="already holds a run; pass --resume"):
        finetune(pretrained, "sst2", keyword, tmp_path / "b", steps=4, **kw)
    with pytest.raises(ValueError, match=r"batch: the run in .* used 4"):
        finetune(None, "sst2", None, tmp_path / "b", steps=4, resume=True, batch_size=8)
    resumed = finetune(None, "sst2", None, tmp_path / "b", steps=4, resume=True, **kw)
    assert resumed["dev"] == whole["dev"]
    a, b = ckpt.read_metrics(tmp_path / "a"), ckpt.read_metrics(tmp_path / "b")
    assert [r for r in a if r["split"] == "train"] == [r for r in b if r["split"] == "train"]
    assert [r for r in a if r["step"] == 4] == [r for r in b if r["step"] == 4]
    leaves = [
        jax.tree_util.tree_leaves(
            ckpt.restore(_manager(tmp_path / d), _abstract(tmp_path / d), 4)["params"]
        )
        for d in ("a", "b")
    ]
    assert all((x == y).all() for x, y in zip(*leaves, strict=True))


def test_cli_from_a_given_pretrained_step(pretrained, keyword, tmp_path, capsys):
    """``--step 1``: the pretrained run's step-1 checkpoint, recorded in run.json."""
    argv = ["finetune", "--run", str(pretrained), "--step", "1", "--task", "sst2"]
    argv += ["--data", str(keyword), "--out", str(tmp_path / "ft"), "--steps", "2", "--json"]
    assert main([*argv, "--batch", "4", "--eval-examples", "8", "--checkpoint-every", "2"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["step"] == 2 and set(res["dev"]) == {"sst2"}
    run = json.loads((tmp_path / "ft" / ckpt.RUN_FILE).read_text())["train"]
    assert run["pretrained_step"] == 1 and run["batch_size"] == 4
    argv[argv.index("1")] = "7"
    argv[argv.index(str(tmp_path / "ft"))] = str(tmp_path / "ft7")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no checkpoint for --step 7" in err and "(steps: 1, 2)" in err


def _manager(out):
    return ckpt.manager(out, read_only=True)


def _abstract(out):
    from lshsim.t5.finetune.run import finetune_optimizer
    from lshsim.t5.steps import abstract_state

    config, _ = ckpt.read_run(out)
    return abstract_state(config, finetune_optimizer(config, 1e-3))


def test_glue_mixture_via_cli(pretrained, tmp_path, capsys):
    """``lshsim finetune --task glue``: every dev split scored, MNLI m/mm, the GLUE average."""
    data = formats.write_all(tmp_path / "data")
    argv = ["finetune", "--run", str(pretrained), "--task", "glue", "--data", str(data)]
    argv += ["--out", str(tmp_path / "ft"), "--steps", "2", "--batch", "4", "--json"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res["dev"]) == {
        "cola",
        "sst2",
        "mrpc",
        "qqp",
        "stsb",
        "mnli_matched",
        "mnli_mismatched",
        "qnli",
        "rte",
    }
    assert set(res["dev"]["stsb"]) == {"pearson_corrcoef", "spearman_corrcoef", "score"}
    assert set(res["averages"]) == {"glue_average"}
    dev = {r["task"] for r in ckpt.read_metrics(tmp_path / "ft") if r["split"] == "dev"}
    assert dev == set(res["dev"]) | {"glue_average"}


def test_squad_via_cli(pretrained, tmp_path, capsys):
    """``lshsim finetune --task squad`` on a SQuAD v1.1 file: EM and F1 (official answer
    normalisation, max over the gold answers), in [0, 100], in the output and the metrics."""
    data = formats.write_squad(tmp_path / "data")
    argv = ["finetune", "--run", str(pretrained), "--task", "squad", "--data", str(data)]
    argv += ["--out", str(tmp_path / "ft"), "--steps", "2", "--batch", "2", "--json"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    scores = res["dev"]["squad"]
    assert {"em", "f1"} <= set(scores)
    assert all(0.0 <= scores[k] <= 100.0 for k in ("em", "f1"))
    assert scores["em"] <= scores["f1"]  # an exact match is also a full F1 match
    rows = [r for r in ckpt.read_metrics(tmp_path / "ft") if r.get("task") == "squad"]
    assert rows and rows[-1]["split"] == "dev"


@pytest.mark.parametrize(
    ("train_text", "message"),
    [
        ("sentence\tlab\nfine\t1\n", "missing column 'label'"),
        ("sentence\tlabel\nfine\tgreat\n", "unknown label 'great'"),
        ("", "empty file"),
    ],
)
def test_cli_bad_data_one_line(pretrained, tmp_path, capsys, train_text, message):
    data = formats.write_glue(tmp_path, "sst2", train=train_text)
    argv = ["finetune", "--run", str(pretrained), "--task", "sst2", "--data", str(data)]
    assert main([*argv, "--out", str(tmp_path / "ft"), "--steps", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lshsim: error: data: ") and message in err
    assert not (tmp_path / "ft").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "glu", "--run", "{run}", "--data", "{tmp}"], "unknown task 'glu'"),
        (["--task", "sst2", "--run", "{tmp}/none", "--data", "{tmp}"], "--run: "),
        (["--task", "sst2", "--data", "{tmp}"], "needs both"),
        (["--task", "sst2", "--out", "{tmp}/nothing", "--resume"], "--out: "),
    ],
)
def test_cli_bad_options_one_line(pretrained, tmp_path, capsys, args, message):
    argv = [a.format(run=pretrained, tmp=tmp_path) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "ft")]
    assert main(["finetune", *argv, "--steps", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_super_glue_mixture(pretrained, tmp_path):
    """Every SuperGLUE task through one step, decoding and scoring; the SuperGLUE average."""
    data = formats.write_all(tmp_path / "data")
    res = finetune(pretrained, "super_glue", data, tmp_path / "ft", steps=1, batch_size=4)
    assert set(res["dev"]) == {
        "boolq",
        "cb",
        "copa",
        "multirc",
        "record",
        "super_glue_rte",
        "wic",
        "wsc",
    }
    assert set(res["dev"]["multirc"]) == {"f1a", "exact_match", "score"}
    assert set(res["dev"]["record"]) == {"em", "f1", "score"}
    assert set(res["dev"]["cb"]) == {"mean_3class_f1", "accuracy", "score"}
    assert set(res["averages"]) == {"super_glue_average"}
