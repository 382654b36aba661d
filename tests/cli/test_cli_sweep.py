"""``lshsim sweep``: the command line around the engine, bad input, and ``--plot``."""

import json
import sys

import pyarrow.parquet as pq
import pytest

from lshsim.cli.main import main

SPEC = """
seed = 3
[[grids]]
command = "simulate"
family = ["voronoi", "minhash"]
buckets = [4, 16]
overlap = [0.5]
length = [8]
samples = [64]
[[grids]]
command = "theory"
family = ["simhash", "pstable"]
buckets = [4, 16, 64]
overlap = [0.5]
length = [8]
cosines = [256]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A small sweep run by the CLI (in process), its folder and its JSON summary."""
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "spec.toml").write_text(SPEC)
    argv = ["sweep", str(tmp / "spec.toml"), "--out", str(tmp / "s"), "--workers", "0"]
    capture = pytest.MonkeyPatch()
    out = tmp / "stdout"
    with out.open("w") as fh:
        capture.setattr(sys, "stdout", fh)
        try:
            assert main([*argv, "--json", "--part-rows", "3"]) == 0
        finally:
            capture.undo()
    return tmp, json.loads(out.read_text())


def test_sweep_writes_one_row_per_cell(swept):
    tmp, summary = swept
    assert (summary["cells"], summary["ran"], summary["skipped"]) == (10, 10, 0)
    assert summary["parts"] == 4 and summary["out"] == str(tmp / "s")
    table = pq.read_table(tmp / "s")  # the folder reads as one Parquet dataset
    assert table.num_rows == 10 and len(set(table.column("cell").to_pylist())) == 10
    assert {"family", "buckets", "overlap", "length", "samples", "mode", "cosines"} <= set(
        table.column_names
    )
    rows = table.to_pylist()
    minhash = [r for r in rows if r["family"] == "minhash"]
    assert all(r["exact"] is not None and r["cosines"] is None for r in minhash)


