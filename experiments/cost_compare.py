"""Write figures/cost_small.json: XLA's FLOPs per token of the paper's variants at one config.

Runs ``lshsim cost --config C --compare --json`` in a child process (every variant's forward
pass and loss gradient on one span-corruption example, compiled for the local backend on
abstract inputs: nothing is allocated) and records its output with the command that wrote the
file, the ``lshsim`` command it ran, its wall time and the machine (XLA's FLOP counts depend on
the jax version)::

    python experiments/cost_compare.py --config small --out figures/cost_small.json

The model guide's cost table (``docs/guide/model.md``) is rendered from that file. At `small`
the comparison compiles every variant twice: a few minutes of CPU. Without ``--out`` it prints
the JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from lshsim.bench.machine import machine_info
from lshsim.bench.report import command_line, write_record


def compare(config: str) -> tuple[list[str], dict, float]:
    """Run ``lshsim cost --compare --json`` for ``config``.

    Args:
        config: a config name (``tiny``, ``small``, ...).

    Returns:
        ``(argv, output, seconds)``: the ``lshsim`` arguments, the parsed JSON and the wall time.

    Raises:
        SystemExit: the command failed (its stderr is printed).
    """
    argv = ["cost", "--config", config, "--compare", "--json"]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lshsim", *argv], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(done.returncode)
    return argv, json.loads(done.stdout), time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    """Parse the options, run the comparison and write (or print) the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="small", help="the config to price (default small)")
    ap.add_argument("--out", type=Path, help="write the JSON here (default: print it)")
    args = ap.parse_args(argv)
    machine = machine_info()
    cli, output, seconds = compare(args.config)
    rerun = ["--config", args.config]
    if args.out is not None:
        rerun += ["--out", args.out.as_posix()]
    doc = {
        "command": command_line("experiments/cost_compare.py", rerun),
        "cli": "lshsim " + " ".join(cli),
        "machine": machine,
        "seconds": seconds,
        **output,
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
