"""An estimate's inputs, checked once, and the pairs its blocks draw.

:func:`check_inputs` validates a family, its parameters and the input model in one pass (one
line naming the parameter on the first bad one) and returns :class:`Inputs`; :func:`draw_pairs`
draws a batch of pairs from a block's generator, the same for every statistic:

    * full mode: unit vectors at exactly ``cosine`` (product keys: both halves at it), or
      sentence pairs at overlap ``f`` (embedded vectors for vector families, token ids
      otherwise), then one 63-bit seed per pair for that pair's fresh hash function;
    * reduced mode (vector families): only the pair's cosine (product keys: its two
      half-cosines, :func:`lshsim.sentence_halves.half_cosines`), for the family's
      ``sample_reduced``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from lshsim._memory import check_duration
from lshsim._validate import check_float, check_int
from lshsim.hashing import get_family
from lshsim.sentence_halves import half_cosine_pairs, half_cosines
from lshsim.sentences import (
    check_sentence_model,
    cosine_pairs,
    sentence_cosines,
    sentence_pairs,
)

__all__ = [
    "MAX_PAIR_BYTES",
    "MODES",
    "Inputs",
    "Pairs",
    "check_inputs",
    "draw_pairs",
    "pair_bytes",
    "resolve_mode",
]

#: Estimation modes; ``auto`` runs ``reduced`` where the family has it (see :func:`resolve_mode`).
MODES = ("auto", "full", "reduced")
#: Largest working memory of one pair (larger dim * length is rejected up front).
MAX_PAIR_BYTES = 2**31
#: An optimistic estimate's rate, for refusing what cannot finish in a day: the reduced
#: samplers draw about 4e6 pairs/s on one core (SimHash at a cosine, measured 2026-11), the
#: full kernels 1e4-2e4; 1e8 is 25 such cores at the fastest rate.
PAIRS_PER_SECOND = 1e8


@dataclass(frozen=True, eq=False)
class Inputs:
    """A checked estimate's family and input model (``params``: normalised, ``n`` removed)."""

    family: str
    cls: type
    n: int
    params: dict
    overlap: float | None
    cosine: float | None
    dim: int
    length: int
    vocab: int
    samples: int
    seed: int
    mode: str = "full"

    @property
    def vectors(self) -> bool:
        """Whether the family hashes vectors (else tokens, token sets or sequences)."""
        return self.cls.input_kind == "vectors"


@dataclass(frozen=True)
class Pairs:
    """One batch of drawn pairs: ``first``/``second`` and ``seeds`` (full) or ``cosines``."""

    count: int
    first: np.ndarray | None = None
    second: np.ndarray | None = None
    seeds: np.ndarray | None = None
    cosines: np.ndarray | None = None


