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

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numba
import numpy as np

from lshsim._validate import as_seed, as_vectors, check_int
from lshsim.laws.spherical import RTOL
from lshsim.laws.tables import log_p_table
from lshsim.sentences import sentence_cosines

#: Rows of ``G`` per score tile, and entries per tile (2^22: 32 MiB in float64). Tiles this
#: large keep BLAS at the speed of one big GEMM (1024-row tiles measured 15% slower).
COL_TILE = 2048
TILE_ENTRIES = 2**22
#: Rows of the batch per projection chunk of the narrow (k-column) families.
ROW_TILE = 16384


class NoLaw(ValueError):
    """The family has no exact law for the question asked (one line, naming family and law)."""


class MissingMethod(ValueError, NotImplementedError):
    """The family lacks a method every family must define (one line, naming family and method).

    A ``ValueError``, so the CLI reports it as bad input (exit 2) rather than a bug, and a
    ``NotImplementedError``, as the abstract method it stands for.
    """


#: The methods every family defines (a family without them cannot be drawn or hashed): name ->
#: what it does, for :class:`MissingMethod`'s line.
REQUIRED_METHODS = {
    "check_params": "validate n and the parameters",
    "_draw": "draw one hash function",
    "_hash": "hash a batch",
}

#: Called with every new subclass of :class:`HashFamily` once its body has run (the registry
#: registers there a plug-in's class whose entry point was met while its module was still being
#: imported: :mod:`lshsim.hashing.registry`).
SUBCLASS_HOOKS: list[Callable[[type], None]] = []


@dataclass(frozen=True)
class Param:
    """One parameter of a family: the keyword, its CLI flag, type, range, default and help.

    The CLI options of ``simulate`` / ``theory``, the options a sweep spec accepts and the
    hypothesis strategies (:mod:`lshsim.theorems.strategies`) are all derived from these.

    Attributes:
        name: the keyword of :meth:`HashFamily.check_params` (and of ``params`` dicts).
        type: ``int``, ``float`` or ``str``.
        help: one line for ``--help`` (what it is and its default).
        flag: the CLI option without dashes (default: ``name``).
        metavar: the CLI metavar.
        choices: the accepted strings (``str`` parameters), aliases included.
        draw: the values the property tests draw: ``(lo, hi)`` for numbers (floats
            log-uniformly), or a tuple of strings.
        exact_draw: the values with an exact law, where fewer than ``draw`` (strings).
    """

    name: str
    type: type
    help: str
    flag: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    draw: tuple[Any, ...] | None = None
    exact_draw: tuple[Any, ...] | None = None

    @property
    def option(self) -> str:
        """The CLI option name (without dashes)."""
        return self.flag or self.name

    @property
    def dest(self) -> str:
        """The option's attribute on the parsed arguments (and its name in a sweep spec)."""
        return self.option.replace("-", "_")


#: The exact laws a family may have: method name -> what the law is, for the error message.
LAWS = {
    "log_probability": "collision probability at a cosine",
    "log_probability_halves": "collision probability at two half-cosines",
    "overlap_law": "collision probability on the sentence model (overlap f)",
    "limit_rho": "limit exponent rho as n -> infinity",
    "asymptotic_probability": "large-n form of the collision probability",
    "hash_cost": "cost in inner products",
    "topk_overlap": "top-k overlap at a cosine",
    "topk_overlap_law": "top-k overlap on the sentence model (overlap f)",
    "amplification_law": "collision law of one function given the pair (amplification)",
}

#: The similarities a pair is measured in for amplification (:mod:`lshsim.tune`), with their
#: range: the cosine of two unit vectors, the Jaccard index of two sets, and the overlap ``f``
#: of two sentences of the sentence model.
SIMILARITIES = {"cosine": (-1.0, 1.0), "jaccard": (0.0, 1.0), "overlap": (0.0, 1.0)}


