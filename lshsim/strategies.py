"""Hypothesis strategies for Theorem 1's parameters: moved to :mod:`lshsim.theorems.strategies`.

This module keeps the import path ``lshsim.strategies`` (shown in the README since 0.1) working.
"""

from lshsim.theorems.strategies import *  # noqa: F403
from lshsim.theorems.strategies import __all__  # noqa: F401
