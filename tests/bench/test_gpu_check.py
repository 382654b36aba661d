"""The GPU check (``python -m lshsim.bench.gpu``) on the CPU: the fallback end to end, its parts.

The end-to-end test runs the check as the GPU machine would (a subprocess), with each row in
a child process as on a GPU, so the children, the background planner and the report files
are all exercised; on a CPU it takes the tiny fallback. Run from a scratch folder without
``--out``, it must leave the committed ``figures/GPU.md`` and ``figures/gpu.json`` alone.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

from lshsim.bench.gpu import report as rep
from lshsim.bench.gpu import run as gpu_run
from lshsim.bench.gpu import settings, worker

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = (ROOT / "figures" / "GPU.md", ROOT / "figures" / "gpu.json")


def _cpu_only() -> bool:
    import jax

    return jax.default_backend() == "cpu"


def _digests() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in COMMITTED}


@pytest.mark.skipif(not _cpu_only(), reason="the CPU fallback runs only without an accelerator")
@pytest.mark.slow
def test_cpu_fallback_writes_its_own_folder_not_figures(tmp_path):
    """Exit 0, the "no GPU" line, a finite positive step time, compile and init times, plan
    and loss entries, in ``gpu-check/`` of the current folder; figures/ untouched."""
    before = _digests()
    argv = ["--isolate", "process", "--steps", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, "-m", "lshsim.bench.gpu", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert _digests() == before and not (ROOT / "gpu-check").exists()
    md, js = tmp_path / "gpu-check" / "GPU.md", tmp_path / "gpu-check" / "gpu.json"
    assert "no GPU: jax backend is cpu; running the tiny CPU check" in res.stdout
    report = json.loads(js.read_text())
    assert report["schema"] == settings.SCHEMA and report["status"] == "complete"
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
    assert row["compile_s"] > 0 and row["init_s"] > row["init_compile_s"] > 0
    assert row["scan_layers"] is True
    # the compiled init holds the state (its outputs) and its draws, less than the step does
    assert 0 < row["init_per_device_bytes"] < row["compiled_per_device_bytes"]
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
    assert report["targets"]["mfu"]["met"] is None and report["targets"]["compile"]["met"] is None
    loss = report["bf16_vs_fp32"]
    assert loss["status"] == "ok" and loss["config"] == "tiny"
    assert 0 <= loss["rel_diff"] < 0.01 and loss["per_token_rms"] < 0.1
    text = md.read_text()
    assert "| tiny | baseline | 2 | 32/8 | bfloat16 |" in text and "| compile s | init s |" in text
    assert "## bf16 vs float32 loss at initialisation" in text and "| tiny | 2 | 32/8 |" in text
    assert "## Targets" in text and "not measured here" in text


def test_deadline_zero_still_writes_both_files(tmp_path, capsys, monkeypatch):
    """Past its deadline the check measures nothing, writes both files (in gpu-check/ of the
    current folder, figures/ untouched) and returns 0."""
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # run() then sets nothing
    monkeypatch.chdir(tmp_path)
    before = _digests()
    assert gpu_run.main(["--deadline-s", "0", "--isolate", "none"]) == 0
    assert _digests() == before
    report = json.loads((tmp_path / "gpu-check" / "gpu.json").read_text())
    assert report["status"] == "deadline"
    assert [r["status"] for r in report["rows"]] == ["not run: deadline"] * len(report["rows"])
    assert report["bf16_vs_fp32"]["status"] == "not run: deadline"
    assert "not run: deadline" in (tmp_path / "gpu-check" / "GPU.md").read_text()
    if _cpu_only():
        assert "no GPU: jax backend is cpu" in capsys.readouterr().out


def test_gpu_jobs_come_in_priority_order():
    """base's measured rows first, then the compile of base's other paper variants, then
    small's rows, the loss check last."""
    s = {**settings.MODES["gpu"], "dtype": "bfloat16"}
    order = [(j["kind"], j["config"], j.get("variant")) for j in settings.build_jobs(s)]
    measured = ("baseline", "altup-k2", "product-keys", "tokenid-r5")
    compiled = (
        "Sum K=2",
        "SameUp K=2",
        "AltUp K=4",
        "Token-ID r0",
        "Softmax r256 b128",
        "Softmax r128 b64",
        "LSH r128 b128",
        "LSH r10 b1024",
    )
    assert order == [
        *[("step", "base", v) for v in measured],
        *[("compile", "base", v) for v in compiled],
        *[("step", "small", v) for v in measured],
        ("loss", "small", None),
    ]
    # every paper variant of base is compiled: measured or compile-only
    from lshsim.t5.paper_variants import paper_variants

    configs = {settings.variant_config("base", v, "bfloat16") for _, c, v in order[:12]}
    assert all(r.config(dtype="bfloat16") in configs for r in paper_variants("base"))
    no_loss = [(j["kind"], j["config"]) for j in settings.build_jobs({**s, "loss": False})]
    assert ("loss", "small") not in no_loss and len(no_loss) == len(order) - 1
    jobs = [j for j in settings.build_jobs(s) if j["kind"] != "loss"]
    assert {(j["config"], j["batch"]) for j in jobs} == {("small", 64), ("base", 32)}