def test_resume_of_a_finished_sweep_runs_nothing(swept, capsys):
    tmp, _ = swept
    argv = ["sweep", str(tmp / "spec.toml"), "--out", str(tmp / "s"), "--resume", "--workers", "0"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith("10 cells (10 already done, 0 run) in ") and "4 parts in" in out
    assert "lshsim sweep: 10/10 cells (100%)" in err  # the log line when not on a terminal


def test_plot_writes_png_and_svg(swept, capsys):
    tmp, _ = swept
    assert main(["sweep", "--plot", str(tmp / "s"), "--json"]) == 0
    figures = tmp / "s" / "_figures"  # the default: beside the parts, skipped by readers
    written = json.loads(capsys.readouterr().out)["figures"]
    assert written == [str(figures / "collision_vs_n.png"), str(figures / "collision_vs_n.svg")]
    assert (figures / "collision_vs_n.png").stat().st_size > 10_000
    assert (figures / "collision_vs_n.svg").read_text().rstrip().endswith("</svg>")
    assert pq.read_table(tmp / "s").num_rows == 10  # the dataset still reads as before


def test_plot_groups_rows_by_the_options_that_change_the_target(swept, tmp_path):
    from lshsim.sweep.plot import collision_figures
    from lshsim.sweep.store import read_table

    tmp, _ = swept
    rows = read_table(tmp / "s").to_pylist()
    ((group, data),) = collision_figures(rows)
    assert group == {"length": 8}  # samples, mode and cosines only change the precision
    assert list(data["panels"]) == ["simhash", "pstable", "voronoi", "minhash"]
    panels = data["panels"]
    assert panels["simhash"]["mc"]["0.5"]["n"] == [4, 16, 64]  # theory's averages, with CIs
    assert panels["voronoi"]["mc"]["0.5"]["n"] == [4, 16] and "exact" not in panels["voronoi"]
    assert panels["minhash"]["exact"]["0.5"]["n"] == [4, 16]  # exact beside the estimates
    assert data["color_label"] == "overlap f"
    longer = [{**r, "length": 16} for r in rows[:3]]
    assert len(collision_figures(rows + longer)) == 2


def _bad(tmp, spec_text, *extra):
    path = tmp / "bad.json"
    path.write_text(spec_text)
    return ["sweep", str(path), "--out", str(tmp / "o"), "--workers", "0", *extra]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sweep", "--plot", "{tmp}", "--out", "{tmp}/o"], "--plot: runs nothing, so --out"),
        (["sweep", "{tmp}/s.json"], "give SPEC and --out DIR (or --plot DIR)"),
        (["sweep", "--figures", "{tmp}"], "--figures has no effect without --plot"),
        (["sweep", "--plot", "{tmp}/none"], "{tmp}/none is not a folder"),
        (["sweep", "--plot", "{tmp}"], "holds no sweep (_sweep.json is missing)"),
        (["sweep", "{tmp}/s.json", "--out", "{tmp}/o", "--workers", "-1"], "--workers must be"),
        (["sweep", "{tmp}/s.json", "--out", "{tmp}/o", "--part-rows", "0"], "--part-rows must be"),
        (["sweep", "{tmp}/missing.toml", "--out", "{tmp}/o"], "SPEC: cannot read"),
    ],
)
def test_bad_command_line_is_one_line_exit_2(tmp_path, capsys, argv, message):
    (tmp_path / "s.json").write_text(
        '{"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "cosine": 0.5}]}'
    )
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("lshsim: error: ") and err.count("\n") == 1
    assert message.replace("{tmp}", str(tmp_path)) in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            '{"grids": [{"command": "simulate", "family": ["lsh"], "buckets": [4], '
            '"cosine": [1]}]}',
            "grids[0] (simulate): family must be one of simhash",
        ),
        (
            '{"grids": [{"command": "theory", "family": ["simhash"], "buckets": [4], '
            '"cosine": [0.5], "samples": [10]}]}',
            "(theory): unknown option 'samples'",
        ),
        (
            '{"grids": [{"command": "theory", "family": ["simhash"], "buckets": ["4"], '
            '"cosine": [0.5]}]}',
            "buckets must be a number, got '4'",
        ),
        (
            '{"grids": [{"command": "theory", "family": ["simhash"], "buckets": [], '
            '"cosine": [0.5]}]}',
            "buckets: empty axis",
        ),
    ],
)
def test_bad_spec_is_one_line_exit_2(tmp_path, capsys, spec, message):
    assert main(_bad(tmp_path, spec)) == 2
    err = capsys.readouterr().err
    assert err.startswith("lshsim: error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "o").exists()


def test_resume_with_another_spec_is_one_line_exit_2(swept, tmp_path, capsys):
    tmp, _ = swept
    (tmp_path / "other.toml").write_text(SPEC.replace("seed = 3", "seed = 4"))
    argv = ["sweep", str(tmp_path / "other.toml"), "--out", str(tmp / "s"), "--resume"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--resume: SPEC (sha256 " in err and "differs from the sweep in" in err
    assert err.count("\n") == 1
    assert main(argv[:-1]) == 2
    assert "is not empty; add --resume" in capsys.readouterr().err


def test_unreachable_scheduler_is_one_line_exit_2(tmp_path, capsys):
    argv = _bad(
        tmp_path,
        '{"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "cosine": 0.5}]}',
    )
    argv = [*argv[:-2], "--scheduler", "tcp://127.0.0.1:9", "--timeout", "0.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--scheduler tcp://127.0.0.1:9: no Dask scheduler answered within 0.5 s" in err
    assert err.count("\n") == 1 and not (tmp_path / "o").exists()


def test_missing_dask_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    argv = _bad(
        tmp_path,
        '{"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "cosine": 0.5}]}',
    )
    assert main([*argv[:-2], "--workers", "2"]) == 2
    assert 'pip install "lshsim[sweep]"' in capsys.readouterr().err


@pytest.mark.parametrize("name", ["notes.txt", "x.parquet", "sub"])
def test_plot_and_resume_name_a_foreign_file_before_any_work(swept, capsys, name):
    """A file the sweep did not write is one line naming it (exit 2), and nothing is written:
    no figures, no part, no new lock."""
    tmp, _ = swept
    foreign = tmp / "s" / name
    foreign.mkdir() if name == "sub" else foreign.write_text("not the sweep's")
    before = sorted(p.name for p in (tmp / "s").iterdir())
    try:
        resume = ["sweep", str(tmp / "spec.toml"), "--out", str(tmp / "s"), "--resume"]
        plot = ["sweep", "--plot", str(tmp / "s"), "--figures", str(tmp / "figs")]
        for argv in (plot, [*resume, "--workers", "0"]):
            assert main(argv) == 2
            err = capsys.readouterr().err
            head = f"lshsim: error: {foreign}: not a file of the sweep in {tmp / 's'}; "
            assert err.startswith(head) and err.count("\n") == 1, err
        assert sorted(p.name for p in (tmp / "s").iterdir()) == before
        assert not (tmp / "figs").exists()
        from lshsim.sweep import read_table

        with pytest.raises(ValueError, match=f"{name}: not a file of the sweep"):
            read_table(tmp / "s")
    finally:
        foreign.rmdir() if name == "sub" else foreign.unlink()


@pytest.mark.parametrize("folder", ["empty", "missing", "not a sweep"])
def test_resume_into_a_folder_without_a_sweep_is_refused(swept, tmp_path, capsys, folder):
    """Once a --resume into an empty or missing folder silently started a new sweep there."""
    tmp, _ = swept
    out = tmp_path / "o"
    if folder != "missing":
        out.mkdir()
    if folder == "not a sweep":
        (out / "data.csv").write_text("1,2\n")
    argv = ["sweep", str(tmp / "spec.toml"), "--out", str(out), "--resume", "--workers", "0"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"lshsim: error: --resume: {out} holds no sweep (_sweep.json is missing); drop --resume "
        "to start a sweep (in an empty folder)\n"
    )
    left = sorted(p.name for p in out.iterdir()) if out.exists() else None
    assert left == {"empty": [], "missing": None, "not a sweep": ["data.csv"]}[folder]


def test_figures_inside_the_sweep_folder_are_refused(swept, capsys):
    """Figures elsewhere in the sweep's folder would be foreign files there: refused first."""
    tmp, _ = swept
    assert main(["sweep", "--plot", str(tmp / "s"), "--figures", str(tmp / "s" / "figs")]) == 2
    err = capsys.readouterr().err
    assert "--figures: " in err and "is inside the sweep's folder" in err and err.count("\n") == 1
    assert not (tmp / "s" / "figs").exists()


def test_sweep_stops_at_start_work_after_its_checks(swept, tmp_path):
    """Inside checks_only() both forms stop at start_work(): every check made, nothing written."""
    from lshsim.cli.work import ChecksPassed, checks_only

    tmp, _ = swept
    before = sorted(p.name for p in (tmp / "s").iterdir())
    runs = [
        ["sweep", str(tmp / "spec.toml"), "--out", str(tmp_path / "new"), "--workers", "0"],
        ["sweep", str(tmp / "spec.toml"), "--out", str(tmp / "s"), "--resume", "--workers", "0"],
        ["sweep", "--plot", str(tmp / "s"), "--figures", str(tmp_path / "figs")],
    ]
    for argv in runs:
        with checks_only(), pytest.raises(ChecksPassed):
            main(argv)
    assert not (tmp_path / "new").exists() and not (tmp_path / "figs").exists()
    assert sorted(p.name for p in (tmp / "s").iterdir()) == before
