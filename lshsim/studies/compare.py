"""Compare two ``results.json`` of ``lshsim reproduce``: does each number keep its promise?

Every number has a kind (:mod:`lshsim.studies.kinds`), and each kind its promise:

* ``exact``: A and B agree to 1e-9 relative (strings, booleans and ``null`` exactly), or to
  the tolerance the number's rule declares for its conditioning
  (:func:`lshsim.studies.kinds.spec`: a finite-difference coefficient, a residual);
* ``monte_carlo``: identical when both runs used the same versions of the numerical stack
  (:data:`~lshsim.studies.kinds.MC_STACK`, from each file's ``versions`` or, for older files,
  the ``manifest.json`` beside it), or within the declared tolerance of a Monte-Carlo number
  computed with a quadrature value (a z-score against the exact law). When those versions
  differ or are unknown, the promise does not cover the pair: a difference is reported
  (``versions differ``), never broken;
* ``platform``: any difference is reported with its size, never broken.

A number present in one file only breaks the promise of its kind (the runs computed
different things). The rules come from A's recorded ``kinds``, else B's, else this lshsim's
registry (files written before the kinds were recorded); claims whose kinds a file does not
record (files written before issue 32) take them from this lshsim's claim registry, by id.
Numbers no rule covers are held to the ``exact`` promise. :func:`compare` returns a
:class:`Comparison` (a row per rule, a :class:`Quantity`); :func:`table` formats it for people.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lshsim._io import json_field, json_type, read_json
from lshsim.studies.kinds import (
    MC_STACK,
    METADATA,
    TOP,
    compile_rules,
    kind_of,
    rules,
    spec,
    tolerance,
)

__all__ = ["EXAMPLES", "Comparison", "Quantity", "compare", "load", "table"]

#: Differing numbers listed per quantity (the counts cover all of them).
EXAMPLES = 20
#: The label of numbers no rule covers (held to the exact promise).
UNCLASSIFIED = "(unclassified)"
#: The most digits of an integer in a results file (a float64 holds up to about 1.8e308).
MAX_DIGITS = 308


@dataclass
class Quantity:
    """One rule's numbers compared: how many, how many differ, by how much, the verdict.

    Attributes:
        pattern: the rule (a path pattern into ``results.json``).
        kind: ``exact``, ``monte_carlo`` or ``platform``.
        numbers: values compared (present in both files).
        differ: values that are not identical.
        beyond: values that differ by more than the rule's tolerance.
        missing: values present in one file only.
        max_abs: the largest absolute difference of the numeric values.
        max_rel: the largest relative difference ``|a - b| / max(|a|, |b|)``.
        verdict: ``holds``, ``holds (within tolerance)``, ``BROKEN``, ``versions differ`` or
            ``differs (platform)``.
        rtol: the rule's relative tolerance.
        atol: the rule's absolute tolerance.
        broken: whether the kind's promise is broken.
        differences: up to :data:`EXAMPLES` ``{"path", "a", "b"}``.
    """

    pattern: str
    kind: str
    numbers: int = 0
    differ: int = 0
    beyond: int = 0
    missing: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    verdict: str = "holds"
    broken: bool = False
    differences: list[dict[str, Any]] = field(default_factory=list)
    rtol: float = 0.0
    atol: float = 0.0


@dataclass
class Comparison:
    """The comparison of two runs: what they are, how their versions differ, each quantity.

    ``idle_rules``: recorded kinds patterns that match no number of either file (reported:
    the numbers they were written for are held to a broader rule's promise instead).
    """

    a: str
    b: str
    profile: str
    seed: int
    versions_a: dict[str, str]
    versions_b: dict[str, str]
    stack_differences: list[str]
    kinds_from: str
    quantities: list[Quantity]
    idle_rules: list[str] = field(default_factory=list)

    @property
    def broken(self) -> list[Quantity]:
        """The quantities whose promise is broken."""
        return [q for q in self.quantities if q.broken]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``holds``: no promise broken)."""
        out = asdict(self)
        out["holds"] = not self.broken
        return out


def load(path: str | Path, name: str = "") -> tuple[dict, dict[str, str]]:
    """Read a ``results.json`` and the versions it was made with.

    Args:
        path: the file.
        name: how messages name it (``A`` gives ``A (PATH): ...``; default: the path).

    Returns:
        ``(results, versions)``; versions from the file, else from ``manifest.json`` beside
        it (when that one is readable), else empty.

    Raises:
        ValueError: one line naming the file: it is missing, unreadable, not JSON (truncated,
            nested too deeply, a repeated key, an integer no float holds), or not a
            ``results.json`` (no ``studies``, ``config`` with its ``name``, integer ``seed``,
            or recorded ``kinds`` that are not kinds).
    """
    path = Path(path)
    where = f"{name} ({path})" if name else str(path)
    if path.is_dir():
        raise ValueError(f"{where} is a folder: give the results.json in it")
    if not path.is_file():
        raise ValueError(f"{where}: no such file")
    doc = read_json(path, where=where, max_digits=MAX_DIGITS)
    if (
        not isinstance(doc.get("studies"), dict)
        or not isinstance(doc.get("config"), dict)
        or "name" not in doc["config"]
        or "seed" not in doc
    ):
        raise ValueError(
            f"{where}: not a results.json of lshsim reproduce (no studies, config, seed)"
        )
    json_field(doc["config"], "name", "string", f"{where}: config")
    json_field(doc, "seed", "integer", where)
    _check_kinds(doc.get("kinds"), where)
    versions = doc.get("versions")
    if not isinstance(versions, dict):
        try:  # a damaged manifest beside it: the versions are unknown
            found = read_json(path.parent / "manifest.json").get("versions")
        except ValueError:
            found = None
        versions = found if isinstance(found, dict) else {}
    return doc, {str(k): str(v) for k, v in versions.items()}


def _check_kinds(kinds: Any, where: str) -> None:
    """Refuse recorded kinds that are not ``{pattern: kind or {"kind", "rtol", "atol"}}``."""
    if not isinstance(kinds, dict):
        return  # none recorded: this lshsim's registry applies
    try:
        for pattern, value in kinds.items():
            if not isinstance(value, str) and not (
                isinstance(value, dict) and isinstance(value.get("kind"), str)
            ):
                raise ValueError(f"kinds: {pattern!r:.80} has {json_type(value)}, not a kind")
            spec(value)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _leaves(obj: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(path, value)`` of every scalar (and empty container) under ``obj``."""
    if isinstance(obj, dict) and obj:
        for key, value in obj.items():
            yield from _leaves(value, (*path, str(key)))
    elif isinstance(obj, list) and obj:
        for i, value in enumerate(obj):
            yield from _leaves(value, (*path, str(i)))
    else:
        yield path, obj


def _numbers(doc: dict) -> dict[tuple[str, ...], Any]:
    """Every value of a results dict by path, the metadata (:data:`METADATA`) left out.

    Each claim's ``kinds`` (the promises of its evidence, like the file's own ``kinds``) is
    metadata too: a changed promise is not a changed number.
    """
    body = {k: v for k, v in doc.items() if k not in METADATA}
    if isinstance(body.get("claims"), list):
        body["claims"] = [
            {k: v for k, v in c.items() if k != "kinds"} if isinstance(c, dict) else c
            for c in body["claims"]
        ]
    return dict(_leaves(body))


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _difference(a: Any, b: Any) -> tuple[bool, float, float]:
    """``(identical, |a - b|, relative)``; non-numbers differ by ``inf`` when unequal."""
    if _is_number(a) and _is_number(b):
        if a == b or (math.isnan(a) and math.isnan(b)):
            return True, 0.0, 0.0
        if math.isnan(a) or math.isnan(b):  # a NaN against a number: as far apart as can be
            return False, math.inf, math.inf
        diff = abs(a - b)
        scale = max(abs(a), abs(b))
        return False, diff, (diff / scale if scale > 0 and math.isfinite(diff) else math.inf)
    same = type(a) is type(b) and a == b
    return same, (0.0 if same else math.inf), (0.0 if same else math.inf)


def _stack_differences(va: dict[str, str], vb: dict[str, str]) -> list[str]:
    """How the Monte-Carlo stack's versions differ (``"numpy 2.4.6 vs 2.5.0"``)."""
    out = []
    for key in MC_STACK:
        x, y = va.get(key), vb.get(key)
        if x is None and y is None:
            out.append(f"{key} not recorded")
        elif x != y:
            out.append(f"{key} {x or 'not recorded'} vs {y or 'not recorded'}")
    return out


def _rules(doc_a: dict, doc_b: dict) -> tuple[dict[str, Any], str]:
    found, source = None, ""
    for name, doc in (("A", doc_a), ("B", doc_b)):
        if isinstance(doc.get("kinds"), dict) and doc["kinds"]:
            found, source = dict(doc["kinds"]), f"recorded in {name}"
            break
    if found is None:
        from lshsim.studies import STUDIES

        found = rules(STUDIES.values())
        source = "this lshsim's registry (neither file records kinds)"
    if not any(p.startswith("claims/") for p in found):
        claims = _registry_claim_kinds(doc_a.get("claims"))
        if any(c["kinds"] for c in claims):
            found.update(rules((), claims))
            source += "; claims' kinds from this lshsim's claim registry"
    return found, source


def _registry_claim_kinds(claims: Any) -> list[dict]:
    """``[{"kinds": ...}]`` for the claims of a file that records none, from the registry."""
    if not isinstance(claims, list):
        return []
    from lshsim.theorems.claims import CLAIMS

    out = []
    for c in claims:
        known = isinstance(c, dict) and isinstance(c.get("id"), str)
        claim = CLAIMS.get(c["id"]) if known else None
        out.append({"kinds": dict(claim.kinds or {}) if claim is not None else {}})
    return out


def _verdict(q: Quantity, stack_same: bool) -> None:
    """Set ``q.verdict`` and ``q.broken`` from its counts, kind and tolerance."""
    within = " (within tolerance)" if q.differ else ""
    if q.missing:
        q.verdict, q.broken = "BROKEN", True
    elif q.kind == "exact":
        q.broken = q.beyond > 0
        q.verdict = "BROKEN" if q.broken else "holds" + within
    elif q.kind == "monte_carlo":
        q.broken = stack_same and q.beyond > 0
        if q.broken:
            q.verdict = "BROKEN"
        elif not q.differ:
            q.verdict = "holds"
        else:
            q.verdict = "holds" + within if stack_same else "versions differ"
    else:
        q.verdict = "holds" if not q.differ else "differs (platform)"


def _idle_rules(found: dict[str, Any], rows: dict[str, Quantity]) -> list[str]:
    """The kinds patterns (beyond :data:`TOP`) that no number of either file matched.

    Such a rule promises nothing (a typo, or evidence renamed after its kinds were written),
    and the numbers it was meant for fall back to a broader rule's kind.
    """
    return [p for p in found if p not in TOP and p not in rows]


@dataclass
class Pair:
    """Two ``results.json`` read and checked against each other, ready to compare.

    Attributes:
        a: the reference file.
        b: the file checked against it.
        doc_a: A's results.
        doc_b: B's results.
        versions_a: what A was made with (:func:`load`).
        versions_b: what B was made with.
        rules: the kind rules that apply (``{pattern: kind or spec}``).
        source: where the rules come from (for people).
    """

    a: str
    b: str
    doc_a: dict
    doc_b: dict
    versions_a: dict[str, str]
    versions_b: dict[str, str]
    rules: dict[str, Any]
    source: str


def check(path_a: str | Path, path_b: str | Path) -> Pair:
    """Read two runs and check that they can be compared (the checks of :func:`compare`).

    Args:
        path_a: the reference ``results.json``.
        path_b: the ``results.json`` to check against it.

    Returns:
        The :class:`Pair`.

    Raises:
        ValueError: one line: a file is not a ``results.json`` (:func:`load`, naming it), or
            the two runs are of different profiles or seeds (naming both).
    """
    (doc_a, va), (doc_b, vb) = load(path_a, "A"), load(path_b, "B")
    both = f"(A {path_a}, B {path_b})"
    pa, pb = doc_a["config"]["name"], doc_b["config"]["name"]
    if pa != pb:
        raise ValueError(
            f"A is a {pa!r:.60} run and B a {pb!r:.60} run: compare two runs of one profile {both}"
        )
    if doc_a["seed"] != doc_b["seed"]:
        raise ValueError(
            f"A has seed {doc_a['seed']} and B seed {doc_b['seed']}: compare one seed {both}"
        )
    found, source = _rules(doc_a, doc_b)
    return Pair(str(path_a), str(path_b), doc_a, doc_b, va, vb, found, source)


def compare(path_a: str | Path, path_b: str | Path, pair: Pair | None = None) -> Comparison:
    """Compare every number of two runs by the promise of its kind.

    Args:
        path_a: the reference ``results.json`` (e.g. the committed ``figures/results.json``).
        path_b: the ``results.json`` to check against it.
        pair: what :func:`check` returned for these paths (default: check them now).

    Returns:
        The :class:`Comparison`, one :class:`Quantity` per rule that covers a number.

    Raises:
        ValueError: If a file is not a ``results.json``, or the two runs are of different
            profiles or seeds (nothing to compare).
    """
    pair = check(path_a, path_b) if pair is None else pair
    stack = _stack_differences(pair.versions_a, pair.versions_b)
    rows = _quantities(_numbers(pair.doc_a), _numbers(pair.doc_b), pair.rules)
    for q in rows.values():
        _verdict(q, stack_same=not stack)
    return Comparison(
        a=str(path_a),
        b=str(path_b),
        profile=pair.doc_a["config"]["name"],
        seed=pair.doc_a["seed"],
        versions_a=pair.versions_a,
        versions_b=pair.versions_b,
        stack_differences=stack,
        kinds_from=pair.source,
        quantities=list(rows.values()),
        idle_rules=_idle_rules(pair.rules, rows) if pair.source.startswith("recorded") else [],
    )


def _quantities(
    na: dict[tuple[str, ...], Any], nb: dict[tuple[str, ...], Any], found: dict[str, Any]
) -> dict[str, Quantity]:
    """A :class:`Quantity` per rule of ``found`` covering a number of A or B, counts filled."""
    compiled = compile_rules(found)
    tolerances = tolerance(found)
    rows: dict[str, Quantity] = {}
    for path in [*na, *(p for p in nb if p not in na)]:
        match = kind_of(path, compiled)
        pattern, kind = match if match else (UNCLASSIFIED, "exact")
        rtol, atol = tolerances.get(pattern, tolerance({"": kind})[""])
        q = rows.setdefault(pattern, Quantity(pattern, kind, rtol=rtol, atol=atol))
        where = "/".join(path)
        if path not in na or path not in nb:
            q.missing += 1
            side = "B" if path in na else "A"
            if len(q.differences) < EXAMPLES:
                q.differences.append({"path": where, "a": na.get(path), "b": nb.get(path),
                                      "note": f"missing in {side}"})  # fmt: skip
            continue
        q.numbers += 1
        same, diff, rel = _difference(na[path], nb[path])
        if not same:
            q.differ += 1
            scale = max(abs(na[path]), abs(nb[path])) if math.isfinite(diff) else 0.0
            q.beyond += not diff <= q.atol + q.rtol * scale
            q.max_abs, q.max_rel = max(q.max_abs, diff), max(q.max_rel, rel)
            if len(q.differences) < EXAMPLES:
                q.differences.append({"path": where, "a": na[path], "b": nb[path]})
    return rows


def _num(x: float) -> str:
    return "0" if x == 0 else "inf" if math.isinf(x) else f"{x:.3g}"


def table(c: Comparison) -> list[str]:
    """The lines ``lshsim compare`` prints: the runs, the versions, a row per quantity."""
    lines = [
        f"A {c.a}",
        f"B {c.b}",
        f"profile {c.profile}, seed {c.seed}; kinds {c.kinds_from}",
    ]
    if c.stack_differences:
        lines.append(
            "Monte-Carlo stack differs (" + "; ".join(c.stack_differences) + "): its numbers "
            "are not promised equal, differences are reported"
        )
    else:
        same = ", ".join(f"{k} {c.versions_a[k]}" for k in MC_STACK)
        lines.append(f"Monte-Carlo stack the same ({same}): its numbers must be identical")
    for key in ("platform", "cpu", "lock", "lshsim_git"):
        x, y = (v.get(key, "not recorded") for v in (c.versions_a, c.versions_b))
        lines.append(f"{key}: {x}" + ("" if x == y else f" vs {y}"))
    width = max(len("quantity"), *(len(q.pattern) for q in c.quantities))
    head = f"{'quantity':<{width}}  {'kind':<11}  {'numbers':>7}  {'differ':>6}  "
    lines += ["", head + f"{'max abs':>8}  {'max rel':>8}  verdict"]
    for q in c.quantities:
        differ = q.differ + q.missing
        lines.append(
            f"{q.pattern:<{width}}  {q.kind:<11}  {q.numbers:>7}  {differ:>6}  "
            f"{_num(q.max_abs):>8}  {_num(q.max_rel):>8}  {q.verdict}"
        )
    if c.idle_rules:
        lines += [
            "",
            f"{len(c.idle_rules)} kinds patterns ({c.kinds_from}) match no number; "
            "their numbers fall under a broader rule:",
        ]
        lines += [f"  {p}" for p in c.idle_rules]
    shown = [q for q in c.quantities if q.differences]
    if shown:
        lines += ["", "Differences (A -> B; up to 3 per quantity, all with --json):"]
    for q in shown:
        for d in q.differences[:3]:
            note = f" ({d['note']})" if "note" in d else ""
            lines.append(f"  {d['path']}: {d['a']!r} -> {d['b']!r}{note}  [{q.verdict}]")
    broken = c.broken
    lines.append("")
    if broken:
        lines.append(f"{len(broken)} of {len(c.quantities)} quantities break their promise")
    else:
        lines.append(f"every promise holds ({len(c.quantities)} quantities)")
    return lines
