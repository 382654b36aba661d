"""Spherical LSH: Voronoi (softmax top-1 with a random router) and cross-polytope.

Voronoi
    ``n`` Gaussian centres ``g_i ~ N(0, I_d)``; ``h(x) = argmax_i g_i . x`` (ties: lowest id).
    This is exactly top-1 softmax routing with a random Gaussian router ``W = [g_1 ... g_n]^T``:
    softmax is monotone, so its top-1 is the argmax of the logits ``W x``. For unit ``x, y``
    at cosine ``a`` the pairs ``(g_i . x, g_i . y)`` are i.i.d. standard bivariate normal with
    correlation ``a``, which is what :meth:`Voronoi.sample_reduced` samples.

Cross-polytope
    ``n = 2m`` buckets. Rotate ``x`` to ``y = A x`` with ``m`` coordinates, and hash to the
    closest of the ``2m`` signed basis vectors ``±e_j``: id ``j`` for ``+e_j`` and ``j + m`` for
    ``-e_j``, ``j = argmax |y_j|``.

    Three constructions of ``A`` (``rotation=``), named for what they are:

    * ``"gaussian-projection"`` (default; ``"gaussian"`` is its deprecated alias, still
      accepted): ``A`` is an ``m x d`` matrix of i.i.d. ``N(0, 1)`` entries. With ``m = n/2``
      often larger than ``d`` it is a projection, not a rotation. It is the setting of the
      exact formula: for unit ``x, y`` at cosine ``a`` the pairs ``(y_j(x), y_j(y))`` are i.i.d.
      bivariate normal with correlation ``a``, as for Voronoi, so
      ``P = 2m E[1{U, V > 0} R(U, V)^(m-1)]`` exactly, at every ``d``.
    * ``"orthogonal"``: a true random rotation, ``A`` = the first ``m`` rows of a Haar
      orthogonal ``d x d`` matrix (QR of a Gaussian matrix, columns' signs fixed by the signs
      of ``R``'s diagonal, Mezzadri 2007); only ``m <= d`` (a rotation of ``R^d`` has ``d``
      coordinates). The rotated pair ``(Ax, Ay)`` is the first ``m`` coordinates of a uniform
      pair on the sphere at cosine ``a``: its coordinates are not independent (at ``d = m = 2``
      and ``a = 0`` the two vectors never collide, against ``1/n`` for the Gaussian
      projection), so the Gaussian formula is not exact; it is the ``d -> inf`` limit at fixed
      ``m`` (``proofs/lsh_exponent.md`` measures the gap). No exact theory: the reduced
      sampler and ``lshsim theory`` refuse it.
    * ``"hadamard"``: ``x`` is zero-padded to ``D``, the next power of two
      ``>= max(d, m)``; three rounds of random ±1 signs followed by an (unnormalised) fast
      Walsh-Hadamard transform ``x <- H S_3 H S_2 H S_1 x``, all inside the kernel; the first
      ``m`` coordinates are kept. This is the pseudo-random rotation of FALCONN. It is an
      exact (scaled) orthogonal map, not a Gaussian one, and no exact law is known: for ``d``
      or ``D`` small its coordinates are far from i.i.d. Gaussian, so the Voronoi/cross-polytope
      law (and the reduced sampler) holds only approximately; e.g. at ``n = d = 64``, cosine 0
      the measured collision rate is 0.0130 (95% CI [0.0124, 0.0138], 10^5 pairs) instead of
      ``1/n = 0.0156``.

References:
    A. Andoni, P. Indyk, T. Laarhoven, I. Razenshteyn, L. Schmidt, "Practical and optimal LSH
    for angular distance", NeurIPS 2015.
    A. Andoni, P. Indyk, H. Nguyen, I. Razenshteyn, "Beyond locality-sensitive hashing",
    SODA 2014. F. Mezzadri, "How to generate random matrices from the classical compact
    groups", Notices of the AMS 54, 2007 (Haar orthogonal matrices by QR).

The reduced samplers live in :mod:`lshsim.hashing.reduced` and the Hadamard kernels in
:mod:`lshsim.hashing.hadamard`; their names are re-exported here.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from lshsim._validate import check_buckets, check_int
from lshsim.hashing.base import HashFamily, NoLaw, Param, tiled_argmax, weights_like
from lshsim.hashing.hadamard import (  # re-exported: tests and experiments import them here
    HADAMARD_BLOCK,
    HADAMARD_BUFFER,
    fwht_columns,
    hadamard_crosspolytope,
    hadamard_crosspolytope_serial,
)
from lshsim.hashing.reduced import (  # re-exported: tests and experiments import them here
    LAZY_MIN_COLS,
    LAZY_UNIFORMS_PER_TRIAL,
    MAX_REDUCED_BUCKETS,
    REDUCED_CHUNK,
    check_reduced,
    lazy_sample,
    ndtri,
    reduced_argmax,
    reduced_sample,
)
from lshsim.hashing.topk import spherical_topk_rows
from lshsim.laws import spherical as spherical_laws
from lshsim.laws.topk import voronoi_topk_overlap
from lshsim.laws.topk_reduced import voronoi_topk_reduced

#: Largest table (rows x d) a family instance may draw: 2^29 float64 = 4 GiB.
MAX_TABLE = 2**29
#: Largest padded dimension of the Hadamard rotation (a D x cols buffer per thread).
MAX_HADAMARD_DIM = 2**26


def _check_table(rows: int, d: int, family: str) -> None:
    if rows * d > MAX_TABLE:
        raise ValueError(
            f"n (buckets) too large for family '{family}' with d={d}: the {rows} x {d} "
            f"Gaussian table would exceed 2^29 entries (4 GiB); mode='reduced' samples only "
            f"the n score pairs per trial"
        )


def _asymptotic(cls, n: int, cosine: float, refined: bool) -> float:
    n = cls.check_params(n)["n"]
    if not -1.0 < cosine < 1.0:
        raise ValueError(f"cosine must be in (-1, 1) for the asymptotic form, got {cosine!r}")
    return spherical_laws.asymptotic_probability(n, cosine, refined=refined)


class Voronoi(HashFamily):
    """Voronoi spherical LSH = softmax top-1 with a random Gaussian router; any ``n >= 2``.

    ``hash(batch)`` takes float ``(m, d)`` vectors and returns int64[m]; extra memory is one
    score tile plus O(m), never the ``m x n`` score matrix.
    """

    name = "voronoi"
    help = "argmax of n Gaussian centres = softmax top-1 with a random router"
    reference = "lshsim.testing.reference:voronoi"
    has_topk = True

    @classmethod
    def log_probability(cls, n, cosine, *, rtol=spherical_laws.RTOL, **params):
        """``log P = log n E[Phi2(U, V; a)^(n-1)]`` by 2-D quadrature (relative ``rtol``)."""
        n = cls.check_params(n, **params)["n"]
        return spherical_laws.voronoi_log_probability(n, cosine, rtol)

    @classmethod
    def limit_rho(cls, cosine, n, **params):
        """``(1 - a) / (1 + a)`` (Andoni et al. 2015)."""
        cls.check_params(n, **params)
        return spherical_laws.limit_rho(cosine)

    @classmethod
    def asymptotic_probability(cls, n, cosine, *, refined=False):
        """Andoni et al.'s ``n^-rho``, or the Laplace form (:mod:`lshsim.laws.spherical`)."""
        return _asymptotic(cls, n, cosine, refined)

    @classmethod
    def hash_cost(cls, n, dim=None, **params):
        """``n`` inner products (one per centre)."""
        return float(cls.check_params(n, **params)["n"])

    @classmethod
    def topk_overlap(cls, n, k, cosine, **params):
        """Exact top-k overlap by quadrature over the multinomial cell counts (``k <= 16``)."""
        n = cls.check_params(n, **params)["n"]
        return voronoi_topk_overlap(n, k, cosine)

    @classmethod
    def topk_overlap_law(cls, n, k, overlap, *, dim, length, draws, seed, **params):
        """The exact law averaged over ``draws`` sentence cosines (``k <= 16``)."""
        from lshsim.laws.topk_sentences import voronoi_topk_on_sentences

        n = cls.check_params(n, **params)["n"]
        return voronoi_topk_on_sentences(
            n, k, overlap, dim=dim, length=length, cosines=draws, seed=seed
        )

    @classmethod
    def sample_topk_reduced(cls, n, k, cosines, rng, **params):
        """Exact draws of the top-k overlap ``|T_k(x) ∩ T_k(y)|`` (int64[B]), ``O(k)`` each.

        Only x's top-``k`` order statistics and ``k`` nested binomial counts of the others
        (:func:`lshsim.laws.topk_reduced.voronoi_topk_reduced`): the cost does not grow with
        ``n``.

        Args:
            n: centres.
            k: ``1 <= k <= n``.
            cosines: float64[B], the pairs' cosines.
            rng: the block's generator.
            **params: none.
        """
        n = cls.check_params(n, **params)["n"]
        return voronoi_topk_reduced(n, check_int("topk (k)", k, 1, n), cosines, rng)

    def topk_block(self, x, k, out, rows):
        """Top-``k`` centres of each row of ``x`` by score ``g_i . x`` into ``out``.

        Args:
            x: float[m, d], C-contiguous.
            k: ``1 <= k <= n``.
            out: int64[m, k], written.
            rows: rows of ``x`` scored per matrix product (one reused buffer).
        """
        spherical_topk_rows(x, weights_like(self.centres, self._cast, x.dtype), k, out, rows)

    reduced = True

    @classmethod
    def check_params(cls, n, **params):
        """Validate ``n`` in ``[2, 2^62]``; no other parameters."""
        if params:
            raise ValueError(f"unknown parameter(s) for voronoi: {', '.join(params)}")
        return {"n": check_buckets(n)}

    @classmethod
    def threads_pay_in_full_mode(cls, params):  # noqa: D102 - see HashFamily
        return True

    def _draw(self, rng):
        _check_table(self.n, self.d, self.name)
        self.centres = rng.standard_normal((self.n, self.d))
        self._cast = {}

    def _hash(self, x):
        return tiled_argmax(x, weights_like(self.centres, self._cast, x.dtype))

    @property
    def matrix(self) -> np.ndarray:
        """The ``n`` Gaussian centres (``centres``)."""
        return self.centres

    @classmethod
    def buckets_from_scores(cls, scores, xp=np):
        """``argmax_i s_i`` (ties: lowest id) of scores ``[..., n]`` in namespace ``xp``."""
        return xp.argmax(scores, axis=-1)

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """Whether the argmaxes of ``n`` i.i.d. bivariate-normal score pairs agree, per trial.

        Sampled lazily (:func:`lazy_sample`, exact in distribution, a few dozen steps per
        trial) for ``n >= LAZY_MIN_COLS``, by drawing all pairs below.
        """
        n = cls.check_params(n, **params)["n"]
        check_reduced(n, cls.name)
        return reduced_sample(n, cosines, rng, signed=False)


