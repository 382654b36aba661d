"""experiments/bench_peers.py: the harness (rows, verdicts, markdown, CLI) and a quick smoke run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))

import bench_peers  # noqa: E402
import peers_timing  # noqa: E402


def _row(ratio, goal=1.0, op=">=", checks=None, **extra):
    return peers_timing.row(
        "demo",
        ratio=ratio,
        goal=goal,
        op=op,
        measure="peer / ours",
        ours="a",
        peer="b",
        ours_s=0.5,
        peer_s=1.0,
        checks=checks,
        **extra,
    )


@pytest.mark.parametrize(
    ("ratio", "goal", "op", "checks", "meets"),
    [
        (1.2, 1.0, ">=", None, True),
        (1.0, 1.0, ">=", None, True),
        (0.99, 1.0, ">=", None, False),
        (1.05, 1.10, "<=", None, True),
        (1.11, 1.10, "<=", None, False),
        (2.0, 1.0, ">=", {"same_ids": False}, False),
        (2.0, 1.0, ">=", {"same_ids": True, "o_m_memory": True}, True),
    ],
)
def test_meets_is_the_goal_and_every_check(ratio, goal, op, checks, meets):
    r = _row(ratio, goal, op, checks)
    assert r["meets"] is meets
    assert r["goal"] == f"{op} {goal:g}"
    assert json.loads(json.dumps(r)) == r


def test_bad_goal_operator_is_refused():
    with pytest.raises(ValueError, match="op must be"):
        _row(1.0, op=">")


def test_interleaved_times_every_callable_per_round():
    calls = []
    got = peers_timing.interleaved(
        {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, rounds=4, warmup=1
    )
    assert calls.count("a") == calls.count("b") == 5
    # the order rotates: round 0 a then b, round 1 b then a, ...
    assert calls[2:] == ["a", "b", "b", "a", "a", "b", "b", "a"]
    for stats in got.values():
        assert len(stats["times"]) == 4
        assert 0 <= stats["min"] <= stats["median"]
    with pytest.raises(ValueError, match="rounds"):
        peers_timing.interleaved({"a": lambda: None}, rounds=0)


def test_speedup_row_is_peer_over_ours():
    timings = {
        "ours": {"median": 0.5, "iqr": 0.01},
        "peer": {"median": 2.0, "iqr": 0.02},
    }
    r = peers_timing.speedup_row(
        "x", timings, "ours", "peer", goal=3.0, ours="o", peer="p", checks={"ok": True}
    )
    assert r["ratio"] == 4.0 and r["meets"]
    assert (r["ours_s"], r["peer_s"]) == (0.5, 2.0)


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
    path.write_text(f"# Title\n\nbefore\n\n{bench_peers.BEGIN}\nold\n{bench_peers.END}\n\nafter\n")
    rows = [_row(2.0, note="bound by X"), _row(0.5)]
    bench_peers.write_markdown(path, _payload(rows))
    text = path.read_text()
    assert text.startswith("# Title\n\nbefore\n\n")
    assert text.endswith("\n\nafter\n")
    assert "old" not in text
    assert "| demo | 2 | >= 1 | met |" in text
    assert "| demo | 0.5 | >= 1 | MISSED |" in text
    assert "- **demo**: bound by X" in text
    bench_peers.write_markdown(path, _payload(rows))  # idempotent
    assert path.read_text() == text
    bad = tmp_path / "bad.md"
    bad.write_text("no block\n")
    with pytest.raises(ValueError, match="results"):
        bench_peers.write_markdown(bad, _payload(rows))


def test_a_failing_case_is_an_error_row_and_exit_1(monkeypatch, capsys):
    def broken(quick):
        raise ModuleNotFoundError("No module named 'faiss' (pip install faiss-cpu)")

    def fine(quick):
        return [_row(3.0)]

    monkeypatch.setattr(bench_peers, "load_cases", lambda: {"broken": broken, "fine": fine})
    status = bench_peers.main(["--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 1
    assert out["failed_cases"] == ["broken"]
    err, ok = out["results"]
    assert err["case"] == "broken" and not err["meets"] and "faiss" in err["error"]
    assert ok["case"] == "fine" and ok["meets"]


def test_cli_lists_cases_and_refuses_unknown_ones():
    script = str(EXPERIMENTS / "bench_peers.py")
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
        "altup",
        "t5",
    ]
    bad = subprocess.run([sys.executable, script, "--only", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "unknown case(s) nope" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_profile_t5_groups_xla_operations_by_model_part(capsys):
    pytest.importorskip("jax")
    pytest.importorskip("flax")
    import profile_t5

    got = profile_t5.main(["--batch", "2", "--steps", "1", "--json"])
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(got))
    parts = {(r["pass"], r["part"]) for r in got["parts"]}
    for want in [("forward", "attention"), ("forward", "mlp"), ("gradient", "mlp")]:
        assert want in parts
    assert 0 < got["dot_ms"] <= got["ops_ms"]
    assert got["ops"][0]["ms"] >= got["ops"][-1]["ms"]
    assert any("dot_general" in r["op_name"] for r in got["ops"])
    assert profile_t5.part_of("jit(step_fn)/jvp(T5)/T5.decode/decoder/logits_dense/dot") == (
        "logits"
    )
