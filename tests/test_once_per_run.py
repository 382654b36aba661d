"""tests.once_per_run: one computation per run, read back by the other xdist workers."""

from __future__ import annotations

import threading
import time

import pytest

from tests import once_per_run


class _Factory:
    """tmp_path_factory's one method used, rooted in a worker folder of ``run``."""

    def __init__(self, run, worker):
        self._base = run / f"popen-{worker}"
        self._base.mkdir(parents=True, exist_ok=True)

    def getbasetemp(self):
        return self._base


def test_the_first_worker_computes_and_the_others_read(tmp_path, monkeypatch):
    calls = []

    def compute():
        calls.append(1)
        return {"value": [1.5, "x"]}

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    first = once_per_run(_Factory(tmp_path, "gw0"), "k", compute)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    second = once_per_run(_Factory(tmp_path, "gw1"), "k", compute)
    assert first == second == {"value": [1.5, "x"]} and len(calls) == 1
    other = once_per_run(_Factory(tmp_path, "gw1"), "other", lambda: 7)  # keys are separate
    assert other == 7 and not list(tmp_path.glob("*.tmp"))


def test_an_error_is_not_stored_and_no_xdist_computes_once_per_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")

    def fail():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        once_per_run(_Factory(tmp_path, "gw0"), "k", fail)
    assert once_per_run(_Factory(tmp_path, "gw1"), "k", lambda: 3) == 3
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    with pytest.raises(RuntimeError, match="boom"):  # nor without xdist
        once_per_run(_Factory(tmp_path / "run", "main"), "k", fail)
    calls = []
    for _ in range(2):  # a second fixture of the same run reads the first's value
        once_per_run(_Factory(tmp_path / "run", "main"), "k", lambda: calls.append(1))
    assert len(calls) == 1
    once_per_run(_Factory(tmp_path / "other-run", "main"), "k", lambda: calls.append(1))
    assert len(calls) == 2  # another run's folder computes its own


def test_a_second_caller_waits_for_the_first_and_reads(tmp_path, monkeypatch):
    """While the first caller computes, the second blocks on the lock, then reads its value
    (without the lock it would find no file and compute again)."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    started, calls, out = threading.Event(), [], {}

    def slow():
        calls.append(1)
        started.set()
        time.sleep(0.2)
        return "v"

    def first():
        out["first"] = once_per_run(_Factory(tmp_path, "gw0"), "k", slow)

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(10)
    out["second"] = once_per_run(_Factory(tmp_path, "gw1"), "k", slow)
    thread.join()
    assert out == {"first": "v", "second": "v"} and len(calls) == 1
