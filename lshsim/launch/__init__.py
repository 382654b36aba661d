"""Launching a study's training runs as jobs: here, on a Dask cluster, or on SLURM.

A study turns each run into a :class:`~lshsim.launch.rundir.Job` (a key, a run directory, the
name of the function that does the run and what it takes); a launcher hands the jobs out and
every worker calls :func:`~lshsim.launch.rundir.execute_job` on a run directory, which writes
the run's row to ``result.json`` last and atomically. So a re-launch skips finished runs, a
killed one resumes, and :func:`~lshsim.launch.rundir.collect` reads the rows back whichever
launcher ran them. Modules: :mod:`~lshsim.launch.rundir` (the run-directory protocol),
:mod:`~lshsim.launch.launchers` (local, Dask), :mod:`~lshsim.launch.slurm` (submitit: one
sbatch job per run, dry run) and :mod:`~lshsim.launch.cli` (the ``--launcher`` flags).
"""

from lshsim.launch.cli import LAUNCHERS, add_launch_flags, launcher_from_args
from lshsim.launch.launchers import DaskLauncher, Launcher, LaunchReport, LocalLauncher
from lshsim.launch.rundir import Collected, Job, collect, execute_job, read_result, write_job
from lshsim.launch.slurm import SlurmLauncher, SlurmResources, parse_time, sbatch_script

__all__ = [
    "LAUNCHERS",
    "Collected",
    "DaskLauncher",
    "Job",
    "LaunchReport",
    "Launcher",
    "LocalLauncher",
    "SlurmLauncher",
    "SlurmResources",
    "add_launch_flags",
    "collect",
    "execute_job",
    "launcher_from_args",
    "parse_time",
    "read_result",
    "sbatch_script",
    "write_job",
]
