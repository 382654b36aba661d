"""The one error handler of the ``lshsim`` commands.

Expected failures end as one line on stderr and an exit status, never a traceback: bad input
(``ValueError``) and a missing optional dependency exit 2, a failed quadrature or a diverged
training run exit 1, Ctrl-C exits 130.
"""

from __future__ import annotations

import argparse
import sys

from lshsim.t5 import NonFiniteLossError

#: Optional top-level modules and the extra that installs them.
OPTIONAL = (
    {m: "jax" for m in ("jax", "jaxlib", "flax", "optax", "orbax", "sentencepiece")}
    | {m: "hf" for m in ("torch", "transformers", "safetensors")}
    | {m: "sweep" for m in ("dask", "distributed", "pyarrow")}
)


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command's handler (``args.func``), reporting its failures in one line.

    Args:
        args: the parsed arguments, as :func:`lshsim.cli.parser.build_parser` returns them.

    Returns:
        The exit status: the handler's, or 2 for bad input and a missing optional
        dependency, 1 for a failed quadrature or training run, 130 when interrupted.

    Raises:
        ModuleNotFoundError: a module that no extra provides is missing (a real bug).
    """
    from lshsim.theory import QuadratureError  # imports Numba: not at ``import lshsim.cli``

    try:
        return args.func(args)
    except ValueError as exc:
        print(f"lshsim: error: {exc}", file=sys.stderr)
        return 2
    except QuadratureError as exc:
        print(f"lshsim: quadrature failed: {exc}", file=sys.stderr)
        return 1
    except NonFiniteLossError as exc:
        print(f"lshsim: training stopped: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            extra = OPTIONAL[exc.name.split(".")[0]]
            print(
                f'lshsim: error: this command needs {exc.name}; pip install "lshsim[{extra}]"',
                file=sys.stderr,
            )
            return 2
        raise
    except (MemoryError, OverflowError) as exc:  # a last resort: the checks should come first
        print(f"lshsim: error: input too large for this machine ({exc})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lshsim: interrupted", file=sys.stderr)
        return 130
