"""Hypothesis strategies for property tests of code built on :mod:`lshsim`.

Every strategy draws only values that the library accepts, so a property test can state its
invariant without repeating the library's validation rules:

>>> from hypothesis import given, settings
>>> from lshsim import theory
>>> from lshsim.theorems import strategies as lst
>>> @settings(max_examples=20, deadline=None)
... @given(lst.family_configs(kind="cosine", exact=True, max_log2=10), lst.cosines(lo=-0.9))
... def test_is_probability(config, a):
...     family, n, params = config
...     assert 0.0 <= theory.probability(family, n, a, **params) <= 1.0
>>> test_is_probability()

Needs Hypothesis, which comes with the test extra: ``pip install lshsim[test]``.

Bucket counts are drawn by magnitude (an exponent, then a value of that size), so a test sees
small and huge ``n`` alike, and failures shrink towards small ``n``. Draws are deterministic
under a derandomised Hypothesis profile (as in this repository's ``tests/conftest.py``).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lshsim._validate import MAX_BUCKETS
from lshsim.hashing import COSINE_FAMILIES, VECTOR_FAMILIES, FamilyView, Param, get_family
from lshsim.sentences import shared_tokens

__all__ = [
    "FAMILY_KINDS",
    "bucket_counts",
    "cosines",
    "families",
    "family_configs",
    "family_params",
    "ngram_models",
    "overlaps",
    "sentence_models",
    "square_buckets",
    "topk_sizes",
    "unit_vector_pairs",
]

#: The ``kind`` values :func:`families` accepts, and the families each stands for (live views
#: of the registry: a family registered later is drawn too).
FAMILY_KINDS: dict[str | None, FamilyView] = {
    None: FamilyView(lambda c: True, "every family"),
    "cosine": COSINE_FAMILIES,
    "vectors": VECTOR_FAMILIES,
    "tokens": FamilyView(lambda c: c.input_kind != "vectors", "families hashing token ids"),
}
#: Largest exponent :func:`bucket_counts` accepts: ``n <= 2^62`` (int64 bucket ids).
MAX_LOG2 = MAX_BUCKETS.bit_length() - 1
#: Largest ``n`` of family ngram: ``2^31`` (its hash values are 32-bit words).
NGRAM_MAX_LOG2 = 31
_HEADS = st.integers(1, 8)


def families(kind: str | None = None) -> st.SearchStrategy[str]:
    """Family names from :data:`lshsim.hashing.FAMILIES`.

    Args:
        kind: ``None`` for every family; ``"cosine"`` for those with an exact collision
            probability as a function of the cosine (:data:`lshsim.theory.COSINE_FAMILIES`);
            ``"vectors"`` for those hashing vectors; ``"tokens"`` for those hashing token ids.

    Returns:
        A strategy of names, shrinking towards the first family of the registry.

    Raises:
        ValueError: unknown ``kind``.
    """
    if kind not in FAMILY_KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, FAMILY_KINDS))}, got {kind!r}")
    return st.sampled_from(tuple(FAMILY_KINDS[kind]))


def _by_magnitude(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Integers in ``[lo, hi]`` (``lo >= 1``): a bit length first, then a value of that length."""
    return st.integers(lo.bit_length(), hi.bit_length()).flatmap(
        lambda e: st.integers(max(lo, 2 ** (e - 1)), min(hi, 2**e - 1))
    )


