"""``lshsim tune``: text, JSON and figure; every bad option one line and exit 2."""

from __future__ import annotations

import json

import pytest

from lshsim.cli.main import main
from lshsim.theory.amplification import amplified

MINHASH = ["tune", "--family", "minhash"]


def test_threshold_form_text_has_the_datasketch_line(capsys):
    assert main([*MINHASH, "--threshold", "0.8", "--budget", "128"]) == 0
    out = capsys.readouterr().out
    assert "MinHashLSH(num_perm=128, params=(12, 10))" in out
    assert "120 functions; 8 of the budget's 128 unused" in out
    assert "Pareto front" in out


def test_sensitivity_form_json_and_figure(tmp_path, capsys):
    fig = tmp_path / "s.png"
    argv = [*MINHASH, "--near", "0.8", "--far", "0.4", "--recall", "0.95"]
    argv += ["--false-positive", "0.01", "--points", "1000", "--json", "--figure", str(fig)]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    best = data["best"]
    assert set(best) >= {"k", "L", "recall", "false_positive", "false_negative", "cost"}
    assert best["recall"] == pytest.approx(amplified(0.8, best["k"], best["L"]), rel=1e-12)
    assert best["recall"] >= 0.95 and best["false_positive"] <= 0.01
    assert data["front"] and all(r["cost"] >= 0 for r in data["front"])
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cosine_family_text(capsys):
    argv = ["tune", "--family", "crosspolytope", "--buckets", "8", "--threshold", "0.7"]
    assert main([*argv, "--budget", "16"]) == 0
    out = capsys.readouterr().out
    assert "family crosspolytope, n = 8, threshold form, similarity = cosine" in out
    assert "MinHashLSH" not in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--threshold", "0.5", "--probes", "2"], "--probes"),
        (["--threshold", "0.5", "--weights", "1"], "--weights"),
        (["--threshold", "0.5", "--figure", "x.gif"], "--figure"),
        (["--threshold", "0.5", "--figure", "/nonexistent/x.png"], "--figure"),
        (["--threshold", "0.5", "--points", "10"], "--points"),
        (["--threshold", "0.5", "--minimise", "tables"], "--minimise"),
        (["--threshold", "0.5", "--length", "10"], "--length"),
        (["--near", "0.9", "--weights", "1,2"], "--weights"),
        (["--near", "0.9"], "missing"),
        (["--threshold", "2"], "threshold"),
        (["--threshold", "0.5", "--buckets", "16"], "buckets"),
        (["--threshold", "0.5", "--similarities", "/nonexistent"], "similarities"),
        (["--threshold", "0.5", "--rotation", "hadamard"], "--rotation"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(extra, match, capsys):
    assert main([*MINHASH, *extra]) == 2
    captured = capsys.readouterr()
    assert match in captured.err and captured.err.count("\n") == 1 and not captured.out
