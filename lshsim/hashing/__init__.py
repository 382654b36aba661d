"""Numba hash kernels for every lookup family, and the one registry ``FAMILIES``.

>>> import numpy as np
>>> from lshsim.hashing import make_family
>>> h = make_family("simhash", n=1024, d=8, seed=0)
>>> ids = h.hash(np.eye(8))
>>> bool(((0 <= ids) & (ids < 1024)).all())
True
"""

from __future__ import annotations

from lshsim.hashing.base import HashFamily
from lshsim.hashing.hyperplane import PStable, SimHash
from lshsim.hashing.minhash import MERSENNE61, MinHash
from lshsim.hashing.ngram import NGram
from lshsim.hashing.spherical import CrossPolytope, Voronoi
from lshsim.hashing.tokenid import TokenID

#: Every family by name: the CLI, tests and experiments enumerate this one dict.
FAMILIES: dict[str, type[HashFamily]] = {
    cls.name: cls for cls in (SimHash, PStable, Voronoi, CrossPolytope, MinHash, TokenID, NGram)
}

#: Families hashing real vectors (the others hash token ids).
VECTOR_FAMILIES = tuple(k for k, v in FAMILIES.items() if v.input_kind == "vectors")


def get_family(name: str) -> type[HashFamily]:
    """Look a family up by name; ``ValueError`` naming the choices if unknown."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {name!r}") from None


def make_family(name: str, n: int, d: int, seed=0, **params) -> HashFamily:
    """Draw one hash function of family ``name`` with ``n`` buckets on dimension ``d``."""
    return get_family(name)(n, d, seed, **params)


__all__ = [
    "FAMILIES",
    "MERSENNE61",
    "VECTOR_FAMILIES",
    "CrossPolytope",
    "HashFamily",
    "MinHash",
    "NGram",
    "PStable",
    "SimHash",
    "TokenID",
    "Voronoi",
    "get_family",
    "make_family",
]
