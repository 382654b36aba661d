"""``python -m lshsim ...``: the same as the ``lshsim`` command."""

import sys

from lshsim.cli.main import main

sys.exit(main())
