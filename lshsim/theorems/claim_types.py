"""Records of the executable claims: claim, mutation and verdict.

A claim, the mutation that must break its check, and the verdict of evaluating it.

A claim's ``check`` calls the library and returns ``(holds, evidence)``, with every number in
``evidence`` computed by the check (never written as a literal). Its :class:`Mutation` is a
named, deliberately broken version of what the check exercises (for example the exact
probability scaled by 1.01): while the mutation's context manager is active the library
misbehaves in that one way, and a check that can fail must then report ``holds = False``
(``lshsim check --mutate``). :func:`replacing` builds the usual kind of mutation: one library
function replaced, wherever a module of the package binds it, by a broken version of itself.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

#: A check: no arguments, returns ``(holds, evidence)``.
CheckFn = Callable[[], tuple[bool, dict]]

#: The kinds a claim declares over its evidence (``lshsim compare``; see
#: :mod:`lshsim.studies.kinds`, whose names and defaults these are): exact theory, agreeing to
#: 1e-9 relative anywhere.
EXACT = "exact"
#: Exact theory whose numbers include residuals of identities that hold to rounding
#: (``max |x - y|`` of O(1) terms): 1e-9 relative or 1e-12 absolute, the scale of the terms.
EXACT_RESIDUALS = {"kind": "exact", "atol": 1e-12}
#: Seeded Monte Carlo: identical for the same seed and versions.
MONTE_CARLO = "monte_carlo"
#: Seeded Monte Carlo computed together with quadrature values (an estimate's z-score against
#: the exact law, an average of exact laws over drawn cosines): the same draws, and the
#: quadrature's 1e-9 relative (1e-12 absolute, for values near 0) on top.
SEEDED_THEORY = {"kind": "monte_carlo", "rtol": 1e-9, "atol": 1e-12}


@dataclass(frozen=True)
class Mutation:
    """A named, deliberately broken version of what a claim's check exercises.

    Attributes:
        name: short stable name, e.g. ``"voronoi-probability-x1.01"``.
        description: one sentence: what is broken and how.
        apply: returns a context manager; while it is active the library is broken in that
            one way (typically a monkeypatch of one function), and leaving it restores it.
    """

    name: str
    description: str
    apply: Callable[[], contextlib.AbstractContextManager] = field(repr=False)


@dataclass(frozen=True)
class Claim:
    """One precise claim of a theorem.

    Attributes:
        id: stable id, e.g. ``"T1.c1"`` (theorem 1, part c, first claim).
        part: the paper's wording it makes precise.
        statement: the precise statement (constants and ranges explicit).
        test: the pytest node that property-tests it.
        check: evaluates the claim; returns ``(holds, evidence)``.
        mutation: the broken library under which ``check`` must fail.
        quick_check: the same check on a smaller grid or sample (for the test suite, which
            runs every claim with and without its mutation); None: ``check`` itself.
        kinds: what each number of the evidence promises, ``{pattern: kind or spec}`` over
            the evidence (:mod:`lshsim.studies.kinds`; ``""`` the whole evidence, ``*`` any
            key), declared with the claim: :data:`EXACT`, :data:`EXACT_RESIDUALS`,
            :data:`MONTE_CARLO`, :data:`SEEDED_THEORY`, or a spec with its own tolerance.
    """

    id: str
    part: str
    statement: str
    test: str
    check: CheckFn = field(repr=False)
    mutation: Mutation | None = field(default=None, repr=False)
    quick_check: CheckFn | None = field(default=None, repr=False)
    kinds: dict | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Verdict:
    """The result of evaluating a :class:`Claim` (and, with ``mutate``, its mutation).

    ``fails_under_mutation`` is None when the mutation was not run, False when the claim has no
    mutation or its check still held under it, True when the check reported ``holds = False``
    or raised (the error is then in ``mutation_evidence["error"]``).
    """

    id: str
    statement: str
    holds: bool
    evidence: dict
    seconds: float
    test: str
    mutation: str | None = None
    fails_under_mutation: bool | None = None
    mutation_evidence: dict | None = None
    mutation_seconds: float | None = None
    kinds: dict | None = None

    def to_dict(self) -> dict:
        """JSON-ready dict (the mutation keys only when the mutation was run)."""
        out = {
            "id": self.id,
            "statement": self.statement,
            "holds": self.holds,
            "evidence": self.evidence,
            "seconds": round(self.seconds, 3),
            "test": self.test,
        }
        if self.kinds is not None:
            out["kinds"] = self.kinds
        if self.fails_under_mutation is not None:
            out["mutation"] = self.mutation
            out["fails_under_mutation"] = self.fails_under_mutation
            out["mutation_evidence"] = self.mutation_evidence
            out["mutation_seconds"] = round(self.mutation_seconds or 0.0, 3)
        return out


def _bindings(original: object) -> list[tuple[object, str]]:
    """Every ``(module, name)`` of the loaded ``lshsim`` modules bound to ``original``."""
    found = []
    for mod_name, module in list(sys.modules.items()):
        if module is None or not (mod_name == "lshsim" or mod_name.startswith("lshsim.")):
            continue
        for name, value in list(vars(module).items()):
            if value is original:
                found.append((module, name))
    return found


def replacing(
    target: str, broken: Callable[[Callable], Callable]
) -> Callable[[], contextlib.AbstractContextManager]:
    """A :attr:`Mutation.apply`: the function at ``target`` replaced by ``broken(original)``.

    The replacement is bound in place of the original in every loaded module of the package
    that binds it (its home module and every ``from ... import`` of it), so callers that look
    it up at call time, through any of those names, get the broken version. Leaving the
    context restores every binding.

    Args:
        target: dotted path of the function, e.g. ``"lshsim.laws.closed_forms.jaccard"``.
        broken: maps the original function to its broken replacement.

    Returns:
        A callable returning the context manager.
    """
    module_name, _, attr = target.rpartition(".")

    @contextlib.contextmanager
    def apply() -> Iterator[None]:
        original = getattr(importlib.import_module(module_name), attr)
        replacement = broken(original)
        bound = _bindings(original)
        for module, name in bound:
            setattr(module, name, replacement)
        try:
            yield
        finally:
            for module, name in bound:
                setattr(module, name, original)

    return apply
