"""Numba hash kernels for every lookup family, and the one registry ``FAMILIES``.

A family is one class (:class:`HashFamily`) that owns what it knows: its name and help, its
parameters (:class:`Param`), its kernels (top-1, top-k, the reduced sampler) and its exact
laws, each present or an explicit :class:`NoLaw`. Every list of families elsewhere is
derived from :data:`FAMILIES` (:mod:`lshsim.hashing.registry`).

>>> import numpy as np
>>> from lshsim.hashing import make_family
>>> h = make_family("simhash", n=1024, d=8, seed=0)
>>> ids = h.hash(np.eye(8))
>>> bool(((0 <= ids) & (ids < 1024)).all())
True
"""

from __future__ import annotations

from lshsim.hashing.base import (
    LAWS,
    SIMILARITIES,
    HashFamily,
    MissingMethod,
    NoLaw,
    OverlapLaw,
    Param,
)
from lshsim.hashing.engram import Engram
from lshsim.hashing.hyperplane import PStable, SimHash
from lshsim.hashing.minhash import MERSENNE61, MinHash
from lshsim.hashing.ngram import NGram
from lshsim.hashing.productkey import ProductKey
from lshsim.hashing.registry import (
    ENTRY_POINT_GROUP,
    FAMILIES,
    FamilyView,
    PluginWarning,
    family_names,
    get_family,
    load_deferred,
    load_entry_points,
    register_family,
    unregister_family,
)
from lshsim.hashing.spherical import CrossPolytope, Voronoi
from lshsim.hashing.tokenid import TokenID

for _cls in (SimHash, PStable, Voronoi, CrossPolytope, MinHash, TokenID, NGram, ProductKey, Engram):
    register_family(_cls)

#: Families hashing real vectors (the others hash token ids).
VECTOR_FAMILIES = FamilyView(lambda c: c.input_kind == "vectors", "families hashing vectors")
#: Families whose collision probability is an exact function of the pair's cosine.
COSINE_FAMILIES = FamilyView(
    lambda c: c.input_kind == "vectors" and not c.halves and c.has_law("log_probability"),
    "families with an exact law at the cosine of the two inputs",
)
#: Families with a top-k rule.
TOPK_FAMILIES = FamilyView(lambda c: c.has_topk, "families with a top-k rule")


def make_family(name: str, n: int, d: int, seed=0, **params) -> HashFamily:
    """Draw one hash function of family ``name`` with ``n`` buckets on dimension ``d``."""
    return get_family(name)(n, d, seed, **params)


__all__ = [
    "COSINE_FAMILIES",
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "LAWS",
    "MERSENNE61",
    "SIMILARITIES",
    "TOPK_FAMILIES",
    "VECTOR_FAMILIES",
    "CrossPolytope",
    "Engram",
    "FamilyView",
    "HashFamily",
    "MinHash",
    "MissingMethod",
    "NGram",
    "NoLaw",
    "OverlapLaw",
    "PStable",
    "Param",
    "PluginWarning",
    "ProductKey",
    "SimHash",
    "TokenID",
    "Voronoi",
    "family_names",
    "get_family",
    "load_deferred",
    "load_entry_points",
    "make_family",
    "register_family",
    "unregister_family",
]

# Last, so that a plug-in loaded here can import any name of this module.
load_entry_points()
