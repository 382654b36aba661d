"""The paper's memory studies: pretrain T5 variants with several seeds, compare held-out accuracy.

Usage::

    python experiments/memory_studies.py --study all --variant smoke          # run (resumes)
    python experiments/memory_studies.py --study lookups --variant real --dry-run
    python experiments/memory_studies.py --plot                               # figures only
    python experiments/memory_studies.py --launcher dask --workers 2          # on Dask
    python experiments/memory_studies.py --variant real --out /shared/runs --launcher slurm \
        --partition gpu --gpus-per-node 8 --time 3-00:00:00 --dry-run        # sbatch scripts
    python experiments/memory_studies.py --variant real --out /shared/runs --collect

The studies, the runner and the report are in :mod:`lshsim.studies.memory` (``--help`` prints
its description).
"""

import sys

from lshsim.studies.memory import console

if __name__ == "__main__":
    sys.exit(console())
