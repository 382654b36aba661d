"""Helpers shared by the tests (importable as ``tests``): a subprocess running the CLI."""

import os
import subprocess
import sys


def lshsim_optimised(*argv: str) -> tuple[int, str, str]:
    """``lshsim ARGV`` in a subprocess whose XLA keeps LLVM's optimisation passes.

    tests/conftest.py turns them off for the session, since compiling dominates the short
    tests; a long run (many training steps) is dominated by executing them instead (the tiny
    150-step run: 96 s unoptimised in process, 45 s this way).

    Returns:
        The exit status, stdout and stderr.
    """
    flags = os.environ.get("XLA_FLAGS", "").replace("--xla_backend_optimization_level=0", "")
    env = dict(os.environ, XLA_FLAGS=flags.strip(), JAX_PLATFORMS="cpu")
    res = subprocess.run(
        [sys.executable, "-m", "lshsim.cli", *argv], capture_output=True, text=True, env=env
    )
    return res.returncode, res.stdout, res.stderr
