"""A toy lookup family defined outside ``lshsim/``: the executable proof of "adding a family".

``toycoin`` sends every input to a bucket drawn by a keyed hash of the input itself, so two
distinct inputs collide with probability ``1/n`` whatever their cosine (and identical inputs
always): ``P(n, a) = 1/n`` for ``a < 1``, ``P(n, 1) = 1``. Its exponent is ``rho = 1`` at every
``n``. It has one parameter, ``salt_bits`` (how many bits of the key are drawn), to show that
a family's parameters become CLI options, sweep options and strategy draws. Nothing in
``lshsim/`` names it: it arrives by :func:`lshsim.register_family` or by the entry-point group
``lshsim.families`` (``toycoin = tests.plugins.toy_family:ToyCoin``).
"""

from __future__ import annotations

import math

import numpy as np

from lshsim.hashing import HashFamily, Param

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _splitmix(v: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64 words (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        v = v + _MIX
        v = (v ^ (v >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        v = (v ^ (v >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return v ^ (v >> np.uint64(31))


class ToyCoin(HashFamily):
    """Bucket = a keyed hash of the input's coordinates, mod ``n``: ``P = 1/n`` for ``x != y``."""

    name = "toycoin"
    help = "keyed hash of the input mod n: P = 1/n for any two distinct inputs (a test family)"
    parameters = (
        Param(
            "salt_bits",
            int,
            "toycoin: bits of the random key in [1, 64] (default 64)",
            flag="salt-bits",
            metavar="B",
            draw=(1, 64),
        ),
    )
    reduced = True

    @classmethod
    def check_params(cls, n, salt_bits=64, **params):
        """Validate ``n >= 2`` and ``salt_bits`` in ``[1, 64]``."""
        if params:
            raise ValueError(f"unknown parameter(s) for toycoin: {', '.join(params)}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise ValueError(f"n (buckets) must be an integer >= 2, got {n!r}")
        if (
            isinstance(salt_bits, bool)
            or not isinstance(salt_bits, int)
            or not 1 <= salt_bits <= 64
        ):
            raise ValueError(f"salt_bits must be an integer in [1, 64], got {salt_bits!r}")
        return {"n": n, "salt_bits": salt_bits}

    def _draw(self, rng):
        bits = self.params["salt_bits"]
        self.key = np.uint64(int(rng.integers(0, 2**63)) >> (63 - min(bits, 63)))

    def _hash(self, x):
        words = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
        acc = np.full(words.shape[0], self.key, dtype=np.uint64)
        for j in range(words.shape[1]):
            acc = _splitmix(acc ^ words[:, j])
        return (acc % np.uint64(self.n)).astype(np.int64)

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """A distinct pair collides with probability ``1/n``; an identical one always."""
        n = cls.check_params(n, **params)["n"]
        return (rng.random(cosines.shape[0]) < 1.0 / n) | (cosines >= 1.0)

    @classmethod
    def log_probability(cls, n, cosine, *, rtol=None, **params):
        """``log P = -log n`` for ``a < 1``, 0 at ``a = 1``."""
        n = cls.check_params(n, **params)["n"]
        return 0.0 if cosine >= 1.0 else -math.log(n)

    @classmethod
    def limit_rho(cls, cosine, n, **params):
        """``rho = 1`` at every ``n`` (0 at ``a = 1``)."""
        return 0.0 if cosine >= 1.0 else 1.0


class Lawless(ToyCoin):
    """The same kernel with no exact law at all: every law a caller asks is a NoLaw."""

    name = "toylawless"
    help = "toycoin's kernel without any exact law (a test family)"

    log_probability = HashFamily.__dict__["log_probability"]
    limit_rho = HashFamily.__dict__["limit_rho"]
