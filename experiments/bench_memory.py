"""Step time of memory-augmented T5 variants against the baseline: ``lshsim.bench.memory_step``.

Usage::

    python experiments/bench_memory.py                    # tiny (batch 32) and small (batch 8)
    python experiments/bench_memory.py --configs tiny --variants baseline "altup K=2"
    python experiments/bench_memory.py --quick --json     # a few steps, for a smoke test

Writes ``figures/bench_memory.json`` next to this folder (``--out`` elsewhere) and prints a table
(with ``--json``: the JSON).
"""

from pathlib import Path

from lshsim.bench.memory_step import main

if __name__ == "__main__":
    main(default_out=Path(__file__).resolve().parents[1] / "figures" / "bench_memory.json")