@dataclass(frozen=True)
class OverlapLaw:
    """A family's collision probability on the sentence model at overlap ``f``.

    Attributes:
        probability: exact, or the average of the exact ``P(cos)`` over sampled cosines.
        std_error: standard error of that average (0 when exact).
        cosines: cosines averaged over (0 when exact).
        cosine_mean, cosine_sd: their mean and standard deviation (NaN when exact).
    """

    probability: float
    std_error: float = 0.0
    cosines: int = 0
    cosine_mean: float = math.nan
    cosine_sd: float = math.nan


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
    #: One line for ``lshsim families`` and ``--help``.
    help: ClassVar[str] = ""
    #: The family's parameters (:class:`Param`), in CLI order.
    parameters: ClassVar[tuple[Param, ...]] = ()
    #: Whether :meth:`overlap_law` is exact (True) or an average over sampled cosines.
    overlap_law_is_exact: ClassVar[bool] = False
    #: The bucket counts it takes: "any", "power_of_two", "even" or "square".
    bucket_rule: ClassVar[str] = "any"
    #: Largest ``log2 n`` it takes (bucket ids are int64; 32-bit hashes take fewer).
    max_log2: ClassVar[int] = 62
    #: ``"module:function"`` of the slow, obvious reference implementation the tests compare
    #: the kernel with (:mod:`lshsim.testing.reference`), or "" where there is none.
    reference: ClassVar[str] = ""
    input_kind: ClassVar[str] = "vectors"
    reduced: ClassVar[bool] = False
    #: True where ``_hash`` checks finiteness on the (narrower) projections itself.
    validates_projections: ClassVar[bool] = False
    #: True where the hash reads the input's two halves separately (product keys): an exact
    #: cosine then means both halves at that cosine, and the reduced mode takes half-cosines.
    halves: ClassVar[bool] = False
    #: What :meth:`amplification_law` takes as a pair's similarity (a key of
    #: :data:`SIMILARITIES`).
    similarity: ClassVar[str] = "cosine"
    #: True where one function collides with probability equal to the similarity itself
    #: (min-hash: ``J``), so amplified curves are ``1 - (1 - s^k)^L`` with closed-form areas.
    law_is_similarity: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        """Run :data:`SUBCLASS_HOOKS` on the new family class."""
        super().__init_subclass__(**kwargs)
        for hook in SUBCLASS_HOOKS:
            hook(cls)

    def __init__(self, n: int, d: int, seed=0, **params):
        self.params = self.check_params(n, **params)
        self.n = self.params.pop("n")
        self.d = check_int("d (dimension)", d, 1)
        self.seed = as_seed(seed)
        self._draw(np.random.default_rng(self.seed))

    @classmethod
    def missing_methods(cls) -> list[str]:
        """The :data:`REQUIRED_METHODS` the family leaves to this base class (none, normally)."""
        owner = {m: next(k for k in cls.__mro__ if m in vars(k)) for m in REQUIRED_METHODS}
        return [m for m in REQUIRED_METHODS if owner[m] is HashFamily]

    @classmethod
    def missing_method(cls, method: str) -> MissingMethod:
        """The one-line error for a required ``method`` the family does not define.

        Args:
            method: a key of :data:`REQUIRED_METHODS`.

        Returns:
            The error, naming the family, its class and every required method it lacks.
        """
        lacks = cls.missing_methods() or [method]
        what = " and ".join(f"{m} ({REQUIRED_METHODS[m]})" for m in lacks)
        return MissingMethod(
            f"family '{cls.name}' ({cls.__module__}.{cls.__qualname__}) does not define "
            f"{what}, which every HashFamily subclass must"
        )

    @classmethod
    def check_params(cls, n: int, **params) -> dict:
        """Validate ``n`` and the family's parameters; return them normalised (with ``n``).

        Raises:
            MissingMethod: the family does not define it.
        """
        raise cls.missing_method("check_params")

    def _draw(self, rng: np.random.Generator) -> None:
        raise self.missing_method("_draw")

    def _hash(self, batch: np.ndarray) -> np.ndarray:
        raise self.missing_method("_hash")

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

    # ---- exact laws: a family overrides those it has; the base states each absence --------

    @classmethod
    def no_law(cls, law: str, why: str = "") -> NoLaw:
        """The one-line error for a law the family lacks (``law`` a key of :data:`LAWS`)."""
        have = [LAWS[k] for k in LAWS if cls.has_law(k)]
        hint = why or (f"it has: {'; '.join(have)}" if have else "it has none")
        return NoLaw(f"family '{cls.name}' has no exact law for the {LAWS[law]}: {hint}")

    @classmethod
    def has_law(cls, law: str) -> bool:
        """Whether the family defines the law ``law`` (a key of :data:`LAWS`) at all."""
        if law not in LAWS:
            raise ValueError(f"law must be one of {', '.join(LAWS)}, got {law!r}")
        if law == "overlap_law" and cls.has_law("log_probability") and not cls.halves:
            return True  # the cosine law averaged over the sentence model's cosines
        if law == "amplification_law" and cls.has_law("log_probability"):
            return True  # one atom: the law at the pair's cosine
        return getattr(cls, law).__func__ is not getattr(HashFamily, law).__func__

    @classmethod
    def check_law(cls, law: str, n: int, **params) -> dict:
        """Check that the law ``law`` exists for these parameters; return them normalised.

        Raises:
            NoLaw: the family lacks it (or lacks it for these parameters, e.g. a rotation).
            ValueError: bad parameters.
        """
        p = cls.check_params(n, **params)
        if not cls.has_law(law):
            raise cls.no_law(law)
        return p

    @classmethod
    def log_probability(cls, n: int, cosine: float, *, rtol: float = RTOL, **params) -> float:
        """``log P[h(x) = h(y)]`` for unit vectors at cosine ``a`` (checked inputs).

        Args:
            n: buckets.
            cosine: ``a`` in ``[-1, 1]``.
            rtol: relative tolerance of a quadrature.
            **params: the family's parameters.

        Raises:
            NoLaw: the family has no such law.
        """
        raise cls.no_law("log_probability")

    @classmethod
    def probabilities(cls, n: int, cosines: np.ndarray, **params) -> np.ndarray:
        """``P`` at every cosine of a float64 array (checked inputs).

        Through a checked table of :meth:`log_probability` in the angle; a closed form
        overrides this.

        Raises:
            NoLaw: the family has no law at a cosine.
        """
        if not cls.has_law("log_probability"):
            raise cls.no_law("log_probability")
        p = cls.check_params(n, **params)
        extra = {k: v for k, v in p.items() if k != "n"}

        def direct(a: float) -> float:
            return cls.log_probability(p["n"], a, **extra)

        return np.exp(log_p_table(direct, cosines, f"{cls.name} at n={p['n']}"))

    @classmethod
    def log_probability_halves(
        cls, n: int, a1: float, a2: float, *, rtol: float = RTOL, **params
    ) -> float:
        """``log P`` when the two halves of the inputs are at cosines ``a1`` and ``a2``.

        Raises:
            NoLaw: the family does not read its input in halves.
        """
        raise cls.no_law("log_probability_halves")

    @classmethod
    def overlap_law(
        cls,
        n: int,
        overlap: float,
        *,
        dim: int,
        length: int,
        vocab: int,
        cosines: int,
        seed: int,
        **params,
    ) -> OverlapLaw:
        """The collision probability on the sentence model at overlap ``f`` (checked inputs).

        The default, for a family with a law at a cosine: that law averaged over ``cosines``
        draws of the pair's cosine from the exact sampler
        :func:`lshsim.sentences.sentence_cosines` (seeded by ``seed``), with its standard
        error.

        Raises:
            NoLaw: the family has no such law.
        """
        if not cls.has_law("log_probability") or cls.halves:
            raise cls.no_law("overlap_law")
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        cos = sentence_cosines(cosines, overlap, length=length, dim=dim, rng=rng)
        pv = cls.probabilities(n, cos, **params)
        se = float(pv.std(ddof=1) / math.sqrt(cosines)) if cosines > 1 else math.inf
        return OverlapLaw(float(pv.mean()), se, cosines, float(cos.mean()), float(cos.std()))

    @classmethod
    def overlap_details(cls, n: int, overlap: float, length: int, **params) -> dict:
        """Extra exact quantities ``lshsim theory --overlap`` prints beside the law (none)."""
        return {}

    @classmethod
    def limit_rho(cls, cosine: float, n: int, **params) -> float:
        """``lim_{n -> inf} -log P(n, a) / log n`` (``n`` fixes the radix where one matters).

        Raises:
            NoLaw: no limit exponent is known for the family.
        """
        raise cls.no_law("limit_rho")

    @classmethod
    def asymptotic_probability(cls, n: int, cosine: float, *, refined: bool = False) -> float:
        """The large-``n`` form of ``P(n, a)`` (``a`` in (-1, 1)).

        Raises:
            NoLaw: no asymptotic form is known for the family.
        """
        raise cls.no_law("asymptotic_probability")

    @classmethod
    def hash_cost(cls, n: int, dim: int | None = None, **params) -> float:
        """Inner products of length ``d`` one hash function costs (the amplification view).

        Raises:
            NoLaw: the family's cost is not counted in inner products.
        """
        raise cls.no_law("hash_cost")

    @classmethod
    def topk_overlap(cls, n: int, k: int, cosine: float, **params) -> float:
        """Exact ``E|T_k(x) ∩ T_k(y)| / k`` at cosine ``a``.

        Raises:
            NoLaw: no exact top-k law is known for the family.
        """
        raise cls.no_law("topk_overlap")

    @classmethod
    def topk_overlap_law(
        cls, n: int, k: int, overlap: float, *, dim: int, length: int, draws: int, seed: int,
        **params,
    ) -> tuple[float, float]:  # fmt: skip
        """The top-k overlap on the sentence model at overlap ``f``: ``E_a[O_k(n, a)]``.

        Args:
            n: buckets.
            k: the top-k.
            overlap: ``f``.
            dim: ``d``.
            length: ``l``.
            draws: cosines (or half-cosine pairs) drawn for the average.
            seed: their seed.
            **params: the family's parameters.

        Returns:
            ``(mean overlap fraction, its standard error over the draws)``.

        Raises:
            NoLaw: no top-k law is known for the family.
        """
        raise cls.no_law("topk_overlap_law")

    @classmethod
    def amplification_law(
        cls, n: int, similarities: np.ndarray, *, length: int = 32, vocab: int = 32128, **params
    ) -> tuple[np.ndarray, np.ndarray]:
        """One function's collision probability *given the pair*, as atoms, at each similarity.

        Functions drawn independently collide independently given the pair, so a table of
        ``k`` concatenated functions catches a pair whose conditional probability is ``p`` with
        probability ``p^k``, and ``L`` tables with ``1 - (1 - p^k)^L``; averaging over the
        atoms gives the amplified law exactly (:mod:`lshsim.tune`). For a family with a law at
        a cosine the pair *is* its cosine: one atom, ``P(a)``. A family whose hash is fixed by
        the pair's tokens has atoms at 1 and at the chance of a spurious collision.

        Args:
            n: buckets.
            similarities: float64[S] in the family's :attr:`similarity` range (checked).
            length: sentence length ``l`` (the overlap families).
            vocab: vocabulary size ``V`` (the overlap families that fold ids).
            **params: the family's parameters.

        Returns:
            ``(values, weights)``, float64[S, A] each: atom values in ``[0, 1]`` and their
            probabilities (each row sums to 1).

        Raises:
            NoLaw: the family has no such law.
        """
        if not cls.has_law("log_probability"):
            raise cls.no_law("amplification_law")
        p = cls.probabilities(n, np.asarray(similarities, dtype=np.float64), **params)
        p = np.clip(p, 0.0, 1.0)  # a table's rounding may step past 1 at a = 1
        return p[:, None], np.ones_like(p)[:, None]

    # ---- top-k (the model side's rule) ---------------------------------------------------

    #: Whether the family has a top-k rule (:meth:`topk_scores` or :meth:`topk_sets`).
    has_topk: ClassVar[bool] = False

    @classmethod
    def check_topk_params(cls, params: dict) -> None:
        """``ValueError`` if the top-k rule does not apply with these parameters (it does)."""

    @classmethod
    def max_topk(cls, n: int) -> int:
        """The largest ``k`` the top-k rule takes at ``n`` buckets."""
        return n

    def topk_scores(self, x: np.ndarray) -> np.ndarray:
        """Scores float[m, c] whose top-k is the family's ``T_k`` (:mod:`lshsim.hashing.topk`)."""
        raise ValueError(f"family '{self.name}' has no top-k rule")

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