def test_a_variant_is_a_measured_name_or_a_paper_label():
    from lshsim.t5.paper_variants import paper_variants

    lsh = next(r for r in paper_variants("base") if r.label == "LSH r10 b1024")
    assert settings.variant_config("base", "LSH r10 b1024", "bfloat16") == lsh.config(
        dtype="bfloat16"
    )
    with pytest.raises(ValueError, match="variant: unknown 'LSH r1' for base"):
        settings.variant_config("base", "LSH r1", "bfloat16")


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
    assert settings.peak_flops(kind)[0] == peak


def test_derived_statistics_and_markdown_of_a_gpu_row():
    """MFU = the CPU compiler's flops / median time / peak; peak / plan; a row that did not fit."""
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
        "compile_s": 41.25,
        "init_s": 2.5,
    }
    rep.derive(row, 1e15)
    assert row["flops_source"] == "cpu-plan" and row["flops_per_step"] == 5.0e12
    assert row["mfu"] == pytest.approx(5.0e12 / 0.02 / 1e15)
    assert row["tokens_per_s"] == pytest.approx(64 * 626 / 0.02)
    assert row["peak_over_plan"] == pytest.approx(0.9)
    line = rep._row_line(row)
    assert line.startswith("| small | baseline | 64 | 512/114 | bfloat16 | 20.00 (")
    assert "| 5 | cpu-plan | 25.0 | 1.25 | 18.00 | 19.00 | 20.00 | 0.90 | 41.2 | 2.5 |" in line
    assert "(5 TFLOP/step from XLA's CPU compiler" in rep.summary(row)
    no_fit = {**row, "variant": "tokenid-r5", "status": "does not fit: XLA needs 99 GB"}
    for key in ("times_s", "step_s_median", "mfu", "peak_bytes", "peak_over_plan"):
        no_fit.pop(key, None)
    assert "| does not fit: XLA needs 99 GB |" in rep._row_line(no_fit)
    # no plan: the analytic estimate, never the GPU's cost analysis
    bare = {k: v for k, v in row.items() if k not in ("plan_flops_per_step", "mfu")}
    bare = rep.derive(bare, 1e15)
    analytic = rep.analytic_flops(
        settings.variant_config("small", "baseline", "bfloat16"), 64, 512, 114
    )
    assert bare["flops_source"] == "analytic" and bare["flops_per_step"] == analytic
    assert bare["mfu"] == pytest.approx(analytic / 0.02 / 1e15)
    assert "| analytic |" in rep._row_line(bare) and "analytic estimate" in rep.summary(bare)
    # on the CPU backend the measured step's own cost analysis is the CPU compiler's
    cpu = rep.derive({**bare, "flops_gpu_cost_analysis": None, "flops_cpu_cost_analysis": 4e12}, 0)
    assert cpu["flops_source"] == "cpu-step" and cpu["flops_per_step"] == 4e12


def test_analytic_flops_match_the_cpu_compiler_on_small():
    """The analytic estimate of small's dense step is within 3% of XLA's CPU count.

    5.832e12: ``lshsim plan``'s ``flops_per_step`` of small, bf16, batch 64, 512/114, mesh 1x1
    (jax 0.11.2's CPU compiler, figures/gpu.json); 5.840e12 with jax 0.10.2.
    """
    cfg = settings.variant_config("small", "baseline", "bfloat16")
    assert rep.analytic_flops(cfg, 64, 512, 114) == pytest.approx(5.832e12, rel=0.03)
    assert rep.analytic_flops(cfg, 128, 512, 114) == 2 * rep.analytic_flops(cfg, 64, 512, 114)


def test_a_row_that_does_not_fit_is_not_run(monkeypatch):
    """Where XLA's memory analysis exceeds the device's limit, the row reports it and stops."""
    monkeypatch.setattr(worker, "_device_memory", lambda: {"bytes_limit": 10**6})
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
    out = worker.run_worker(job)
    assert out["status"].startswith("does not fit: XLA needs 0.0 GB, 0.0 GB usable")
    assert out["compiled_per_device_bytes"] > 10**6 and out["flops_cpu_cost_analysis"] > 0
    assert "times_s" not in out and "init_s" not in out and out["compile_s"] > 0
    # a compile-only row (another paper variant): compiled and analysed, never run
    out = worker.run_worker({**job, "kind": "compile", "variant": "altup-k2"})
    assert out["status"] == "ok" and out["compile_s"] > 0 and out["scan_layers"] is True
    assert out["compiled_per_device_bytes"] > 0 and "times_s" not in out


def _report(mode: str, mfu: float | None, compile_s: list[float | None], status=None) -> dict:
    """base's baseline (compiled in 50 s), product keys (not a paper variant: never judged,
    however slow), then compile-only rows of base's other paper variants."""
    rows = [
        {"config": "base", "variant": "baseline", "kind": "step", "mfu": mfu, "compile_s": 50.0},
        {"config": "base", "variant": "product-keys", "kind": "step", "compile_s": 500.0},
    ]
    labels = settings.compiled_variants("base")
    rows += [
        {"config": "base", "variant": labels[i], "kind": "compile", "compile_s": c}
        | {"status": "ok" if c is not None else (status or "pending")}
        for i, c in enumerate(compile_s)
    ]
    return {
        "mode": mode,
        "settings": {"dtype": "bfloat16", "compile_configs": ["base"]},
        "rows": rows,
    }


