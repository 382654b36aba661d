"""Helpers shared by the tests (importable as ``tests``): a subprocess running the CLI."""

import importlib
import importlib.util
import os
import subprocess
import sys

import pytest

#: The XLA flags tests/conftest.py adds for the whole session that change the machine code
#: (fast compiles, slower code); :func:`lshsim_optimised` leaves them out.
SLOW_CODE_XLA_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")
#: Every XLA flag tests/conftest.py adds for the whole session: those, and code generation in
#: one thread (a compile's threads only compete with the other pytest-xdist worker).
FAST_XLA_FLAGS = (*SLOW_CODE_XLA_FLAGS, "--xla_cpu_parallel_codegen_split_count=1")


def lshsim_optimised(*argv: str) -> tuple[int, str, str]:
    """``lshsim ARGV`` in a subprocess with XLA's optimising CPU compiler (no
    :data:`SLOW_CODE_XLA_FLAGS`; code generation stays in one thread).

    tests/conftest.py sets :data:`FAST_XLA_FLAGS` for the session, since compiling dominates
    the short tests; a long run (many training steps) is dominated by executing them instead
    (the tiny 150-step run: 96 s unoptimised in process, 45 s this way).

    Returns:
        The exit status, stdout and stderr.
    """
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if f not in SLOW_CODE_XLA_FLAGS]
    env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cpu")
    res = subprocess.run(
        [sys.executable, "-m", "lshsim.cli", *argv], capture_output=True, text=True, env=env
    )
    return res.returncode, res.stdout, res.stderr


def needs(*modules: str) -> pytest.MarkDecorator:
    """A ``skipif`` mark for tests that need ``modules``, found without importing them.

    ``pytest.importorskip`` at module level imports at collection, in every pytest-xdist
    worker, whether or not the worker runs the module's tests (torch and transformers: about
    4 s each time).
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


class LazyModule:
    """A module imported on first attribute access (see :func:`needs`)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        if attr.startswith("_") and self._name not in sys.modules:
            raise AttributeError(attr)  # pytest's collection probes names like __test__
        return getattr(importlib.import_module(self._name), attr)


#: :func:`once_per_run`'s values in this process, by the run's base folder and key.
_ONCE: dict[tuple[str, str], object] = {}


def once_per_run(tmp_path_factory: pytest.TempPathFactory, key: str, compute):
    """``compute()`` once per test run, shared by every pytest-xdist worker of the run.

    A module-scoped fixture runs once per worker that runs one of the module's tests, and
    work stealing spreads a module's tests over the workers: the claim registry's mutation
    run, Theorem 2's smoke sweeps and the plan's subprocess each ran twice per run (about
    20 s each). The first worker to ask computes under a file lock and pickles the value
    into the run's temporary folder (the workers' shared parent); the others wait on the
    lock and read it (``fcntl.flock``, released when the file closes, even by a killed
    worker). Without xdist, or without ``fcntl`` (Windows), it simply computes. A process
    computes or reads a key once: later calls (another module's fixture) return the same
    value. An error is not stored: the next caller computes again and fails the same way.

    Args:
        tmp_path_factory: pytest's fixture (its base folder locates the run's folder).
        key: the value's name, unique in the suite (a file name).
        compute: a function of no arguments returning a picklable value.

    Returns:
        What ``compute()`` returned (a copy read back, in every worker but the first).
    """
    import pickle

    try:
        import fcntl
    except ImportError:  # not POSIX
        fcntl = None
    memo = (str(tmp_path_factory.getbasetemp()), key)
    if memo in _ONCE:  # a second fixture of this process asks again
        return _ONCE[memo]
    if not os.environ.get("PYTEST_XDIST_WORKER") or fcntl is None:
        _ONCE[memo] = compute()
        return _ONCE[memo]
    path = tmp_path_factory.getbasetemp().parent / f"once-{key}.pickle"
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():
            _ONCE[memo] = pickle.loads(path.read_bytes())
            return _ONCE[memo]
        value = compute()
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(value))
        tmp.replace(path)
        _ONCE[memo] = value
        return value
