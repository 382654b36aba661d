"""lshsim.bench.report's records: the command that reruns an experiment, its saved JSON."""

from __future__ import annotations

import json
import shlex

import numpy as np

from lshsim.bench.report import command_line, write_record

DOC = {"command": "python experiments/x.py", "rows": [{"a": 1, "b": 0.25}], "name": "é"}


def test_write_record_writes_the_doc_with_a_trailing_newline(tmp_path, capsys):
    out = tmp_path / "sub" / "record.json"
    write_record(DOC, out)
    text = out.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert json.loads(text) == DOC
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"wrote {out}\n"
    assert [p.name for p in out.parent.iterdir()] == ["record.json"]  # no temporary file left


def test_write_record_prints_without_a_file(capsys):
    write_record(DOC, None)
    captured = capsys.readouterr()
    assert captured.out.endswith("}\n")
    assert json.loads(captured.out) == DOC
    assert captured.err == ""


def test_write_record_writes_numpy_floats_as_numbers(tmp_path):
    out = tmp_path / "record.json"
    write_record({"x": np.float64(0.1), "y": [np.float32(2.0)]}, out)
    assert json.loads(out.read_text()) == {"x": 0.1, "y": [2.0]}


def test_command_line_round_trips_a_path_with_a_space():
    argv = ["--out", "my figures/rotation gap.json", "--seed", "3"]
    command = command_line("experiments/rotation_gap.py", argv, prefix="OPENBLAS_NUM_THREADS=1 ")
    words = shlex.split(command)
    assert words[:3] == ["OPENBLAS_NUM_THREADS=1", "python", "experiments/rotation_gap.py"]
    assert words[3:] == argv


def test_command_line_has_no_trailing_space_and_reads_sys_argv(monkeypatch):
    assert command_line("experiments/x.py", []) == "python experiments/x.py"
    monkeypatch.setattr("sys.argv", ["experiments/x.py", "--out", "figures/x.json"])
    assert command_line("experiments/x.py") == "python experiments/x.py --out figures/x.json"
