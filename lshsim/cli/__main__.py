"""``python -m lshsim.cli ARGS`` runs the ``lshsim`` command line."""

import sys

from lshsim.cli import main

sys.exit(main())