def resolve_mode(family: str, n: int, params: dict, mode: str) -> str:
    """The mode an estimate runs: ``mode``, with ``auto`` resolved for the family.

    ``auto`` is ``reduced`` wherever the family has a reduced sampler for these parameters (a
    vector family whose ``sample_reduced`` accepts them: it draws the pair's sufficient
    statistics from their exact law, so the estimate has the same law as full mode's at a
    fraction of the cost), and ``full`` otherwise (token, set and sequence families;
    cross-polytope with the Hadamard rotation).

    Args:
        family: a name in :data:`lshsim.hashing.FAMILIES`.
        n: buckets.
        params: the family's parameters (unchecked ones are checked here).
        mode: one of :data:`MODES`.

    Returns:
        ``"full"`` or ``"reduced"``.

    Raises:
        ValueError: an unknown mode, family or parameter (one line naming it).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode != "auto":
        return mode
    cls = get_family(family)
    if cls.input_kind != "vectors" or not cls.reduced:
        return "full"
    params = cls.check_params(n, **params)
    n = params.pop("n")
    try:
        cls.sample_reduced(n, np.empty(0), np.random.default_rng(0), **params)
    except ValueError:  # no reduced sampler for these parameters
        return "full"
    return "reduced"


def check_inputs(
    family: str,
    n: int,
    params: dict,
    *,
    overlap: float | None,
    cosine: float | None,
    dim: int,
    length: int,
    vocab: int,
    samples: int,
    seed: int,
    mode: str,
) -> Inputs:
    """Validate an estimate's family, parameters and inputs; return them normalised.

    Args:
        family: a name in :data:`lshsim.hashing.FAMILIES`.
        n: buckets.
        params: family parameters (defaults are filled in: they are reported as used).
        overlap: ``f`` in [0, 1] (exclusive with ``cosine``).
        cosine: ``a`` in [-1, 1] (vector families).
        dim: ``d``.
        length: ``l``.
        vocab: ``V``.
        samples: pairs, >= 1.
        seed: int >= 0.
        mode: ``"full"``, ``"reduced"`` or ``"auto"`` (:func:`resolve_mode`).

    Returns:
        :class:`Inputs` (its ``mode`` the resolved one).

    Raises:
        ValueError: one line naming the bad argument and its allowed range.
    """
    cls = get_family(family)
    params = cls.check_params(n, **params)  # normalised: defaults filled in, reported as used
    n = params.pop("n")
    if (overlap is None) == (cosine is None):
        raise ValueError("give exactly one of overlap (f) or cosine")
    samples = check_int("samples", samples, 1)
    check_duration("samples", f"{samples:.3g} pairs", samples / PAIRS_PER_SECOND, "the estimate")
    seed = check_int("seed", seed, 0)
    mode = resolve_mode(family, n, params, mode)
    length = check_int("length (l)", length, 1, 2**31)
    vocab = check_int("vocab (V)", vocab, 1, 2**61 - 1)  # token ids stay below 2^61 - 1
    inputs = Inputs(
        family, cls, n, params, overlap, cosine, dim, length, vocab, samples, seed, mode
    )
    if cosine is not None:
        inputs = _check_cosine(inputs)
    else:
        inputs = _check_overlap(inputs)
    if cls.halves and (inputs.dim < 4 or inputs.dim % 2):
        raise ValueError(f"dim (d) must be even and >= 4 for family '{family}', got {inputs.dim}")
    if mode == "reduced":
        if not inputs.vectors:
            raise ValueError(f"mode='reduced' is not available for family '{family}'")
        cls.sample_reduced(n, np.empty(0), np.random.default_rng(0), **params)  # validates
    size = pair_bytes(inputs)
    if size > MAX_PAIR_BYTES:
        raise ValueError(
            f"dim (d) = {inputs.dim} and length (l) = {inputs.length} are too large together: "
            f"one pair would need {size / 2**30:.1f} GiB of working memory (limit 2 GiB)"
        )
    return inputs


def _check_cosine(inputs: Inputs) -> Inputs:
    """Exact-cosine inputs: ``a`` in [-1, 1], a vector family, ``d >= 1`` (``|a| = 1`` at 1)."""
    cosine = check_float("cosine", inputs.cosine, -1.0, 1.0)
    if not inputs.vectors:
        raise ValueError(f"cosine is not defined for family '{inputs.family}'; use overlap (f)")
    dim = check_int("dim (d)", inputs.dim, 1, 2**31)
    if dim == 1 and abs(cosine) != 1.0:
        raise ValueError(f"cosine must be -1 or 1 when dim (d) = 1, got {cosine!r}")
    return replace(inputs, cosine=cosine, dim=dim)


def _check_overlap(inputs: Inputs) -> Inputs:
    """Sentence-model inputs: ``f`` in [0, 1], the model's ranges, n-grams' full window."""
    overlap = check_float("overlap (f)", inputs.overlap, 0.0, 1.0)
    vectors = inputs.vectors
    dim = check_int("dim (d)", inputs.dim, 2 if vectors else 1, 2**31)
    length, vocab = inputs.length, inputs.vocab
    check_sentence_model(overlap, length, vocab, dim if vectors else 2)
    if inputs.cls.input_kind == "sequences":  # hashed n-grams: 32-bit ids, a full window
        check_int("vocab (V)", vocab, 1, 2**32)
        if inputs.params["ngram"] > length:
            raise ValueError(
                f"ngram (N) must be an integer in [1, l = {length}], got {inputs.params['ngram']}"
            )
    return replace(inputs, overlap=overlap, dim=dim)


def pair_bytes(inputs: Inputs) -> int:
    """Rough peak working memory of one trial's inputs, in bytes (blocks are cut to fit)."""
    full = inputs.mode == "full"
    if inputs.overlap is None:  # exact-cosine pairs: x, y and temporaries
        return 8 * 4 * inputs.dim if full else 64
    k = 2 * inputs.length  # at most 2l - s distinct tokens per pair
    if not full:  # the O(l) cosine sampler keeps a few scalars per pair
        return 8 * 16
    return 8 * 2 * k * inputs.dim if inputs.vectors else 8 * 4 * k


def draw_pairs(inputs: Inputs, count: int, rng: np.random.Generator) -> Pairs:
    """``count`` pairs for ``inputs``, drawn with a block's generator ``rng``.

    Full mode: the pairs (unit vectors at ``cosine``, product keys: both halves at it; else
    sentence pairs at ``overlap``: embedded vectors for vector families, token ids otherwise),
    then one function seed per pair. Reduced mode: the pair cosines only (product keys: the
    two half-cosines of each pair; at an exact cosine, no draw).
    """
    cls, overlap, cosine = inputs.cls, inputs.overlap, inputs.cosine
    length, dim = inputs.length, inputs.dim
    if inputs.mode == "reduced":
        if cosine is not None:
            cos = np.full(count, cosine)
        elif cls.halves:  # product keys: the two half-cosines of each pair
            cos = half_cosines(count, overlap, length=length, dim=dim, rng=rng)
        else:
            cos = sentence_cosines(count, overlap, length=length, dim=dim, rng=rng)
        return Pairs(count, cosines=cos)
    if cosine is not None and cls.halves:  # both halves at the cosine
        a, b = half_cosine_pairs(count, cosine, cosine, dim, rng)
    elif cosine is not None:
        a, b = cosine_pairs(count, cosine, dim, rng)
    else:
        vectors = inputs.vectors
        pairs = sentence_pairs(
            count, overlap, length=length, vocab=inputs.vocab, dim=dim, rng=rng, embed=vectors
        )
        a, b = (pairs.x1, pairs.x2) if vectors else (pairs.tokens1, pairs.tokens2)
    seeds = rng.integers(0, 2**63, size=count)
    return Pairs(count, first=a, second=b, seeds=seeds)
