"""lshsim.studies.memory.jobs: the memory studies' runs through the local, Dask and SLURM launchers.

End to end on two micro runs (the baseline of table5, seeds 0 and 1: 1+1 layers, d=32, 2 steps
of batch 2, on a small synthetic corpus): the local launcher and a Dask LocalCluster of one
worker process write the same rows; a relaunch trains nothing; ``--collect`` names missing and
failed runs; the SLURM dry run of the real variant prints one script per run with its
resources and run directory.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import random
import shutil

import pytest

pytest.importorskip("jax")
pytest.importorskip("sentencepiece")
pytest.importorskip("distributed")
if importlib.util.find_spec("submitit") is None:  # not importorskip: see import_submitit
    pytest.skip("needs submitit (the launch extra)", allow_module_level=True)

from lshsim.launch import DaskLauncher, LocalLauncher
from lshsim.launch.rundir import FAILED_FILE, JOB_FILE, RESULT_FILE
from lshsim.studies import memory as ms
from lshsim.studies.memory import jobs as mjobs
from lshsim.studies.memory import runner
from tests.studies.test_memory_studies import MICRO_SETUP

TRAIN_ARGS = "--devices 1"
#: Row fields that measure the machine, not the run.
TIMING = {
    "examples_per_second",
    "train_seconds",
    "wall_seconds",
    "loadavg",
    "finished",
    "run_dir",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """300 paragraphs of seeded pseudo-words: a small corpus (a tokenizer of the embedded one
    trains for about 3 s), and a private tokenizer cache for this process and (through the
    environment) the Dask worker.

    The Dask worker compiles through the run's JAX compilation cache, which it inherits from
    tests/conftest.py's environment like every subprocess of the suite: it finds there the
    programs the local launch just compiled (a private cache set here reached the worker
    alone, since this process's cache folder is fixed at its first compile, so the worker
    compiled them all again)."""
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 8))) for _ in range(500)]
    docs = [" ".join(rng.choices(words, k=60)) + "." for _ in range(300)]
    root = tmp_path_factory.mktemp("corpus")
    (root / "docs.txt").write_text("\n\n".join(docs) + "\n")
    mp = pytest.MonkeyPatch()
    mp.setenv("LSHSIM_CACHE", str(root / "cache"))
    yield str(root / "docs.txt")
    mp.undo()


def micro_specs(corpus: str, seeds: int = 2):
    """table5's baseline with ``seeds`` seeds: micro size, 2 steps, one held-out batch."""
    setup = dataclasses.replace(
        MICRO_SETUP,
        steps=2,
        checkpoint_every=2,
        eval_examples=2,
        eval_batch=2,
        corpus=(corpus,),
    )
    return {"table5": ms.plan("table5", "smoke", seeds=seeds, setup=setup)[:seeds]}


def _launch(root, corpus, launcher):
    logs = []
    doc, report = ms.launch_runs(
        micro_specs(corpus),
        "smoke",
        root / "runs",
        root / "m.json",
        launcher=launcher,
        train_args=TRAIN_ARGS,
        log=logs.append,
    )
    return doc, report, logs


def _check_local(root, keys, doc, report, logs):
    """Each run directory holds its job, its training files and its row; so does the JSON."""
    assert logs[0] == "2 distinct runs, 0 already done, 2 to do"
    assert report.done == keys and report.failed == {}
    saved = json.loads((root / "m.json").read_text())
    assert sorted(saved["runs"]) == sorted(keys)
    for key in keys:
        run_dir = root / "runs" / key
        for name in (JOB_FILE, RESULT_FILE, "run.json", "metrics.jsonl"):
            assert (run_dir / name).is_file(), name
        row = json.loads((run_dir / RESULT_FILE).read_text())["row"]
        assert saved["runs"][key] == row == doc["runs"][key]
        assert row["step"] == 2 and row["train_kwargs"] == {"devices": 1}
        assert math.isfinite(row["heldout"]["loss"]) and 0 <= row["heldout"]["accuracy"] <= 1
        payload = json.loads((run_dir / JOB_FILE).read_text())["payload"]
        assert payload["train_args"] == TRAIN_ARGS and payload["seed"] == row["seed"]
    assert saved["runs"][keys[0]]["heldout"] != saved["runs"][keys[1]]["heldout"]  # two seeds


