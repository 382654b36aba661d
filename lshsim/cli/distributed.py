"""``lshsim train``'s multi-process flags: one run over several processes (hosts).

The flags are checked without importing JAX; :func:`start_processes` then calls
``jax.distributed.initialize`` (see :mod:`lshsim.t5.distributed`) before anything touches
JAX's backend.
"""

from __future__ import annotations

import argparse

#: The epilog paragraph of ``lshsim train --help`` on several processes.
DISTRIBUTED_HELP = """\
several processes (hosts): start the same command once per process, with the same --out on a
shared file system. The mesh spans the devices of all processes (process 0's first); each
process feeds the batch rows of its own devices; process 0 writes run.json, metrics.jsonl and
the output; every process writes its shards of each checkpoint. On CPU the processes exchange
data through Gloo (jax's default there).
  # process 0 listens on 10.0.0.1:1234; process 1 runs on another host (or the same one):
  lshsim train --config tiny --steps 150 --out runs/mp --mesh data=2,model=2 \\
      --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 0
  lshsim train --config tiny --steps 150 --out runs/mp --mesh data=2,model=2 \\
      --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 1
  # SLURM or Open MPI, one task per host (4 hosts x 8 GPUs; model inside a host):
  srun --nodes 4 --ntasks-per-node 1 lshsim train --config base --steps 100000 \\
      --out runs/base --mesh data=4,model=8 --distributed auto
"""


def add_distributed_flags(p: argparse.ArgumentParser) -> None:
    """Add the flags of a run over several processes (a "several processes" group).

    Args:
        p: the ``train`` parser.
    """
    g = p.add_argument_group(
        "several processes",
        "Without these flags the run is one process over its local devices.",
    )
    g.add_argument(
        "--coordinator",
        metavar="HOST:PORT",
        help="process 0's address; it listens on PORT (with --num-processes and --process-id)",
    )
    g.add_argument("--num-processes", type=int, metavar="N", help="processes in the run")
    g.add_argument("--process-id", type=int, metavar="I", help="this process, 0 <= I < N")
    g.add_argument(
        "--distributed",
        choices=["auto"],
        help="auto: JAX detects the processes (SLURM, Open MPI, TPU pods, ...): "
        "jax.distributed.initialize() with no arguments; not with the three flags above",
    )
    g.add_argument(
        "--init-timeout",
        type=int,
        metavar="S",
        help="seconds to wait for all processes to reach the coordinator (default 300); "
        "then exit 2 with one line",
    )


def start_processes(args: argparse.Namespace) -> bool:
    """Check the multi-process flags and, when given, start JAX's multi-process runtime.

    Args:
        args: the parsed ``train`` arguments.

    Returns:
        Whether this process writes the run's output (process 0, or a single process).

    Raises:
        ValueError: one line naming the bad flag (see
            :func:`lshsim.t5.distributed.cluster_from_flags`).
    """
    from lshsim.t5.distributed import cluster_from_flags

    cluster = cluster_from_flags(
        args.coordinator, args.num_processes, args.process_id, args.distributed, args.init_timeout
    )
    if cluster is None:
        return True
    from lshsim.t5.distributed import initialize, is_primary

    initialize(cluster)
    return is_primary()
