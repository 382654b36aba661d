"""What each number of ``lshsim reproduce`` promises: the three kinds of reproducibility.

Every number in ``results.json`` has one kind (the README's "Reproducibility" section and
DESIGN.md section 8 state the promises; ``lshsim compare`` checks them):

* ``exact``: exact theory (closed forms, quadrature, what is computed from them) and the
  grids and configs it is computed on: agrees to :data:`EXACT_RTOL` relative anywhere.
* ``monte_carlo``: seeded Monte-Carlo estimates and what is computed from them (Theorem 1's
  claims check estimates too): identical, bit for bit, for the same seed and the same
  versions of the numerical stack (:data:`MC_STACK`, installed from the lock file), for any
  thread or worker count. Across other versions they may move: a comparison reports by how
  much, and no promise covers it.
* ``platform``: downstream of XLA (the JAX T5 of the routing probe, trained or not, and
  Theorem 2's trained students) or of torch (the Hugging Face Mixtral of ``routing_hf``): may
  move across platforms, versions and thread counts; a comparison reports by how much.

The numbers are tagged at the source: each :class:`~lshsim.studies.base.Study` declares
``kinds``, ``{pattern: kind}`` over its data, each claim (:class:`lshsim.theorems.claim_types.
Claim`) ``kinds`` over its evidence (recorded with its verdict), and :func:`rules` gives the
rules of a whole ``results.json`` (recorded in it under ``"kinds"``). A pattern is a
``/``-separated path whose segments are dict keys or list indices (``*``: any one), ``""`` the
whole; the most specific pattern that is a prefix of a number's path gives its kind
(:func:`kind_of`).

A rule's value is a kind's name, or ``{"kind": name, "rtol": r, "atol": a}`` where a number's
conditioning needs its own tolerance (:func:`tolerance`): two values agree when ``|a - b| <=
atol + rtol max(|a|, |b|)``. The defaults: ``exact`` :data:`EXACT_RTOL` relative, nothing
absolute; ``monte_carlo`` identical (a Monte-Carlo number computed with a quadrature value,
such as a z-score against the exact law, declares the quadrature's tolerance). Examples: a
residual ``max |x - y|`` of an identity that holds to rounding is compared on the scale of its
terms (``atol``); a finite-difference coefficient ``((1 - P)/theta - lambda)/theta`` inherits
``1/theta`` times the error of ``P`` (``atol`` from that bound).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "DEFAULT_TOLERANCE",
    "EXACT_RTOL",
    "KINDS",
    "MC_STACK",
    "METADATA",
    "TOP",
    "check_kinds",
    "compile_rules",
    "kind_of",
    "rules",
    "spec",
    "tolerance",
]

#: The kinds and what each promises.
KINDS = {
    "exact": "exact theory: agrees to 1e-9 relative anywhere",
    "monte_carlo": "Monte Carlo: identical for the same seed and versions, any thread count",
    "platform": "downstream of XLA or torch: may move across platforms; the difference is reported",
}
#: Relative tolerance of the ``exact`` promise.
EXACT_RTOL = 1e-9
#: ``(rtol, atol)`` of each kind when its rule states none (``platform``: any difference).
DEFAULT_TOLERANCE = {
    "exact": (EXACT_RTOL, 0.0),
    "monte_carlo": (0.0, 0.0),
    "platform": (math.inf, math.inf),
}
#: The versions that fix the Monte-Carlo numbers (keys of the recorded ``versions``).
MC_STACK = ("python", "numpy", "scipy", "numba", "llvmlite")
#: Top-level keys of ``results.json`` that are not numbers of the run: the package version,
#: the seed (a comparison needs equal seeds), the recorded versions and kinds, and which
#: claim checks ran (``quick`` or ``full``, as the profile in ``config`` says).
METADATA = ("lshsim", "seed", "versions", "kinds", "claims_check")
#: The kinds of ``results.json``'s parts outside the studies.
TOP = {"config": "exact", "claims": "monte_carlo", "holds": "monte_carlo"}


def check_kinds(name: str, kinds: Mapping[str, str] | None) -> None:
    """Check a study's ``kinds``: a non-empty ``{pattern: kind}`` with known kinds.

    Args:
        name: the study's name (for the message).
        kinds: the study's ``kinds``.

    Raises:
        ValueError: If ``kinds`` is missing or empty, or names an unknown kind.
    """
    if not kinds:
        raise ValueError(f"kinds: study {name!r} declares no kinds (say which numbers are which)")
    for pattern, value in kinds.items():
        try:
            spec(value)
        except ValueError:
            raise ValueError(
                f"kinds: study {name!r} tags {pattern!r} as {value!r}; "
                f"choose one of {', '.join(KINDS)}"
            ) from None


def spec(value: Any) -> tuple[str, float, float]:
    """``(kind, rtol, atol)`` of a rule's value (a kind's name or a dict with tolerances).

    Raises:
        ValueError: an unknown kind, or a tolerance that is not a number >= 0.
    """
    if isinstance(value, str):
        if value not in KINDS:
            raise ValueError(f"kinds: unknown kind {value!r}; choose one of {', '.join(KINDS)}")
        return (value, *DEFAULT_TOLERANCE[value])
    if not isinstance(value, Mapping) or not isinstance(value.get("kind"), str):
        raise ValueError(f"kinds: {value!r} is neither a kind nor {{'kind', 'rtol', 'atol'}}")
    if value["kind"] not in KINDS:
        raise ValueError(f"kinds: {value!r} is neither a kind nor {{'kind', 'rtol', 'atol'}}")
    kind = value["kind"]
    rtol, atol = DEFAULT_TOLERANCE[kind]
    out = []
    for name, default in (("rtol", rtol), ("atol", atol)):
        tol = value.get(name, default)
        if not isinstance(tol, int | float) or isinstance(tol, bool) or not tol >= 0:
            raise ValueError(f"kinds: {name} must be a number >= 0, got {tol!r}")
        out.append(float(tol))
    return kind, out[0], out[1]


def tolerance(rules: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """``{pattern: (rtol, atol)}`` of every rule (:func:`spec`)."""
    return {pattern: spec(value)[1:] for pattern, value in rules.items()}


def rules(studies: Iterable, claims: Iterable[Mapping] = ()) -> dict[str, Any]:
    """The kind rules of a ``results.json``: :data:`TOP`, each study's and each claim's.

    Args:
        studies: :class:`~lshsim.studies.base.Study` records.
        claims: the claims' verdicts as written (``Verdict.to_dict``), in ``results.json``'s
            order; each one's ``kinds`` (over its evidence) becomes rules under
            ``claims/<index>/evidence``.

    Returns:
        ``{pattern: kind or spec}``, the study patterns prefixed with ``studies/<name>``.
    """
    out: dict[str, Any] = dict(TOP)
    for study in studies:
        for pattern, kind in (study.kinds or {}).items():
            out["/".join(p for p in ("studies", study.name, pattern) if p)] = kind
    for i, claim in enumerate(claims):
        for pattern, kind in (claim.get("kinds") or {}).items():
            out["/".join(p for p in ("claims", str(i), "evidence", pattern) if p)] = kind
    return out


def compile_rules(rules: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
    """``(segments, pattern, kind)`` per rule, most specific first (for :func:`kind_of`).

    More segments first; among equally long patterns, fewer ``*`` first.

    Raises:
        ValueError: If a rule's kind is unknown.
    """
    out = []
    for pattern, value in rules.items():
        try:
            kind = spec(value)[0]
        except ValueError:
            raise ValueError(f"kinds: {pattern!r} has unknown kind {value!r}") from None
        segments = tuple(pattern.split("/")) if pattern else ()
        out.append((segments, pattern, kind))
    out.sort(key=lambda r: (-len(r[0]), r[0].count("*"), r[1]))
    return out


def kind_of(
    path: tuple[str, ...], compiled: list[tuple[tuple[str, ...], str, str]]
) -> tuple[str, str] | None:
    """The ``(pattern, kind)`` of the most specific rule matching ``path``; None if none does.

    A key that contains ``/`` (``"mean rate (must be s/l)"``) is matched as the segments it
    would have in a pattern, so the pattern written with that key matches it.

    Args:
        path: the number's path (dict keys and list indices as strings).
        compiled: :func:`compile_rules`' output.
    """
    if any("/" in key for key in path):
        path = tuple(part for key in path for part in key.split("/"))
    for segments, pattern, kind in compiled:
        if len(segments) <= len(path) and all(
            s == "*" or s == p for s, p in zip(segments, path, strict=False)
        ):
            return pattern, kind
    return None
