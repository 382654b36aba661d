"""Smoke test of experiments/bench_memory.py: tiny config, tiny batch, one timed step each."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("torch")  # bench_t5 (whose runner it reuses) imports the torch side lazily

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "bench_memory.py"


def test_quick_run_times_each_variant_against_the_baseline(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_memory", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_memory", bench)
    spec.loader.exec_module(bench)
    out = tmp_path / "b.json"
    argv = ["--quick", "--json", "--batch", "2", "--steps", "1", "--variants", "altup K=2"]
    payload = bench.main([*argv, "--out", str(out)])
    assert json.loads(capsys.readouterr().out) == json.loads(out.read_text())
    rows = {r["variant"]: r for r in payload["results"]}
    assert list(rows) == ["baseline", "altup K=2"]
    base = rows["baseline"]
    assert base["ratio"] == 1.0 and base["flops_ratio"] == 1.0
    alt = rows["altup K=2"]
    assert alt["ratio"] == pytest.approx(alt["s_per_step"] / base["s_per_step"])
    assert len(alt["s_per_step_all"]) == 2  # 2 rounds x 1 step
    assert alt["flops_ratio"] > 1.0  # the wide logits and cross-attention
