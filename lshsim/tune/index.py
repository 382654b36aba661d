"""lshsim's own ``(k, L)`` index: ``L`` hash tables keyed by ``k`` concatenated functions.

The index the amplified law describes, built from the family objects: table ``t`` keys an
item by the bucket ids of its ``k`` functions ``h_{t,1..k}`` (each drawn with its own seed
from one :class:`numpy.random.SeedSequence`), and a query's candidates are the items sharing
its key in at least one table. It exists to check :mod:`lshsim.tune` against a real index
(``tests/tune``), as datasketch's ``MinHashLSH`` checks the min-hash side.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from lshsim._validate import check_int
from lshsim.hashing import make_family

__all__ = ["AmplifiedIndex"]


class AmplifiedIndex:
    """``L`` tables of ``k`` concatenated functions of one vector family.

    Args:
        family: a family hashing vectors.
        n: buckets of one function.
        dim: the input dimension ``d``.
        concat: ``k`` functions per table.
        tables: ``L``.
        seed: the index's seed (function ``(t, j)`` draws from child ``t k + j``).
        **params: the family's parameters.
    """

    def __init__(
        self, family: str, n: int, dim: int, concat: int, tables: int, seed: int = 0, **params
    ):
        self.concat = check_int("concat (k)", concat, 1, 4096)
        self.tables = check_int("tables (L)", tables, 1, 4096)
        seeds = np.random.SeedSequence(seed).spawn(self.concat * self.tables)
        self.functions = [make_family(family, n, dim, s, **params) for s in seeds]
        self._buckets: list[dict[bytes, list[int]]] = [defaultdict(list) for _ in range(tables)]
        self.size = 0

    def keys(self, batch: np.ndarray) -> np.ndarray:
        """The bucket ids of every item under every function: int64[m, L, k]."""
        ids = np.stack([f.hash(batch) for f in self.functions], axis=1)
        return ids.reshape(len(ids), self.tables, self.concat)

    def insert(self, batch: np.ndarray) -> None:
        """Add the rows of ``batch`` as items ``size, size + 1, ...``."""
        keys = self.keys(batch)
        for i, row in enumerate(keys, start=self.size):
            for t in range(self.tables):
                self._buckets[t][row[t].tobytes()].append(i)
        self.size += len(keys)

    def query(self, batch: np.ndarray) -> list[set[int]]:
        """The candidates of each row: the items sharing its key in some table."""
        out = []
        for row in self.keys(batch):
            found: set[int] = set()
            for t in range(self.tables):
                found.update(self._buckets[t].get(row[t].tobytes(), ()))
            out.append(found)
        return out
