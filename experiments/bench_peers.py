"""Every hot path of lshsim against what a user would otherwise run: ``lshsim.bench.peers``.

Usage::

    python experiments/bench_peers.py                  # all cases, full repeats (~10 min)
    python experiments/bench_peers.py --quick --json   # fewer repeats (a few minutes)
    python experiments/bench_peers.py --list           # the cases
    python experiments/bench_peers.py --markdown figures/BENCHMARKS.md --out bench.json

The table goes to stdout (with ``--json``: the JSON, the table to stderr). Exit status 0 when
every case ran, 1 when one failed, 2 on bad options. The cases and goals: ``lshsim.bench.peers``.
"""

import os
import sys

# OpenBLAS's idle threads spin for about 2^28 cycles (~0.1 s) after every BLAS call before
# they sleep; in an interleaved run they took one of the two cores from whichever contender
# came next (measured: the Hadamard cross-polytope hash 7.7 ms alone, 13.5 ms right after a
# dense matmul, 7.2 ms after it with a timeout of 2^4 cycles; the matmul itself unchanged).
# Set before anything loads OpenBLAS (importing lshsim loads NumPy); the environment wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from lshsim.bench.peers import main

if __name__ == "__main__":
    sys.exit(main())
