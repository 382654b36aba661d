"""lshsim.bench.profile_step: XLA's per-operation profile of a train step, by model part."""

from __future__ import annotations

import json

import pytest


def test_profile_t5_groups_xla_operations_by_model_part(capsys):
    pytest.importorskip("jax")
    pytest.importorskip("flax")
    from lshsim.bench import profile_step

    got = profile_step.main(["--batch", "2", "--steps", "1", "--json"])
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(got))
    parts = {(r["pass"], r["part"]) for r in got["parts"]}
    for want in [("forward", "attention"), ("forward", "mlp"), ("gradient", "mlp")]:
        assert want in parts
    assert 0 < got["dot_ms"] <= got["ops_ms"]
    assert got["ops"][0]["ms"] >= got["ops"][-1]["ms"]
    assert any("dot_general" in r["op_name"] for r in got["ops"])
    assert profile_step.part_of("jit(step_fn)/jvp(T5)/T5.decode/decoder/logits_dense/dot") == (
        "logits"
    )
