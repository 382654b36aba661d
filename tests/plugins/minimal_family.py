"""Two plug-in families with the least a family may have (tests/plugins/test_plugin_loading.py).

``toyminimal`` has only what a family needs: ``name``, ``help``, ``check_params``, the kernel
(``_draw`` + ``_hash``) and one exact law, ``log_probability`` (``P = 1/n`` for ``a < 1``). It
has no ``limit_rho``, ``asymptotic_probability``, ``hash_cost``, top-k rule nor reduced
sampler, so every caller of those optional laws must do without them.

``toykernelless`` has the law but no kernel at all: drawing or hashing with it must be one
line naming the family and what is missing.
"""

from __future__ import annotations

import math

import numpy as np

from lshsim.hashing import HashFamily


class Minimal(HashFamily):
    """Bucket = a random id per distinct input row: ``P = 1/n`` for ``x != y``, 1 for ``x = y``."""

    name = "toyminimal"
    help = "a random bucket per distinct input: P = 1/n (a test family with only what it needs)"

    @classmethod
    def check_params(cls, n, **params):
        """Validate ``n >= 2`` (no parameters)."""
        if params:
            raise ValueError(f"unknown parameter(s) for toyminimal: {', '.join(params)}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise ValueError(f"n (buckets) must be an integer >= 2, got {n!r}")
        return {"n": n}

    def _draw(self, rng):
        self.key = int(rng.integers(0, 2**62))

    def _hash(self, x):
        rows = np.ascontiguousarray(x, dtype=np.float64)
        ids = [hash((self.key, r.tobytes())) % self.n for r in rows]
        return np.asarray(ids, dtype=np.int64)

    @classmethod
    def log_probability(cls, n, cosine, *, rtol=None, **params):
        """``log P = -log n`` for ``a < 1``, 0 at ``a = 1``."""
        n = cls.check_params(n, **params)["n"]
        return 0.0 if cosine >= 1.0 else -math.log(n)


class Kernelless(HashFamily):
    """An exact law and no kernel: ``_draw`` and ``_hash`` are the base class's."""

    name = "toykernelless"
    help = "an exact law without a hash kernel (a test family)"
    check_params = Minimal.__dict__["check_params"]
    log_probability = Minimal.__dict__["log_probability"]
