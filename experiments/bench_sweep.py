"""A Monte-Carlo-bound sweep on 2 local Dask workers against 1: ``lshsim.bench.sweep``.

Usage::

    python experiments/bench_sweep.py                       # 16 cells, 3 interleaved rounds
    python experiments/bench_sweep.py --out figures/bench_sweep.json
    python experiments/bench_sweep.py --cells 4 --samples 200 --rounds 1   # a smoke test

Prints the medians and the speed-up (goal >= 1.7); needs 2 idle cores for a fair number.
"""

from lshsim.bench.sweep import main

if __name__ == "__main__":
    main()
