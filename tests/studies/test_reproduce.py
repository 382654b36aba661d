"""`lshsim reproduce`: the quick run writes every artefact; same seed, same numbers."""

from __future__ import annotations

import json
import os

import pytest

from lshsim.cli.main import main
from lshsim.studies import reproduce
from lshsim.theorems.claims import CLAIMS
from tests import lshsim_optimised


@pytest.mark.slow
def test_quick_reproduce_writes_figures_report_and_results(tmp_path, capsys):
    """`reproduce --quick --out DIR` exits 0 and writes PNG+SVG per figure, one JSON per study
    (with config and seed), results.json (claims all holding) and REPORT.md (claims table and
    figure list); no temporary files are left behind. Last comes manifest.json, listing every
    file; --verify finds the folder complete. Under umask 022 every file is 0644."""
    old = os.umask(0o022)
    try:  # a subprocess, to train with XLA's optimised code (see lshsim_optimised)
        argv = ("reproduce", "--quick", "--out", str(tmp_path), "--seed", "3")
        rc, out, err = lshsim_optimised(*argv)
    finally:
        os.umask(old)
    assert rc == 0, err
    assert f"{len(CLAIMS)}/{len(CLAIMS)} claims hold" in out and len(CLAIMS) >= 16
    for name in reproduce.STUDIES:
        for ext in ("png", "svg", "json"):
            assert (tmp_path / f"{name}.{ext}").stat().st_size > 0
        saved = json.loads((tmp_path / f"{name}.json").read_text())
        assert saved["seed"] == 3 and saved["config"]["name"] == "quick"
    hf = json.loads((tmp_path / "routing_hf.json").read_text())["data"]
    for stage in ("before", "after"):  # the tiny Mixtral, probed through its gates' hooks
        assert [d["layer"] for d in hf[stage]["departures"]] == ["layers/0", "layers/1"]
    assert all(abs(r["z"]) < 5 for r in hf["before"]["rows"])  # a random gate: the law holds
    # a trained one departs (its sign after the quick 30 steps depends on the seed; after the
    # committed 300 steps it is positive in every layer for seeds 0, 3 and 4)
    assert any(d["low"] > 0 or d["high"] < 0 for d in hf["after"]["departures"])
    assert hf["loss_after"] < hf["loss_before"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["holds"] is True and results["seed"] == 3
    assert results["claims_check"] == "quick"  # --quick: each claim's quick check
    assert results["versions"]["numpy"] and results["kinds"]["studies/collision_vs_n"] == "exact"
    path = str(tmp_path / "results.json")
    assert main(["compare", path, path]) == 0  # a run reproduces itself, by its own kinds
    assert "kinds recorded in A" in capsys.readouterr().out
    assert [c["id"] for c in results["claims"]] == list(CLAIMS)
    report = (tmp_path / "REPORT.md").read_text()
    for cid in CLAIMS:
        assert f"| {cid} | holds |" in report
    for name in reproduce.STUDIES:
        assert f"![{name}]({name}.png)" in report
    assert not list(tmp_path.glob(".*tmp"))
    files = sorted(p.name for p in tmp_path.iterdir())
    assert {p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {0o644}
    doc = json.loads((tmp_path / "manifest.json").read_text())
    assert doc["complete"] and (doc["seed"], doc["profile"]) == (3, "quick")
    assert sorted([e["path"] for e in doc["files"]] + ["manifest.json"]) == files
    assert main(["reproduce", "--verify", str(tmp_path)]) == 0
    n = len(files) - 1
    assert capsys.readouterr().out == f"{tmp_path}: complete (seed 3, quick, {n} files)\n"


def test_same_seed_same_numbers():
    """Every quick study gives identical data for the same seed, and its Monte-Carlo parts
    change with the seed (so the seed is really used)."""
    cfg = reproduce.QUICK
    for name in ("collision_vs_n", "sentence_cosine", "tokenid_vs_minhash"):
        study = reproduce.STUDIES[name]
        first, again, other = study(cfg, 5), study(cfg, 5), study(cfg, 6)
        assert json.dumps(first) == json.dumps(again)
        assert json.dumps(first) != json.dumps(other)


def test_reproduce_bad_seed_is_one_line_exit_2(tmp_path, capsys):
    """A negative seed is refused with one line and exit 2, before anything is written."""
    rc = main(["reproduce", "--quick", "--out", str(tmp_path / "x"), "--seed", "-1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("lshsim: error: seed") and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "where, message",
    [
        ("f", "--out: {f} is an existing file, not a folder"),
        ("f/a/b", "--out: {f}/a/b lies under {f}, which is a file"),
        ("ro/out", "--out: {ro} is not writable"),
    ],
)
def test_reproduce_bad_out_is_one_line_exit_2_before_any_work(
    tmp_path, capsys, monkeypatch, where, message
):
    """--out an existing file, a path under a file or in a folder the OS denies: one line
    naming --out, exit 2, at once (no study runs) and nothing created."""

    def no_run(*args, **kwargs):
        raise AssertionError("reproduce.run was called")

    monkeypatch.setattr(reproduce, "run", no_run)
    (tmp_path / "f").write_text("")
    (tmp_path / "ro").mkdir()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: str(p) != str(tmp_path / "ro") and real_access(p, mode)
    )
    rc = main(["reproduce", "--quick", "--out", str(tmp_path / where)])
    cap = capsys.readouterr()
    expected = message.format(f=tmp_path / "f", ro=tmp_path / "ro")
    assert rc == 2 and cap.out == "" and cap.err == f"lshsim: error: {expected}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f", "ro"]
    assert not list((tmp_path / "ro").iterdir()) and (tmp_path / "f").read_text() == ""


def test_experiment_scripts_run_then_plot(tmp_path):
    """experiments/run_studies.py writes a study's JSON (config, seed, data);
    experiments/plot_studies.py draws its figure from that file alone."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "experiments"
    run = [sys.executable, str(root / "run_studies.py"), "--quick", "--seed", "4"]
    subprocess.run(
        [*run, "--study", "sentence_cosine", "--out", str(tmp_path)], check=True, timeout=300
    )
    saved = json.loads((tmp_path / "sentence_cosine.json").read_text())
    assert saved["seed"] == 4 and saved["data"]["rows"]
    plot = [sys.executable, str(root / "plot_studies.py"), str(tmp_path), "--formats", "png"]
    subprocess.run(plot, check=True, timeout=300)
    assert (tmp_path / "sentence_cosine.png").stat().st_size > 0
