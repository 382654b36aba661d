"""The launch flags of a study script: ``--launcher local|dask|slurm`` and each one's options.

:func:`add_launch_flags` adds them to a parser; :func:`launcher_from_args` checks them (an
option of another launcher is an error, naming the option) and builds the launcher.
"""

from __future__ import annotations

import argparse
import os
import shutil

from lshsim.cli.vocabulary import install_aliases
from lshsim.launch.launchers import TIMEOUT, DaskLauncher, Launcher, LocalLauncher
from lshsim.launch.slurm import SlurmLauncher, SlurmResources, parse_time

#: The launchers, as ``--launcher`` spells them.
LAUNCHERS = ("local", "dask", "slurm")
#: argparse dest -> flag, of the options that belong to one launcher.
DASK_FLAGS = {
    "workers": "--workers",
    "scheduler": "--scheduler",
    "scheduler_timeout": "--timeout",
}
SLURM_FLAGS = {
    "partition": "--partition",
    "nodes": "--nodes",
    "gpus_per_node": "--gpus-per-node",
    "cpus_per_task": "--cpus-per-task",
    "mem": "--mem",
    "time": "--time",
    "resubmit": "--resubmit",
}


def add_launch_flags(ap: argparse.ArgumentParser) -> None:
    """Add ``--launcher``, ``--collect``, ``--train-args`` and the Dask and SLURM options.

    Args:
        ap: a study script's parser.
    """
    g = ap.add_argument_group("launching the runs")
    g.add_argument(
        "--launcher",
        choices=LAUNCHERS,
        default="local",
        help="local: one run after another in this process (default)\n"
        "dask: a Dask cluster (--workers, --scheduler)\n"
        "slurm: one sbatch job per run via submitit (resources below; --dry-run\n"
        "prints the scripts; --collect when the jobs are done)",
    )
    g.add_argument(
        "--collect",
        action="store_true",
        help="launch nothing: read the run directories into the JSON and name the\n"
        "missing and failed runs (exit 1 if any); launch options may stay given",
    )
    g.add_argument(
        "--train-args",
        default="",
        metavar='"FLAGS"',
        help="`lshsim train` flags for every run that change how it runs, not what it\n"
        'computes, e.g. "--devices 8" (device / mesh options); the study sets the rest',
    )
    g.add_argument("--workers", type=int, metavar="N", help="dask: a LocalCluster of N processes")
    g.add_argument("--scheduler", metavar="ADDR", help="dask: a running scheduler, tcp://host:port")
    g.add_argument(
        "--timeout",
        dest="scheduler_timeout",
        type=float,
        metavar="S",
        help=f"dask: seconds to wait for --scheduler to answer (default {TIMEOUT:g}; formerly "
        "--scheduler-timeout)",
    )
    g.add_argument("--partition", metavar="P", help="slurm: partition (cluster default)")
    g.add_argument("--nodes", type=int, metavar="N", help="slurm: nodes per run (1)")
    g.add_argument("--gpus-per-node", type=int, metavar="G", help="slurm: GPUs per node (none)")
    g.add_argument("--cpus-per-task", type=int, metavar="C", help="slurm: cores per task")
    g.add_argument("--mem", metavar="M", help="slurm: memory per node, e.g. 64G")
    g.add_argument(
        "--time", metavar="T", help="slurm: time limit per run, minutes or D-H:MM:SS (1-00:00:00)"
    )
    g.add_argument(
        "--resubmit",
        action="store_true",
        help="slurm: submit again runs submitted before and not finished (default:\n"
        "skip them as pending or running)",
    )
    install_aliases(ap, "launch")


def _refuse_others(args: argparse.Namespace, flags: dict[str, str], owner: str) -> None:
    for dest, flag in flags.items():
        if getattr(args, dest) not in (None, False):
            raise ValueError(f"{flag}: only with --launcher {owner}, not {args.launcher}")


def launcher_from_args(args: argparse.Namespace, progress: bool = False) -> Launcher:
    """The launcher the parsed flags ask for.

    Args:
        args: parsed arguments with the :func:`add_launch_flags` flags and ``dry_run``.
        progress: a progress bar per run (the local launcher).

    Returns:
        A :class:`~lshsim.launch.launchers.LocalLauncher`, ``DaskLauncher`` or
        :class:`~lshsim.launch.slurm.SlurmLauncher` (``dry_run`` passed on).

    Raises:
        ValueError: an option of another launcher, ``--workers`` with ``--scheduler``, or a
            value out of range (one line naming the flag).
    """
    if args.launcher != "dask":
        _refuse_others(args, DASK_FLAGS, "dask")
    if args.launcher != "slurm":
        _refuse_others(args, SLURM_FLAGS, "slurm")
    if args.launcher == "local":
        return LocalLauncher(progress=progress)
    if args.launcher == "dask":
        if args.scheduler is not None:
            from lshsim.sweep.execute import check_address

            check_address(args.scheduler)  # a dry run too: a typo is found before the real one
        if args.workers is not None and args.scheduler is not None:
            raise ValueError("--workers: starts a local cluster; not with --scheduler")
        if args.scheduler_timeout is not None and args.scheduler is None:
            raise ValueError("--timeout: only with --scheduler")
        timeout = TIMEOUT if args.scheduler_timeout is None else args.scheduler_timeout
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        if args.workers is not None and args.workers > 4 * cores:
            raise ValueError(
                f"--workers: {args.workers} processes on {cores} usable cores; give at most "
                f"{4 * cores} (or --scheduler for a larger cluster)"
            )
        launcher = DaskLauncher(
            workers=1 if args.workers is None else args.workers,
            scheduler=args.scheduler,
            timeout=timeout,
        )
        if args.scheduler is not None and not args.dry_run:
            launcher.connect()  # an unreachable scheduler fails before any work
        return launcher
    resources = SlurmResources(
        time=parse_time(args.time) if args.time is not None else SlurmResources.time,
        partition=args.partition,
        nodes=1 if args.nodes is None else args.nodes,
        gpus_per_node=args.gpus_per_node,
        cpus_per_task=args.cpus_per_task,
        mem=args.mem,
    )
    if not args.dry_run and shutil.which("sbatch") is None:
        raise ValueError(
            "--launcher slurm: sbatch is not on this machine's PATH (not a SLURM login node); "
            "--dry-run prints the scripts"
        )
    return SlurmLauncher(resources, dry_run=args.dry_run, resubmit=args.resubmit)
