"""The ``lshsim`` argument parser: the root parser and :func:`build_parser`.

Each command module adds its own sub-parser (``add_parser(sub)`` or ``add_parsers(sub)``) and
sets ``func`` to its handler; :func:`build_parser` asks them in the order ``lshsim --help``
lists the commands.
"""

from __future__ import annotations

import argparse

from lshsim import __version__
from lshsim.cli.formatting import one_line

_DESCRIPTION = """\
lshsim: how often does a lookup function route two similar inputs to the same bucket?

Simulate the lookup families of "The Power of External Memory in Increasing Predictive Model
Capacity" (Theorem 1) on sentence pairs that share a fraction f of their tokens, or on unit
vectors at an exact cosine, and get a collision-probability estimate with a Wilson 95% CI.
Compute the exact probabilities, check Theorem 1's claims, and reproduce every figure. With
the jax extra: count, train and evaluate T5 v1.1 models (params, train, eval).
"""


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line (``lshsim: error: ...``) and exit 2."""

    def error(self, message):
        """Print ``PROG: error: MESSAGE`` on stderr (one line) and exit with status 2.

        ``PROG`` is the program (``lshsim``, also for a command's parser, or the launcher's).
        """
        self.exit(2, f"{self.prog.split()[0]}: error: {one_line(message)}\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``lshsim`` argument parser (exposed for documentation and tests).

    Returns:
        The root parser; each command's parsed arguments carry its handler as ``func``.
    """
    # imported when the parser is built: the command modules import Numba, JAX or Dask, which
    # read the environment that lshsim.cli.main checks first
    from lshsim.cli import (
        calibrate,
        check,
        compare,
        families,
        finetune,
        model,
        plan,
        probe,
        reproduce,
        simulate,
        sweep,
        train,
        tune,
    )
    from lshsim.cli.errors import EXIT_CODES, TRACEBACK_VARIABLE

    statuses = "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())
    parser = Parser(
        prog="lshsim",
        description=_DESCRIPTION,
        epilog=f"exit statuses ({TRACEBACK_VARIABLE}=1 shows an error's traceback):\n{statuses}",
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lshsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    simulate.add_parsers(sub)  # simulate, theory
    check.add_parser(sub)
    calibrate.add_parser(sub)
    reproduce.add_parser(sub)
    compare.add_parser(sub)
    families.add_parser(sub)
    model.add_parsers(sub)  # params, cost
    train.add_parsers(sub)  # train, eval
    finetune.add_parser(sub)
    probe.add_parser(sub)
    plan.add_parser(sub)
    sweep.add_parser(sub)
    tune.add_parser(sub)
    return parser
