"""Bad input to ``lshsim finetune`` (and ``eval`` on its runs): one line, exit 2, nothing written.

The cases a user probe found (issue 48), each through :func:`lshsim.cli.main.main` in this
process: tracebacks (a fine-tuned run as ``--run``, ``eval --bands`` on a fine-tuned run, data
files with the wrong JSON types, a batch too large for memory), half-made output folders
(``--eval-every 0`` used to leave ``run.json`` behind), wrong results (``--resume --steps``
below the run's step, a relative ``--engram-tokenizer``) and silently ignored options. One
pretrained micro run and one fine-tuned run (the session's ``pretrained`` and ``tuned``).
"""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("jax")

from lshsim.cli.main import main
from lshsim.cli.work import ChecksPassed, checks_only
from lshsim.t5 import checkpoint as ckpt
from lshsim.t5.finetune.prepare import prepare
from lshsim.t5.finetune.run import restore_source
from tests.t5.finetune import formats


@pytest.fixture(scope="module")
def data(keyword):
    """SST-2 files of the keyword task (the session's: ``tuned`` was fine-tuned on them)."""
    return keyword


def refused(capsys, argv: list[str], *words: str) -> str:
    """Run ``lshsim ARGV``: exit 2 and one line holding every one of ``words``."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("lshsim: error: ") and err.count("\n") == 1, err
    assert all(w in err for w in words), (words, err)
    return err


def checked(argv: list[str]) -> None:
    """``lshsim ARGV`` passes every check: it stops at start_work (nothing is done)."""
    with checks_only(), pytest.raises(ChecksPassed):
        main(argv)


def new(pretrained, data, out, *more: str) -> list[str]:
    argv = ["finetune", "--run", str(pretrained), "--task", "sst2", "--data", str(data)]
    return [*argv, "--out", str(out), "--steps", "2", *more]


# --- once tracebacks -----------------------------------------------------------------------


def test_eval_and_bands_of_a_fine_tuned_run_are_one_line(tuned, capsys):
    """``eval --bands`` on a fine-tuned run was ``KeyError: 'warmup_steps'``."""
    for more in ([], ["--bands"]):
        refused(capsys, ["eval", "--run", str(tuned), *more], "is a fine-tuning run", str(tuned))


def test_wrong_json_types_in_squad_and_multirc(pretrained, tmp_path, capsys):
    """An integer where SQuAD's article goes, a list where MultiRC's question goes: were
    TypeErrors; now one line naming the file and the place."""
    squad = tmp_path / "SQuAD"
    squad.mkdir()
    for name in ("train-v1.1.json", "dev-v1.1.json"):
        (squad / name).write_text('{"data": [1]}')
    multirc = tmp_path / "MultiRC"
    multirc.mkdir()
    for name in ("train.jsonl", "val.jsonl"):
        (multirc / name).write_text('{"idx": 0, "passage": {"text": "t", "questions": [[1]]}}\n')
    for task, folder, where in (
        ("squad", squad, "train-v1.1.json data[0]: expected an object"),
        ("multirc", multirc, "train.jsonl line 1 passage.questions[0]: expected an object"),
    ):
        argv = ["finetune", "--run", str(pretrained), "--task", task, "--data", str(folder)]
        refused(capsys, [*argv, "--out", str(tmp_path / "ft"), "--steps", "1"], where)
    assert not (tmp_path / "ft").exists()


def test_a_batch_beyond_memory_is_refused_from_the_estimate(pretrained, data, tmp_path, capsys):
    """``--batch 100000`` was an XLA out-of-memory traceback after writing run.json."""
    out = tmp_path / "ft"
    refused(
        capsys,
        new(pretrained, data, out, "--batch", "100000000"),
        "--batch: 100000000",
        "need about",
    )
    assert not out.exists()


# --- half-made folders -----------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--eval-every", "--checkpoint-every"])
def test_zero_every_is_refused_before_writing(pretrained, data, tmp_path, capsys, option):
    out = tmp_path / "ft"
    refused(capsys, new(pretrained, data, out, option, "0"), f"{option} must be an integer >= 1")
    assert not out.exists()


def half_made(tuned, out):
    """What a start cut short leaves: ``run.json`` and ``spm.model``, no checkpoint."""
    out.mkdir()
    for name in (ckpt.RUN_FILE, ckpt.TOKENIZER_FILE):
        shutil.copyfile(tuned / name, out / name)


def test_a_half_made_folder_is_started_again(pretrained, tuned, data, tmp_path, capsys):
    """A folder without a first checkpoint holds no run (it was "already holds a run", and
    ``--resume`` found "no checkpoint"): a plain retry starts a new run into it, ``--resume``
    starts the run it records, from its pretrained checkpoint."""
    out = tmp_path / "half"
    half_made(tuned, out)
    checked(new(pretrained, data, out))
    resume = ["finetune", "--out", str(out), "--task", "sst2", "--steps", "1", "--resume"]
    checked(resume)
    p = prepare(None, "sst2", None, out, steps=1, resume=True)
    assert not p.resume and p.source_step == 2 and p.opts.pretrained == str(pretrained)
    assert p.opts.batch_size == 4 and p.recorded["kind"] == "finetune"
    refused(capsys, new(pretrained, data, tuned), "already holds a run")  # a started run


def test_fine_tuning_from_a_fine_tuned_run(tuned, data, tmp_path):
    """A fine-tuned run as ``--run`` (fine-tuning in stages) was ``KeyError: 'warmup_steps'``
    when its checkpoint was restored."""
    checked(new(tuned, data, tmp_path / "stage2"))
    state = restore_source(tuned)
    assert int(state["step"]) == 2
    assert not (tmp_path / "stage2").exists()


# --- wrong results ---------------------------------------------------------------------------


def test_resume_to_fewer_steps_is_refused(tuned, capsys):
    """``--resume --steps 1`` on a run at step 2 exited 0 doing nothing."""
    for steps in ("1", "2"):
        argv = ["finetune", "--out", str(tuned), "--task", "sst2", "--steps", steps, "--resume"]
        refused(capsys, argv, f"--steps {steps}", "at step 2")


def test_a_relative_engram_tokenizer_is_recorded_resolved(micro, tmp_path, monkeypatch):
    """A run made with a relative ``--engram-tokenizer`` is read from any folder; an older
    run's relative path is read from the current folder, else one line says why."""
    made = tmp_path / "made"
    (made / "tok").mkdir(parents=True)
    (made / "tok" / "e.model").write_bytes(b"not read here")
    config = micro.replace(lookup="engram", engram_tokenizer="tok/e.model")
    monkeypatch.chdir(made)
    ckpt.write_run(made / "run", config, {"batch_size": 4, "input_length": 32, "warmup_steps": 10})
    doc = json.loads((made / "run" / ckpt.RUN_FILE).read_text())
    assert doc["config"]["engram_tokenizer"] == str(made / "tok" / "e.model")
    doc["config"]["engram_tokenizer"] = "tok/e.model"  # as an older lshsim recorded it
    (made / "run" / ckpt.RUN_FILE).write_text(json.dumps(doc))
    assert ckpt.read_run(made / "run")[0].engram_tokenizer == str(made / "tok" / "e.model")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="relative path") as err:
        ckpt.read_run(made / "run")
    assert "\n" not in str(err.value) and "engram_tokenizer" in str(err.value)


