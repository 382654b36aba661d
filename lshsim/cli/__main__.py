"""``python -m lshsim.cli ...``: the same as the ``lshsim`` command."""

import sys

from lshsim.cli import main

sys.exit(main())
