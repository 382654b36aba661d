"""Exact amplification parameters ``(k, L)`` for a recall target (``lshsim tune``).

:func:`tune` answers two questions for every family with an amplification law (the family
object's :meth:`~lshsim.hashing.HashFamily.amplification_law`): the sensitivity form (recall
at a near similarity, false positives at a far one, the cheapest scheme) and datasketch's
threshold form (weighted false-positive and false-negative probabilities under a similarity
law, within a signature budget). Every number is the exact amplified law
(:mod:`lshsim.tune.law`), integrated exactly for min-hash and by Gauss-Legendre quadrature of
the family's exact law otherwise (:mod:`lshsim.tune.prior`).

Out of scope: LSH Forest and LSH Ensemble (their query semantics are not a ``(k, L)``
scheme), and multi-probe (no exact law of the probed buckets here).
"""

from __future__ import annotations

from lshsim._validate import check_int
from lshsim.tune.law import Amplifier, amplified_law, make_amplifier
from lshsim.tune.prior import Prior, grid_prior, read_similarities, sample_prior, uniform_prior
from lshsim.tune.search import (
    MAX_THRESHOLD_BUDGET,
    Scheme,
    Tuning,
    pareto_front,
    tune_sensitivity,
    tune_threshold,
)

__all__ = [
    "FORM_OPTIONS",
    "Amplifier",
    "Prior",
    "Scheme",
    "Tuning",
    "amplified_law",
    "datasketch_line",
    "foreign_options",
    "make_amplifier",
    "pareto_front",
    "threshold_prior",
    "tune",
]

#: The options only one form takes (the other refuses them).
FORM_OPTIONS = {"sensitivity": ("points", "minimise"), "threshold": ("weights", "similarities")}


def foreign_options(threshold: float | None, **values) -> tuple[str, list[str]]:
    """The form ``threshold`` selects, and the options of ``values`` given to the other one.

    Args:
        threshold: the threshold form's ``t``, or None (the sensitivity form).
        **values: options of :data:`FORM_OPTIONS` by name (None: not given).

    Returns:
        ``(form, names)``: ``"sensitivity"`` or ``"threshold"``, and the names (in
        :data:`FORM_OPTIONS` order) that are given but belong to the other form.
    """
    form = "sensitivity" if threshold is None else "threshold"
    other = "threshold" if threshold is None else "sensitivity"
    return form, [name for name in FORM_OPTIONS[other] if values.get(name) is not None]


def threshold_prior(amp: Amplifier, threshold: float, similarities=None) -> Prior:
    """The threshold form's similarity law for ``amp``.

    Args:
        amp: the family.
        threshold: ``t``.
        similarities: None (uniform), a path (:func:`read_similarities`) or ``(values,
            counts)``.

    Returns:
        The :class:`Prior`: the sampled law when given; else the sentence model's grid for the
        overlap families, else uniform (closed form for min-hash, quadrature otherwise).
    """
    lo = 0.0
    hi = amp.bounds[1]
    if similarities is not None:
        if isinstance(similarities, tuple):
            values, counts = similarities
            source = "the given sample"
        else:
            values, counts = read_similarities(similarities, *amp.bounds)
            source = str(similarities)
        return sample_prior(threshold, values, counts, *amp.bounds, source)
    grid = amp.grid()
    if grid is not None:
        return grid_prior(threshold, grid, lo, hi)
    if not lo <= threshold:
        raise ValueError(
            f"threshold must be in [0, 1] with the default uniform law (give --similarities "
            f"for negative cosines), got {threshold!r}"
        )
    return uniform_prior(threshold, lo, hi)


def tune(
    family: str,
    *,
    near: float | None = None,
    far: float | None = None,
    recall: float | None = None,
    false_positive: float | None = None,
    threshold: float | None = None,
    weights: tuple[float, float] | None = None,
    similarities=None,
    budget: int | None = None,
    points: int | None = None,
    minimise: str | None = None,
    buckets: int | None = None,
    length: int = 32,
    vocab: int = 32128,
    dim: int | None = None,
    **params,
) -> Tuning:
    """Tune ``(k, L)`` for ``family``: the sensitivity form or the threshold form.

    Give ``near, far, recall, false_positive`` (sensitivity form) or ``threshold`` (threshold
    form, with ``weights``, ``similarities`` and ``budget``, default 128 as datasketch's
    ``num_perm``), not both.

    Args:
        family: a family with an amplification law.
        near: the near similarity ``s1`` (sensitivity form).
        far: the far similarity ``s2 < s1``.
        recall: the recall target ``R`` at ``s1``.
        false_positive: the largest candidate probability ``P`` at ``s2``.
        threshold: the threshold form's ``t``.
        weights: ``(w_fp, w_fn)`` of the threshold form (default ``(0.5, 0.5)``).
        similarities: the threshold form's similarity law: None (uniform), a file, or
            ``(values, counts)``.
        budget: at most this many functions ``k L``.
        points: far points per query (the sensitivity form's cost; default ``10^6``).
        minimise: ``"cost"`` (default) or ``"tables"`` (sensitivity form).
        buckets: ``n`` (every family but min-hash).
        length: the sentence length ``l`` (overlap families).
        vocab: the vocabulary ``V`` (overlap families).
        dim: ``d``, where the cost needs it (hadamard cross-polytope).
        **params: the family's parameters.

    Returns:
        The :class:`Tuning`.

    Raises:
        ValueError: bad or missing input (one line naming it), or no feasible scheme.
        NoLaw: the family has no amplification law.

    Examples:
        >>> t = tune("minhash", threshold=0.8, budget=128)
        >>> (t.best.L, t.best.k), round(t.best.false_positive, 4)
        ((12, 10), 0.0883)
    """
    sensitivity = {"near": near, "far": far, "recall": recall, "false_positive": false_positive}
    given = [k for k, v in sensitivity.items() if v is not None]
    if given and threshold is not None:
        raise ValueError(f"threshold cannot be combined with {', '.join(given)} (two forms)")
    form, foreign = foreign_options(
        threshold, weights=weights, similarities=similarities, points=points, minimise=minimise
    )
    if foreign:
        raise ValueError(f"{', '.join(foreign)}: not an option of the {form} form")
    amp = make_amplifier(family, buckets=buckets, length=length, vocab=vocab, dim=dim, **params)
    if threshold is None:
        missing = [k for k, v in sensitivity.items() if v is None]
        if missing:
            raise ValueError(
                f"{', '.join(missing)} missing: give near, far, recall and false_positive, "
                "or a threshold"
            )
        result = tune_sensitivity(
            amp,
            near=near,
            far=far,
            recall=recall,
            false_positive=false_positive,
            points=10**6 if points is None else points,
            budget=budget,
            minimise=minimise or "cost",
        )
    else:
        budget = check_int("budget", 128 if budget is None else budget, 1, MAX_THRESHOLD_BUDGET)
        prior = threshold_prior(amp, threshold, similarities)
        result = tune_threshold(amp, prior, weights=weights or (0.5, 0.5), budget=budget)
    if amp.similarity == "jaccard" and result.best.L < 2:
        result.notes.append(
            "datasketch's MinHashLSH refuses b < 2 bands (its check), so this optimum cannot "
            "be pasted there; lshsim's own index takes it"
        )
    return result


def datasketch_line(result: Tuning) -> str:
    """The ``MinHashLSH`` call that builds the tuned min-hash index in datasketch."""
    num_perm = result.inputs.get("budget") or result.best.hash_functions
    return f"MinHashLSH(num_perm={num_perm}, params=({result.best.L}, {result.best.k}))"
