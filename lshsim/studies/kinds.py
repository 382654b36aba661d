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
  Theorem 2's trained students): may move across platforms and versions; a comparison
  reports by how much.

The numbers are tagged at the source: each :class:`~lshsim.studies.base.Study` declares
``kinds``, ``{pattern: kind}`` over its data, and :func:`rules` gives the rules of a whole
``results.json`` (recorded in it under ``"kinds"``). A pattern is a ``/``-separated path whose
segments are dict keys or list indices (``*``: any one), ``""`` the whole; the most specific
pattern that is a prefix of a number's path gives its kind (:func:`kind_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = [
    "EXACT_RTOL",
    "KINDS",
    "MC_STACK",
    "METADATA",
    "TOP",
    "check_kinds",
    "compile_rules",
    "kind_of",
    "rules",
]

#: The kinds and what each promises.
KINDS = {
    "exact": "exact theory: agrees to 1e-9 relative anywhere",
    "monte_carlo": "Monte Carlo: identical for the same seed and versions, any thread count",
    "platform": "downstream of XLA: may move across platforms; the difference is reported",
}
#: Relative tolerance of the ``exact`` promise.
EXACT_RTOL = 1e-9
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
    for pattern, kind in kinds.items():
        if kind not in KINDS:
            raise ValueError(
                f"kinds: study {name!r} tags {pattern!r} as {kind!r}; "
                f"choose one of {', '.join(KINDS)}"
            )


def rules(studies: Iterable) -> dict[str, str]:
    """The kind rules of a ``results.json`` holding ``studies``: :data:`TOP` and each study's.

    Args:
        studies: :class:`~lshsim.studies.base.Study` records.

    Returns:
        ``{pattern: kind}``, the study patterns prefixed with ``studies/<name>``.
    """
    out = dict(TOP)
    for study in studies:
        for pattern, kind in (study.kinds or {}).items():
            out["/".join(p for p in ("studies", study.name, pattern) if p)] = kind
    return out


def compile_rules(rules: Mapping[str, str]) -> list[tuple[tuple[str, ...], str, str]]:
    """``(segments, pattern, kind)`` per rule, most specific first (for :func:`kind_of`).

    More segments first; among equally long patterns, fewer ``*`` first.

    Raises:
        ValueError: If a rule's kind is unknown.
    """
    out = []
    for pattern, kind in rules.items():
        if kind not in KINDS:
            raise ValueError(f"kinds: {pattern!r} has unknown kind {kind!r}")
        segments = tuple(pattern.split("/")) if pattern else ()
        out.append((segments, pattern, kind))
    out.sort(key=lambda r: (-len(r[0]), r[0].count("*"), r[1]))
    return out


def kind_of(
    path: tuple[str, ...], compiled: list[tuple[tuple[str, ...], str, str]]
) -> tuple[str, str] | None:
    """The ``(pattern, kind)`` of the most specific rule matching ``path``; None if none does.

    Args:
        path: the number's path (dict keys and list indices as strings).
        compiled: :func:`compile_rules`' output.
    """
    for segments, pattern, kind in compiled:
        if len(segments) <= len(path) and all(
            s == "*" or s == p for s, p in zip(segments, path, strict=False)
        ):
            return pattern, kind
    return None
