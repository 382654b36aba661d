"""``lshsim``'s entry point: check the environment, build the parser, run the chosen handler."""

from __future__ import annotations

import sys

from lshsim.cli.environment import check_environment
from lshsim.cli.errors import quiet_broken_pipe, run_command
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
    try:
        args = build_parser().parse_args(argv)  # --help into a closed pipe
        return run_command(args)
    except BrokenPipeError:
        return quiet_broken_pipe()
