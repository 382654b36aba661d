"""The model's lookups, one object each: the registry :data:`LOOKUPS`.

Each lookup is a :class:`~lshsim.t5.lookups.base.Lookup` in its own module, which owns its
name, help and label, the memory flags that tune it, its checks of the config, its table size
and parameter count, its layer inside :class:`lshsim.t5.memory.PartialExpert`, and its routing
probe theory:

- ``tokenid``, ``softmax``, ``lsh`` (the paper's three; :mod:`~lshsim.t5.lookups.routed`): one
  bucket per token, the layer in :mod:`~lshsim.t5.lookups.router_layer`, the probe in
  :mod:`~lshsim.t5.lookups.router_probe`;
- ``productkey`` (PKM/PEER product keys) and ``ngram`` (Engram-style hashed n-grams): slots,
  the layers in ``productkey_layer`` and ``ngram_layer`` reading their values through
  ``tables``; ``sizes`` holds the n-gram table sizes; ``probe_theory`` their probe;
- ``engram`` (Engram as deployed: exact hash, orders 2..N, compressed ids, signed-sqrt gate,
  short convolution): the layer in ``engram_layer``.

This package imports neither the config (the config imports it) nor JAX at import: the layers
and the probe theory load when first used (``lsh`` names its families by their
:mod:`lshsim.hashing` classes, which load Numba). A new lookup is one module with a
:class:`Lookup` subclass and one entry in :data:`LOOKUPS`.
"""

from __future__ import annotations

from lshsim.t5.lookups.base import DEFAULT_BUCKETS, Lookup
from lshsim.t5.lookups.engram import ENGRAM
from lshsim.t5.lookups.lsh import LSH
from lshsim.t5.lookups.ngram import NGRAM
from lshsim.t5.lookups.productkey import PRODUCTKEY
from lshsim.t5.lookups.softmax import SOFTMAX
from lshsim.t5.lookups.tokenid import TOKENID

__all__ = ["DEFAULT_BUCKETS", "LOOKUPS", "NO_LOOKUP", "Lookup", "get_lookup", "lookup_of"]

#: Every lookup by its config name, in the order the command line and tables list them.
LOOKUPS: dict[str, Lookup] = {
    lk.name: lk for lk in (TOKENID, SOFTMAX, LSH, PRODUCTKEY, NGRAM, ENGRAM)
}

#: The config's ``lookup`` for a model without partial experts.
NO_LOOKUP = "none"


def get_lookup(name: str) -> Lookup:
    """The lookup called ``name``.

    Raises:
        ValueError: an unknown name (``none`` included: it is no lookup), listing the known ones.
    """
    try:
        return LOOKUPS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"lookup: unknown lookup {name!r}; choose one of {', '.join(LOOKUPS)}"
        ) from None


def lookup_of(cfg) -> Lookup | None:
    """The config's lookup, or None for a model without one (``lookup="none"``)."""
    return None if cfg.lookup == NO_LOOKUP else get_lookup(cfg.lookup)
