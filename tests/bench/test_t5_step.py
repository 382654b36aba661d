"""Smoke test of lshsim.bench.t5_step (experiments/bench_t5.py): tiny config, batch, steps."""

from __future__ import annotations

import json

import pytest

from tests import needs

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")
pytestmark = needs("torch", "transformers")


def _bench_module():
    from lshsim.bench import t5_step

    return t5_step


def test_quick_run_reports_both_frameworks_with_equal_losses(tmp_path, capsys):
    """The JSON has one tiny row; same params, same first loss, positive timings."""
    bench = _bench_module()
    out = tmp_path / "bench.json"
    argv = ["--quick", "--json", "--configs", "tiny", "--batch-tiny", "2", "--steps", "2"]
    payload = bench.main([*argv, "--out", str(out)])
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text()) == json.loads(json.dumps(payload))
    assert {"cpu", "cores", "jax", "torch", "torch_threads"} <= set(payload["machine"])
    (row,) = payload["results"]
    assert (row["config"], row["batch"]) == ("tiny", 2)
    assert (row["input_length"], row["target_length"]) == (128, 29)
    assert len(row["jax_s_per_step_all"]) == len(row["torch_s_per_step_all"]) == 2
    for key in ("jax_s_per_step", "torch_s_per_step", "ratio"):
        assert row[key] > 0
    assert row["ratio"] == pytest.approx(row["torch_s_per_step"] / row["jax_s_per_step"])
    assert row["params_jax"] == row["params_torch"] > 0
    assert row["loss_agrees"] and row["loss_rel_diff"] <= 1e-4
    assert row["loss_jax"] == pytest.approx(row["loss_torch"], rel=1e-4)
    assert row["jax_compiled_versions"] in (1, None)
    assert not list(tmp_path.glob(".*tmp*"))


def test_batch_layout_is_shifted_right_and_seeded():
    """Decoder inputs are the targets shifted right after the start token 0; no padding."""
    bench = _bench_module()
    from lshsim.t5.configs import CONFIGS

    cfg = CONFIGS["tiny"]
    a = bench.make_batch(cfg, 3, 16, 7, seed=5)
    b = bench.make_batch(cfg, 3, 16, 7, seed=5)
    assert all((a[k] == b[k]).all() for k in a)
    assert (a["decoder_input_tokens"][:, 0] == 0).all()
    assert (a["decoder_input_tokens"][:, 1:] == a["decoder_target_tokens"][:, :-1]).all()
    assert (a["decoder_target_tokens"][:, -1] == 1).all()
    assert (a["encoder_input_tokens"] >= 2).all() and (a["decoder_loss_weights"] == 1).all()