#: The cross-polytope's constructions of its rotated coordinates (see the module docstring).
ROTATIONS = ("gaussian-projection", "orthogonal", "hadamard")
#: Deprecated spellings, still accepted: ``"gaussian"`` was the name of the Gaussian projection.
ROTATION_ALIASES = {"gaussian": "gaussian-projection"}
#: The rotations drawn as a stored ``m x d`` matrix (hashed by BLAS + the signed argmax).
DENSE_ROTATIONS = ("gaussian-projection", "orthogonal")
#: Why the cross-polytope's other constructions have no exact value (``proofs/lsh_exponent.md``).
NO_EXACT_THEORY = {
    "orthogonal": "rotation must be 'gaussian-projection' for exact theory: with "
    "rotation='orthogonal' the rotated pair is a uniform pair on the sphere at cosine a, whose "
    "coordinates are not independent, so the exact law depends on d and has no formula here "
    "(the gaussian-projection value is its d -> inf limit at fixed n); estimate it with "
    "`lshsim simulate`",
    "hadamard": "rotation must be 'gaussian-projection' for exact theory: the hadamard "
    "rotation has no known exact law (it approaches the gaussian-projection value as d "
    "grows); estimate it with `lshsim simulate`",
}


def haar_orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed ``d x d`` orthogonal matrix: QR of a Gaussian, signs fixed.

    ``Q R = G`` with ``G`` i.i.d. ``N(0, 1)``; multiplying column ``j`` of ``Q`` by the sign
    of ``R[j, j]`` makes the factorisation unique, hence ``Q`` invariant in law under left
    multiplication by any orthogonal matrix, i.e. Haar (Mezzadri 2007). Without the fix
    LAPACK's Householder QR is biased (its ``Q[0, 0]`` is never positive).
    """
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return q * signs


class CrossPolytope(HashFamily):
    """Cross-polytope spherical LSH with ``n = 2m`` buckets (``n`` even).

    Params:
        rotation: ``"gaussian-projection"`` (default; dense ``m x d`` Gaussian, the setting of
            the exact formula; ``"gaussian"`` is a deprecated alias), ``"orthogonal"`` (the
            first ``m <= d`` rows of a Haar rotation) or ``"hadamard"`` (three rounds of
            random signs + fast Walsh-Hadamard, as FALCONN).

    ``hash(batch)`` takes float ``(m, d)`` vectors and returns int64[m].
    """

    name = "crosspolytope"
    help = "closest ±e_j after A x, n = 2m (gaussian-projection, orthogonal, hadamard)"
    parameters = (
        Param(
            "rotation",
            str,
            "crosspolytope construction: gaussian-projection (default; an n/2 x d Gaussian "
            "matrix, exact theory), orthogonal (n/2 <= d rows of a Haar rotation), hadamard "
            "(3 rounds of signs + FWHT, FALCONN); gaussian is a deprecated alias of "
            "gaussian-projection",
            metavar="R",
            choices=(*ROTATIONS, *ROTATION_ALIASES),
            draw=("gaussian-projection", "hadamard"),
            exact_draw=("gaussian-projection",),
        ),
    )
    bucket_rule = "even"
    reference = "lshsim.testing.reference:crosspolytope"
    has_topk = True
    reduced = True  # exact for rotation="gaussian-projection" only; the others raise
    ROUNDS = 3

    @classmethod
    def check_params(cls, n, rotation="gaussian-projection", **params):
        """Validate ``n`` even in ``[2, 2^62]`` and ``rotation``; aliases become their name."""
        if params:
            raise ValueError(f"unknown parameter(s) for crosspolytope: {', '.join(params)}")
        n = check_buckets(n, even=True, family=cls.name)
        rotation = (
            ROTATION_ALIASES.get(rotation, rotation) if isinstance(rotation, str) else rotation
        )
        if rotation not in ROTATIONS:
            raise ValueError(
                f"rotation must be one of {', '.join(map(repr, ROTATIONS))} (or the deprecated "
                f"alias 'gaussian'), got {rotation!r}"
            )
        return {"n": n, "rotation": rotation}

    @classmethod
    def check_law(cls, law, n, **params):
        """As :meth:`HashFamily.check_law`; the exact laws need the Gaussian projection."""
        p = super().check_law(law, n, **params)
        if law in ("log_probability", "overlap_law") and p["rotation"] in NO_EXACT_THEORY:
            raise NoLaw(NO_EXACT_THEORY[p["rotation"]])
        return p

    @classmethod
    def log_probability(cls, n, cosine, *, rtol=spherical_laws.RTOL, **params):
        """``log P = log 2d E[1{U > 0, V > 0} R(U, V)^(d-1)]`` by quadrature (Gaussian only)."""
        n = cls.check_law("log_probability", n, **params)["n"]
        return spherical_laws.crosspolytope_log_probability(n, cosine, rtol)

    @classmethod
    def limit_rho(cls, cosine, n, **params):
        """``(1 - a) / (1 + a)`` (Andoni et al. 2015)."""
        cls.check_law("log_probability", n, **params)
        return spherical_laws.limit_rho(cosine)

    @classmethod
    def asymptotic_probability(cls, n, cosine, *, refined=False):
        """As Voronoi's with ``n`` buckets (:mod:`lshsim.laws.spherical`)."""
        return _asymptotic(cls, n, cosine, refined)

    @classmethod
    def hash_cost(cls, n, dim=None, **params):
        """``n/2`` inner products for the dense rotations; the Hadamard rotation's fraction."""
        p = cls.check_params(n, **params)
        m, rotation = p["n"] // 2, p["rotation"]
        d = None if dim is None else check_int("dim (d)", dim, 1, 2**31)
        if rotation == "orthogonal" and d is not None and m > d:
            raise ValueError(
                f"n (buckets) must be <= 2d for rotation='orthogonal', got n={p['n']}, d={d}"
            )
        if rotation != "hadamard":
            return float(m)
        if d is None:
            raise ValueError("dim (d) is required for rotation='hadamard': its cost is D log D / d")
        big = 1 << max(d - 1, m - 1, 0).bit_length()
        return cls.ROUNDS * big * (math.log2(big) + 1.0) / (2.0 * d)

    @classmethod
    def check_topk_params(cls, params):
        """The top-k rule reads the scores of a stored rotation: not ``hadamard``."""
        if params.get("rotation", "gaussian-projection") == "hadamard":
            raise ValueError("topk needs a stored rotation: use rotation='gaussian-projection'")

    def topk_block(self, x, k, out, rows):
        """Top-``k`` of the ``2m`` signed coordinates ``concat(y, -y)`` of the rotated ``y``.

        Args:
            x: float[m, d], C-contiguous.
            k: ``1 <= k <= n``.
            out: int64[m, k], written.
            rows: rows of ``x`` rotated per matrix product (one reused buffer).
        """
        a = weights_like(self.matrix, self._cast, x.dtype)
        spherical_topk_rows(x, a, k, out, rows, signed=True)

    @classmethod
    def threads_pay_in_full_mode(cls, params):  # noqa: D102 - see HashFamily
        return params.get("rotation", "gaussian-projection") in DENSE_ROTATIONS

    @property
    def m(self) -> int:
        """Number of rotated coordinates, ``n / 2``."""
        return self.n // 2

    def _draw(self, rng):
        self._cast = {}
        rotation = self.params["rotation"]
        # the Hadamard kernel flags non-finite rows itself (no separate pass over the batch)
        self.validates_projections = rotation == "hadamard"
        if rotation == "gaussian-projection":
            _check_table(self.m, self.d, self.name)
            self.rotation = rng.standard_normal((self.m, self.d))
        elif rotation == "orthogonal":
            if self.m > self.d:
                raise ValueError(
                    f"n (buckets) must be <= 2d for rotation='orthogonal': a rotation of R^d "
                    f"has d coordinates, got n={self.n} (m = n/2 = {self.m}) with d={self.d}; "
                    f"use rotation='gaussian-projection' for m > d"
                )
            _check_table(self.d, self.d, self.name)
            self.rotation = np.ascontiguousarray(haar_orthogonal(rng, self.d)[: self.m])
        else:
            dim = 1 << max(self.d - 1, self.m - 1, 0).bit_length()
            if dim > MAX_HADAMARD_DIM:
                raise ValueError(
                    f"n (buckets) too large for rotation='hadamard' with d={self.d}: the "
                    f"padded dimension D = {dim} (a power of two >= max(d, n/2)) exceeds 2^26"
                )
            self.signs = rng.choice(np.array([-1.0, 1.0]), size=(self.ROUNDS, dim))

    def _hash(self, x):
        if self.params["rotation"] in DENSE_ROTATIONS:
            a = weights_like(self.rotation, self._cast, x.dtype)
            return tiled_argmax(x, a, signed_half=self.m)
        out = self._hadamard(x)
        bad = out < 0
        if bad.any():
            if not np.isfinite(x).all():
                raise ValueError("batch must be finite (found NaN or inf)")
            if x.dtype == np.float32:  # a float32 sum overflowed: those rows again in float64
                out[bad] = self._hadamard(x[bad].astype(np.float64))
            if (out < 0).any():
                raise ValueError("batch too large: its rotated coordinates overflow float64")
        return out

    @property
    def matrix(self) -> np.ndarray:
        """The ``m x d`` projection (``gaussian-projection``) or rotation rows (``orthogonal``).

        Raises:
            NotImplementedError: for ``rotation="hadamard"`` (no stored matrix).
        """
        if self.params["rotation"] not in DENSE_ROTATIONS:
            raise NotImplementedError("crosspolytope: rotation='hadamard' has no stored matrix")
        return self.rotation

    @classmethod
    def buckets_from_scores(cls, scores, xp=np):
        """Signed argmax of rotated coordinates ``y [..., m]``: ``j`` (``+e_j``) or ``j + m``.

        ``argmax(concat(y, -y))``: ties keep the lower id, as the kernels do.
        """
        return xp.argmax(xp.concatenate([scores, -scores], axis=-1), axis=-1)

    def _hadamard(self, x):
        out = np.empty(x.shape[0], dtype=np.int64)
        if out.shape[0] == 0:
            return out
        signs = weights_like(self.signs, self._cast, x.dtype)
        if x.shape[0] > 2 * HADAMARD_BLOCK:
            hadamard_crosspolytope(x, signs, self.m, out, 4 * numba.get_num_threads())
        else:  # one or two blocks: no thread start-up
            hadamard_crosspolytope_serial(x, signs, self.m, out)
        return out

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """Gaussian projection: ``m = n/2`` i.i.d. bivariate-normal coordinate pairs per trial.

        Sampled lazily (:func:`lazy_sample`) for ``m >= LAZY_MIN_COLS``, else by drawing all.
        """
        p = cls.check_params(n, **params)
        if p["rotation"] != "gaussian-projection":
            raise ValueError(
                "mode='reduced' is exact only for rotation='gaussian-projection'; use "
                f"mode='full' for rotation='{p['rotation']}'"
            )
        check_reduced(p["n"], cls.name)
        return reduced_sample(p["n"] // 2, cosines, rng, signed=True)


__all__ = [
    "DENSE_ROTATIONS",
    "HADAMARD_BLOCK",
    "HADAMARD_BUFFER",
    "LAZY_MIN_COLS",
    "LAZY_UNIFORMS_PER_TRIAL",
    "MAX_HADAMARD_DIM",
    "MAX_REDUCED_BUCKETS",
    "MAX_TABLE",
    "REDUCED_CHUNK",
    "ROTATIONS",
    "ROTATION_ALIASES",
    "CrossPolytope",
    "Voronoi",
    "fwht_columns",
    "haar_orthogonal",
    "hadamard_crosspolytope",
    "hadamard_crosspolytope_serial",
    "lazy_sample",
    "ndtri",
    "reduced_argmax",
]
