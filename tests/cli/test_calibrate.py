"""``lshsim calibrate --out``: checked before any row runs, and the work starts after the checks."""

from __future__ import annotations

import pytest

from lshsim.cli.main import main
from lshsim.cli.work import ChecksPassed, checks_only
from lshsim.estimation import calibrate as cal


@pytest.mark.parametrize("out", ["file", "file/below", ""])
def test_a_bad_out_is_refused_before_any_row(tmp_path, capsys, monkeypatch, out):
    """A file, a path under a file or an empty name: one line naming --out, before any row
    runs (the rows take minutes), and nothing written."""

    def no_rows(*args, **kwargs):
        raise AssertionError("calibrate ran its rows")

    monkeypatch.setattr(cal, "calibrate", no_rows)
    (tmp_path / "file").write_text("x")
    path = str(tmp_path / out) if out else ""
    assert main(["calibrate", "--quick", "--out", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lshsim: error: --out: ") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_checks_end_before_the_rows(tmp_path):
    """Inside checks_only the command stops at start_work, its --out not yet made."""
    with checks_only(), pytest.raises(ChecksPassed):
        main(["calibrate", "--quick", "--out", str(tmp_path / "new")])
    assert not (tmp_path / "new").exists()
