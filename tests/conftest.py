"""Test-session settings: hypothesis profiles and the run's shared compile caches.

Hypothesis: "ci" (default) is fast and derandomised, so every run is reproducible. Select
another with ``HYPOTHESIS_PROFILE=dev pytest`` for a longer local search.

Compile once per run: the model tests build the same small T5 steps again and again (a new
``jax.jit`` each time, so JAX's in-memory cache misses), and every pytest-xdist worker would
compile the same Numba kernels. JAX's persistent compilation cache (keyed on the lowered HLO,
the compile options and the JAX/XLA versions), Numba's on-disk cache and lshsim's cache of
trained tokenizers and the embedded corpus (``LSHSIM_CACHE``) live in one folder of the
checkout, ``.test-cache/`` (``jax/``, ``numba/``, ``lshsim/``, git-ignored), that every worker of
the run and every subprocess the tests start share (they inherit the variables). The
controlling process empties it as the run starts, so each run compiles from cold, like a fresh
clone; ``LSHSIM_KEEP_TEST_CACHE=1`` keeps it between runs for the inner loop. The caches are the
test suite's alone: the ``lshsim`` command never sets them (tests/test_layout.py), and
benchmarks and compile timings outside the suite are taken with a cold cache. Under
pytest-xdist each worker runs OpenBLAS on one thread and OpenMP with passive waits (see the
end of this file).
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

from tests import FAST_XLA_FLAGS

settings.register_profile(
    "ci",
    deadline=None,  # the first example of a test includes Numba's JIT compile
    max_examples=50,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Python's bytecode caches, even where PYTHONDONTWRITEBYTECODE is set: each pytest-xdist worker
# and each subprocess the suite starts (training runs, several processes, Dask workers) would
# otherwise compile every module it imports from source again (jax, flax, scipy and the
# rest: about 9 s of CPU per worker at collection alone), and pytest would rewrite the test
# modules' asserts afresh in each worker. The caches go where Python puts them by default
# (``__pycache__``, git-ignored) and are what a plain ``pip install`` writes anyway.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

#: The run's compile caches (see the module docstring).
TEST_CACHE = Path(__file__).parents[1] / ".test-cache"
if not os.environ.get("PYTEST_XDIST_WORKER"):  # the controlling process (or the only one)
    if not os.environ.get("LSHSIM_KEEP_TEST_CACHE"):
        shutil.rmtree(TEST_CACHE, ignore_errors=True)
    TEST_CACHE.mkdir(exist_ok=True)
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(TEST_CACHE / "jax"))
os.environ.setdefault("NUMBA_CACHE_DIR", str(TEST_CACHE / "numba"))
# lshsim's own cache of derived files (trained tokenizers, the embedded corpus's documents):
# the run's, never the user's ~/.cache/lshsim, so a run starts as cold as a fresh machine and
# each tokenizer is trained once per run rather than once per worker and per subprocess.
os.environ.setdefault("LSHSIM_CACHE", str(TEST_CACHE / "lshsim"))
# XLA's CPU backend tuned to compile fast (``FAST_XLA_FLAGS``, tests/__init__.py): the tests
# run small programs a few times each, so compiling is most of their cost. LLVM's optimisation
# passes off (tests/t5/test_memory_train.py: 186 -> 124 s of CPU), and the legacy fusion
# emitters instead of the MLIR ones (its 18 one-batch runs: 65 -> 39 s of CPU), and the
# machine code generated as one LLVM module instead of split into parts for parallel codegen,
# whose threads only compete with the other worker on 2 cores (those 18 runs and two more:
# 127-128 -> 101-106 s of CPU, 66-70 -> 53-60 s of wall time). The HLO passes (fusion,
# sharding, buffer assignment) are unchanged; the machine code may round differently, and
# every test compares programs compiled alike. A flag the caller set is left as set.
_flags = os.environ.get("XLA_FLAGS", "").split()
for _flag in FAST_XLA_FLAGS:
    if not any(f.split("=")[0] == _flag.split("=")[0] for f in _flags):
        _flags.append(_flag)
os.environ["XLA_FLAGS"] = " ".join(_flags)
# Cache every compile, however small or quick: the repeats are what cost.
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

# glibc's malloc asks the kernel for transparent huge pages for its large blocks (glibc >= 2.35
# reads this; older ones ignore it). XLA's CPU runtime takes each execution's buffers (the
# tiny T5's logits and their gradient: over 100 MB a step) from fresh mmap'd memory, and
# faulting that in 4 KiB pages was a third of a training run's CPU time: ``lshsim train
# --config tiny --steps 150`` 10.4 M -> 0.5 M page faults, 17.7 -> 6.5 s of system time.
# glibc reads it at start-up, so it reaches the pytest-xdist workers and every subprocess.
_tunables = os.environ.get("GLIBC_TUNABLES", "")
if "glibc.malloc.hugetlb" not in _tunables:
    os.environ["GLIBC_TUNABLES"] = ":".join(filter(None, [_tunables, "glibc.malloc.hugetlb=1"]))

# Python's cyclic garbage collector less often: a worker's heap grows to millions of objects
# (JAX, Flax and their caches of traced programs), and each full collection walks all of them,
# a few hundred thousand allocations apart at the default thresholds (700, 10, 10); tracing a
# model allocates millions. At (50000, 20, 20), tests/t5/test_memory_train.py, test_memory.py
# and test_checkpoint_faults.py on two workers took 138, 156 and 141 s against 154, 158, 167
# and 162 s at the defaults (the last two of each interleaved), 273-307 against 305-330 s of
# CPU; the Numba and hypothesis tests (tests/hashing, tests/theory) moved within the machine's
# noise (93-107 s either way). Cycles are still collected, later. A fresh process gains
# nothing (``lshsim train``: 20.9 against 20.7 s), so the CLI keeps Python's defaults.
gc.set_threshold(50_000, 20, 20)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One xdist worker per core already fills the machine: a multithreaded BLAS in every worker
    # only adds contention (a small GEMM's parallel start-up costs 100x its work on a busy
    # core). Numba's pool is left alone: tests set its thread count explicitly where it matters.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Numba's parallel kernels run on GNU OpenMP (its ``omp`` threading layer), whose idle
    # threads spin before they sleep: on a core the other worker needs, that spinning is
    # stolen time. Passive waiting changes no result, only who waits how (tests/hashing,
    # tests/theory and tests/test_estimate.py on two workers: 101.5 and 102.2 s against 96.5
    # and 93.2 s, 194-195 against 182-184 s of CPU). Read by libgomp as Numba first loads it.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")


#: Packages the workers and the suite's subprocesses import, byte-compiled once up front.
_WARM_PACKAGES = (
    "lshsim", "jax", "jaxlib", "flax", "optax", "orbax", "numpy", "scipy", "numba", "llvmlite",
    "matplotlib", "hypothesis", "dask", "distributed", "pyarrow", "etils", "rich", "tornado",
    "_pytest", "xdist", "execnet", "pluggy", "anyio", "absl", "yaml", "toolz", "sentencepiece",
    "submitit", "msgpack", "ml_dtypes", "opt_einsum", "cloudpickle", "zict", "tblib", "psutil",
)  # fmt: skip


def pytest_configure(config):
    """In the controlling process only: byte-compile :data:`_WARM_PACKAGES` on every core.

    On a fresh environment each pytest-xdist worker and each subprocess the slow tests start
    at once would otherwise compile the same modules from source side by side. Test folders
    inside the packages are skipped; a package already compiled costs a ``stat`` per file.
    """
    import compileall
    import importlib.util
    import re

    if os.environ.get("PYTEST_XDIST_WORKER") or sys.dont_write_bytecode:
        return
    skip = re.compile(r"[/\\](tests?|testing|_examples)[/\\]")
    for name in _WARM_PACKAGES:
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(folder, quiet=1, workers=0, rx=skip)


def pytest_collection_modifyitems(config, items):
    """Run the tests marked ``slow`` first (a stable sort keeps the rest in file order).

    pytest-xdist's work-stealing scheduler hands each worker a contiguous run of the test list
    and lets idle workers steal from the end of another's: a test of several minutes left
    near the end would run alone while the other core idles. Started first, it runs while the
    other worker works through the short tests.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
