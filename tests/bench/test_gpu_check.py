"""experiments/gpu_check.py on the CPU: the fallback run end to end, and its pure parts.

The end-to-end test runs the script as the GPU machine would (a subprocess from the repository
root), with each row in a child process as on a GPU, so the children, the background planner
and the report files are all exercised; on a CPU it takes the tiny fallback.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "experiments" / "gpu_check.py"


def _script():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cpu_only() -> bool:
    import jax

    return jax.default_backend() == "cpu"


@pytest.mark.skipif(not _cpu_only(), reason="the CPU fallback runs only without an accelerator")
@pytest.mark.slow
def test_cpu_fallback_writes_markdown_and_json(tmp_path):
    """Exit 0, the "no GPU" line, a finite positive step time, plan and loss entries."""
    md, js = tmp_path / "GPU.md", tmp_path / "gpu.json"
    argv = ["--out", str(md), "--json", str(js), "--isolate", "process", "--steps", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, str(SCRIPT), *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "no GPU: jax backend is cpu; running the tiny CPU check" in res.stdout
    report = json.loads(js.read_text())
    assert report["schema"] == "lshsim-gpu-check/1" and report["status"] == "complete"
    assert report["environment"]["backend"] == "cpu" and report["mode"] == "cpu"
    assert {"date", "git_commit", "settings", "rows", "bf16_vs_fp32", "plans"} <= set(report)
    (row,) = report["rows"]
    assert (row["config"], row["variant"], row["batch"], row["status"]) == (
        "tiny",
        "baseline",
        2,
        "ok",
    )
    assert len(row["times_s"]) == 2 and all(t > 0 and math.isfinite(t) for t in row["times_s"])
    assert row["step_s_median"] > 0 and row["tokens_per_s"] > 0 and row["finite"]
    assert row["compiled_per_device_bytes"] > 0 and "flops_gpu_cost_analysis" not in row
    assert row["peak_bytes"] is None and "mfu" not in row  # no device peaks on a CPU
    # the planner compiles the same program for the same backend: the same bytes and FLOPs,
    # and MFU's FLOPs are the plan's
    assert row["plan_per_device_bytes"] == pytest.approx(row["compiled_per_device_bytes"], rel=0.05)
    assert row["flops_source"] == "cpu-plan"
    assert row["flops_per_step"] == row["plan_flops_per_step"] > 0
    assert row["plan_flops_per_step"] == pytest.approx(row["flops_cpu_cost_analysis"], rel=0.05)
    assert "TFLOP/step from XLA's CPU compiler" in res.stderr
    assert "cpu-plan" in report["flops_sources"]
    assert "flops_gpu_cost_analysis" in report["flops_note"]
    loss = report["bf16_vs_fp32"]
    assert loss["status"] == "ok" and loss["config"] == "tiny"
    assert 0 <= loss["rel_diff"] < 0.01 and loss["per_token_rms"] < 0.1
    text = md.read_text()
    assert "| tiny | baseline | 2 | 32/8 | bfloat16 |" in text
    assert "## bf16 vs float32 loss at initialisation" in text and "| tiny | 2 | 32/8 |" in text


def test_deadline_zero_still_writes_both_files(tmp_path, capsys, monkeypatch):
    """Past its deadline the script measures nothing, writes both files and returns 0."""
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # run() then sets nothing
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "cache"))
    md, js = tmp_path / "GPU.md", tmp_path / "gpu.json"
    argv = ["--deadline-s", "0", "--out", str(md), "--json", str(js), "--isolate", "none"]
    assert _script().main(argv) == 0
    report = json.loads(js.read_text())
    assert report["status"] == "deadline"
    assert [r["status"] for r in report["rows"]] == ["not run: deadline"] * len(report["rows"])
    assert report["bf16_vs_fp32"]["status"] == "not run: deadline"
    assert "not run: deadline" in md.read_text()
    if _cpu_only():
        assert "no GPU: jax backend is cpu" in capsys.readouterr().out


def test_gpu_jobs_come_in_priority_order():
    """small baseline, the loss check, base baseline, then small's and base's variants."""
    gc = _script()
    s = {**gc.MODES["gpu"], "dtype": "bfloat16"}
    order = [(j["kind"], j["config"], j.get("variant")) for j in gc.build_jobs(s)]
    assert order == [
        ("step", "small", "baseline"),
        ("loss", "small", None),
        ("step", "base", "baseline"),
        ("step", "small", "altup-k2"),
        ("step", "small", "productkey"),
        ("step", "small", "tokenid-r5"),
        ("step", "base", "altup-k2"),
        ("step", "base", "productkey"),
        ("step", "base", "tokenid-r5"),
    ]
    no_loss = [(j["kind"], j["config"]) for j in gc.build_jobs({**s, "loss": False})]
    assert ("loss", "small") not in no_loss and len(no_loss) == len(order) - 1
    jobs = [j for j in gc.build_jobs(s) if j["kind"] == "step"]
    batches = {(j["config"], j["batch"]) for j in jobs}
    assert batches == {("small", 64), ("base", 32)}


@pytest.mark.parametrize(
    ("kind", "peak"),
    [
        ("NVIDIA H100 80GB HBM3", 989e12),
        ("NVIDIA H200", 989e12),
        ("NVIDIA H100 PCIe", 756e12),
        ("NVIDIA A100-SXM4-80GB", 312e12),
        ("cpu", None),
    ],
)
def test_peak_flops_by_device_kind(kind, peak):
    assert _script().peak_flops(kind)[0] == peak


def test_derived_statistics_and_markdown_of_a_gpu_row():
    """MFU = the CPU compiler's flops / median time / peak; peak / plan; a row that did not fit."""
    gc = _script()
    row = {
        "config": "small",
        "variant": "baseline",
        "dtype": "bfloat16",
        "batch": 64,
        "input_length": 512,
        "target_length": 114,
        "status": "ok",
        "times_s": [0.02, 0.021, 0.019, 0.02],
        "flops_gpu_cost_analysis": 1.25e12,
        "plan_flops_per_step": 5.0e12,
        "peak_bytes": 18e9,
        "compiled_per_device_bytes": 19e9,
        "plan_per_device_bytes": 20e9,
    }
    gc.derive(row, 1e15)
    assert row["flops_source"] == "cpu-plan" and row["flops_per_step"] == 5.0e12
    assert row["mfu"] == pytest.approx(5.0e12 / 0.02 / 1e15)
    assert row["tokens_per_s"] == pytest.approx(64 * 626 / 0.02)
    assert row["peak_over_plan"] == pytest.approx(0.9)
    line = gc._row_line(row)
    assert line.startswith("| small | baseline | 64 | 512/114 | bfloat16 | 20.00 (")
    assert "| 5 | cpu-plan | 25.0 | 1.25 | 18.00 | 19.00 | 20.00 | 0.90 |" in line
    assert "(5 TFLOP/step from XLA's CPU compiler" in gc._summary(row)
    no_fit = {**row, "variant": "tokenid-r5", "status": "does not fit: XLA needs 99 GB"}
    for key in ("times_s", "step_s_median", "mfu", "peak_bytes", "peak_over_plan"):
        no_fit.pop(key, None)
    assert "| does not fit: XLA needs 99 GB |" in gc._row_line(no_fit)
    # no plan: the analytic estimate, never the GPU's cost analysis
    bare = {k: v for k, v in row.items() if k not in ("plan_flops_per_step", "mfu")}
    bare = gc.derive(bare, 1e15)
    analytic = gc.analytic_flops(gc.variant_config("small", "baseline", "bfloat16"), 64, 512, 114)
    assert bare["flops_source"] == "analytic" and bare["flops_per_step"] == analytic
    assert bare["mfu"] == pytest.approx(analytic / 0.02 / 1e15)
    assert "| analytic |" in gc._row_line(bare) and "analytic estimate" in gc._summary(bare)
    # on the CPU backend the measured step's own cost analysis is the CPU compiler's
    cpu = gc.derive({**bare, "flops_gpu_cost_analysis": None, "flops_cpu_cost_analysis": 4e12}, 0)
    assert cpu["flops_source"] == "cpu-step" and cpu["flops_per_step"] == 4e12


