"""lshsim.bench.peers: the harness (verdicts, markdown, CLI) of experiments/bench_peers.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lshsim.bench import peers
from tests.bench import demo_row

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "bench_peers.py"


def _payload(rows):
    machine = {
        "cpu": "CPU",
        "simd": ["avx"],
        "cores": 2,
        "cores_available": 2,
        "memory_gib": 8.0,
        "python": "3",
        "versions": {"numpy": "2"},
        "commit": "abc",
        "date": "today",
        "loadavg_at_start": [0.1, 0.1, 0.1],
    }
    return {
        "machine": machine,
        "settings": {"quick": True, "cases": ["demo"]},
        "seconds": 1.0,
        "loadavg_at_end": [0.2, 0.2, 0.2],
        "results": rows,
    }


def test_markdown_block_is_replaced_and_the_prose_kept(tmp_path):
    path = tmp_path / "B.md"
    path.write_text(f"# Title\n\nbefore\n\n{peers.BEGIN}\nold\n{peers.END}\n\nafter\n")
    rows = [demo_row(2.0, note="bound by X"), demo_row(0.5)]
    peers.write_markdown(path, _payload(rows))
    text = path.read_text()
    assert text.startswith("# Title\n\nbefore\n\n")
    assert text.endswith("\n\nafter\n")
    assert "old" not in text
    assert "| demo | 2 | >= 1 | met |" in text
    assert "| demo | 0.5 | >= 1 | MISSED |" in text
    assert "- **demo**: bound by X" in text
    peers.write_markdown(path, _payload(rows))  # idempotent
    assert path.read_text() == text
    bad = tmp_path / "bad.md"
    bad.write_text("no block\n")
    with pytest.raises(ValueError, match="results"):
        peers.write_markdown(bad, _payload(rows))


def test_a_failing_case_is_an_error_row_and_exit_1(monkeypatch, capsys):
    def broken(quick):
        raise ModuleNotFoundError("No module named 'faiss' (pip install faiss-cpu)")

    def fine(quick):
        return [demo_row(3.0)]

    monkeypatch.setattr(peers, "load_cases", lambda: {"broken": broken, "fine": fine})
    status = peers.main(["--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 1
    assert out["failed_cases"] == ["broken"]
    err, ok = out["results"]
    assert err["case"] == "broken" and not err["meets"] and "faiss" in err["error"]
    assert ok["case"] == "fine" and ok["meets"]


def test_cli_lists_cases_and_refuses_unknown_ones():
    script = str(SCRIPT)
    got = subprocess.run([sys.executable, script, "--list"], capture_output=True, text=True)
    assert got.returncode == 0
    names = got.stdout.split()
    assert names == [
        "simhash",
        "voronoi",
        "minhash",
        "crosspolytope_hadamard",
        "voronoi_reduced",
        "voronoi_exact",
        "productkey_topk",
        "spherical_topk",
        "topk_reduced",
        "engram_hash",
        "altup",
        "t5",
        "sweep_scaling",
        "compile",
        "scan_compile",
        "tune",
    ]
    bad = subprocess.run([sys.executable, script, "--only", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "unknown case(s) nope" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("family", "params"), [("voronoi", {}), ("crosspolytope", {"rotation": "gaussian"})]
)
def test_the_top_k_peers_compute_what_topk_sets_computes(family, params):
    """The spherical top-k rows' peers (score matrix in bucket-id order, argpartition + sort)
    give topk_sets' ids, order included, on a small case."""
    import numpy as np

    from lshsim.bench.topk_cases import _numpy_topk
    from lshsim.hashing import make_family
    from lshsim.hashing.topk import topk_sets

    fam = make_family(family, 64, 16, seed=1, **params)
    x = np.random.default_rng(0).standard_normal((50, 16)).astype(np.float32)
    np.testing.assert_array_equal(_numpy_topk(fam, x, 5), topk_sets(fam, x, 5))


def test_a_failing_command_of_the_compile_rows_is_an_error():
    from lshsim.bench.goals import _cpu_seconds

    with pytest.raises(RuntimeError, match="exit 2"):
        _cpu_seconds(["plan", "--config", "nope"])
