"""Run the claims' checks on one thread: Numba's parallel kernels and OpenBLAS's GEMM.

The checks make many small calls (a hash of a few hundred vectors, a min-hash of a few pairs).
On a busy machine the start-up of a parallel region, Numba's or OpenBLAS's, dominates such a
call by a factor of 100 or more (a 400 x 16 by 16 x 100 product: 0.08 ms on one thread,
24 ms with two contending threads on a loaded 2-core machine). The results do not depend on
the thread count (Numba's kernels are written so; GEMM's thread split does not change which
bucket wins except at exact ties).

OpenBLAS has no Python API; :func:`_openblas_threads` finds the library NumPy loaded (Linux:
``/proc/self/maps``) and calls its ``*_set_num_threads*`` through ctypes, as threadpoolctl
does. Where that is not possible (another BLAS, another OS), only Numba is limited.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Callable, Iterator

import numba

#: (getter, setter) symbol names of the OpenBLAS builds NumPy ships or links
_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


def _openblas_threads() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """The loaded OpenBLAS's thread-count getter and setter, or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get, put in _SYMBOLS:
            if hasattr(lib, get) and hasattr(lib, put):
                return getattr(lib, get), getattr(lib, put)
    return None


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Limit Numba and (where found) OpenBLAS to one thread; restore both on exit."""
    numba_before = numba.get_num_threads()
    blas = _openblas_threads()
    blas_before = blas[0]() if blas else None
    numba.set_num_threads(1)
    if blas:
        blas[1](1)
    try:
        yield
    finally:
        numba.set_num_threads(numba_before)
        if blas:
            blas[1](blas_before)
