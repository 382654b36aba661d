"""``lshsim compare A B``: the table, ``--json``, exit 0 / 1 / 2, and the committed figures.

The synthetic pairs come from ``tests/studies/test_compare.py``; the committed
``figures/results.json`` reproduces itself and fails on a copy with one exact value perturbed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from lshsim.cli.main import main
from tests.studies.test_compare import _doc, _move_mc, _pair, _write

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "figures" / "results.json"


def test_cli_table_json_and_exit_status(tmp_path, capsys):
    a, b = _pair(tmp_path, _move_mc)
    assert main(["compare", a, a]) == 0
    out = capsys.readouterr().out
    assert "every promise holds" in out and "Monte-Carlo stack the same" in out
    assert main(["compare", a, b]) == 1
    out = capsys.readouterr().out
    assert "studies/s/mc/estimate/0: 0.3 -> 0.3003  [BROKEN]" in out
    assert "1 of 6 quantities break their promise" in out
    assert main(["compare", a, b, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["holds"] is False
    rows = {q["pattern"]: q for q in doc["quantities"]}
    assert rows["studies/s/mc"]["broken"] and rows["studies/s/mc"]["kind"] == "monte_carlo"


@pytest.mark.parametrize(
    ("make", "match"),
    [
        ("missing", "no such file"),
        ("folder", "is a folder: give the results.json in it"),
        ("garbage", "not valid JSON, truncated or damaged"),
        ("other", "not a results.json"),
        ("profile", "A is a 'quick' run and B a 'default' run"),
        ("seed", "A has seed 0 and B seed 4"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, make, match):
    a = _write(tmp_path, "a", _doc())
    b = tmp_path / "b.json"
    if make == "folder":
        b.mkdir()
    elif make == "garbage":
        b.write_text("{not json")
    elif make == "other":
        b.write_text(json.dumps({"claims": []}))
    elif make in ("profile", "seed"):
        doc = _doc()
        doc["config"]["name"] = "default" if make == "profile" else "quick"
        doc["seed"] = 4 if make == "seed" else 0
        b.write_text(json.dumps(doc))
    assert main(["compare", a, str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lshsim: error: ") and match in err and err.count("\n") == 1


def test_committed_figures_reproduce_themselves_and_not_a_perturbed_copy(tmp_path, capsys):
    """The committed results.json against itself holds; one exact theory value moved by 1e-6
    relative breaks the exact promise (exit 1) and is named."""
    assert main(["compare", str(COMMITTED), str(COMMITTED)]) == 0
    assert "every promise holds" in capsys.readouterr().out
    doc = json.loads(COMMITTED.read_text())
    moved = copy.deepcopy(doc)
    p = moved["studies"]["collision_vs_n"]["panels"]["voronoi"]["exact"]["0.5"]["p"]
    p[9] *= 1 + 1e-6
    path = _write(tmp_path, "moved", moved)
    assert main(["compare", str(COMMITTED), path]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("studies/collision_vs_n "))
    assert line.split()[1] == "exact" and line.endswith("BROKEN")
    assert "studies/collision_vs_n/panels/voronoi/exact/0.5/p/9:" in out


def test_both_files_are_checked_before_the_work_starts(tmp_path, capsys):
    """Inside checks_only compare stops at start_work once both files are read and checked;
    a file that is not a results.json is refused before it (one line, exit 2)."""
    from lshsim.cli.work import ChecksPassed, checks_only

    a = _write(tmp_path, "a", _doc())
    with checks_only():
        with pytest.raises(ChecksPassed):
            main(["compare", a, a])
        assert main(["compare", a, str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
