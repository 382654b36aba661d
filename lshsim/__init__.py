"""lshsim: collision-probability simulation and exact theory for sparse-model lookups.

After "The Power of External Memory in Increasing Predictive Model Capacity".
"""

from lshsim.hashing import FAMILIES, make_family

__version__ = "0.1.0"
__all__ = ["FAMILIES", "__version__", "make_family"]