def bucket_counts(family: str, *, max_log2: int = 24, min_log2: int = 1) -> st.SearchStrategy[int]:
    """Bucket counts ``n`` in ``[2^min_log2, 2^max_log2]`` that ``family`` accepts by default.

    Derived from the family's ``bucket_rule`` and ``max_log2``; for the built-in families:

    * simhash and pstable (default ``k = log2 n``): powers of two;
    * crosspolytope (``n = 2d``): even numbers;
    * voronoi, minhash, tokenid: any integer;
    * productkey (``n = s^2``): perfect squares, ``s >= 2`` (so at least 4);
    * ngram: any integer up to ``2^31`` (whatever ``max_log2``: 32-bit hash values).

    Args:
        family: a name in :data:`lshsim.hashing.FAMILIES`.
        max_log2: largest ``n`` is ``2^max_log2`` (at most 62: bucket ids are int64).
        min_log2: smallest ``n`` is ``2^min_log2`` (``1 <= min_log2 <= max_log2``).

    Returns:
        A strategy of ints, drawn by magnitude (every bit length is as likely) and shrinking
        towards the smallest ``n``.

    Raises:
        ValueError: unknown family, or exponents out of range.
    """
    cls = get_family(family)
    for name, value in (("min_log2", min_log2), ("max_log2", max_log2)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LOG2:
            raise ValueError(f"{name} must be an integer in [1, {MAX_LOG2}], got {value!r}")
    if min_log2 > max_log2:
        raise ValueError(f"min_log2 ({min_log2}) must be <= max_log2 ({max_log2})")
    if min_log2 > cls.max_log2:
        raise ValueError(f"min_log2 must be <= {cls.max_log2} for {family}, got {min_log2}")
    max_log2 = min(max_log2, cls.max_log2)
    return _BUCKET_RULES[cls.bucket_rule](min_log2, max_log2)


def _squares(min_log2: int, max_log2: int) -> st.SearchStrategy[int]:
    lo = max(2, math.isqrt(2**min_log2 - 1) + 1)
    return _by_magnitude(lo, math.isqrt(2**max_log2)).map(lambda s: s * s)


#: A family's ``bucket_rule`` -> the strategy of ``n`` in ``[2^min_log2, 2^max_log2]``.
_BUCKET_RULES = {
    "any": lambda lo, hi: _by_magnitude(2**lo, 2**hi),
    "power_of_two": lambda lo, hi: st.integers(lo, hi).map(lambda e: 2**e),
    "even": lambda lo, hi: _by_magnitude(2 ** (lo - 1), 2 ** (hi - 1)).map(lambda d: 2 * d),
    "square": _squares,
}


def family_params(family: str, *, exact: bool = False) -> st.SearchStrategy[dict]:
    """Keyword parameters of ``family`` that keep every :func:`bucket_counts` value valid.

    Derived from the family's :class:`~lshsim.hashing.Param` ``draw`` ranges (``{}``, the
    defaults, first); for the built-in families:

    * pstable: ``w`` (cell width), log-uniform over the accepted ``[1e-9, 1e9]`` (``k`` is
      left at its default ``log2 n``);
    * crosspolytope: ``rotation`` ``"gaussian-projection"`` or ``"hadamard"`` (only the
      Gaussian projection with ``exact=True``: the Hadamard rotation has no exact theory;
      ``"orthogonal"`` is never drawn, it needs ``n <= 2d``; the deprecated alias
      ``"gaussian"`` neither, as ``check_params`` returns its canonical name);
    * minhash: ``k`` (min-hashes per bucket) in ``[1, 8]``;
    * ngram: ``ngram`` (order ``N``) in ``[1, 4]`` and ``heads`` in ``[1, 8]``, each optional
      (a sentence length ``l >= 4`` accepts every draw);
    * simhash, voronoi, tokenid: no parameters (``{}``).

    Args:
        family: a name in :data:`lshsim.hashing.FAMILIES`.
        exact: only parameters that :mod:`lshsim.theory` has exact formulas for.

    Returns:
        A strategy of dicts, to be passed as ``**params``; shrinks towards the defaults.

    Raises:
        ValueError: unknown family.
    """
    cls = get_family(family)
    drawn = {p.name: _param_values(p, exact) for p in cls.parameters if p.draw is not None}
    if not drawn:
        return st.just({})
    if len(drawn) == 1:  # shrinks to the default ({}), then to the range's first value
        ((name, values),) = drawn.items()
        return st.one_of(st.just({}), values.map(lambda v: {name: v}))
    return st.fixed_dictionaries({}, optional=drawn)


def _param_values(param: Param, exact: bool) -> st.SearchStrategy:
    """The values of one parameter the property tests draw (:attr:`Param.draw`)."""
    if param.type is str:
        return st.sampled_from((param.exact_draw or param.draw) if exact else param.draw)
    lo, hi = param.draw
    if param.type is int:
        return st.integers(lo, hi)
    # 10^e, e shrinking to 0; clipped against rounding at the ends
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: min(hi, max(lo, 10.0**e)))


