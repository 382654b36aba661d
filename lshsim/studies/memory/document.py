"""The memory studies' results document: reading, merging and writing it atomically.

The document (``--results``, by default ``figures/memory_studies.json``) holds ``runs`` (one row
per run key, with the held-out evaluation ``heldout`` and train's ``final_eval``), ``studies``
(per variant and study: the setup and each variant's run keys) and ``summary``
(:func:`lshsim.studies.memory.report.summarize`, rewritten on every save). Study names are
ordered by an ``order`` argument (the registry's order) where it matters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lshsim._io import json_field, json_type, read_json, write_atomic
from lshsim.studies.memory.report import METRICS, summarize

#: The layouts of a study's figure (:func:`lshsim.studies.memory.report.make_figure`).
LAYOUTS = ("groups", "sweep")

#: Version tag of the JSON layout.
FORMAT = "lshsim-memory-studies-1"


def finite(x: Any) -> Any:
    """``x`` with NaN and infinities replaced by None (strict JSON)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def load_doc(path: Path) -> dict[str, Any]:
    """The results JSON at ``path``, or an empty document.

    Raises:
        ValueError: one line naming the file (and the field): unreadable, not JSON, not a
            memory-studies file, or a field the summaries read is missing or of another type
            (:func:`check_doc`).
    """
    if path.is_file():
        return check_doc(read_json(path, where=f"json: {path}"), f"json: {path}")
    return {"format": FORMAT, "runs": {}, "studies": {}}


def check_doc(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """``doc``, once every field the summaries and figures read is there with its type.

    Args:
        doc: a parsed results document.
        where: what messages name first (the file).

    Returns:
        ``doc``.

    Raises:
        ValueError: ``WHERE: runs['k']: field 'seed' must be an integer, got a string``.
    """
    if doc.get("format") != FORMAT:
        raise ValueError(f"{where} is not a memory-studies file (format {FORMAT})")
    for key, row in json_field(doc, "runs", "object", where).items():
        check_row(row, f"{where}: runs[{key!r:.40}]")
    for variant, entries in json_field(doc, "studies", "object", where).items():
        here = f"{where}: studies[{variant!r:.40}]"
        if not isinstance(entries, dict):
            raise ValueError(f"{here} is {json_type(entries)}, not an object")
        for name, entry in entries.items():
            _check_entry(entry, f"{here}[{name!r:.40}]")
    return doc


def check_row(row: Any, where: str) -> None:
    """Refuse a run's row that :func:`~lshsim.studies.memory.report.summarize` cannot read.

    Raises:
        ValueError: one line naming ``where`` and the field.
    """
    if not isinstance(row, dict):
        raise ValueError(f"{where} is {json_type(row)}, not an object")
    json_field(row, "seed", "integer", where)
    name = "heldout" if row.get("heldout") else "final_eval"
    ev = json_field(row, name, "object", where)
    for metric in METRICS:
        json_field(ev, metric, "number", f"{where}: {name}", optional=True)
    json_field(row, "examples_per_second", "number", where, optional=True)
    json_field(row, "budget_units", "number", where, optional=True)
    json_field(json_field(row, "extra_params", "object", where), "total", "number", where)


def _check_entry(entry: Any, where: str) -> None:
    """Refuse a study's entry (its title, layout and variants) the summaries cannot read."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is {json_type(entry)}, not an object")
    for name in ("title", "paper", "layout"):
        json_field(entry, name, "string", where)
    if entry["layout"] not in LAYOUTS:
        raise ValueError(f"{where}: layout {entry['layout']!r:.40} is not one of {LAYOUTS}")
    for i, v in enumerate(json_field(entry, "variants", "list", where)):
        here = f"{where}: variants[{i}]"
        if not isinstance(v, dict):
            raise ValueError(f"{here} is {json_type(v)}, not an object")
        for name in ("label", "series"):
            json_field(v, name, "string", here)
        changes = json_field(v, "changes", "object", here)
        if not all(isinstance(k, str) for k in json_field(v, "keys", "list", here)):
            raise ValueError(f"{here}: field 'keys' must be a list of run keys (strings)")
        if entry["layout"] == "sweep" and changes:
            for name in ("expert_rank", "buckets"):
                json_field(changes, name, "integer", f"{here}: changes")


def save_doc(path: Path, doc: dict[str, Any], order: Sequence[str] = ()) -> None:
    """Merge ``doc`` into the file at ``path`` (runs others finished are kept) and write it.

    ``summary`` is recomputed (:func:`summarize`, studies in ``order``).

    Raises:
        ValueError: the file on disk, or a row of ``doc``, is damaged (:func:`check_doc`).
    """
    if path.is_file():
        disk = load_doc(path)
        doc["runs"] = {**disk["runs"], **doc["runs"]}
        for variant, studies in disk["studies"].items():
            doc["studies"].setdefault(variant, {})
            for name, entry in studies.items():
                doc["studies"][variant].setdefault(name, entry)
    check_doc(doc, f"json: {path} (with the new rows)")
    doc["summary"] = {v: summarize(doc, v, order) for v in doc["studies"]}
    write_atomic(path, json.dumps(finite(doc), indent=1, sort_keys=True) + "\n")
