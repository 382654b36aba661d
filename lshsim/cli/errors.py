"""The one error handler of the ``lshsim`` commands, and their exit statuses.

Expected failures end as one line on stderr and an exit status, never a traceback. The exit
statuses (:data:`EXIT_CODES`, listed in ``lshsim --help`` and the docs):

- 0: done (``check``, ``compare``, ``reproduce --verify``: every claim or value holds);
- 1: the command's verdict is "no" (a claim fails, results differ), a quadrature failed, or a
  training run diverged;
- 2: bad input (a ``ValueError`` from any check, an argparse usage error), a path the system
  refuses (too long, denied: an ``OSError``, named) or a missing optional dependency;
- 70: an internal error: a bug in lshsim, shown as one line; ``LSHSIM_TRACEBACK=1`` shows it;
- 130: interrupted (Ctrl-C);
- 141: standard output was closed early (``lshsim families | head -1``): the rest is dropped
  quietly, as a program killed by ``SIGPIPE`` would end.

``LSHSIM_TRACEBACK=1`` in the environment prints the traceback of any error before its line,
for bug reports.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable

from lshsim.cli.formatting import one_line
from lshsim.t5 import NonFiniteLossError

__all__ = [
    "EXIT_CODES",
    "OPTIONAL",
    "TRACEBACK_VARIABLE",
    "guarded",
    "quiet_broken_pipe",
    "run_command",
]

#: Optional top-level modules and the extra that installs them.
OPTIONAL = (
    {m: "jax" for m in ("jax", "jaxlib", "flax", "optax", "orbax", "sentencepiece")}
    | {m: "hf" for m in ("torch", "transformers", "safetensors")}
    | {m: "sweep" for m in ("dask", "distributed", "pyarrow")}
)
#: The environment variable that shows the traceback of an error (any non-empty value but 0).
TRACEBACK_VARIABLE = "LSHSIM_TRACEBACK"
#: Exit status -> its meaning, for every ``lshsim`` command.
EXIT_CODES = {
    0: "done; for check, compare and reproduce --verify: everything holds",
    1: "the command's verdict is no (a claim fails, results differ), a quadrature failed or "
    "a training run diverged",
    2: "bad input (one line names the option or file), a path the system refuses, or a "
    "missing optional dependency",
    70: f"an internal error (a bug: rerun with {TRACEBACK_VARIABLE}=1 and report the traceback)",
    130: "interrupted (Ctrl-C)",
    141: "standard output was closed early (e.g. by head); the rest was dropped",
}


def _show_traceback() -> None:
    """Print the current exception's traceback when :data:`TRACEBACK_VARIABLE` asks for it."""
    if os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0"):
        traceback.print_exc(file=sys.stderr)


def _fail(status: int, line: str, prog: str) -> int:
    """Print ``PROG: LINE`` on stderr (after the traceback, if asked) and return ``status``."""
    _show_traceback()
    print(f"{prog}: {one_line(line)}", file=sys.stderr)
    return status


def quiet_broken_pipe() -> int:
    """End quietly after standard output was closed by its reader.

    Points ``stdout`` at ``/dev/null``, so that the interpreter's last flush does not print
    ``BrokenPipeError`` again.

    Returns:
        141, as a shell reports a program killed by ``SIGPIPE``.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (a test's capture): nothing to flush
        pass
    finally:
        os.close(devnull)
    return 141


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command's handler (``args.func``), reporting its failures in one line.

    Args:
        args: the parsed arguments, as :func:`lshsim.cli.parser.build_parser` returns them.

    Returns:
        The exit status (:data:`EXIT_CODES`): the handler's, or :func:`guarded`'s.
    """
    return guarded(lambda: args.func(args))


def guarded(call: Callable[[], int], prog: str = "lshsim") -> int:
    """Call ``call()`` and report its failures in one line ``PROG: ...`` on stderr.

    Args:
        call: the command's work, returning its exit status.
        prog: the program named in the messages (``lshsim``, or the launcher script's name).

    Returns:
        The exit status (:data:`EXIT_CODES`): ``call``'s, 2 for bad input and a missing
        optional dependency, 1 for a failed quadrature or training run, 70 for a bug, 130
        when interrupted, 141 when standard output was closed.
    """
    from lshsim.cli.work import ChecksPassed
    from lshsim.theory import QuadratureError  # imports Numba: not at ``import lshsim.cli``

    try:
        return call()
    except ChecksPassed:  # a test's checks_only(): not an error
        raise
    except BrokenPipeError:
        return quiet_broken_pipe()
    except ValueError as exc:
        return _fail(2, f"error: {exc}", prog)
    except QuadratureError as exc:
        return _fail(1, f"quadrature failed: {exc}", prog)
    except NonFiniteLossError as exc:
        return _fail(1, f"training stopped: {exc}", prog)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in OPTIONAL:
            return _internal(exc, prog)
        extra = OPTIONAL[top]
        return _fail(
            2, f'error: this command needs {exc.name}; pip install "lshsim[{extra}]"', prog
        )
    except OSError as exc:  # a path the system refuses (too long, denied, full): one line
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return _fail(2, f"error: {where}{exc.strerror or exc}", prog)
    except (MemoryError, OverflowError) as exc:  # a last resort: the checks should come first
        return _fail(2, f"error: input too large for this machine ({exc})", prog)
    except KeyboardInterrupt:
        return _fail(130, "interrupted", prog)
    except Exception as exc:  # a bug: one line, the traceback on request
        return _internal(exc, prog)


def _internal(exc: BaseException, prog: str) -> int:
    """Report a bug in one line (exit 70), naming the exception and how to see its traceback."""
    text = str(exc)[:300]
    return _fail(
        70,
        f"internal error: {type(exc).__name__}: {text} (a bug in lshsim: rerun with "
        f"{TRACEBACK_VARIABLE}=1 and report the traceback)",
        prog,
    )