def square_buckets(*, min_log2: int = 2, max_log2: int = 24) -> st.SearchStrategy[int]:
    """Product-key table sizes ``n = s^2`` in ``[2^min_log2, 2^max_log2]`` (``s >= 2``)."""
    return bucket_counts("productkey", min_log2=min_log2, max_log2=max_log2)


def topk_sizes(n: int, *, max_k: int = 16) -> st.SearchStrategy[int]:
    """Top-k sizes ``1 <= k <= min(n, max_k)`` (the exact Voronoi overlap takes ``k <= 16``)."""
    return st.integers(1, max(1, min(n, max_k)))


def family_configs(
    kind: str | None = None, *, max_log2: int = 24, exact: bool = False
) -> st.SearchStrategy[tuple[str, int, dict]]:
    """Consistent ``(family, n, params)`` triples: a family, a valid ``n`` and parameters.

    Args:
        kind: as for :func:`families`.
        max_log2: largest ``n`` is ``2^max_log2``.
        exact: as for :func:`family_params`.

    Returns:
        A strategy of tuples, each accepted by ``FAMILIES[family].check_params(n, **params)``.
    """
    return families(kind).flatmap(
        lambda f: st.tuples(
            st.just(f), bucket_counts(f, max_log2=max_log2), family_params(f, exact=exact)
        )
    )


def _near_ends(lo: float, hi: float, open: bool) -> st.SearchStrategy[float]:
    """Floats in ``[lo, hi]`` at a distance ``10^-e (hi - lo)`` from an end, ``e`` in [1, 17]."""
    width = hi - lo

    def place(args: tuple[bool, float]) -> float:
        upper, e = args
        delta = width * 10.0**-e
        x = hi - delta if upper else lo + delta
        x = min(hi, max(lo, x))
        if open and x in (lo, hi):  # the offset rounded away: the end's float neighbour
            x = math.nextafter(x, hi if x == lo else lo)
        return x

    return st.tuples(st.booleans(), st.floats(1.0, 17.0)).map(place)


def _unit_interval(lo: float, hi: float, open: bool) -> st.SearchStrategy[float]:
    """Floats in the interval: half anywhere (Hypothesis's own mix), half close to an end."""
    anywhere = st.floats(lo, hi, exclude_min=open, exclude_max=open, allow_nan=False)
    return st.one_of(anywhere, _near_ends(lo, hi, open))


def cosines(
    open: bool = False,
    lo: float = -1.0,
    hi: float = 1.0,
) -> st.SearchStrategy[float]:
    """Cosines ``a`` in ``[lo, hi]`` (``(lo, hi)`` with ``open=True``), never NaN.

    Half the draws are Hypothesis's floats on the interval (which include the ends, ``-0.0``
    and subnormals); the other half lie within ``10^-e (hi - lo)`` of an end for ``e`` in
    ``[1, 17]`` (down to the end's float neighbour), where formulas in ``arccos(a)``,
    ``1/(1 +- a)`` or ``sqrt(1 - a^2)`` lose precision: plain floats land there rarely.

    Args:
        open: exclude both ends.
        lo: lower end, ``>= -1``.
        hi: upper end, ``<= 1`` and ``> lo``.

    Returns:
        A strategy of Python floats, shrinking towards ``0.0`` (or the end nearest it).

    Raises:
        ValueError: bounds outside ``[-1, 1]``, not ``lo < hi``, or (``open``) no float
            strictly between them.
    """
    if not (-1.0 <= lo < hi <= 1.0):
        raise ValueError(f"need -1 <= lo < hi <= 1, got lo={lo!r}, hi={hi!r}")
    if open and math.nextafter(lo, hi) == hi:
        raise ValueError(f"no float lies strictly between lo={lo!r} and hi={hi!r}")
    return _unit_interval(lo, hi, open)


