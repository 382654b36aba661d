"""Hyperplane LSH: SimHash (Charikar 2002) and p-stable equispaced hyperplanes (Datar et al. 2004).

SimHash
    ``k = log2(n)`` Gaussian directions ``g_j``; bit ``j`` is ``[g_j . x > 0]`` and the bucket is
    ``sum_j bit_j 2^j``. For unit ``x, y`` at cosine ``a`` each bit agrees with probability
    ``1 - arccos(a)/pi`` independently, so ``P = (1 - arccos(a)/pi)^k`` exactly.

p-stable
    ``k`` Gaussian directions ``g_j`` and offsets ``b_j ~ U[0, w)``; the cell of ``x`` along
    direction ``j`` is ``c_j = floor((g_j . x + b_j) / w)``. The cell vector is mapped into
    ``[0, n)`` with radix ``r = n^(1/k)`` (``n`` must be a perfect ``k``-th power):
    ``bucket = sum_j (c_j mod r) r^j``.

    What the mapping adds: two points collide along direction ``j`` when their cells are
    congruent mod ``r``, not only equal. With ``D = g_j . (x - y) ~ N(0, c^2)`` (``c`` the
    Euclidean distance) and ``tri(t) = max(0, 1 - |t|)``, the offset makes
    ``P(c_j(x) - c_j(y) = t | D) = tri(D/w - t)``, so the per-direction probability is
    ``q = sum_{t in Z} E[tri(D/w - t r)]``. The ``t = 0`` term is Datar et al.'s
    ``p(c) = 1 - 2 Phi(-w/c) - 2/(sqrt(2 pi) w/c) (1 - exp(-w^2 / (2 c^2)))``; the ``t != 0``
    terms are the wrap-around added by the mapping (negligible once ``r w >> c``). Directions
    are independent, so ``P = q^k``. See :func:`lshsim.theory.pstable_probability`.

References:
    M. Charikar, "Similarity estimation techniques from rounding algorithms", STOC 2002.
    M. Datar, N. Immorlica, P. Indyk, V. Mirrokni, "Locality-sensitive hashing scheme based on
    p-stable distributions", SoCG 2004.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from lshsim._validate import as_vectors, check_buckets, check_float, check_int
from lshsim.hashing.base import ROW_TILE, HashFamily, Param, project, weights_like
from lshsim.laws.closed_forms import pstable_direction_probability, radix_of

#: Cell indices must stay below 2^52 in magnitude to be exact in float64.
MAX_CELL = 2.0**52
#: Allowed cell widths (relative to unit-variance projections).
MIN_WIDTH, MAX_WIDTH = 1e-9, 1e9


@numba.njit(cache=True, nogil=True)
def simhash_pack(proj, out, r0):  # pragma: no cover - jit
    """Pack sign bits: ``out[r0 + i] = sum_j [proj[i, j] > 0] 2^j``; proj is float[rows, k].

    ``k <= 64``; with ``k = 64`` bit 63 is the sign bit of the int64 ``out`` (read the codes
    as uint64, as :func:`simhash_codes` does).
    """
    rows, k = proj.shape
    for i in range(rows):
        h = 0
        for j in range(k):
            if proj[i, j] > 0:
                h |= np.int64(1) << j
        out[r0 + i] = h


@numba.njit(cache=True, nogil=True)
def pstable_cells(proj, offsets, w, r, out, r0):  # pragma: no cover - jit
    """``out[r0 + i] = sum_j (floor((proj[i, j] + b_j) / w) mod r) r^j``; proj is float[rows, k].

    ``r`` is an int64 and the digit is the integer ``c mod r`` (floating point would round
    it once ``r > 2^53``, e.g. ``k = 1``). The cell index ``c`` is exact only while
    ``|c| < 2^52``; beyond that the kernel raises instead of returning rounded cells.
    """
    rows, k = proj.shape
    for i in range(rows):
        h = 0
        mult = 1
        for j in range(k):
            q = (proj[i, j] + offsets[j]) / w
            if not abs(q) < MAX_CELL:
                raise ValueError("pstable cell index |(g.x + b) / w| >= 2^52: raise w (width)")
            c = math.floor(q)
            dg = np.int64(c) % r  # Python semantics: in [0, r) for r > 0
            h += dg * mult
            mult *= r
        out[r0 + i] = h


@numba.njit(cache=True, nogil=True)
def _simhash_reduced(z, cosines, out):  # pragma: no cover - jit
    """Collision of each trial from k bivariate-normal pairs (u, a u + sqrt(1-a^2) v)."""
    trials, k, _ = z.shape
    for t in range(trials):
        a = cosines[t]
        s = math.sqrt(max(0.0, 1.0 - a * a))
        hit = True
        for j in range(k):
            u = z[t, j, 0]
            v = a * u + s * z[t, j, 1]
            if (u > 0) != (v > 0):
                hit = False
                break
        out[t] = hit


@numba.njit(cache=True, nogil=True)
def _pstable_reduced(z, offsets, cosines, w, r, out):  # pragma: no cover - jit
    """Collision of each trial from k projection pairs and offsets (cells compared mod r)."""
    trials, k, _ = z.shape
    for t in range(trials):
        a = cosines[t]
        s = math.sqrt(max(0.0, 1.0 - a * a))
        hit = True
        for j in range(k):
            u = z[t, j, 0]
            v = a * u + s * z[t, j, 1]
            b = offsets[t, j] * w
            qu = (u + b) / w
            qv = (v + b) / w
            if not (abs(qu) < MAX_CELL and abs(qv) < MAX_CELL):
                raise ValueError("pstable cell index |(g.x + b) / w| >= 2^52: raise w (width)")
            cu = math.floor(qu)
            cv = math.floor(qv)
            if np.int64(cu) % r != np.int64(cv) % r:
                hit = False
                break
        out[t] = hit


def _chunked_rows(x: np.ndarray, g: np.ndarray, g64: np.ndarray, reduce, *args) -> np.ndarray:
    """Project ``ROW_TILE`` rows at a time and reduce them into ids.

    The batch's values are validated here, on the narrow ``rows x k`` projections rather than
    on the ``rows x d`` input (a pass over the input cost as much as the packing): a NaN or
    inf in ``x`` makes its projections non-finite; a finite float32 chunk whose projections
    overflowed is projected again in float64.
    """
    out = np.empty(x.shape[0], dtype=np.int64)
    for r0 in range(0, x.shape[0], ROW_TILE):
        r1 = min(x.shape[0], r0 + ROW_TILE)
        with np.errstate(over="ignore", invalid="ignore"):  # checked right below
            proj = project(x, g, r0, r1)
        if not np.isfinite(proj).all():
            if not np.isfinite(x[r0:r1]).all():
                raise ValueError("batch must be finite (found NaN or inf)")
            proj = project(x.astype(np.float64, copy=False), g64, r0, r1)
        reduce(proj, *args, out, r0)
    return out


def simhash_codes(batch, planes) -> np.ndarray:
    """SimHash codes of up to 64 bits: ``code_i = sum_j [planes_j . x_i > 0] 2^j``.

    The kernel behind :meth:`SimHash.hash`, for code lengths the family's int64 bucket ids
    cannot hold (``k = 63, 64``) and for callers that bring their own planes. Bit ``j`` of the
    code is the sign of projection ``j``, as in FAISS ``IndexLSH`` codes read as little-endian
    integers.

    Args:
        batch: float32/float64 ``(m, d)`` vectors, finite.
        planes: float ``(k, d)`` hyperplane normals, ``1 <= k <= 64``, finite; cast to the
            batch's dtype.

    Returns:
        uint64[m].
    """
    g64 = np.asarray(planes, dtype=np.float64)
    if g64.ndim != 2 or not 1 <= g64.shape[0] <= 64:
        raise ValueError(f"planes must have shape (k, d) with 1 <= k <= 64, got {g64.shape}")
    if not np.isfinite(g64).all():
        raise ValueError("planes must be finite (found NaN or inf)")
    x = as_vectors(batch, g64.shape[1], check_values=False)
    g = np.ascontiguousarray(g64, dtype=x.dtype)
    return _chunked_rows(x, g, g64, simhash_pack).view(np.uint64)


class SimHash(HashFamily):
    """SimHash: ``n = 2^k`` buckets from the signs of ``k`` Gaussian projections.

    ``hash(batch)`` takes float32/float64 ``(m, d)`` vectors and returns int64[m].
    Zero projections count as negative (bit 0).
    """

    name = "simhash"
    help = "sign bits of k = log2(n) Gaussian projections (n a power of two)"
    bucket_rule = "power_of_two"
    reference = "lshsim.testing.reference:simhash"
    reduced = True
    validates_projections = True

    @classmethod
    def log_probability(cls, n, cosine, *, rtol=None, **params):
        """``log P = k log(1 - arccos(a)/pi)``, ``n = 2^k`` (Charikar 2002)."""
        n = cls.check_params(n, **params)["n"]
        theta = math.acos(cosine) / math.pi
        return -math.inf if theta == 1.0 else (n.bit_length() - 1) * math.log1p(-theta)

    @classmethod
    def probabilities(cls, n, cosines, **params):
        """``(1 - arccos(a)/pi)^k`` at every cosine, in closed form."""
        n = cls.check_params(n, **params)["n"]
        return (1.0 - np.arccos(cosines) / np.pi) ** (n.bit_length() - 1)

    @classmethod
    def limit_rho(cls, cosine, n, **params):
        """``-log2(1 - arccos(a)/pi)``, the same at every ``n``."""
        theta = math.acos(cosine) / math.pi
        return math.inf if theta == 1.0 else -math.log1p(-theta) / math.log(2.0)

    @classmethod
    def asymptotic_probability(cls, n, cosine, *, refined=False):
        """``n^-rho`` is exact: the probability itself."""
        return math.exp(cls.log_probability(n, cosine))

    @classmethod
    def hash_cost(cls, n, dim=None, **params):
        """``log2 n`` projections."""
        return float(cls.check_params(n, **params)["n"].bit_length() - 1)

    @classmethod
    def check_params(cls, n, **params):
        """Validate: ``n`` a power of two in ``[2, 2^62]``; no other parameters."""
        if params:
            raise ValueError(f"unknown parameter(s) for simhash: {', '.join(params)}")
        n = check_buckets(n, power_of_two=True, family=cls.name)
        return {"n": n}

    @property
    def k(self) -> int:
        """Number of hyperplanes, ``log2(n)``."""
        return self.n.bit_length() - 1

    def _draw(self, rng):
        self.planes = rng.standard_normal((self.k, self.d))
        self._cast = {}

    def _hash(self, x):
        g = weights_like(self.planes, self._cast, x.dtype)
        return _chunked_rows(x, g, self.planes, simhash_pack)

    @property
    def matrix(self) -> np.ndarray:
        """The ``k`` hyperplane normals (``planes``)."""
        return self.planes

    @classmethod
    def buckets_from_scores(cls, scores, xp=np):
        """``sum_j [s_j > 0] 2^j``: int64 with NumPy, int32 in another namespace (``k <= 31``).

        Args:
            scores: ``[..., k]`` projections on the hyperplanes.
            xp: the array namespace (``numpy`` or ``jax.numpy``).

        Returns:
            the ids ``[...]``.
        """
        itype = np.int64 if xp is np else xp.int32
        weights = xp.asarray(1 << np.arange(scores.shape[-1]), itype)
        return xp.sum((scores > 0).astype(itype) * weights, axis=-1)

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """Per hyperplane, the projection pair is bivariate normal with correlation ``a``."""
        n = cls.check_params(n, **params)["n"]
        k = n.bit_length() - 1
        z = rng.standard_normal((cosines.shape[0], k, 2))
        out = np.empty(cosines.shape[0], dtype=np.bool_)
        _simhash_reduced(z, cosines, out)
        return out


class PStable(HashFamily):
    """Datar et al. equispaced parallel hyperplanes with the radix mapping into ``[0, n)``.

    Params:
        k: number of directions (default ``log2(n)``, which needs ``n`` a power of two).
        w: cell width in ``[1e-9, 1e9]`` (default 4.0, E2LSH's choice for unit-scale
            projections); cell indices must stay below 2^52, else ``hash`` raises.

    ``n`` must equal ``r^k`` for an integer radix ``r >= 2``. ``hash(batch)`` takes float
    ``(m, d)`` vectors and returns int64[m].
    """

    name = "pstable"
    help = "Datar et al. equispaced hyperplanes, k directions of width w, radix map (n = r^k)"
    parameters = (
        Param(
            "k",
            int,
            "pstable: directions (default log2 n)",
            metavar="K",
        ),
        Param(
            "w",
            float,
            "pstable cell width w in [1e-9, 1e9] (default 4.0)",
            flag="width",
            metavar="W",
            draw=(MIN_WIDTH, MAX_WIDTH),
        ),
    )
    bucket_rule = "power_of_two"
    reference = "lshsim.testing.reference:pstable"
    reduced = True
    validates_projections = True

    @classmethod
    def log_probability(cls, n, cosine, *, rtol=None, **params):
        """``k log q`` at the unit vectors' distance ``sqrt(2 - 2a)`` (Datar et al. 2004)."""
        p = cls.check_params(n, **params)
        dist = math.sqrt(max(0.0, 2.0 - 2.0 * cosine))
        q = pstable_direction_probability(dist, p["w"], radix_of(p["n"], p["k"]))
        return -math.inf if q == 0.0 else p["k"] * math.log(q)

    @classmethod
    def limit_rho(cls, cosine, n, **params):
        """``-log q / log r`` at the radix ``r`` of ``n``: the same at every ``n = r^k``."""
        p = cls.check_params(n, **params)
        r = radix_of(p["n"], p["k"])
        q = pstable_direction_probability(math.sqrt(max(0.0, 2 - 2 * cosine)), p["w"], r)
        return math.inf if q == 0.0 else -math.log(q) / math.log(r)

    @classmethod
    def asymptotic_probability(cls, n, cosine, *, refined=False):
        """``n^-rho`` is exact: the probability itself."""
        return math.exp(cls.log_probability(n, cosine))

    @classmethod
    def hash_cost(cls, n, dim=None, **params):
        """``k`` projections."""
        return float(cls.check_params(n, **params)["k"])

    @classmethod
    def check_params(cls, n, k=None, w=4.0, **params):
        """Validate ``n = r^k`` (``r >= 2``), ``k >= 1`` and ``w > 0``."""
        if params:
            raise ValueError(f"unknown parameter(s) for pstable: {', '.join(params)}")
        n = check_buckets(n)
        if k is None:
            if n & (n - 1):
                raise ValueError(
                    f"n (buckets) must be a power of two for family 'pstable' unless k is "
                    f"given (n = r^k), got {n}"
                )
            k = n.bit_length() - 1
        k = check_int("k (directions)", k, 1, 62)
        if radix_of(n, k) is None:
            raise ValueError(
                f"n (buckets) must be r^k for an integer radix r >= 2 with k={k}, got {n}"
            )
        w = check_float("w (width)", w, MIN_WIDTH, MAX_WIDTH)
        return {"n": n, "k": k, "w": w}

    @property
    def radix(self) -> int:
        """Cells per direction after the mapping, ``r = n^(1/k)``."""
        return radix_of(self.n, self.params["k"])

    def _draw(self, rng):
        k, w = self.params["k"], self.params["w"]
        self.directions = rng.standard_normal((k, self.d))
        self.offsets = rng.uniform(0.0, w, size=k)
        self._cast = {}

    def _hash(self, x):
        g = weights_like(self.directions, self._cast, x.dtype)
        r = np.int64(self.radix)
        return _chunked_rows(
            x, g, self.directions, pstable_cells, self.offsets, self.params["w"], r
        )

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """Per direction, the projections of unit ``x, y`` are bivariate normal, corr ``a``."""
        p = cls.check_params(n, **params)
        k, w = p["k"], p["w"]
        r = np.int64(radix_of(p["n"], k))
        z = rng.standard_normal((cosines.shape[0], k, 2))
        offsets = rng.random((cosines.shape[0], k))
        out = np.empty(cosines.shape[0], dtype=np.bool_)
        _pstable_reduced(z, offsets, cosines, w, r, out)
        return out
