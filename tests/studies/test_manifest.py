"""Run manifests of ``lshsim reproduce``: written last, checked by ``--verify``.

The runs here use two fake studies (milliseconds each) and a fake claims check in place of the
real registry, so the manifest's logic is tested without the two-minute quick run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from lshsim.cli.main import main
from lshsim.studies import manifest, reproduce
from lshsim.studies.base import Study
from lshsim.theorems import claims

ROOT = Path(__file__).resolve().parents[2]
#: study name -> what it does instead of returning data: "raise", "interrupt" or "sleep"
BEHAVIOUR: dict[str, str] = {}


@dataclass(frozen=True)
class FakeConfig:
    """A study config of one field."""

    n: int


def _compute(name):
    def compute(config, seed):
        what = BEHAVIOUR.get(name) or os.environ.get(f"FAKE_STUDY_{name.upper()}")
        if what == "raise":
            raise RuntimeError(f"study {name} failed")
        if what == "interrupt":
            raise KeyboardInterrupt
        if what == "sleep":
            time.sleep(120)
        return {"rows": [name, config.n, seed]}

    return compute


def _figure(data):
    fig = Figure(figsize=(1, 1))
    fig.add_subplot().plot([0, 1], [0, data["rows"][2]])
    return fig


def fake_studies(*names):
    """Name -> fake study, in order."""
    configs = {"default": FakeConfig(2), "quick": FakeConfig(1)}
    return {n: Study(n, _compute(n), _figure, f"caption {n}", configs) for n in names}


def _fake_check(ids=None, progress=None, quick=False):
    return [claims.Verdict("T1.1", "a fake claim", True, {"x": 1}, 0.0, "tests/x.py")]


def install(setattr, names=("alpha", "beta")):
    """Replace the registry and the claims check by fakes (``setattr``: monkeypatch's)."""
    setattr(reproduce, "STUDIES", fake_studies(*names))
    setattr(claims, "check", _fake_check)


@pytest.fixture
def fakes(monkeypatch):
    """The fake studies ``alpha`` and ``beta``; BEHAVIOUR is cleared afterwards."""
    install(monkeypatch.setattr)
    yield monkeypatch
    BEHAVIOUR.clear()


def _verify(capsys, folder):
    rc = main(["reproduce", "--verify", str(folder)])
    cap = capsys.readouterr()
    assert cap.err == ""
    return rc, cap.out.splitlines()


def test_run_writes_the_manifest_last(tmp_path, fakes, capsys):
    """A finished run lists every file it wrote with size and SHA-256, plus seed, profile,
    config and versions; verify finds nothing wrong; --verify prints one line and exits 0;
    REPORT.md's header comes from the manifest."""
    rc = main(["reproduce", "--quick", "--seed", "3", "--out", str(tmp_path)])
    assert rc == 0 and "manifest.json" in capsys.readouterr().out
    doc = json.loads((tmp_path / "manifest.json").read_text())
    assert doc["complete"] is True and doc["writer"] == "lshsim reproduce"
    assert (doc["seed"], doc["profile"], doc["config"]) == (3, "quick", {"name": "quick", "n": 1})
    assert {"python", "lshsim", "numpy", "matplotlib"} <= set(doc["versions"])
    paths = [e["path"] for e in doc["files"]]
    names = [f"{s}.{e}" for s in ("alpha", "beta") for e in ("json", "png", "svg")]
    assert sorted(paths) == sorted([*names, "results.json", "REPORT.md"])
    for e in doc["files"]:
        assert e["bytes"] == (tmp_path / e["path"]).stat().st_size
        assert e["sha256"] == manifest._sha256(tmp_path / e["path"])
    assert manifest.verify(tmp_path) == []
    assert _verify(capsys, tmp_path) == (0, [f"{tmp_path}: complete (seed 3, quick, 8 files)"])
    report = (tmp_path / "REPORT.md").read_text()
    assert "--quick --seed 3" in report and f"python {doc['versions']['python']}" in report
    assert "`manifest.json`" in report
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results) == {
        "lshsim", "config", "seed", "studies", "claims", "claims_check", "holds", "versions",
        "kinds",
    }  # fmt: skip
    assert results["claims_check"] == "quick"
    assert results["versions"] == doc["versions"]  # the numbers name what made them
    assert {"platform", "cpu", "numba", "llvmlite"} <= set(doc["versions"])