def _check_same_rows(root, local_doc, doc, report, logs):
    """Same seeds, same numbers: the worker process's rows are this process's, bit for bit."""
    assert sorted(report.done) == sorted(local_doc["runs"]) and report.failed == {}
    assert len(logs) == 3 and logs[1].startswith("[1/2] table5: Baseline seed ")
    for key, row in doc["runs"].items():
        mine = {k: v for k, v in row.items() if k not in TIMING}
        theirs = {k: v for k, v in local_doc["runs"][key].items() if k not in TIMING}
        assert mine == theirs
        assert row["run_dir"] == str(root / "runs" / key)


def _check_relaunch(root, corpus, doc, tmp_path, monkeypatch):
    """Nothing is trained again; rows come from the JSON or, without it, the run directories."""

    def no_training(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    with monkeypatch.context() as mp:
        mp.setattr(runner, "train_one", no_training)
        for json_path in (root / "m.json", tmp_path / "fresh.json"):
            logs = []
            again, report = ms.launch_runs(
                micro_specs(corpus), "smoke", root / "runs", json_path, log=logs.append
            )
            assert logs == ["2 distinct runs, 2 already done, 0 to do"]
            assert report.done == [] and again["runs"] == doc["runs"]
    assert json.loads((tmp_path / "fresh.json").read_text())["runs"] == doc["runs"]


def _check_collect(root, corpus, doc, tmp_path):
    """--collect's report: one finished run copied over, one failed, one never run."""
    runs = tmp_path / "collect"
    specs = micro_specs(corpus, seeds=3)
    first, second, third = (s.key for s in specs["table5"])
    shutil.copytree(root / "runs" / first, runs / first)
    failed = runs / second
    failed.mkdir(parents=True)
    (failed / FAILED_FILE).write_text(
        json.dumps({"format": "lshsim-job-1", "key": second, "error": "NonFiniteLossError: x"})
    )
    logs = []
    saved, found = ms.collect_runs(specs, "smoke", runs, tmp_path / "c.json", logs.append)
    assert list(found.rows) == [first] and saved["runs"] == {first: doc["runs"][first]}
    assert found.failed == {second: "NonFiniteLossError: x"} and found.missing == [third]
    assert logs == [
        "3 distinct runs: 0 already in the JSON, 1 collected, 1 failed, 1 missing",
        f"failed: {second} (table5: Baseline seed 1): NonFiniteLossError: x",
        f"missing: {third} (table5: Baseline seed 2) (not submitted)",
    ]


@pytest.mark.slow
def test_local_and_dask_launches_relaunch_and_collect(corpus, tmp_path, monkeypatch):
    """One test, so that pytest-xdist trains the runs once: the local launcher; a Dask
    LocalCluster of one worker process on the same runs (same rows); a relaunch; --collect."""
    keys = [s.key for s in micro_specs(corpus)["table5"]]
    local_root, dask_root = tmp_path / "local", tmp_path / "dask"
    local = _launch(local_root, corpus, LocalLauncher())
    _check_local(local_root, keys, *local)
    _check_same_rows(dask_root, local[0], *_launch(dask_root, corpus, DaskLauncher(workers=1)))
    _check_relaunch(local_root, corpus, local[0], tmp_path, monkeypatch)
    _check_collect(local_root, corpus, local[0], tmp_path)


def test_collect_from_the_command_line_exits_1_when_runs_are_missing(tmp_path, capsys):
    argv = ["--study", "table5", "--seeds", "1", "--collect", "--out", str(tmp_path / "r")]
    assert ms.console([*argv, "--results", str(tmp_path / "m.json")]) == 1
    out = capsys.readouterr().out
    assert "3 distinct runs: 0 already in the JSON, 0 collected, 0 failed, 3 missing" in out
    assert out.count("(not submitted)") == 3


def test_slurm_dry_run_of_the_real_variant_prints_147_scripts(tmp_path, capsys):
    out, json_path = tmp_path / "runs", tmp_path / "m.json"
    res = ms.main(
        [
            *("--variant", "real", "--launcher", "slurm", "--dry-run", "--partition", "a100"),
            *("--gpus-per-node", "8", "--nodes", "2", "--time", "2-00:00:00", "--mem", "500G"),
            *("--cpus-per-task", "32", "--train-args", "--devices 16", "--out", str(out)),
            *("--results", str(json_path)),
        ]
    )
    text = capsys.readouterr().out
    assert len(res["runs"]) == 147
    assert text.count("#!/bin/bash") == 147
    assert "147 sbatch scripts, one per run not yet done; nothing submitted" in text
    for line in ("--partition=a100", "--gpus-per-node=8", "--nodes=2", "--time=2880"):
        assert text.count(f"#SBATCH {line}\n") == 147
    for spec in res["runs"]:
        folder = out / "real" / spec.key / "slurm"
        assert f"#SBATCH --job-name=lshsim-{spec.key}\n" in text
        assert f"-u -m submitit.core._submit {folder}\n" in text
    assert not out.exists() and not json_path.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--launcher", "pbs"], "argument --launcher: invalid choice: 'pbs'"),
        (["--gpus-per-node", "4"], "--gpus-per-node: only with --launcher slurm, not local"),
        (["--launcher", "dask", "--partition", "gpu"], "--partition: only with --launcher slurm"),
        (
            [
                "--launcher",
                "dask",
                "--scheduler",
                "tcp://127.0.0.1:9",
                "--timeout",
                "0.2",
            ],
            "--scheduler: cannot reach tcp://127.0.0.1:9 within 0.2 s",
        ),
        (["--train-args", "--lr 2"], "--train-args: --lr changes what is trained"),
        (["--train-args", "--blocks 4"], "--train-args: --blocks is set by the study"),
        (["--train-args=--json"], "--train-args: --json has no effect on a study run"),
        (["--train-args", "--mesh-size 2"], "--train-args: unrecognized arguments: --mesh-size"),
        (["--train-args", "--mesh 2x2"], "--train-args: mesh: expected data=A,model=B"),
        (["--train-args", "--accumulate 2"], "--train-args: --accumulate changes what is trained"),
        (["--collect", "--plot"], "--collect: not with --dry-run, --plot or --reeval"),
        (["--launcher", "dask", "--scheduler", "garbage", "--dry-run"], "--scheduler: expected"),
        (["--launcher", "dask", "--workers", "100000", "--dry-run"], "--workers: 100000 processes"),
    ],
)
def test_bad_launch_options_are_one_line_and_exit_2(argv, message, tmp_path, capsys):
    base = [
        "--study",
        "table5",
        "--out",
        str(tmp_path / "r"),
        "--results",
        str(tmp_path / "m.json"),
    ]
    try:
        status = ms.console([*base, *argv])
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("memory_studies.py: error: ") and message in err
    assert list(tmp_path.iterdir()) == []


def test_job_payloads_round_trip_through_json():
    """Every real run's spec is rebuilt exactly from its job.json (tuples included)."""
    specs = ms.unique_runs([s for name in ms.STUDIES for s in ms.plan(name, "real", seeds=1)])
    for spec in specs:
        payload = json.loads(json.dumps(mjobs.spec_payload(spec, {}, "")))
        assert mjobs.spec_from_payload(payload) == spec
    assert mjobs.parse_train_args("") == {}
    assert mjobs.parse_train_args("--devices 2 --keep-checkpoints 5") == {
        "devices": 2,
        "keep_checkpoints": 5,
    }
