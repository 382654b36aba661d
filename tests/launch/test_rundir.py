"""lshsim.launch.rundir: job.json, result.json written last, failures, skip, collect."""

from __future__ import annotations

import json

import pytest

from lshsim.launch import collect, execute_job, read_result, write_job
from lshsim.launch.rundir import FAILED_FILE, RESULT_FILE, SUBMITTED_FILE, read_job
from tests.launch import toy


def test_execute_job_writes_the_row_last_and_never_runs_a_finished_job_again(tmp_path):
    (job,) = toy.jobs(tmp_path, [3])
    write_job(job)
    assert read_job(job.run_dir) == job
    assert not (job.run_dir / RESULT_FILE).exists()
    row = execute_job(job.run_dir, progress=True)
    assert row["square"] == 9 and row["progress"] is True
    saved = json.loads((job.run_dir / RESULT_FILE).read_text())
    assert saved["key"] == "k3" and saved["row"] == row
    assert read_result(job.run_dir, "k3") == row
    assert read_result(job.run_dir, "other") is None  # a result of another run is not ours
    assert execute_job(job.run_dir) == row
    assert toy.calls(job) == 1
    assert [p.name for p in job.run_dir.iterdir() if p.name.endswith(".tmp")] == []


def test_a_failure_is_recorded_in_one_line_and_cleared_by_a_successful_retry(tmp_path):
    (job,) = toy.jobs(tmp_path, [2], fail=[2])
    write_job(job)
    with pytest.raises(RuntimeError, match="toy failure"):
        execute_job(job.run_dir)
    failure = json.loads((job.run_dir / FAILED_FILE).read_text())
    assert failure["error"] == "RuntimeError: toy failure on two lines"
    assert "Traceback" in failure["traceback"]
    assert not (job.run_dir / RESULT_FILE).exists()
    (fixed,) = toy.jobs(tmp_path, [2])
    write_job(fixed)
    assert execute_job(fixed.run_dir)["square"] == 4
    assert not (job.run_dir / FAILED_FILE).exists()


def test_a_secondary_process_writes_nothing(tmp_path):
    (job,) = toy.jobs(tmp_path, [5])
    write_job(job)
    assert execute_job(job.run_dir, primary=False)["square"] == 25
    assert not (job.run_dir / RESULT_FILE).exists()


def test_collect_sorts_runs_into_finished_failed_and_missing(tmp_path):
    jobs = toy.jobs(tmp_path, [1, 2, 3, 4], fail=[2])
    for job in jobs[:2]:
        write_job(job)
        try:
            execute_job(job.run_dir)
        except RuntimeError:
            pass
    write_job(jobs[3])
    (jobs[3].run_dir / SUBMITTED_FILE).write_text(
        json.dumps({"format": "lshsim-job-1", "job_id": 77})
    )
    found = collect(jobs)
    assert list(found.rows) == ["k1"] and found.rows["k1"]["square"] == 1
    assert found.failed == {"k2": "RuntimeError: toy failure on two lines"}
    assert found.missing == ["k3", "k4"]
    assert found.submitted == {"k4": "77"}


def test_bad_run_directories_and_runner_names_are_one_line_errors(tmp_path):
    with pytest.raises(ValueError, match=r"run_dir: .* holds no job.json"):
        execute_job(tmp_path)
    (job,) = toy.jobs(tmp_path, [1])
    write_job(job.__class__(job.key, job.run_dir, "no_colon", job.payload))
    with pytest.raises(ValueError, match="runner: 'no_colon' is not of the form"):
        execute_job(job.run_dir)