@pytest.mark.parametrize("how", ["interrupt", "raise"])
def test_interrupted_rerun_into_a_finished_folder_is_reported(tmp_path, fakes, capsys, how):
    """The issue's scenario: a finished seed-0 quick folder, then a seed-5 quick run into it
    that stops after its first study (Ctrl-C: exit 130; an error: it propagates). The
    folder no longer looks complete: --verify exits 1, naming the unfinished seed-5 run and
    the mix of seed-0 and seed-5 files."""
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    BEHAVIOUR["beta"] = how
    if how == "interrupt":
        assert main(["reproduce", "--quick", "--seed", "5", "--out", str(tmp_path)]) == 130
        assert capsys.readouterr().err.splitlines()[-1] == "lshsim: interrupted"
    else:
        with pytest.raises(RuntimeError, match="study beta failed"):
            reproduce.run(tmp_path, quick=True, seed=5)
    assert json.loads((tmp_path / "alpha.json").read_text())["seed"] == 5
    assert json.loads((tmp_path / "results.json").read_text())["seed"] == 0
    rc, lines = _verify(capsys, tmp_path)
    assert rc == 1
    assert lines == [
        f"{tmp_path}: incomplete: the run of seed 5 (quick) did not finish (interrupted?)",
        f"{tmp_path}: files of different runs: seed 5, quick (alpha.json); "
        "seed 0, quick (beta.json, results.json)",
    ]


def test_verify_reports_missing_changed_leftover_and_temporary_files(tmp_path, fakes):
    """A finished run of study alpha alone into a folder an alpha+beta run filled: beta's
    files are left over; then a deleted, a changed and a crash's temporary file are named."""
    reproduce.run(tmp_path, quick=True)
    fakes.setattr(reproduce, "STUDIES", fake_studies("alpha"))
    reproduce.run(tmp_path, quick=True, seed=1)
    assert manifest.verify(tmp_path) == [
        f"beta.{e} is not from this run (left over from another?)" for e in ("json", "png", "svg")
    ]
    for ext in ("json", "png", "svg"):
        (tmp_path / f"beta.{ext}").unlink()
    assert manifest.verify(tmp_path) == []
    (tmp_path / "alpha.svg").unlink()
    with (tmp_path / "results.json").open("a") as fh:
        fh.write(" ")
    (tmp_path / ".alpha.json.0123.tmp").write_text("{")
    (tmp_path / "notes.txt").write_text("a user's file is none of the run's business")
    assert manifest.verify(tmp_path) == [
        "alpha.svg is missing",
        "results.json changed since the run",
        ".alpha.json.0123.tmp is a temporary file left by an interrupted write",
    ]


def test_verify_without_or_with_a_broken_manifest(tmp_path, fakes, capsys):
    """No manifest: incomplete (exit 1); an unreadable manifest: said so (exit 1)."""
    reproduce.run(tmp_path, quick=True)
    (tmp_path / "manifest.json").unlink()
    assert _verify(capsys, tmp_path) == (
        1,
        [f"{tmp_path}: incomplete: no manifest.json (an interrupted run?)"],
    )
    (tmp_path / "manifest.json").write_text('{"complete": tr')
    rc, lines = _verify(capsys, tmp_path)
    assert rc == 1 and len(lines) == 1
    assert lines[0].startswith(f"{tmp_path}: manifest.json is unreadable (")
    (tmp_path / "manifest.json").write_text("[]")
    assert manifest.verify(tmp_path) == [
        "manifest.json is not a run manifest (it lacks "
        "['complete', 'files', 'owns', 'profile', 'seed'])"
    ]


