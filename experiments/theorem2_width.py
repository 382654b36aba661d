"""Theorem 2 width sweep (input-only vs every-layer lookups): ``lshsim.studies.theorem2_cli``.

Writes ``<out>/theorem2_width.json`` and the figure; ``--help`` lists the options, e.g.
``python experiments/theorem2_width.py --quick`` (d = 4, 2 seeds, ~35 s).
"""

import sys

from lshsim.studies.theorem2_cli import main

if __name__ == "__main__":
    sys.exit(main())
