"""The ``lshsim`` command line; :func:`main` is the console script's entry point.

Where each command lives:

- ``parser``: the root parser, the help formatters and ``build_parser()``;
- ``errors``: the one error handler (``run_command``): usage errors (bad values, impossible
  combinations) print one line ``lshsim: error: ...`` on stderr and exit with status 2,
  without a traceback;
- ``environment``: the environment variables read at import (``NUMBA_NUM_THREADS``), checked
  before the parser's command modules import Numba (``import lshsim.cli`` does not);
- ``checks``: the numeric options' ranges and the options that have no effect, checked with
  the CLI's spelling before any work;
- ``simulate``: ``simulate`` and ``theory`` (estimated and exact collision probabilities);
- ``check``: ``check`` (Theorem 1's claims); ``reproduce``: ``reproduce`` (every study);
- ``families``: ``families`` (the hash family registry);
- ``model``: ``params`` and ``cost``; ``train``: ``train`` and ``eval`` (T5; JAX imported lazily);
- ``probe``: ``probe`` (a model's routing collisions against the theory);
- ``sweep``: ``sweep`` (grids of simulate/theory cells on Dask into Parquet; ``--plot``);
- ``model_flags``: ``--config`` and the external-memory flags shared by the model commands;
- ``output``: the aligned table and the progress bar shared by the commands.
"""

from __future__ import annotations

import sys

from lshsim.cli.environment import check_environment
from lshsim.cli.errors import run_command
from lshsim.cli.parser import build_parser

__all__ = ["build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lshsim`` console script.

    Args:
        argv: the arguments after ``lshsim`` (default ``sys.argv[1:]``).

    Returns:
        The exit status (argparse's own usage errors and ``--help`` raise ``SystemExit``).
    """
    try:
        check_environment()  # before build_parser() imports Numba, which reads it at import
    except ValueError as exc:
        print(f"lshsim: error: {exc}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    return run_command(args)
