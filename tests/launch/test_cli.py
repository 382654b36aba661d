"""lshsim.launch.cli: the --launcher flags build the right launcher or fail in one line."""

from __future__ import annotations

import argparse

import pytest

from lshsim.launch import DaskLauncher, LocalLauncher, SlurmLauncher, add_launch_flags
from lshsim.launch import launcher_from_args as build


def parse(*argv: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dry-run", action="store_true")
    add_launch_flags(ap)
    return ap.parse_args(argv)


def test_each_launcher_gets_its_options():
    local = build(parse(), progress=True)
    assert isinstance(local, LocalLauncher) and local.progress
    dask = build(parse("--launcher", "dask", "--workers", "3"))
    assert isinstance(dask, DaskLauncher) and dask.workers == 3 and dask.client is None
    slurm = build(
        parse(
            *("--launcher", "slurm", "--dry-run", "--partition", "gpu", "--nodes", "2"),
            *("--gpus-per-node", "4", "--cpus-per-task", "8", "--mem", "64G", "--time", "90"),
        )
    )
    assert isinstance(slurm, SlurmLauncher) and slurm.dry_run
    r = slurm.resources
    assert (r.partition, r.nodes, r.gpus_per_node, r.cpus_per_task, r.mem, r.time) == (
        *("gpu", 2, 4, 8, "64G", 90),
    )
    assert build(parse("--launcher", "slurm", "--dry-run")).resources.time == 24 * 60


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--partition", "gpu"], "--partition: only with --launcher slurm, not local"),
        (["--launcher", "dask", "--gpus-per-node", "1"], "--gpus-per-node: only with --launcher"),
        (["--launcher", "dask", "--resubmit"], "--resubmit: only with --launcher slurm"),
        (["--workers", "2"], "--workers: only with --launcher dask, not local"),
        (["--launcher", "slurm", "--scheduler", "tcp://h:1"], "--scheduler: only with --launcher"),
        (["--launcher", "dask", "--workers", "0"], "--workers: must be >= 1, got 0"),
        (
            ["--launcher", "dask", "--workers", "2", "--scheduler", "tcp://h:1"],
            "--workers: starts a local cluster; not with --scheduler",
        ),
        (["--launcher", "dask", "--timeout", "3"], "--timeout: only with"),
        (["--launcher", "slurm", "--dry-run", "--time", "soon"], "--time: expected minutes"),
        (["--launcher", "slurm", "--dry-run", "--nodes", "0"], "--nodes: must be an integer"),
    ],
)
def test_options_of_another_launcher_and_bad_values_are_refused(argv, message):
    with pytest.raises(ValueError, match=message):
        build(parse(*argv))


def test_slurm_without_sbatch_fails_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match="sbatch is not on this machine's PATH"):
        build(parse("--launcher", "slurm"))
    assert build(parse("--launcher", "slurm", "--dry-run")).dry_run  # a dry run needs none


def test_an_unreachable_scheduler_fails_when_the_launcher_is_built():
    argv = ("--launcher", "dask", "--scheduler", "tcp://127.0.0.1:9", "--timeout", "0.5")
    with pytest.raises(ValueError, match=r"--scheduler: cannot reach tcp://127\.0\.0\.1:9 within"):
        build(parse(*argv))
