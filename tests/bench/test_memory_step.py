"""Smoke test of lshsim.bench.memory_step (experiments/bench_memory.py): tiny, one step each."""

from __future__ import annotations

import json

import pytest

from tests import needs

pytest.importorskip("jax")
pytestmark = needs("torch")  # t5_step (whose runner it reuses) imports the torch side lazily


@pytest.mark.slow
def test_quick_run_times_each_variant_against_the_baseline(tmp_path, capsys):
    from lshsim.bench import memory_step as bench

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
