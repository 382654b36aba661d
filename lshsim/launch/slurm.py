"""The SLURM launcher: one ``sbatch`` job per run, through ``submitit``.

Each run is submitted by a ``submitit.SlurmExecutor`` whose folder is the run directory's
``slurm/`` (the sbatch script, the pickled call, the logs ``%j_0_log.out``/``.err``); the job
calls :class:`SlurmEntry` on the run directory, which starts JAX's multi-host runtime when the
job has several tasks (``--nodes N``: one task per node, each driving its node's GPUs; the
loop in :mod:`lshsim.t5.loop` then spans all hosts) and runs
:func:`lshsim.launch.rundir.execute_job`; a job that reaches its time limit or is preempted is
requeued by submitit and resumes from the run's last checkpoint. The job id is recorded in
``submitted.json``; the launcher does not wait: rows are collected from the run directories
once the jobs finish.

``dry_run`` prints the script of every job instead: the text ``submitit`` would write
(``submitit.slurm.slurm._make_sbatch_string`` with the parameters of :meth:`SlurmResources.
parameters` and the executor's own command line), and submits nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic
from lshsim.launch.launchers import LaunchReport, OnResult
from lshsim.launch.rundir import (
    FORMAT,
    JOB_FILE,
    SUBMITTED_FILE,
    Job,
    execute_job,
    one_line,
    read_failure,
    read_result,
    read_submission,
    write_job,
)

#: ``[D-]H:MM:SS``, a SLURM time limit.
_CLOCK = re.compile(r"^(?:(\d+)-)?(\d+):(\d{1,2}):(\d{1,2})$")
#: A SLURM memory size: a count and an optional unit (megabytes without one).
_MEM = re.compile(r"^[1-9]\d*[KMGT]?B?$")


def parse_time(text: str) -> int:
    """A SLURM time limit in whole minutes (seconds round up).

    Args:
        text: minutes (``90``) or ``[D-]H:MM:SS`` (``1-12:00:00``).

    Returns:
        The limit in minutes, at least 1.

    Raises:
        ValueError: ``text`` is neither form, or is zero.
    """
    text = str(text).strip()
    if text.isdigit():
        minutes = int(text)
    elif m := _CLOCK.match(text):
        days, hours, mins, secs = (int(g) if g else 0 for g in m.groups())
        if mins > 59 or secs > 59:
            raise ValueError(f"--time: minutes and seconds must be < 60, got {text!r}")
        minutes = (days * 24 + hours) * 60 + mins + (secs > 0)
    else:
        raise ValueError(f"--time: expected minutes or [D-]H:MM:SS, got {text!r}")
    if minutes < 1:
        raise ValueError(f"--time: must be at least 1 minute, got {text!r}")
    return minutes


@dataclasses.dataclass(frozen=True)
class SlurmResources:
    """What each run's job asks SLURM for.

    Attributes:
        time: time limit in minutes.
        partition: the partition (None: the cluster's default).
        nodes: nodes per run (one task per node; several: a multi-host JAX run).
        gpus_per_node: GPUs per node (None: none requested).
        cpus_per_task: CPU cores per task (None: the cluster's default).
        mem: memory per node, as sbatch writes it (``64G``; None: the cluster's default).
    """

    time: int = 24 * 60
    partition: str | None = None
    nodes: int = 1
    gpus_per_node: int | None = None
    cpus_per_task: int | None = None
    mem: str | None = None

    def __post_init__(self):
        if not isinstance(self.time, int) or self.time < 1:
            raise ValueError(f"--time: must be at least 1 minute, got {self.time!r}")
        for flag, value in (
            ("--nodes", self.nodes),
            ("--gpus-per-node", self.gpus_per_node),
            ("--cpus-per-task", self.cpus_per_task),
        ):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{flag}: must be an integer >= 1, got {value!r}")
        if self.mem is not None and not _MEM.match(self.mem):
            raise ValueError(f"--mem: expected a size like 64G or 16000M, got {self.mem!r}")
        if self.partition is not None and not re.match(r"^[\w.,-]+$", self.partition):
            raise ValueError(f"--partition: not a partition name: {self.partition!r}")

    def parameters(self, job: Job) -> dict[str, Any]:
        """``SlurmExecutor.update_parameters`` arguments of ``job``'s sbatch script."""
        params: dict[str, Any] = {
            "job_name": f"lshsim-{job.key}",
            "time": self.time,
            "nodes": self.nodes,
            "ntasks_per_node": 1,
            "setup": [f"# lshsim run {job.key} ({job.label}): {Path(job.run_dir) / JOB_FILE}"],
        }
        optional = {
            "partition": self.partition,
            "gpus_per_node": self.gpus_per_node,
            "cpus_per_task": self.cpus_per_task,
            "mem": self.mem,
        }
        params.update({k: v for k, v in optional.items() if v is not None})
        return params


def import_submitit() -> Any:
    """``submitit``, imported without its logging set-up; a warning handler on stderr instead.

    On import, submitit calls ``logging.config.dictConfig``, which closes every logging
    handler the process has (absl's, once JAX is imported, closes the stream it holds: under
    pytest, the capture file). ``SUBMITIT_LOG_LEVEL=NOCONFIG`` during the import skips that;
    the job's own process, started with the usual environment, configures it as usual.

    Returns:
        The ``submitit`` module.
    """
    if "submitit" not in sys.modules:
        saved = os.environ.get("SUBMITIT_LOG_LEVEL")
        os.environ["SUBMITIT_LOG_LEVEL"] = "NOCONFIG"
        try:
            import submitit  # noqa: F401
        finally:
            if saved is None:
                del os.environ["SUBMITIT_LOG_LEVEL"]
            else:
                os.environ["SUBMITIT_LOG_LEVEL"] = saved
        logger = logging.getLogger("submitit")
        if not logger.handlers:
            handler = logging.StreamHandler()
            handler.setLevel(logging.WARNING)
            logger.addHandler(handler)
    return sys.modules["submitit"]


def slurm_folder(job: Job) -> Path:
    """Where submitit keeps the job's script, pickles and logs: the run directory's ``slurm/``."""
    return Path(job.run_dir) / "slurm"


def sbatch_script(job: Job, resources: SlurmResources, python: str | None = None) -> str:
    """The sbatch script ``submitit.SlurmExecutor`` writes for ``job`` (nothing is written).

    Args:
        job: the run.
        resources: what the job asks for.
        python: the interpreter of the job (default: this one, as submitit's default).

    Returns:
        The script's text.
    """
    import_submitit()
    from submitit.slurm.slurm import _make_sbatch_string

    folder = slurm_folder(job)
    python = shlex.quote(sys.executable) if python is None else python
    command = " ".join([python, "-u -m submitit.core._submit", shlex.quote(str(folder))])
    return _make_sbatch_string(command=command, folder=folder, **resources.parameters(job))


class SlurmEntry:
    """What a SLURM job runs: :func:`~lshsim.launch.rundir.execute_job`, on every task.

    With several tasks (``--nodes N``) JAX's multi-host runtime is started first (it reads the
    coordinator from SLURM's environment); process 0 writes the run's files. Near its time
    limit, or when preempted, submitit calls :meth:`checkpoint` and requeues the job (up to 3
    times): training resumes from the run's last checkpoint.
    """

    def __call__(self, run_dir: str) -> dict:
        """Run the job in ``run_dir``; return its row."""
        primary = True
        if int(os.environ.get("SLURM_NTASKS", "1")) > 1:  # pragma: no cover - needs a cluster
            import jax

            jax.distributed.initialize()
            primary = jax.process_index() == 0
        return execute_job(run_dir, primary=primary)

    def checkpoint(self, run_dir: str) -> Any:
        """The same call, for submitit to requeue (the run's own checkpoints hold the state)."""
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(self, run_dir)


#: Builds a ready executor from a folder and :meth:`SlurmResources.parameters` (tests give
#: ``submitit.LocalExecutor``).
ExecutorFactory = Callable[[Path, dict[str, Any]], Any]


def _slurm_executor(folder: Path, params: dict[str, Any]) -> Any:
    executor = import_submitit().SlurmExecutor(folder=folder)
    executor.update_parameters(**params)
    return executor


class SlurmLauncher:
    """Submits one SLURM job per run with ``submitit`` (or prints the scripts: ``dry_run``).

    A finished run is reported with its recorded row and not submitted. A run whose job was
    submitted before (``submitted.json``) and that has neither finished nor failed is pending,
    running or was killed: it is skipped unless ``resubmit``.

    Args:
        resources: what each job asks for.
        dry_run: print each job's sbatch script (to ``echo``) and submit nothing.
        resubmit: submit runs that were submitted before and have not finished.
        wait: wait for the jobs and report their rows (as the other launchers do).
        executor: builds the executor of a run (default: ``submitit.SlurmExecutor``).
        echo: where the dry run prints.
    """

    name = "slurm"

    def __init__(
        self,
        resources: SlurmResources,
        *,
        dry_run: bool = False,
        resubmit: bool = False,
        wait: bool = False,
        executor: ExecutorFactory | None = None,
        echo: Callable[[str], None] = print,
    ):
        self.resources, self.dry_run, self.resubmit, self.wait = resources, dry_run, resubmit, wait
        self.executor, self.echo = executor, echo

    def _submit(self, job: Job) -> Any:
        make = self.executor or _slurm_executor
        try:
            executor = make(slurm_folder(job), self.resources.parameters(job))
            # submitit also prints sbatch's stderr on a failure: the error below says it once
            with contextlib.redirect_stderr(io.StringIO()):
                return executor.submit(SlurmEntry(), str(job.run_dir))
        except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
            raise ValueError(f"sbatch: run {job.key} was refused: {one_line(exc)[:300]}") from None

    def launch(self, jobs: Sequence[Job], on_result: OnResult | None = None) -> LaunchReport:
        """Submit a job per run (or print the scripts); with ``wait``, gather the rows.

        Args:
            jobs: the runs (their run directories must be on a file system the nodes share).
            on_result: called with each finished job and its row (``wait`` only).

        Returns:
            The report (``submitted``, ``skipped``, ``done`` for runs finished before; with
            ``wait`` also the submitted runs that finish or fail).

        Raises:
            ValueError: SLURM's ``sbatch`` is not on this machine, or it refused a job.
        """
        report = LaunchReport()
        if self.dry_run:
            for job in jobs:
                self.echo(f"# ---- run {job.key} ({job.label}) in {job.run_dir}")
                self.echo(sbatch_script(job, self.resources))
            return report
        if self.executor is None and shutil.which("sbatch") is None:
            raise ValueError(
                "--launcher slurm: sbatch is not on this machine's PATH (not a SLURM login "
                "node); --dry-run prints the scripts"
            )
        submitted = []
        for job in jobs:
            row = read_result(job.run_dir, job.key)
            if row is not None:  # finished before: its row, nothing submitted
                report.done.append(job.key)
                if on_result is not None:
                    on_result(job, row)
                continue
            pending = read_submission(job.run_dir) and read_failure(job.run_dir) is None
            if pending and not self.resubmit:
                report.skipped.append(job.key)
                continue
            write_job(job)
            handle = self._submit(job)
            record = {"format": FORMAT, "job_id": str(handle.job_id), "time": time.time()}
            write_atomic(Path(job.run_dir) / SUBMITTED_FILE, json.dumps(record) + "\n")
            report.submitted[job.key] = str(handle.job_id)
            submitted.append((job, handle))
        if self.wait:
            for job, handle in submitted:
                try:
                    row = handle.result()
                except Exception as exc:
                    report.failed[job.key] = read_failure(job.run_dir) or one_line(exc)[:300]
                    continue
                report.done.append(job.key)
                if on_result is not None:
                    on_result(job, row)
        return report
