"""``.ci/record_run.py``: a fresh-clone run goes into figures/ci_runs.json, once per commit."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.docs.examples import ROOT


@pytest.fixture
def record_run(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("record_run", ROOT / ".ci" / "record_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "RUNS", tmp_path / "ci_runs.json")
    return module


def _run(tmp_path, commit, seconds):
    path = tmp_path / f"{commit}.json"
    fields = {"commit": commit, "date": "2026-11-29 13:33 UTC", "seconds": seconds}
    fields |= {"pytest_seconds": 1.5, "tests": 3, "skipped": 0, "cpu": "x", "cores": 2}
    path.write_text(json.dumps(fields), encoding="utf-8")
    return path


def test_a_run_is_added_and_the_same_commit_replaced(record_run, tmp_path, monkeypatch):
    for commit, seconds in (("aaa", 10), ("bbb", 20), ("aaa", 30)):
        monkeypatch.setattr(sys, "argv", ["record_run.py", str(_run(tmp_path, commit, seconds))])
        record_run.main()
    runs = json.loads(record_run.RUNS.read_text(encoding="utf-8"))["runs"]
    assert [(r["commit"], r["seconds"]) for r in runs] == [("bbb", 20), ("aaa", 30)]


def test_a_file_that_is_not_a_record_is_refused(record_run, tmp_path, monkeypatch):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"commit": "aaa"}), encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["record_run.py", str(path)])
    with pytest.raises(SystemExit, match=r"not a \.ci/run record"):
        record_run.main()
    assert not record_run.RUNS.exists()


def test_the_control_and_cpu_times_are_kept(record_run, tmp_path, monkeypatch):
    """The machine's control workload and the command's CPU time (.ci/run's
    ``control_seconds`` and ``cpu_seconds``) stay beside the run."""
    path = _run(tmp_path, "ccc", 40)
    extra = {"control_seconds": 0.68, "cpu_seconds": 71.5}
    path.write_text(json.dumps({**json.loads(path.read_text()), **extra}))
    monkeypatch.setattr(sys, "argv", ["record_run.py", str(path)])
    record_run.main()
    (run,) = json.loads(record_run.RUNS.read_text(encoding="utf-8"))["runs"]
    assert (run["control_seconds"], run["cpu_seconds"]) == (0.68, 71.5)
