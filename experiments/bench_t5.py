"""Train-step time of lshsim's JAX T5 against Hugging Face's PyTorch T5: ``lshsim.bench.t5_step``.

Usage::

    python experiments/bench_t5.py                       # tiny (batch 32) and small (batch 8)
    python experiments/bench_t5.py --configs tiny --steps 40 --json --out bench_t5.json
    python experiments/bench_t5.py --quick               # a few steps, for a smoke test

Prints a table (with ``--json``: the JSON, the table to stderr); ``--out`` also writes the JSON.
"""

from lshsim.bench.t5_step import main

if __name__ == "__main__":
    main()