def overlaps(open: bool = False) -> st.SearchStrategy[float]:
    """Overlap fractions ``f`` in ``[0, 1]`` (``(0, 1)`` with ``open=True``), never NaN.

    Drawn like :func:`cosines`: half anywhere, half close to 0 or 1.
    """
    return _unit_interval(0.0, 1.0, open)


def sentence_models(
    *, max_length: int = 64, max_dim: int = 256, max_vocab: int = 32128
) -> st.SearchStrategy[dict]:
    """Sentence-model parameters: dicts with keys ``overlap``, ``length``, ``dim``, ``vocab``.

    Every dict passes :func:`lshsim.sentences.check_sentence_model`. ``overlap`` is either an
    arbitrary float in ``[0, 1]`` or an exact ratio ``s / length``; ``vocab`` is in
    ``[2 length - s, max(2 length - s, max_vocab)]``, at least the distinct tokens a pair needs
    (``s`` the shared count :func:`lshsim.sentences.shared_tokens` derives from ``overlap``).

    Args:
        max_length: largest ``length`` (>= 1).
        max_dim: largest ``dim`` (>= 2).
        max_vocab: largest ``vocab`` drawn unless the pair needs more (>= 2).

    Returns:
        A strategy of dicts, to be passed as keyword arguments (e.g. to
        :func:`lshsim.estimate.estimate_collision` or
        :func:`lshsim.theory.collision_probability`).

    Raises:
        ValueError: a bound out of range.
    """
    for name, value, least in (
        ("max_length", max_length, 1),
        ("max_dim", max_dim, 2),
        ("max_vocab", max_vocab, 2),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")

    @st.composite
    def draw_model(draw) -> dict:
        length = draw(st.integers(1, max_length))
        overlap = draw(st.one_of(overlaps(), st.integers(0, length).map(lambda s: s / length)))
        need = 2 * length - shared_tokens(overlap, length)
        vocab = draw(st.integers(need, max(need, max_vocab)))
        dim = draw(st.integers(2, max_dim))
        return {"overlap": overlap, "length": length, "dim": dim, "vocab": vocab}

    return draw_model()


def _unit(v: np.ndarray) -> np.ndarray:
    """``v / |v|``; a (nearly) zero ``v`` becomes the first basis vector."""
    norm = float(np.linalg.norm(v))
    if not norm > 1e-3:  # also NaN-safe; a zero draw is a common (shrunk) Hypothesis value
        v = np.zeros_like(v)
        v[0] = 1.0
        norm = 1.0
    return v / norm


def _orthogonal_unit(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """A unit vector orthogonal to unit ``x``, from ``z`` (or from a basis vector if parallel)."""
    u = z - (z @ x) * x
    if not np.linalg.norm(u) > 1e-3:  # z (nearly) parallel to x: use the axis x is least along
        e = np.zeros_like(x)
        e[int(np.argmin(np.abs(x)))] = 1.0  # |x_j| <= 1/sqrt(d): |e - (e.x) x| >= 1/sqrt(2)
        u = e - (e @ x) * x
    u = u - (u @ x) * x  # second Gram-Schmidt pass: orthogonal to rounding
    return u / np.linalg.norm(u)


def unit_vector_pairs(
    dim: int | st.SearchStrategy[int], cosines: st.SearchStrategy[float] | None = None
) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """Pairs ``(x, y)`` of unit float64 vectors in ``R^dim`` (norms 1 to rounding).

    Entries are drawn by Hypothesis (so pairs shrink towards axis-aligned vectors, and equal
    or opposite vectors and exact zeros in coordinates occur), then normalised.

    Args:
        dim: dimension ``d >= 1``, or a strategy of dimensions.
        cosines: optional strategy of target cosines in ``[-1, 1]`` (e.g. :func:`cosines`);
            then ``y = a x + sqrt(1 - a^2) u`` with ``u`` a unit vector orthogonal to ``x``,
            so ``x . y = a`` up to rounding (about ``1e-15``). Needs ``d >= 2`` unless every
            cosine is ``+-1``.

    Returns:
        A strategy of tuples of two float64 arrays of shape ``(d,)``.

    Raises:
        ValueError: ``dim`` < 1 (at draw time for a strategy of dimensions), or ``dim == 1``
            with a cosine other than ``+-1``.
    """
    if isinstance(dim, int) and not isinstance(dim, bool):
        if dim < 1:
            raise ValueError(f"dim (d) must be an integer >= 1, got {dim}")
        dims = st.just(dim)
    else:
        dims = dim

    @st.composite
    def draw_pair(draw) -> tuple[np.ndarray, np.ndarray]:
        d = draw(dims)
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ValueError(f"dim (d) must be an integer >= 1, got {d!r}")
        vec = hnp.arrays(np.float64, d, elements=st.floats(-1.0, 1.0, allow_subnormal=False))
        x = _unit(draw(vec))
        if cosines is None:
            return x, _unit(draw(vec))
        a = float(draw(cosines))
        if not -1.0 <= a <= 1.0:
            raise ValueError(f"cosine must be in [-1, 1], got {a!r}")
        if abs(a) == 1.0:
            return x, a * x
        if d == 1:
            raise ValueError(f"cosine must be -1 or 1 when dim (d) = 1, got {a!r}")
        u = _orthogonal_unit(x, draw(vec))
        y = a * x + math.sqrt((1.0 - a) * (1.0 + a)) * u
        return x, y / np.linalg.norm(y)

    return draw_pair()


def ngram_models(
    *, max_length: int = 64, max_order: int = 6, max_heads: int = 8, max_log2: int = 20
) -> st.SearchStrategy[dict]:
    """Hashed n-gram models on the sentence model.

    Dicts with keys ``ngram``, ``m``, ``shared``, ``overlap``, ``length``, ``heads``.

    ``overlap`` is the exact ratio ``shared / length`` (so ``round(f l) = shared``) and
    ``ngram <= length``: every dict is accepted by :func:`lshsim.theory.ngram_probability`
    (with ``m``, ``overlap``, ``length``, ``heads``) and by
    :func:`lshsim.theory.ngram_shared_probability` (with ``ngram``, ``shared``, ``length``).

    Args:
        max_length: largest ``length`` (>= 1).
        max_order: largest ``ngram`` (>= 1; capped at ``length``).
        max_heads: largest ``heads`` (in ``[1, 64]``).
        max_log2: largest ``m`` is ``2^max_log2`` (in ``[1, 31]``).

    Returns:
        A strategy of dicts, shrinking towards short sentences, bigrams... unigrams, one head.

    Raises:
        ValueError: a bound out of range.
    """
    for name, value, lo, hi in (
        ("max_length", max_length, 1, 2**31),
        ("max_order", max_order, 1, 64),
        ("max_heads", max_heads, 1, 64),
        ("max_log2", max_log2, 1, NGRAM_MAX_LOG2),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")

    @st.composite
    def draw_model(draw) -> dict:
        length = draw(_by_magnitude(1, max_length))
        ngram = draw(st.integers(1, min(max_order, length)))
        shared = draw(st.one_of(st.integers(0, length), st.sampled_from([length, length - 1])))
        m = draw(bucket_counts("ngram", max_log2=max_log2))
        heads = draw(st.integers(1, max_heads))
        overlap = shared / length
        return {
            "ngram": ngram,
            "m": m,
            "shared": shared,
            "overlap": overlap,
            "length": length,
            "heads": heads,
        }

    return draw_model()
