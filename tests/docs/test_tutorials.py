"""The tutorials' stored outputs are current: each notebook was executed from its source as it is.

``python docs/execute.py`` runs ``docs/tutorials/src/NAME.md`` and stores
``docs/tutorials/NAME.ipynb`` with the source's SHA-256; the docs build renders the stored
outputs without running anything, so a source edited after its run would show stale output.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.docs.examples import ROOT

TUTORIALS = ROOT / "docs" / "tutorials"
SOURCES = sorted((TUTORIALS / "src").glob("*.md"))


def test_there_are_tutorials():
    assert len(SOURCES) >= 2


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_stored_outputs_are_current(source):
    stored = TUTORIALS / (source.stem + ".ipynb")
    assert stored.exists(), f"{source.name} was never executed: run python docs/execute.py"
    nb = json.loads(stored.read_text(encoding="utf-8"))
    meta = nb["metadata"]["lshsim"]
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert meta["source_sha256"] == digest, (
        f"{source.name} changed after its outputs were stored: run "
        f"python docs/execute.py {source.stem}"
    )
    # a minute on 2 idle cores; on a shared machine at load L, 2/L of them (docs/execute.py)
    budget = 60 * max(1.0, meta["load_average"] / 2)
    assert meta["seconds"] <= budget, f"{source.name} ran {meta['seconds']} s, budget {budget} s"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert any(c.get("outputs") for c in code), "the stored notebook has outputs"
    errors = [o for c in code for o in c["outputs"] if o.get("output_type") == "error"]
    assert not errors, errors


def test_every_stored_notebook_has_a_source():
    stems = {p.stem for p in SOURCES}
    orphans = [p.name for p in TUTORIALS.glob("*.ipynb") if p.stem not in stems]
    assert not orphans, orphans
