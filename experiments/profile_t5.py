"""Where a T5 train step spends its time, by model part: ``lshsim.bench.profile_step``.

Usage::

    python experiments/profile_t5.py                      # tiny, batch 32, 3 profiled steps
    python experiments/profile_t5.py --config small --batch 8 --steps 1 --top 40

Prints milliseconds per step by (pass, part) and the slowest XLA operations (``--json``: JSON).
"""

from lshsim.bench.profile_step import main

if __name__ == "__main__":
    main()
