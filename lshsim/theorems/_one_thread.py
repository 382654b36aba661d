"""Run the claims' checks on one thread: Numba's parallel kernels and the BLAS's GEMM.

The checks make many small calls (a hash of a few hundred vectors, a min-hash of a few pairs).
On a busy machine the start-up of a parallel region, Numba's or OpenBLAS's, dominates such a
call by a factor of 100 or more (a 400 x 16 by 16 x 100 product: 0.08 ms on one thread,
24 ms with two contending threads on a loaded 2-core machine). The results do not depend on
the thread count (Numba's kernels are written so; GEMM's thread split does not change which
bucket wins except at exact ties). The BLAS is limited through ``threadpoolctl``, which finds
the BLAS NumPy loaded (OpenBLAS, MKL or BLIS) on every OS.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numba
from threadpoolctl import threadpool_limits


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Limit Numba and the BLAS to one thread; restore both on exit."""
    numba_before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        numba.set_num_threads(numba_before)
