"""The registry of the executable claims, and :func:`check`, which evaluates them.

Each part module lists its claims as ``CLAIMS`` (a tuple of :class:`Claim`, or a dict by id);
:data:`PARTS` names those modules, so adding a module's claims is one line there. ``lshsim
check`` prints the verdicts; with ``mutate=True`` each claim's check also runs under its
:class:`Mutation` (a deliberately broken library), where it must fail.

Theorem 1's claims, checks and mutations live in :mod:`lshsim.theorems.theorem1`; the names
other modules import from here (its constants, :func:`tie_overlap`, :func:`crossover`) are
re-exported.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

from lshsim.theorems._one_thread import one_thread
from lshsim.theorems.claim_types import Claim, Mutation, Verdict
from lshsim.theorems.theorem1.ordering import TIE_CONSTANT, crossover, tie_overlap
from lshsim.theorems.theorem1.rates import (
    GAP_RATE_HI,
    GAP_RATE_LO,
    LAPLACE_LOG_ERR,
    PSTABLE_HI,
    PSTABLE_LO,
    PSTABLE_W,
    SIMHASH_LO,
    SPHERICAL_HI,
    SPHERICAL_KAPPA,
    SPHERICAL_LO,
)

__all__ = [
    "CLAIMS",
    "GAP_RATE_HI",
    "GAP_RATE_LO",
    "LAPLACE_LOG_ERR",
    "PARTS",
    "PSTABLE_HI",
    "PSTABLE_LO",
    "PSTABLE_W",
    "SIMHASH_LO",
    "SPHERICAL_HI",
    "SPHERICAL_KAPPA",
    "SPHERICAL_LO",
    "TIE_CONSTANT",
    "Claim",
    "Mutation",
    "Verdict",
    "check",
    "crossover",
    "tie_overlap",
]

#: the modules whose ``CLAIMS`` make up the registry, in order
PARTS: tuple[str, ...] = (
    "lshsim.theorems.theorem1",
    "lshsim.theorems.lsh_exponent",
    "lshsim.theorems.ngram",
    "lshsim.theorems.productkey",
    "lshsim.theorems.topk",
    "lshsim.theorems.tune",
)


def _collect(parts: tuple[str, ...]) -> dict[str, Claim]:
    claims: dict[str, Claim] = {}
    for name in parts:
        found = importlib.import_module(name).CLAIMS
        for claim in found.values() if isinstance(found, dict) else found:
            if claim.id in claims:
                raise ValueError(f"claim id {claim.id} is defined twice (again in {name})")
            claims[claim.id] = claim
    return claims


#: every claim by id, in the order of :data:`PARTS`
CLAIMS: dict[str, Claim] = _collect(PARTS)


def _run(fn: Callable[[], tuple[bool, dict]]) -> tuple[bool, dict, float]:
    start = time.perf_counter()
    holds, evidence = fn()
    return bool(holds), evidence, time.perf_counter() - start


def _mutated(claim: Claim, fn: Callable[[], tuple[bool, dict]]) -> tuple[bool, dict, float]:
    """Whether ``fn`` fails under the claim's mutation (a raise counts as failing)."""
    if claim.mutation is None:
        return False, {"error": "the claim has no mutation"}, 0.0
    start = time.perf_counter()
    try:
        with claim.mutation.apply():
            holds, evidence = fn()
    except Exception as exc:  # a broken library may raise anything: that is failing too
        return True, {"error": f"{type(exc).__name__}: {exc}"}, time.perf_counter() - start
    return not holds, evidence, time.perf_counter() - start


def check(
    ids: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
    *,
    mutate: bool = False,
    quick: bool = False,
) -> list[Verdict]:
    """Evaluate claims (all by default), in registry order.

    Args:
        ids: claim ids, or None for every claim.
        progress: called with each claim's id before it runs.
        mutate: also run each check under its claim's mutation (``fails_under_mutation``).
        quick: run each claim's ``quick_check`` (a smaller grid) where it has one.

    Returns:
        One :class:`Verdict` per claim.

    Raises:
        ValueError: an unknown id.
    """
    ids = list(CLAIMS) if ids is None else ids
    unknown = [i for i in ids if i not in CLAIMS]
    if unknown:
        raise ValueError(f"unknown claim id(s) {', '.join(unknown)}; known: {', '.join(CLAIMS)}")
    verdicts = []
    with one_thread():
        for cid in ids:
            claim = CLAIMS[cid]
            if progress is not None:
                progress(cid)
            fn = claim.quick_check if quick and claim.quick_check is not None else claim.check
            holds, evidence, seconds = _run(fn)
            extra = {}
            if mutate:
                fails, m_evidence, m_seconds = _mutated(claim, fn)
                extra = {
                    "mutation": claim.mutation.name if claim.mutation else None,
                    "fails_under_mutation": fails,
                    "mutation_evidence": m_evidence,
                    "mutation_seconds": m_seconds,
                }
            verdicts.append(
                Verdict(
                    cid,
                    claim.statement,
                    holds,
                    evidence,
                    seconds,
                    claim.test,
                    **extra,
                    kinds=claim.kinds,
                )
            )
    return verdicts
