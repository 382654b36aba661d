"""lshsim.launch.launchers: the local launcher, and the Dask one on a 1-process LocalCluster."""

from __future__ import annotations

import os

import pytest

from lshsim.launch import DaskLauncher, LocalLauncher, collect
from lshsim.launch.rundir import JOB_FILE
from tests.launch import toy


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of one worker process (the toy runner imports in a fresh process)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as c:
        yield c


def test_local_runs_in_order_and_a_failure_does_not_stop_the_rest(tmp_path):
    jobs = toy.jobs(tmp_path, [1, 2, 3], fail=[2])
    seen = []
    report = LocalLauncher(progress=True).launch(jobs, lambda job, row: seen.append((job.key, row)))
    assert report.done == ["k1", "k3"]
    assert report.failed == {"k2": "RuntimeError: toy failure on two lines"}
    assert [(k, r["square"], r["pid"], r["progress"]) for k, r in seen] == [
        ("k1", 1, os.getpid(), True),
        ("k3", 9, os.getpid(), True),
    ]
    assert all((j.run_dir / JOB_FILE).is_file() for j in jobs)


def test_dask_runs_every_job_in_a_worker_process_once(tmp_path, cluster):
    """Through --scheduler's path (an address): rows come back, failures are reported."""
    jobs = toy.jobs(tmp_path, range(5), fail=[3])
    seen = {}
    launcher = DaskLauncher(scheduler=cluster.scheduler_address, timeout=10)
    report = launcher.launch(jobs, lambda job, row: seen.setdefault(job.key, row))
    assert sorted(report.done) == ["k0", "k1", "k2", "k4"]
    assert report.failed == {"k3": "RuntimeError: toy failure on two lines"}
    assert {k: r["square"] for k, r in seen.items()} == {"k0": 0, "k1": 1, "k2": 4, "k4": 16}
    assert {r["pid"] for r in seen.values()} != {os.getpid()}  # ran in the worker
    assert collect(jobs).rows == seen
    assert [toy.calls(j) for j in jobs] == [1, 1, 1, 0, 1]
    assert launcher.client is None  # the client it opened is closed
    # A relaunch of finished runs returns their recorded rows without running them again.
    again = DaskLauncher(scheduler=cluster.scheduler_address).launch(jobs[:3])
    assert sorted(again.done) == ["k0", "k1", "k2"]
    assert [toy.calls(j) for j in jobs[:3]] == [1, 1, 1]


def test_dask_rejects_bad_settings_and_an_unreachable_scheduler_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="--workers: must be >= 1, got 0"):
        DaskLauncher(workers=0)
    with pytest.raises(ValueError, match="--timeout: must be > 0"):
        DaskLauncher(scheduler="tcp://127.0.0.1:9", timeout=0)
    launcher = DaskLauncher(scheduler="tcp://127.0.0.1:9", timeout=0.5)
    with pytest.raises(
        ValueError, match=r"--scheduler: cannot reach tcp://127.0.0.1:9 within 0.5 s"
    ):
        launcher.launch(toy.jobs(tmp_path, [1]))
    assert list(tmp_path.iterdir()) == []  # nothing written before the cluster answered