def test_a_rerun_marks_the_old_manifest_incomplete_before_computing(tmp_path, fakes):
    """While a rerun computes its first study, the folder's manifest already reads as the
    new, unfinished run (not the old, complete one)."""
    reproduce.run(tmp_path, quick=True)
    seen = []

    def spy(config, seed):
        seen.append(manifest.verify(tmp_path))
        return {"rows": ["alpha", config.n, seed]}

    studies = fake_studies("alpha", "beta")
    studies["alpha"] = Study("alpha", spy, _figure, "c", studies["alpha"].configs)
    fakes.setattr(reproduce, "STUDIES", studies)
    reproduce.run(tmp_path, seed=2)
    assert seen == [["incomplete: the run of seed 2 (default) did not finish (interrupted?)"]]
    assert manifest.verify(tmp_path) == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--verify", "{dir}", "--quick"], "--verify: runs nothing, so --quick has no effect"),
        (["--verify", "{dir}", "--seed", "1"], "--verify: runs nothing, so --seed has no effect"),
        (["--verify", "{dir}", "--out", "x"], "--verify: runs nothing, so --out has no effect"),
        (["--verify", "{dir}/none"], "--verify: {dir}/none is not a folder"),
        (["--verify", "{dir}/f"], "--verify: {dir}/f is not a folder"),
    ],
)
def test_verify_bad_input_is_one_line_exit_2(tmp_path, fakes, capsys, argv, message):
    """--verify with an option it ignores, or of no folder: one line, exit 2, nothing made."""
    (tmp_path / "f").write_text("")
    argv = [a.replace("{dir}", str(tmp_path)) for a in argv]
    rc = main(["reproduce", *argv])
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == ""
    assert cap.err.startswith(f"lshsim: error: {message.replace('{dir}', str(tmp_path))}")
    assert cap.err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_every_file_of_a_run_is_0644_under_umask_022(tmp_path, fakes):
    """Study JSONs, figures, results.json, REPORT.md and the manifest: all 0644."""
    old = os.umask(0o022)
    try:
        reproduce.run(tmp_path, quick=True)
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert len(modes) == 9 and set(modes.values()) == {0o644}, modes


# The child takes Ctrl-C as a terminal would, even where its parent ignores SIGINT (a shell's
# background job does, and the child would inherit that): Python installs its handler only
# over the default disposition.
_CHILD = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from tests.studies import test_manifest as t
t.install(setattr)
from lshsim.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_killed_rerun_is_reported(tmp_path, fakes, capsys, sig):
    """A real process, killed (Ctrl-C or kill -9) while its second study computes, in a
    finished seed-0 folder: --verify then reports the unfinished seed-5 run and the mix."""
    reproduce.run(tmp_path, quick=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAKE_STUDY_BETA": "sleep"}
    argv = ["reproduce", "--quick", "--seed", "5", "--out", str(tmp_path)]
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, *argv], env=env, cwd=ROOT, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while json.loads((tmp_path / "alpha.json").read_text())["seed"] != 5:
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        child.send_signal(sig)
        rc = child.wait(timeout=60)
    finally:
        child.kill()
        child.wait()
    err = child.stderr.read().decode()
    child.stderr.close()
    if sig == signal.SIGINT:
        assert rc == 130 and err.splitlines()[-1] == "lshsim: interrupted"
    else:
        assert rc == -signal.SIGKILL
    rc, lines = _verify(capsys, tmp_path)
    assert rc == 1 and lines[0].endswith(
        "incomplete: the run of seed 5 (quick) did not finish (interrupted?)"
    )
    assert "seed 5, quick (alpha.json); seed 0, quick (beta.json, results.json)" in lines[1]
