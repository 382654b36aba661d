"""Several processes: JAX's multi-process runtime, and which process writes the run's files.

One training run may span several processes (one per host, or several on one host): each
calls :func:`initialize` before anything touches JAX's backend, the mesh then spans
``jax.devices()`` of all of them, each process feeds only the batch rows of its own devices
(:func:`lshsim.t5.sharding.shard_batch`), process 0 alone writes ``run.json``,
``metrics.jsonl``, the tokenizer and the log (:func:`is_primary`), and orbax writes each
checkpoint from all processes (each its own shards).

On CPU, collectives across processes go through Gloo: JAX's
``jax_cpu_collectives_implementation`` defaults to ``"gloo"`` in the pinned jax 0.10
(``JAX_CPU_COLLECTIVES_IMPLEMENTATION=gloo`` sets it where it does not; without it a
cross-process computation on CPU fails). GPUs use NCCL and TPUs their ICI without settings.

References:
    JAX, "Multi-host and multi-process environments",
    https://docs.jax.dev/en/latest/multi_process.html
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

from lshsim._validate import check_int

#: The ``--distributed`` value that lets JAX detect the cluster (SLURM, Open MPI, ...).
AUTO = "auto"
#: Default seconds to wait for every process to reach the coordinator.
DEFAULT_TIMEOUT = 300


@dataclass(frozen=True)
class Cluster:
    """How to start JAX's multi-process runtime: explicit (all three fields) or detected.

    Attributes:
        coordinator: ``HOST:PORT`` of process 0's coordination service; ``None``: detected.
        num_processes: processes in the run; ``None``: detected.
        process_id: this process's index in ``[0, num_processes)``; ``None``: detected.
        timeout: seconds to wait for every process to reach the coordinator.
    """

    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    timeout: int = DEFAULT_TIMEOUT

    @property
    def detected(self) -> bool:
        """Whether JAX detects the processes from the environment (``--distributed auto``)."""
        return self.coordinator is None


def parse_coordinator(text: str) -> tuple[str, int]:
    """``(host, port)`` of ``HOST:PORT`` (``[::1]:PORT`` for an IPv6 address).

    Raises:
        ValueError: no ``:``, an empty host, or a port that is not an integer in [1, 65535].
    """
    host, sep, port = str(text).rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host:
        raise ValueError(f"--coordinator must be HOST:PORT, got {text!r}")
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"--coordinator port must be an integer, got {port!r}") from None
    return host, check_int("--coordinator port", number, 1, 65535)


def cluster_from_flags(
    coordinator: str | None,
    num_processes: int | None,
    process_id: int | None,
    distributed: str | None = None,
    timeout: int | None = None,
) -> Cluster | None:
    """Check the multi-process flags of ``lshsim train``; ``None`` for a single process.

    Args:
        coordinator: ``--coordinator HOST:PORT``.
        num_processes: ``--num-processes N`` (>= 1).
        process_id: ``--process-id I`` (in ``[0, N)``).
        distributed: ``--distributed auto`` (instead of the three above).
        timeout: ``--init-timeout`` seconds (>= 1; default 300).

    Returns:
        The :class:`Cluster` to initialise, or ``None`` when no flag asks for one.

    Raises:
        ValueError: one line naming the flag: only some of the three given, ``auto`` with
            any of them, a bad address, a process id out of range.
    """
    given = {
        "--coordinator": coordinator,
        "--num-processes": num_processes,
        "--process-id": process_id,
    }
    named = [k for k, v in given.items() if v is not None]
    if timeout is not None:
        timeout = check_int("--init-timeout", timeout, 1)
        if not named and distributed is None:
            raise ValueError("--init-timeout: needs --coordinator or --distributed auto")
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    if distributed is not None:
        if distributed != AUTO:
            raise ValueError(f"--distributed must be {AUTO!r}, got {distributed!r}")
        if named:
            raise ValueError(
                f"--distributed auto: JAX detects the processes; leave out {', '.join(named)}"
            )
        return Cluster(timeout=timeout)
    if not named:
        return None
    if len(named) < 3:
        missing = [k for k in given if k not in named]
        raise ValueError(f"{named[0]}: needs {' and '.join(missing)} too")
    parse_coordinator(coordinator)
    n = check_int("--num-processes", num_processes, 1)
    i = check_int("--process-id", process_id, 0, n - 1)
    return Cluster(coordinator, n, i, timeout)


def initialize(cluster: Cluster) -> None:
    """Start JAX's multi-process runtime (``jax.distributed.initialize``) for ``cluster``.

    Call it before anything touches JAX's backend. Every process waits until all of them
    reach the coordinator; past ``cluster.timeout`` seconds this process ends with status 2
    and one line on stderr (JAX's own time-out aborts the process from C++, with a stack
    trace that no Python handler can catch, so a watchdog thread ends it first).

    Raises:
        ValueError: ``--distributed auto`` outside a cluster JAX knows, or JAX refused the
            settings (e.g. its backend was already started).
    """
    import jax

    if cluster.detected:
        late = (
            "--distributed auto: not all processes reached the coordinator within "
            f"{cluster.timeout} s"
        )
    else:
        late = (
            f"--coordinator: not all {cluster.num_processes} processes reached "
            f"{cluster.coordinator} within {cluster.timeout} s (this is --process-id "
            f"{cluster.process_id}; is process 0 started there, and every other one?)"
        )
    watchdog = threading.Timer(cluster.timeout, _give_up, (late,))
    watchdog.daemon = True
    watchdog.start()
    try:
        jax.distributed.initialize(
            coordinator_address=cluster.coordinator,
            num_processes=cluster.num_processes,
            process_id=cluster.process_id,
            initialization_timeout=cluster.timeout + 30,  # the watchdog ends it first
        )
    except (ValueError, RuntimeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if cluster.detected:
            raise ValueError(
                f"--distributed auto: jax.distributed.initialize() failed ({first}); is this a "
                "SLURM or Open MPI job? Else give --coordinator, --num-processes, --process-id"
            ) from None
        raise ValueError(f"--coordinator: jax.distributed.initialize failed ({first})") from None
    finally:
        watchdog.cancel()


def _give_up(message: str) -> None:
    print(f"lshsim: error: {message}", file=sys.stderr, flush=True)
    os._exit(2)


def is_primary() -> bool:
    """Whether this process writes the run's files: process 0 (or the only process)."""
    import jax

    return jax.process_index() == 0


def barrier(name: str) -> None:
    """Wait until every process reaches the barrier ``name`` (nothing for one process)."""
    import jax

    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)
