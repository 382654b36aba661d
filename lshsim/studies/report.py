"""``REPORT.md`` of ``lshsim reproduce``: the claims table, the studies' sections, the figures."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping, Sequence
from typing import Any

from lshsim import __version__
from lshsim.studies.base import Study


def _claims_table(verdicts: Sequence[Any]) -> list[str]:
    """One row per claim of Theorem 1: id, verdict, statement, evidence (cut at 300 chars)."""
    lines = [
        "## Claims of Theorem 1",
        "",
        "Statements and proofs: `proofs/theorem1.md`; each claim's property test is named.",
        "",
        "| id | verdict | statement | evidence |",
        "| --- | --- | --- | --- |",
    ]
    for v in verdicts:
        ev = json.dumps(v.evidence, default=float)
        ev = ev if len(ev) <= 300 else ev[:297] + "..."
        stmt = v.statement.replace("|", "\\|")
        lines.append(
            f"| {v.id} | {'holds' if v.holds else 'FAILS'} | {stmt} | `{ev.replace('|', '/')}` |"
        )
    return lines


def _run_lines(run_info: Mapping[str, Any]) -> list[str]:
    """The versions a run used and how to check its files, from its manifest header."""
    versions = ", ".join(f"{k} {v}" for k, v in run_info.get("versions", {}).items())
    tree = run_info.get("tree") or {}
    dirty = []
    if tree.get("dirty"):
        files = ", ".join(f"`{f}`" for f in tree.get("modified", [])[:10])
        dirty = [
            f"**Run from a dirty tree**: the checkout at commit {tree['commit']} had "
            f"uncommitted changes ({files}), so these numbers are not those of any commit.",
            "",
        ]
    return [
        *dirty,
        f"Versions: {versions}.",
        "",
        "Files: `manifest.json` lists every file of this run with its SHA-256, written last; "
        "`lshsim reproduce --verify DIR` says whether the folder still holds exactly this run "
        "(no manifest, or one marked incomplete, means the run did not finish).",
        "",
    ]


def report(
    verdicts: Sequence[Any],
    figures: Sequence[str],
    profile: str,
    seed: int,
    seconds: float,
    data: Mapping[str, dict],
    studies: Mapping[str, Study],
    run_info: Mapping[str, Any] | None = None,
) -> str:
    """The text of ``REPORT.md``.

    Args:
        verdicts: the claims' verdicts (:func:`lshsim.theorems.claims.check`).
        figures: names of the studies whose figures were drawn, in order.
        profile: the run profile (``default`` or ``quick``).
        seed: the run's seed.
        seconds: the run's wall time.
        data: each study's data, by name.
        studies: the registry; a study's ``section`` (if any) adds a section from its data,
            and its ``caption`` goes under its figure.
        run_info: the run's manifest header (:func:`lshsim.studies.manifest.header`): its
            seed and profile head the report, with the versions the run used and a pointer
            to ``manifest.json`` (None: ``seed`` and ``profile`` alone).

    Returns:
        The Markdown text.
    """
    if run_info is not None:
        profile, seed = run_info["profile"], run_info["seed"]
    lines = [
        "# lshsim reproduce: report",
        "",
        f"Run: `lshsim reproduce{' --quick' if profile == 'quick' else ''} --seed {seed}` "
        f"(lshsim {__version__}), {sum(v.holds for v in verdicts)}/{len(verdicts)} claims hold"
        f"{' (quick checks)' if profile == 'quick' else ''}.",
        "",
    ]
    if run_info is not None:
        lines += _run_lines(run_info)
    lines += _claims_table(verdicts)
    for name, study in studies.items():
        if study.section is not None and data.get(name):
            lines += study.section(data[name])
    lines += ["", "## Figures", ""]
    for name in figures:
        lines += [f"### {name}", "", studies[name].caption, "", f"![{name}]({name}.png)", ""]
    lines += [f"Wall time: {seconds:.0f} s on {platform.machine()} ({os.cpu_count()} cores).", ""]
    return "\n".join(lines)
