"""Engram's hash and the ngram family against Engram's NumPy hashing: ``lshsim.bench.ngram_peers``.

Usage::

    python experiments/bench_ngram.py            # 60 interleaved rounds per comparison
    python experiments/bench_ngram.py --quick --json --out bench_ngram.json

Prints one row per comparison: numpy time / our time (goal >= 2), both medians and the load
average before and after (the machine is shared: rerun when loaded).
"""

import sys

from lshsim.bench.ngram_peers import main

if __name__ == "__main__":
    sys.exit(main())