def test_analytic_flops_match_the_cpu_compiler_on_small():
    """The analytic estimate of small's dense step is within 3% of XLA's CPU count.

    5.832e12: ``lshsim plan``'s ``flops_per_step`` of small, bf16, batch 64, 512/114, mesh 1x1
    (jax 0.11.2's CPU compiler, figures/gpu.json); 5.840e12 with jax 0.10.2.
    """
    gc = _script()
    cfg = gc.variant_config("small", "baseline", "bfloat16")
    assert gc.analytic_flops(cfg, 64, 512, 114) == pytest.approx(5.832e12, rel=0.03)
    assert gc.analytic_flops(cfg, 128, 512, 114) == 2 * gc.analytic_flops(cfg, 64, 512, 114)


def test_a_row_that_does_not_fit_is_not_run(monkeypatch):
    """Where XLA's memory analysis exceeds the device's limit, the row reports it and stops."""
    gc = _script()
    monkeypatch.setattr(gc, "_device_memory", lambda: {"bytes_limit": 10**6})
    job = {
        "kind": "step",
        "config": "tiny",
        "variant": "baseline",
        "dtype": "bfloat16",
        "batch": 2,
        "input_length": 32,
        "target_length": 8,
        "warmup": 1,
        "steps": 1,
        "seed": 0,
    }
    out = gc.run_worker(job)
    assert out["status"].startswith("does not fit: XLA needs 0.0 GB, 0.0 GB usable")
    assert out["compiled_per_device_bytes"] > 10**6 and out["flops_cpu_cost_analysis"] > 0
    assert "times_s" not in out and "init_s" not in out
