"""The newer surfaces under bad input (issue 31): one line naming the option, exit 2, at once.

Every case runs in process and fails before any model is traced or any cell computed: plan's
bounds and options without effect, the traced commands' block bound, the int32 bucket limit,
the distributed client's timeout, ``simulate --dim`` in reduced mode, ``compare``'s
non-finite and oversized numbers, an output folder under ``/proc``.
"""

from __future__ import annotations

import json
import math

import pytest

from lshsim.cli.main import main
from lshsim.launch import Job, collect
from lshsim.launch.rundir import FORMAT
from tests.studies.test_compare import _doc, _write

PLAN = ["plan", "--config", "tiny"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*PLAN, "--mesh", "data=4096"], "--mesh: data x model = 4096 devices; plan compiles"),
        ([*PLAN, "--mesh", "data=65536,model=1", "--batch", "65536"], "takes at most 1024"),
        ([*PLAN, "--minimal", "--mesh", "data=2"], "--mesh has no effect with --minimal"),
        ([*PLAN, "--max-devices", "8"], "--max-devices has no effect without --minimal"),
        ([*PLAN, "--minimal", "--max-devices", "5000"], "--max-devices must be an integer"),
        ([*PLAN, "--memory", "sum", "--blocks", "100000"], "--blocks must be an integer"),
        (["cost", "--config", "tiny", "--memory", "sum", "--blocks", "100000"], "--blocks must"),
        ([*PLAN, "--lookup", "softmax", "--buckets", str(2**40)], "--buckets must be an integer"),
        (
            [
                "train",
                "--config",
                "tiny",
                "--steps",
                "1",
                "-o",
                "{tmp}/r",
                "--distributed",
                "auto",
                "--init-timeout",
                "1000000000000",
            ],
            "--init-timeout must be an integer",
        ),
        (
            [
                "simulate",
                "--family",
                "voronoi",
                "-n",
                "16",
                "--cosine",
                "0.5",
                "--mode",
                "reduced",
                "--dim",
                "8",
            ],
            "--dim has no effect with --mode reduced",
        ),
        (["sweep", "{tmp}/s.json", "-o", "/proc/lshsim-sweep"], "--out: "),
        (
            [
                "train",
                "--config",
                "tiny",
                "--steps",
                "1",
                "-o",
                "{tmp}/r",
                "--accumulate",
                "4",
                "--batch",
                "4",
                "--mesh",
                "data=2",
            ],
            "mesh: data=2 must divide the micro-batch (batch / accumulate = 1)",
        ),
        ([*PLAN, "--accumulate", "4", "--batch", "4", "--mesh", "data=2"], "data=2 must divide"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, message, tmp_path, capsys):
    (tmp_path / "s.json").write_text(
        '{"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "cosine": 0.5}]}'
    )
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("lshsim: error: ") and err.count("\n") == 1, err
    assert message in err, err
    assert not (tmp_path / "r").exists()


def test_compare_json_is_json_even_with_non_finite_numbers(tmp_path, capsys):
    b = _doc()
    b["studies"]["s"]["mc"]["estimate"][0] = math.nan
    b["studies"]["s"]["model"]["loss"] = math.inf
    a = _write(tmp_path, "a", _doc())
    b = _write(tmp_path, "b", b)
    assert main(["compare", a, b, "--json"]) == 1
    out = capsys.readouterr().out
    assert "NaN" not in out.replace('"NaN"', "") and "Infinity" not in out.replace('"Infinity"', "")
    json.loads(out, parse_constant=lambda c: pytest.fail(f"bare {c} in --json output"))


def test_compare_names_the_file_with_an_oversized_number(tmp_path, capsys):
    a = _write(tmp_path, "a", _doc())
    b = tmp_path / "b.json"
    b.write_text(json.dumps(_doc()).replace("0.3", "1" + "0" * 400, 1))
    assert main(["compare", a, str(b)]) == 2
    err = capsys.readouterr().err
    assert f"B ({b}): an integer of 401 digits" in err and err.count("\n") == 1
    b.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["compare", a, str(b)]) == 2
    err = capsys.readouterr().err
    assert f"B ({b}): nested too deeply" in err and err.count("\n") == 1


def test_collect_names_each_damaged_run_file(tmp_path):
    """``memory_studies.py --collect``: a damaged run is failed, named by its file."""
    ok = {"format": FORMAT, "key": "k", "row": {"accuracy": 0.5}}
    cases = {
        "fine": json.dumps(ok),
        "truncated": json.dumps(ok)[:20],
        "list": "[1, 2]",
        "norow": json.dumps({"format": FORMAT, "key": "norow"}),
        "nested": "[" * 100_000 + "]" * 100_000,
    }
    jobs = []
    for name, text in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(text)
        jobs.append(Job("k" if name == "fine" else name, tmp_path / name, "m:f", {}))
    (tmp_path / "afile").write_text("")
    jobs.append(Job("afile", tmp_path / "afile", "m:f", {}))
    jobs.append(Job("absent", tmp_path / "absent", "m:f", {}))
    got = collect(jobs)
    assert got.rows == {"k": {"accuracy": 0.5}} and got.missing == ["absent"]
    expected = {
        "truncated": "not valid JSON, truncated or damaged",
        "list": "not a run file of lshsim's launcher",
        "norow": "has no 'row'",
        "nested": "nested too deeply",
        "afile": "a file, not a run directory",
    }
    assert set(got.failed) == set(expected)
    for key, message in expected.items():
        assert str(tmp_path / key) in got.failed[key] and message in got.failed[key]


def test_the_study_launcher_abandons_a_silent_scheduler():
    """``memory_studies.py --launcher dask --scheduler`` at a server that never answers."""
    import socket
    import threading

    from lshsim.launch.launchers import DaskLauncher

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    threading.Thread(target=server.accept, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    with pytest.raises(ValueError, match=r"^--scheduler: cannot reach tcp://.* within 0\.5 s"):
        DaskLauncher(scheduler=address, timeout=0.5).connect()
    server.close()
