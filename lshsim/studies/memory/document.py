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

from lshsim._io import write_atomic
from lshsim.studies.memory.report import summarize

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
    """The results JSON at ``path``, or an empty document."""
    if path.is_file():
        doc = json.loads(path.read_text())
        if doc.get("format") != FORMAT:
            raise ValueError(f"json: {path} is not a memory-studies file (format {FORMAT})")
        return doc
    return {"format": FORMAT, "runs": {}, "studies": {}}


def save_doc(path: Path, doc: dict[str, Any], order: Sequence[str] = ()) -> None:
    """Merge ``doc`` into the file at ``path`` (runs others finished are kept) and write it.

    ``summary`` is recomputed (:func:`summarize`, studies in ``order``).
    """
    if path.is_file():
        disk = load_doc(path)
        doc["runs"] = {**disk.get("runs", {}), **doc["runs"]}
        for variant, studies in disk.get("studies", {}).items():
            doc["studies"].setdefault(variant, {})
            for name, entry in studies.items():
                doc["studies"][variant].setdefault(name, entry)
    doc["summary"] = {v: summarize(doc, v, order) for v in doc["studies"]}
    write_atomic(path, json.dumps(finite(doc), indent=1, sort_keys=True) + "\n")
