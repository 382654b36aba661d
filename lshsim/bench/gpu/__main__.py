"""``python -m lshsim.bench.gpu``: the GPU check (see :mod:`lshsim.bench.gpu`)."""

import sys

from lshsim.bench.gpu.run import main

if __name__ == "__main__":
    sys.exit(main())
