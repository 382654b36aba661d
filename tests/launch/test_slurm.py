"""lshsim.launch.slurm: time limits, resources, the sbatch script, submission and waiting.

Without a SLURM cluster: the script is compared with the one ``submitit.SlurmExecutor``
writes itself; submission goes through the real ``SlurmExecutor`` to a fake ``sbatch`` that
records the script and answers with a job id; and ``submitit.LocalExecutor`` runs the jobs in
subprocesses, as SLURM would, through the pickled :class:`SlurmEntry`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import sys

import pytest

from lshsim.launch import (
    SlurmLauncher,
    SlurmResources,
    collect,
    execute_job,
    parse_time,
    sbatch_script,
)
from lshsim.launch.rundir import FAILED_FILE, JOB_FILE, SUBMITTED_FILE, write_job
from lshsim.launch.slurm import SlurmEntry, import_submitit
from tests.launch import toy

if importlib.util.find_spec("submitit") is None:
    pytest.skip("needs submitit (the launch extra)", allow_module_level=True)
submitit = import_submitit()  # not pytest.importorskip: see import_submitit

RESOURCES = SlurmResources(
    time=parse_time("1-02:03:00"),
    partition="gpu",
    nodes=2,
    gpus_per_node=8,
    cpus_per_task=16,
    mem="200G",
)


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("90", 90), ("0:30:00", 30), ("1:00:01", 61), ("2-00:00:00", 2880), ("1-02:03:00", 1563)],
)
def test_parse_time_reads_minutes_and_slurm_clock_times(text, minutes):
    assert parse_time(text) == minutes


@pytest.mark.parametrize(
    ("text", "match"),
    [("0", "at least 1 minute"), ("1:60:00", "< 60"), ("1h", "expected minutes"), ("", "expected")],
)
def test_parse_time_rejects_other_forms(text, match):
    with pytest.raises(ValueError, match=f"--time: .*{match}"):
        parse_time(text)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"nodes": 0}, "--nodes: must be an integer >= 1"),
        ({"gpus_per_node": -1}, "--gpus-per-node: must be an integer >= 1"),
        ({"cpus_per_task": 0}, "--cpus-per-task"),
        ({"mem": "lots"}, "--mem: expected a size like 64G"),
        ({"partition": "a b"}, "--partition: not a partition name"),
        ({"time": 0}, "--time: must be at least 1 minute"),
    ],
)
def test_resources_reject_bad_values_in_one_line(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SlurmResources(**kwargs)


def test_the_script_has_the_resources_the_command_and_the_run_directory(tmp_path):
    (job,) = toy.jobs(tmp_path, [7])
    script = sbatch_script(job, RESOURCES)
    folder = job.run_dir / "slurm"
    for line in (
        "#SBATCH --partition=gpu",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --gpus-per-node=8",
        "#SBATCH --cpus-per-task=16",
        "#SBATCH --mem=200G",
        "#SBATCH --time=1563",
        "#SBATCH --job-name=lshsim-k7",
        f"#SBATCH --output={folder}/%j_0_log.out",
        f"# lshsim run k7 (toy 7): {job.run_dir / JOB_FILE}",
        f"srun --unbuffered --output {folder}/%j_%t_log.out --error {folder}/%j_%t_log.err "
        f"{sys.executable} -u -m submitit.core._submit {folder}",
    ):
        assert line in script.splitlines(), line
    assert "#SBATCH --gpus-per-node" not in sbatch_script(job, SlurmResources())
    assert not job.run_dir.exists()  # the dry run writes nothing


def test_the_script_is_the_one_submitit_writes(tmp_path, monkeypatch):
    from submitit.slurm.slurm import SlurmExecutor

    monkeypatch.setattr(SlurmExecutor, "affinity", classmethod(lambda cls: 2))  # no srun here
    (job,) = toy.jobs(tmp_path, [7])
    executor = SlurmExecutor(folder=job.run_dir / "slurm")
    executor.update_parameters(**RESOURCES.parameters(job))
    own = executor._make_submission_file_text(executor._submitit_command_str, "uid")
    assert sbatch_script(job, RESOURCES) == own


def test_dry_run_prints_one_script_per_run(tmp_path):
    lines = []
    report = SlurmLauncher(RESOURCES, dry_run=True, echo=lines.append).launch(
        toy.jobs(tmp_path, [1, 2])
    )
    text = "\n".join(lines)
    assert text.count("#!/bin/bash") == 2 and "--job-name=lshsim-k2" in text
    assert report.submitted == {} and not any(tmp_path.iterdir())


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """``sbatch`` and ``srun`` on PATH: sbatch copies the script to ``scripts/`` and answers."""
    bin_dir, scripts = tmp_path / "bin", tmp_path / "scripts"
    bin_dir.mkdir()
    scripts.mkdir()
    (bin_dir / "sbatch").write_text(
        "#!/bin/sh\n"
        f'n=$(ls "{scripts}" | wc -l)\n'
        f'cp "$1" "{scripts}/$((4200 + n)).sh"\n'
        'echo "Submitted batch job $((4200 + n))"\n'
    )
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    for name in ("sbatch", "srun"):
        (bin_dir / name).chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return scripts


def test_submission_records_job_ids_and_skips_pending_runs(tmp_path, fake_slurm):
    jobs = toy.jobs(tmp_path / "runs", [1, 2])
    (done,) = toy.jobs(tmp_path / "runs", [3])
    write_job(done)
    execute_job(done.run_dir)  # finished before: reported, not submitted
    launcher = SlurmLauncher(RESOURCES)
    seen = {}
    report = launcher.launch([*jobs, done], lambda job, row: seen.setdefault(job.key, row))
    assert report.submitted == {"k1": "4200", "k2": "4201"}
    assert report.done == ["k3"] and seen["k3"]["square"] == 9
    for job, job_id in zip(jobs, ("4200", "4201"), strict=True):
        assert (fake_slurm / f"{job_id}.sh").read_text() == sbatch_script(job, RESOURCES)
        assert json.loads((job.run_dir / SUBMITTED_FILE).read_text())["job_id"] == job_id
        assert (job.run_dir / JOB_FILE).is_file()
    assert collect(jobs).missing == ["k1", "k2"]
    # Submitted and not finished: pending or running, so not submitted twice ...
    (jobs[1].run_dir / FAILED_FILE).write_text(
        json.dumps({"format": "lshsim-job-1", "error": "RuntimeError: x"})
    )
    again = launcher.launch(jobs)
    assert again.skipped == ["k1"] and again.submitted == {"k2": "4202"}  # ... unless it failed
    assert SlurmLauncher(RESOURCES, resubmit=True).launch(jobs[:1]).submitted == {"k1": "4203"}


def test_a_refused_submission_is_one_line(tmp_path, fake_slurm, capsys):
    bin_dir = fake_slurm.parent / "bin"
    (bin_dir / "sbatch").write_text("#!/bin/sh\necho 'error: invalid partition' >&2\nexit 1\n")
    with pytest.raises(ValueError) as exc:
        SlurmLauncher(RESOURCES).launch(toy.jobs(tmp_path / "runs", [1]))
    assert str(exc.value) == "sbatch: run k1 was refused: FailedJobError: error: invalid partition"
    assert capsys.readouterr().err == ""  # said once, in the error
    assert not (tmp_path / "runs" / "k1" / SUBMITTED_FILE).exists()


def test_without_sbatch_the_launcher_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match="--launcher slurm: sbatch is not on this machine"):
        SlurmLauncher(RESOURCES).launch(toy.jobs(tmp_path, [1]))


def test_submitit_local_executor_runs_the_pickled_entry_in_subprocesses(tmp_path, monkeypatch):
    """What a SLURM node does, minus SLURM: unpickle SlurmEntry and run the job."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))

    def local(folder, params):
        executor = submitit.LocalExecutor(folder=folder)
        executor.update_parameters(timeout_min=params["time"])
        return executor

    jobs = toy.jobs(tmp_path, [4, 5], fail=[5])
    seen = {}
    report = SlurmLauncher(RESOURCES, wait=True, executor=local).launch(
        jobs, lambda job, row: seen.setdefault(job.key, row)
    )
    assert report.done == ["k4"] and set(report.submitted) == {"k4", "k5"}
    assert report.failed == {"k5": "RuntimeError: toy failure on two lines"}
    assert seen["k4"]["square"] == 16 and seen["k4"]["pid"] != os.getpid()
    assert collect(jobs).rows == seen


def test_the_entry_requeues_itself_on_the_same_run_directory(tmp_path):
    """On a time limit or preemption submitit calls checkpoint() and submits what it returns."""
    (job,) = toy.jobs(tmp_path, [6])
    write_job(job)
    entry = SlurmEntry()
    delayed = entry.checkpoint(str(job.run_dir))
    assert isinstance(delayed, submitit.helpers.DelayedSubmission)
    assert delayed.function is entry and delayed.args == (str(job.run_dir),)
    assert delayed.result()["square"] == 36 and toy.calls(job) == 1
