"""The local and Dask launchers: run jobs here, one after another, or on a Dask cluster.

Both write each job's ``job.json`` and call :func:`lshsim.launch.rundir.execute_job` on its
run directory (in this process, or in a Dask worker), so a run does the same work and writes
the same files whichever launcher ran it; ``on_result(job, row)`` is called as each run
finishes (in this process, in the order runs finish), which is where a study records its row.
A failed run does not stop the others: its error is in the :class:`LaunchReport` and in the
run's ``failed.json``. The SLURM launcher is :class:`lshsim.launch.slurm.SlurmLauncher`.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from lshsim.launch.rundir import Job, execute_job, one_line, write_job

#: Seconds a Dask launcher waits for its ``--scheduler`` to answer (``--timeout``'s default).
TIMEOUT = 10.0

#: Called with each finished job and its row.
OnResult = Callable[[Job, dict[str, Any]], None]


@dataclasses.dataclass
class LaunchReport:
    """What a launch did.

    Attributes:
        done: keys of the runs that finished (their rows went to ``on_result``).
        failed: key -> one-line error of the runs that failed.
        submitted: key -> scheduler job id of runs handed to a scheduler (not waited for).
        skipped: keys of runs not launched (already submitted and not finished).
    """

    done: list[str] = dataclasses.field(default_factory=list)
    failed: dict[str, str] = dataclasses.field(default_factory=dict)
    submitted: dict[str, str] = dataclasses.field(default_factory=dict)
    skipped: list[str] = dataclasses.field(default_factory=list)


class Launcher(Protocol):
    """What every launcher offers: run (or submit) jobs, reporting each finished row."""

    name: str

    def launch(self, jobs: Sequence[Job], on_result: OnResult | None = None) -> LaunchReport:
        """Run or submit ``jobs``; call ``on_result`` for each finished one."""
        ...


class LocalLauncher:
    """Runs the jobs one after another in this process.

    Args:
        progress: a progress bar per run (the runner's).
    """

    name = "local"

    def __init__(self, progress: bool = False):
        self.progress = progress

    def launch(self, jobs: Sequence[Job], on_result: OnResult | None = None) -> LaunchReport:
        """Run ``jobs`` in order; a failure is reported and the next job runs.

        Args:
            jobs: the runs.
            on_result: called with each finished job and its row.

        Returns:
            The report (``done`` and ``failed``).
        """
        report = LaunchReport()
        for job in jobs:
            write_job(job)
            try:
                row = execute_job(job.run_dir, progress=self.progress)
            except Exception as exc:
                report.failed[job.key] = one_line(exc)
                continue
            report.done.append(job.key)
            if on_result is not None:
                on_result(job, row)
        return report


class DaskLauncher:
    """Runs the jobs on a Dask cluster: a new ``LocalCluster``, a scheduler, or a client.

    Give one of ``scheduler`` and ``client``, or neither for a ``LocalCluster`` of ``workers``
    processes with one thread each (each run is one task; JAX uses the cores of its worker).

    Args:
        workers: worker processes of the local cluster.
        scheduler: address of a running scheduler (``tcp://host:port``).
        timeout: seconds to wait for ``scheduler`` to answer.
        client: an existing ``distributed.Client`` (left open).

    Raises:
        ValueError: ``workers`` below 1, or both ``scheduler`` and ``client`` given.
    """

    name = "dask"

    def __init__(
        self,
        workers: int = 1,
        scheduler: str | None = None,
        timeout: float = TIMEOUT,
        client: Any = None,
    ):
        if workers < 1:
            raise ValueError(f"--workers: must be >= 1, got {workers}")
        if timeout <= 0:
            raise ValueError(f"--timeout: must be > 0 seconds, got {timeout}")
        if scheduler is not None and client is not None:
            raise ValueError("scheduler: give a scheduler address or a client, not both")
        self.workers, self.scheduler, self.timeout = workers, scheduler, timeout
        self.client, self._cluster, self._owned = client, None, False

    def connect(self) -> Any:
        """The client: the one given, or one this launcher opens (kept until :meth:`close`).

        Raises:
            ValueError: the scheduler does not answer within the timeout, or its address is
                not one Dask understands.
        """
        from distributed import Client, LocalCluster

        if self.client is not None:
            return self.client
        if self.scheduler is not None:
            from lshsim.sweep.execute import connect

            try:  # bounded even when a server accepts and never answers
                self.client = connect(self.scheduler, self.timeout)
            except ValueError as exc:
                why = one_line(exc).split(": ", 1)[-1]
                raise ValueError(
                    f"--scheduler: cannot reach {self.scheduler} within {self.timeout:g} s "
                    f"({why[:200]})"
                ) from None
        else:
            self._cluster = LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            self.client = Client(self._cluster)
        self._owned = True
        return self.client

    def close(self) -> None:
        """Close the client and the cluster this launcher opened (a given client stays open)."""
        if self._owned:
            self.client.close()
            if self._cluster is not None:
                self._cluster.close()
            self.client, self._cluster, self._owned = None, None, False

    def launch(self, jobs: Sequence[Job], on_result: OnResult | None = None) -> LaunchReport:
        """Submit ``jobs`` as tasks and gather them as they finish.

        Args:
            jobs: the runs (their run directories must be visible to the workers).
            on_result: called with each finished job and its row, in finishing order.

        Returns:
            The report (``done`` and ``failed``).
        """
        from distributed import as_completed

        report = LaunchReport()
        if not jobs:
            self.close()
            return report
        client = self.connect()  # an unreachable scheduler fails before any write
        try:
            for job in jobs:
                write_job(job)
            futures = {
                client.submit(
                    execute_job,
                    str(job.run_dir),
                    key=f"lshsim-run-{job.key}-{uuid.uuid4().hex[:8]}",
                    pure=False,
                ): job
                for job in jobs
            }
            for future in as_completed(futures):
                job = futures[future]
                if future.status == "error":
                    report.failed[job.key] = one_line(future.exception())
                    continue
                report.done.append(job.key)
                if on_result is not None:
                    on_result(job, future.result())
        finally:
            self.close()
        return report
