"""Running sweeps: the same rows in process and on 2 Dask workers, resume after kill -9.

One LocalCluster of 2 workers serves the module (started by the engine's own
:func:`lshsim.sweep.execute.dask_client`, as ``--workers 2`` starts it); the sweeps reach it
through its address, as ``--scheduler`` does.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lshsim.sweep import parse_spec
from lshsim.sweep.execute import dask_client, run_sweep
from lshsim.sweep.store import META, read_table
from tests.sweep import CELLS, SPEC, sorted_rows

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The spec swept in this process: the rows every other run must reproduce."""
    out = tmp_path_factory.mktemp("ref") / "sweep"
    summary = run_sweep(parse_spec(SPEC), out, workers=0, batch=50)
    assert (summary.cells, summary.ran, summary.skipped) == (CELLS, CELLS, 0)
    return sorted_rows(read_table(out))


@pytest.fixture(scope="module")
def scheduler():
    with dask_client(2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        yield client.scheduler.address


def test_rows_are_complete_and_typed(reference):
    assert len(reference) == CELLS == len({r["cell"] for r in reference})
    mc = [r for r in reference if r["command"] == "simulate"]
    assert len(mc) == 26 and all(r["ci_low"] <= r["estimate"] <= r["ci_high"] for r in mc)
    assert all(r["exact"] is not None for r in reference if r["command"] == "theory")
    assert all(r["numpy_version"] and r["python_version"] for r in reference)
    theory = next(r for r in reference if r["command"] == "theory")
    assert theory["samples"] is None and theory["mode"] is None  # null where a grid lacks it


def test_two_dask_workers_give_the_same_rows(reference, scheduler, tmp_path):
    summary = run_sweep(parse_spec(SPEC), tmp_path / "s", scheduler=scheduler, batch=50)
    assert summary.ran == CELLS and summary.parts >= 5  # 50 rows a part (more if slow)
    rows = sorted_rows(read_table(tmp_path / "s"))
    assert rows == reference
    assert {r["cell"] for r in rows} == {r["cell"] for r in reference}


def test_kill_9_then_resume_gives_every_cell_once(reference, scheduler, tmp_path):
    """A CLI sweep killed with SIGKILL once parts exist resumes (on Dask) to the same rows."""
    spec, out = tmp_path / "spec.json", tmp_path / "out"
    spec.write_text(json.dumps(SPEC))
    argv = [sys.executable, "-m", "lshsim", "sweep", str(spec), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*argv, "--workers", "0", "--part-rows", "1"], env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while len(list(out.glob("part-*.parquet"))) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, "the sweep ended before it was killed"
            time.sleep(0.005)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = len(read_table(out))
    assert 2 <= before < CELLS  # killed mid-sweep, with complete parts only
    summary = run_sweep(parse_spec(SPEC), out, scheduler=scheduler, resume=True)
    assert (summary.skipped, summary.ran) == (before, CELLS - before)
    assert not list(out.glob(".*.tmp"))
    assert sorted_rows(read_table(out)) == reference  # every cell exactly once, same numbers


def test_interrupted_sweep_keeps_what_it_computed(reference, tmp_path):
    """Ctrl-C (or any error) mid-sweep writes the rows already computed; resume runs the rest."""
    seen = []

    def stop_at_30(done, total):
        seen.append(done)
        if done >= 30:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(parse_spec(SPEC), tmp_path / "s", batch=7, progress=stop_at_30)
    assert len(read_table(tmp_path / "s")) == 30 and seen == list(range(31))
    summary = run_sweep(parse_spec(SPEC), tmp_path / "s", resume=True, batch=1000)
    assert (summary.skipped, summary.ran, summary.parts) == (30, CELLS - 30, 6)
    sizes = [pq.read_metadata(p).num_rows for p in sorted((tmp_path / "s").glob("part-*"))]
    assert sizes == [7, 7, 7, 7, 2, CELLS - 30]
    again = run_sweep(parse_spec(SPEC), tmp_path / "s", resume=True)
    assert (again.skipped, again.ran, again.parts) == (CELLS, 0, 6)
    assert sorted_rows(read_table(tmp_path / "s")) == reference


def test_folder_rules(tmp_path):
    spec = parse_spec({"grids": [SPEC["grids"][3]]})
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("")
    with pytest.raises(ValueError, match=r"--out: .*busy is not empty; add --resume"):
        run_sweep(spec, tmp_path / "busy")
    with pytest.raises(ValueError, match=f"holds no sweep \\({META} is missing\\)"):
        run_sweep(spec, tmp_path / "busy", resume=True)
    run_sweep(spec, tmp_path / "s")
    with pytest.raises(ValueError, match=r"--out: .* is not empty"):
        run_sweep(spec, tmp_path / "s")
    other = parse_spec({"seed": 1, "grids": [SPEC["grids"][3]]})
    with pytest.raises(ValueError, match=r"--resume: SPEC \(sha256 \w+\) differs from the sweep"):
        run_sweep(other, tmp_path / "s", resume=True)
    meta = json.loads((tmp_path / "s" / META).read_text())
    assert meta["spec_sha256"] == spec.sha256() and meta["cells"] == 2
    (tmp_path / "s" / "part-00007.parquet").write_bytes(
        (tmp_path / "s" / "part-00000.parquet").read_bytes()
    )
    with pytest.raises(ValueError, match="is already in another part"):
        run_sweep(spec, tmp_path / "s", resume=True)