def test_targets_are_judged_only_where_measured():
    """MFU >= 35 % for base's baseline in bf16 on a GPU; every paper variant of the compiled
    configs <= 90 s. A CPU run or a row not reached leaves a target undecided, never met; a
    row over the time or failed to compile misses it at once."""
    met = rep.targets(_report("gpu", 0.36, [80.0, 89.9]))
    assert met["mfu"]["met"] is True and met["compile"]["met"] is True
    assert met["compile"]["slowest_s"] == 89.9 and met["compile"]["compiled"] == 3
    missed = rep.targets(_report("gpu", 0.34, [80.0, 95.0]))
    assert missed["mfu"]["met"] is False and missed["compile"]["met"] is False
    assert missed["compile"]["over_target"] == ["base SameUp K=2"]
    partial = rep.targets(_report("gpu", None, [80.0, None]))
    assert partial["mfu"]["met"] is None and partial["compile"]["met"] is None
    assert partial["compile"]["not_compiled"] == ["base SameUp K=2"]
    failed = rep.targets(_report("gpu", None, [80.0, None], status="out of memory: ..."))
    assert failed["compile"]["met"] is False and failed["compile"]["failed"] == ["base SameUp K=2"]
    early = rep.targets(_report("gpu", None, [95.0, None]))  # over the time before the end
    assert early["compile"]["met"] is False
    cpu = rep.targets(_report("cpu", 0.9, [1.0]))
    assert cpu["mfu"]["met"] is None and cpu["compile"]["met"] is None
    lines = "\n".join(rep._targets_lines(_report("gpu", 0.34, [80.0, 95.0])))
    assert "MFU >= 35 % in bf16 on an H100-class device: NOT met (measured 34.0 %)" in lines
    assert (
        "every paper variant of base compiled in <= 90 s: NOT met (3 compiled, slowest 95.0 s;"
        " over: base SameUp K=2)" in lines
    )
    assert settings.is_paper_variant("base", "tokenid-r5")
    assert not settings.is_paper_variant("base", "product-keys")
    assert not settings.is_paper_variant("tiny", "baseline")


def test_a_compile_only_row_is_summarised_and_bad_compile_configs_refused(capsys):
    """The log line of a compile-only row; --compile-configs takes the paper's sizes only."""
    assert rep.summary({"kind": "compile", "status": "ok", "compile_s": 41.25}) == (
        "compiled in 41.2 s"
    )
    with pytest.raises(SystemExit) as exc:
        gpu_run.parse_args(["--compile-configs", "tiny"])
    assert exc.value.code == 2
    assert "--compile-configs: unknown tiny; choose from small, base, large" in (
        capsys.readouterr().err
    )


def test_the_committed_targets_are_the_checks():
    """figures/GPU.md states the targets the check judges (one owner: settings)."""
    text = COMMITTED[0].read_text()
    mfu, seconds = 100 * settings.TARGET_MFU, settings.TARGET_COMPILE_S
    assert f"`base` baseline at >= {mfu:.0f} % MFU in bf16 on an H100-class device" in text
    assert f"every paper variant compiled in <= {seconds:.0f} s" in text
    assert "python3 -m lshsim.bench.gpu --out $OUT/GPU.md" in text


def test_a_compile_only_row_runs_through_the_loop(tmp_path, monkeypatch, capsys):
    """A compile-only job goes through the check's loop (the worker stubbed): its result is
    recorded, logged and rendered in the compile table, and the report written."""
    s = {**settings.MODES["gpu"], "dtype": "bfloat16", "loss": False, "deadline_s": 60.0}
    s.update(isolate=False, mem_fraction="0.90")
    jobs = settings.build_jobs(s)
    job = next(j for j in jobs if j["kind"] == "compile")
    result = {"status": "ok", "compile_s": 3.0, "compiled_per_device_bytes": 2e9}
    monkeypatch.setattr(gpu_run, "run_worker", lambda j: dict(result))
    data = {"mode": "gpu", "settings": s, "rows": jobs, "environment": {}}
    report = rep.Report(tmp_path / "GPU.md", tmp_path / "gpu.json", data)
    monkeypatch.setattr(rep, "render_markdown", lambda d: "\n".join(rep._compile_table(d)))
    gpu_run._run_job(job, s, report, time.monotonic() + 60, tmp_path, None, None)
    assert job["status"] == "ok" and job["compile_s"] == 3.0
    assert f"{job['variant']}: compiled in 3.0 s" in capsys.readouterr().err
    assert f"| base | {job['variant']} | 32 | 512/114 | ok | 3.0 | 2.00 |" in (
        (tmp_path / "GPU.md").read_text()
    )
    assert json.loads((tmp_path / "gpu.json").read_text())["targets"]["compile"]["compiled"] == 1
