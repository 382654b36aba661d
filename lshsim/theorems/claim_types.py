"""Records of the executable claims: claim, mutation and verdict.

A claim, the mutation that must break its check, and the verdict of evaluating it.

A claim's ``check`` calls the library and returns ``(holds, evidence)``, with every number in
``evidence`` computed by the check (never written as a literal). Its :class:`Mutation` is a
named, deliberately broken version of what the check exercises (for example the exact
probability scaled by 1.01): while the mutation's context manager is active the library
misbehaves in that one way, and a check that can fail must then report ``holds = False``
(``lshsim check --mutate``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field


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
    """

    id: str
    part: str
    statement: str
    test: str
    check: Callable[[], tuple[bool, dict]] = field(repr=False)
    mutation: Mutation | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Verdict:
    """The result of evaluating a :class:`Claim` (and, with ``mutate``, its mutation)."""

    id: str
    statement: str
    holds: bool
    evidence: dict
    seconds: float
    test: str
    mutation: str | None = None
    fails_under_mutation: bool | None = None

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
        if self.fails_under_mutation is not None:
            out["mutation"] = self.mutation
            out["fails_under_mutation"] = self.fails_under_mutation
        return out
