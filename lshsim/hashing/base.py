"""The common shape of every hash family, and the tiled projection shared by the vector ones.

A family is built from ``(n, d, seed, **params)``; the constructor draws one hash function
from the family with a generator seeded by ``seed`` (equal seeds give equal functions), and
``hash(batch)`` returns int64 bucket ids in ``[0, n)``.

Projection-based families (simhash, pstable, voronoi, crosspolytope with a Gaussian rotation)
compute ``X @ G.T`` one tile at a time with BLAS and reduce each tile with a Numba kernel, so
a large batch never materialises the full ``m x rows(G)`` score matrix: the extra memory is
one tile plus O(m).
"""

from __future__ import annotations

from typing import ClassVar

import numba
import numpy as np

from lshsim._validate import as_seed, as_vectors, check_int

#: Rows of ``G`` per score tile, and entries per tile (2^22: 32 MiB in float64). Tiles this
#: large keep BLAS at the speed of one big GEMM (1024-row tiles measured 15% slower).
COL_TILE = 2048
TILE_ENTRIES = 2**22
#: Rows of the batch per projection chunk of the narrow (k-column) families.
ROW_TILE = 16384


class HashFamily:
    """Base class: one hash function drawn from an LSH family.

    Subclasses set ``name``, ``input_kind`` ("vectors", "token_sets", "tokens" or
    "sequences"), ``reduced`` (whether :meth:`sample_reduced` is exact for the family), and
    implement
    :meth:`_draw` and :meth:`_hash`.

    Args:
        n: number of buckets.
        d: input dimension (unused by the token families, still validated).
        seed: int >= 0 or ``numpy.random.SeedSequence``.
    """

    name: ClassVar[str] = ""
    input_kind: ClassVar[str] = "vectors"
    reduced: ClassVar[bool] = False
    #: True where ``_hash`` checks finiteness on the (narrower) projections itself.
    validates_projections: ClassVar[bool] = False

    def __init__(self, n: int, d: int, seed=0, **params):
        self.params = self.check_params(n, **params)
        self.n = self.params.pop("n")
        self.d = check_int("d (dimension)", d, 1)
        self.seed = as_seed(seed)
        self._draw(np.random.default_rng(self.seed))

    @classmethod
    def check_params(cls, n: int, **params) -> dict:
        """Validate ``n`` and the family's parameters; return them normalised (with ``n``)."""
        raise NotImplementedError

    def _draw(self, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def _hash(self, batch: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def hash(self, batch) -> np.ndarray:
        """Hash a batch; see the family's docstring for the accepted shape. Returns int64 ids."""
        if self.input_kind == "vectors":
            batch = as_vectors(batch, self.d, check_values=not self.validates_projections)
        return self._hash(batch)

    __call__ = hash

    @classmethod
    def sample_reduced(cls, n: int, cosines: np.ndarray, rng: np.random.Generator, **params):
        """Sample collision indicators from the sufficient statistics, one fresh function each.

        Args:
            n: number of buckets.
            cosines: float64[B], the cosine of the unit-vector pair of each trial.
            rng: the generator of this block of trials.
            **params: family parameters, as for the constructor.

        Returns:
            bool[B]: whether each pair collided under an independent draw of the function.
        """
        raise ValueError(f"mode='reduced' is not available for family '{cls.name}'")

    @property
    def matrix(self) -> np.ndarray:
        """The random rows ``G`` whose scores ``x @ G.T`` decide the bucket (float64 ``[k, d]``).

        SimHash: its hyperplanes; Voronoi: its centres; cross-polytope: its Gaussian
        rotation. With :meth:`buckets_from_scores` it hashes as :meth:`hash` does, e.g. many
        functions at once with one matrix product, or on the model side in JAX.

        Raises:
            NotImplementedError: the family's hash is not a rule on ``x @ G.T`` alone.
        """
        raise NotImplementedError(f"family '{self.name}' has no projection matrix")

    @classmethod
    def buckets_from_scores(cls, scores, xp=np):
        """Bucket ids from scores ``[..., k]`` = ``x @ matrix.T``, by the family's rule.

        Args:
            scores: the projections, an array of namespace ``xp``.
            xp: the array namespace (``numpy``, or ``jax.numpy`` on the model side).

        Returns:
            integer ids ``[...]``, equal to :meth:`hash`'s on the same scores.

        Raises:
            NotImplementedError: the family has no :attr:`matrix`.
        """
        raise NotImplementedError(f"family '{cls.name}' has no bucket rule on scores")

    @classmethod
    def threads_pay_in_full_mode(cls, params: dict) -> bool:
        """Whether a full-mode trial spends its time outside the GIL (so worker threads pay).

        Drawing a large Gaussian table (Voronoi, Gaussian cross-polytope) does; the small
        families' trials are dominated by Python overhead, which threads only contend for.
        """
        return False

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}(n={self.n}, d={self.d}{extra})"


def project(x: np.ndarray, g: np.ndarray, r0: int, r1: int) -> np.ndarray:
    """Return ``x[r0:r1] @ g.T`` in the dtype of ``x`` (BLAS)."""
    return x[r0:r1] @ g.T


def weights_like(g64: np.ndarray, cache: dict, dtype) -> np.ndarray:
    """Return ``g64`` cast to ``dtype`` (cached, so float32 batches run in single precision)."""
    w = cache.get(dtype)
    if w is None:
        w = cache[dtype] = np.ascontiguousarray(g64, dtype=dtype)
    return w


@numba.njit(cache=True, nogil=True)
def signed_argmax_update(tile, c0, best_val, best_idx, r0, half):  # pragma: no cover - jit
    """Fold a tile of rotated coordinates into the running cross-polytope argmax.

    ``tile[i, j]`` is coordinate ``c0 + j`` of row ``r0 + i``. The candidates are ``+e_j``
    (id ``j``) and ``-e_j`` (id ``j + half``) with value ``|y_j|``; ties keep the lower id, as
    ``numpy.argmax`` over ``concat([y, -y])`` does. ``|y_j|`` is compared first: that branch
    is rarely taken once a large value is seen, so it predicts well, and the sign (a coin
    flip on random data) is read only on updates and ties.
    """
    rows, cols = tile.shape
    for i in range(rows):
        bv = best_val[r0 + i]
        bi = best_idx[r0 + i]
        for j in range(cols):
            v = tile[i, j]
            a = abs(v)
            if a >= bv:
                cand = c0 + j if v >= 0 else c0 + j + half
                if a > bv or cand < bi:
                    bv = a
                    bi = cand
        best_val[r0 + i] = bv
        best_idx[r0 + i] = bi


@numba.njit(cache=True, nogil=True)
def _merge_tile_best(tile, idx, c0, best_val, best_idx, r0):  # pragma: no cover - jit
    """Merge each row's tile argmax ``idx[i]`` (from ``numpy.argmax``) into the running best.

    Strict ``>`` keeps the earlier tile on ties, so the overall tie rule is the lowest id.
    """
    for i in range(idx.shape[0]):
        v = tile[i, idx[i]]
        if v > best_val[r0 + i]:
            best_val[r0 + i] = v
            best_idx[r0 + i] = c0 + idx[i]


def row_tile(cols: int) -> int:
    """Batch rows per score tile against ``cols`` centres: ``TILE_ENTRIES`` entries, >= 256."""
    return max(256, TILE_ENTRIES // min(cols, COL_TILE))


def tiled_argmax(x: np.ndarray, g: np.ndarray, signed_half: int = 0) -> np.ndarray:
    """Bucket of each row of ``x``: argmax of ``g @ x_i`` (or of its ±coordinates), tile by tile.

    The ``m x rows(g)`` score matrix is never materialised: every score tile is written by
    BLAS into one buffer of at most ``TILE_ENTRIES`` entries, allocated once per call, so the
    extra memory is that buffer plus O(m) (measured with ``tracemalloc`` in
    ``lshsim/bench/hashing.py``). Reusing the buffer, rather than allocating a fresh
    tile per GEMM, saves the page faults and zeroing of a new tile each time and keeps the
    tile warm in cache for the argmax that reads it back.

    Args:
        x: float[m, d], C-contiguous.
        g: float[c, d] in the same dtype.
        signed_half: 0 for a plain argmax; ``c`` for the cross-polytope argmax over ``±g_j``.

    Returns:
        int64[m].
    """
    m = x.shape[0]
    best_val = np.full(m, -np.inf, dtype=np.float64)
    best_idx = np.zeros(m, dtype=np.int64)
    c = g.shape[0]
    col_blocks = [(c0, g[c0 : c0 + COL_TILE]) for c0 in range(0, c, COL_TILE)]
    rows = row_tile(c)
    flat = np.empty(min(m, rows) * min(c, COL_TILE), dtype=np.result_type(x, g))
    for r0 in range(0, m, rows):
        r1 = min(m, r0 + rows)
        for c0, gb in col_blocks:
            tile = flat[: (r1 - r0) * gb.shape[0]].reshape(r1 - r0, gb.shape[0])
            np.matmul(x[r0:r1], gb.T, out=tile)
            if signed_half:
                signed_argmax_update(tile, c0, best_val, best_idx, r0, signed_half)
            else:  # numpy's SIMD argmax per tile, merged across column tiles
                _merge_tile_best(tile, tile.argmax(axis=1), c0, best_val, best_idx, r0)
    return best_idx
