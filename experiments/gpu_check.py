"""The GPU check: ``python -m lshsim.bench.gpu`` (see ``lshsim/bench/gpu/__init__.py``).

Usage, on the GPU machine, from the repository root (nothing to install)::

    PYTHONPATH=. python3 experiments/gpu_check.py --out $OUT/GPU.md --json $OUT/gpu.json
"""

import sys

from lshsim.bench.gpu.run import main

if __name__ == "__main__":
    sys.exit(main())