# --- silently ignored ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("more", "words"),
    [
        (["--input-length", "0"], ["--input-length must be an integer >= 2, got 0"]),
        (["--target-length", "0"], ["--target-length must be an integer >= 2, got 0"]),
        (["--cap", "5"], ["--cap has no effect on the single task sst2"]),
    ],
)
def test_options_without_effect_are_refused(pretrained, data, tmp_path, capsys, more, words):
    out = tmp_path / "ft"
    refused(capsys, new(pretrained, data, out, *more), *words)
    assert not out.exists()


def test_stsb_scores_outside_0_to_5(pretrained, tmp_path, capsys):
    folder = formats.write_glue(
        tmp_path, "stsb", train=formats.GLUE_FILES["stsb"][1].replace("1.66", "7.5")
    )
    argv = ["finetune", "--run", str(pretrained), "--task", "stsb", "--data", str(folder)]
    argv += ["--out", str(tmp_path / "ft"), "--steps", "1"]
    refused(capsys, argv, "train.tsv line 3: score '7.5' outside [0, 5]")


def test_expert_impl_without_experts(pretrained, capsys):
    argv = ["eval", "--run", str(pretrained), "--expert-impl", "gather"]
    refused(capsys, argv, "--expert-impl has no effect", "no rank-r experts")


@pytest.mark.parametrize(
    ("more", "option"),
    [
        (["--step", "1"], "--step"),
        (["--run", "{tmp}"], "--run"),
        (["--batch", "8"], "--batch"),
        (["--input-length", "64"], "--input-length"),
        (["--target-length", "9"], "--target-length"),
        (["--scan-layers"], None),  # the recorded value: accepted
        (["--no-scan-layers"], "--scan-layers"),
    ],
)
def test_resume_refuses_what_it_cannot_change(tuned, tmp_path, capsys, more, option):
    """Options a resumed run cannot change were silently ignored (``--run``, ``--step``,
    the lengths); each is refused naming it unless it has the recorded value."""
    argv = ["finetune", "--out", str(tuned), "--task", "sst2", "--steps", "3", "--resume"]
    argv += [m.format(tmp=tmp_path) for m in more]
    if option is None:
        checked(argv)
    else:
        refused(capsys, argv, f"{option}: the run in", "resume with the same value")


def test_resume_applies_data_and_keep_checkpoints(tuned, data, tmp_path):
    """``--data`` (a moved folder) and ``--keep-checkpoints`` are applied on resume."""
    moved = shutil.copytree(data, tmp_path / "moved")
    p = prepare(None, "sst2", moved, tuned, steps=3, resume=True, keep_checkpoints=5)
    assert p.resume and p.opts.data == str(moved) and p.opts.keep_checkpoints == 5
    assert p.recorded["data"] == str(data)  # recorded when the run continues


def test_checks_end_at_start_work(pretrained, data, tmp_path):
    """Every check runs before start_work; a checked command has written nothing."""
    out = tmp_path / "ft"
    checked(new(pretrained, data, out, "--batch", "4"))
    assert not out.exists()
