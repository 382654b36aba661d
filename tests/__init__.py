"""Helpers shared by the tests (importable as ``tests``): a subprocess running the CLI."""

import os
import subprocess
import sys

#: The XLA flags tests/conftest.py adds for the whole session (fast compiles, slower code).
FAST_XLA_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")


def lshsim_optimised(*argv: str) -> tuple[int, str, str]:
    """``lshsim ARGV`` in a subprocess with XLA's default CPU compiler (no ``FAST_XLA_FLAGS``).

    tests/conftest.py sets :data:`FAST_XLA_FLAGS` for the session, since compiling dominates
    the short tests; a long run (many training steps) is dominated by executing them instead
    (the tiny 150-step run: 96 s unoptimised in process, 45 s this way).

    Returns:
        The exit status, stdout and stderr.
    """
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if f not in FAST_XLA_FLAGS]
    env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cpu")
    res = subprocess.run(
        [sys.executable, "-m", "lshsim.cli", *argv], capture_output=True, text=True, env=env
    )
    return res.returncode, res.stdout, res.stderr
