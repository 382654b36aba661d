"""lshsim.studies.memory: the registry, budgets, dry run, a micro run with resume, plots."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")
pytest.importorskip("sentencepiece")

from lshsim.plots import memory as memory_plots
from lshsim.studies import memory as ms
from lshsim.studies.memory import runner
from lshsim.t5.configs import T5Config, get_config
from lshsim.t5.loop import evaluate_run
from tests.t5.conftest import MICRO

#: The micro config as overrides of "tiny", and a few-step setup on very short inputs.
MICRO_OVERRIDES = tuple(
    (f.name, getattr(MICRO, f.name))
    for f in dataclasses.fields(T5Config)
    if getattr(MICRO, f.name) != getattr(get_config("tiny"), f.name)
)
MICRO_SETUP = ms.Setup(
    "tiny",
    steps=3,
    batch_size=2,
    input_length=24,
    warmup_steps=2,
    checkpoint_every=3,
    eval_examples=10,
    eval_batch=4,
    overrides=MICRO_OVERRIDES,
)


def test_registry_has_the_four_studies_with_both_sizes():
    """The registry enumerates table1, lookups, softmax_sweep and table5, each smoke and real."""
    assert list(ms.STUDIES) == ["table1", "lookups", "softmax_sweep", "table5"]
    for study in ms.STUDIES.values():
        assert set(study.setups) == {"smoke", "real"}
        assert study.setups["smoke"].config == "tiny"
        real = study.setups["real"]
        assert (real.config, real.batch_size, real.input_length) == ("small", 256, 512)
    assert ms.STUDIES["lookups"].setups["real"].steps == 100_000
    assert ms.STUDIES["table5"].setups["real"].steps == 500_000


@pytest.mark.parametrize("variant", ["smoke", "real"])
def test_every_run_config_validates_and_starts_with_the_baseline(variant):
    """Every planned config is a valid T5Config that round-trips; the baseline comes first."""
    for name in ms.STUDIES:
        specs = ms.plan(name, variant, seeds=1)
        assert specs[0].variant.is_baseline
        assert specs[0].config == specs[0].setup.base_config()
        for spec in specs:
            assert T5Config.from_dict(spec.config.to_dict()) == spec.config
            assert spec.config.name == spec.setup.config


def test_lookup_points_respect_the_token_id_budget():
    """Softmax and LSH points meet max(2 rank, 1) * buckets ~ vocabulary; Token-ID is rank 0."""
    for variant in ("smoke", "real"):
        specs = ms.plan("lookups", variant, seeds=1)
        vocab = specs[0].config.vocab_size
        methods = {}
        for spec in specs[1:]:
            cfg = spec.config
            units = ms.budget_units(cfg.expert_rank, cfg.num_buckets)
            assert vocab / math.sqrt(2) <= units <= vocab * math.sqrt(2), spec.variant.label
            methods.setdefault(cfg.lookup, []).append((cfg.expert_rank, cfg.num_buckets))
        assert methods["tokenid"] == [(0, vocab)]
        assert methods["softmax"] == methods["lsh"]
    assert ms.budget_grid(32128) == [(r, 2**15 // max(2 * r, 1)) for r in ms.REAL_RANKS]
    assert ms.within_budget(128, 128, 32128)  # the paper's best LSH point (Table 4)
    assert not ms.within_budget(0, 2**15, 2176)


def test_shared_runs_are_planned_once():
    """The baseline (and AltUp K=2, softmax r16 b64) are trained once across the studies."""
    specs = [s for name in ms.STUDIES for s in ms.plan(name, "smoke", seeds=3)]
    assert len(specs) == 3 * (4 + 6 + 5 + 3)
    assert len(ms.unique_runs(specs)) == 3 * 13
    a, b = ms.plan("table1", "smoke", 1)[3], ms.plan("table5", "smoke", 1)[1]
    assert a.variant.label == b.variant.label == "AltUp K=2"
    assert a.key == b.key
    assert ms.plan("table1", "smoke", 2)[0].key != ms.plan("table1", "smoke", 2)[1].key


def test_real_dry_run_lists_the_expected_runs(tmp_path, capsys):
    """3 seeds: 12 + 60 + 78 + 9 runs, 147 distinct; nothing is trained or written."""
    json_path = tmp_path / "m.json"
    res = ms.main(["--variant", "real", "--dry-run", "--results", str(json_path)])
    out = capsys.readouterr().out
    assert len(res["runs"]) == 147
    for name, n in (("table1", 12), ("lookups", 60), ("softmax_sweep", 78), ("table5", 9)):
        assert f"## {name}: {n} runs (small, " in out
    assert "total: 159 runs in the studies, 147 distinct, 147 not yet done" in out
    assert not json_path.exists()


def test_out_inside_the_repository_is_refused(tmp_path):
    with pytest.raises(SystemExit) as exc:
        ms.main(["--out", str(ms.REPO / "runs"), "--results", str(tmp_path / "m.json")])
    assert exc.value.code == 2


@pytest.mark.slow
def test_micro_run_writes_rows_and_resumes(tmp_path, monkeypatch):
    """3 steps of table5's baseline and AltUp K=2 (1+1 layers) write finite rows; a rerun
    trains nothing; a run whose row was lost is finished from its directory; --plot draws."""
    monkeypatch.setenv("LSHSIM_CACHE", str(tmp_path / "cache"))
    out, json_path = tmp_path / "runs", tmp_path / "figs" / "m.json"
    specs = {"table5": ms.plan("table5", "smoke", seeds=1, setup=MICRO_SETUP)[:2]}
    logs = []
    doc = ms.execute(specs, "smoke", out, json_path, log=logs.append)
    assert logs[0] == "2 distinct runs, 0 already done, 2 to do"
    saved = json.loads(json_path.read_text())
    assert saved["runs"] == json.loads(json.dumps(doc["runs"]))
    d, v = MICRO.d_model, MICRO.vocab_size
    for spec in specs["table5"]:
        row = saved["runs"][spec.key]
        assert row["seed"] == 0 and row["step"] == 3
        assert row["config"]["num_encoder_layers"] == row["config"]["num_decoder_layers"] == 1
        for ev in (row["heldout"], row["final_eval"]):
            assert math.isfinite(ev["loss"]) and 0 <= ev["accuracy"] <= 1
        assert row["heldout"]["examples"] == 12  # 10 rounded up to whole batches of 4
        k = row["config"]["memory_k"] if row["changes"] else 1
        assert row["extra_params"]["embedding"] == 2 * (k - 1) * d * v  # input + output tables
        assert row["params"]["total"] > 0 and row["budget_units"] == 0
    # The held-out evaluation is the library's (lshsim eval --examples), and its first 4
    # batches are train's final evaluation, content accuracy included.
    first = saved["runs"][specs["table5"][0].key]
    assert set(first["heldout"]) == {
        *("loss", "accuracy", "tokens", "content_loss", "content_accuracy", "content_tokens"),
        *("examples", "held_out_chunks"),
    }
    ev = evaluate_run(Path(first["run_dir"]), examples=10, batch_size=4)
    assert {k: ev[k] for k in first["heldout"]} == first["heldout"]
    again = evaluate_run(Path(first["run_dir"]), examples=4 * 2, batch_size=2)
    for key in ("loss", "content_loss"):
        assert again[key] == pytest.approx(first["final_eval"][key], rel=1e-6)
    for key in ("accuracy", "tokens", "content_accuracy", "content_tokens"):
        assert again[key] == first["final_eval"][key]
    summary = saved["summary"]["smoke"]["table5"]
    assert [r["label"] for r in summary] == ["Baseline", "AltUp K=2"]
    assert summary[1]["n"] == 1 and "accuracy_diff_vs_baseline" in summary[1]
    assert 0 <= first["heldout"]["content_tokens"] < first["heldout"]["tokens"]

    def no_training(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(runner, "train_one", no_training)
    logs.clear()
    ms.execute(specs, "smoke", out, json_path, log=logs.append)
    assert logs == ["2 distinct runs, 2 already done, 0 to do"]
    assert json.loads(json_path.read_text())["runs"] == saved["runs"]

    # A row lost after training (a kill between train and the writes of result.json and the
    # JSON): the run directory is resumed at its last step, nothing is retrained, and the
    # same numbers come back.
    monkeypatch.undo()
    monkeypatch.setenv("LSHSIM_CACHE", str(tmp_path / "cache"))
    lost = specs["table5"][1].key
    trimmed = dict(saved)
    trimmed["runs"] = {k: r for k, r in saved["runs"].items() if k != lost}
    json_path.write_text(json.dumps(trimmed))
    (out / lost / "result.json").unlink()
    logs.clear()
    doc = ms.execute(specs, "smoke", out, json_path, log=logs.append)
    assert logs[0] == "2 distinct runs, 1 already done, 1 to do"
    assert doc["runs"][lost]["final_eval"]["loss"] == pytest.approx(
        saved["runs"][lost]["final_eval"]["loss"], rel=1e-6
    )

    doc = ms.main(["--plot", "--study", "table5", "--results", str(json_path)])
    assert sorted(p.name for p in json_path.parent.glob("memory_*")) == [
        "memory_table5.png",
        "memory_table5.svg",
    ]


def test_t_interval_matches_the_student_t_quantile():
    mean, lo, hi = memory_plots.t_interval([1.0, 2.0, 3.0])
    half = 4.302652729911275 / math.sqrt(3)  # t_{0.975, 2} * s / sqrt(n), s = 1
    assert (mean, lo, hi) == pytest.approx((2.0, 2.0 - half, 2.0 + half))
    assert math.isnan(memory_plots.t_interval([1.0])[1])
    assert all(math.isnan(x) for x in memory_plots.t_interval([]))


def test_plot_groups_draws_one_column_per_variant():
    groups = [
        {"label": "Baseline", "accuracy": [0.3, 0.31, 0.29], "loss": [5.0, 5.1, 4.9]},
        {"label": "Sum K=2", "series": "sum", "accuracy": [0.32, 0.3], "loss": [4.8, 4.9]},
        {"label": "AltUp K=2", "series": "altup", "accuracy": [0.33], "loss": [4.7]},
        {"label": "AltUp K=4", "series": "altup", "accuracy": [0.3, 0.3], "loss": [5, 5]},
    ]
    fig = memory_plots.plot_groups(groups, title="t")
    acc, loss = fig.axes
    assert [t.get_text() for t in loss.get_xticklabels()] == [g["label"] for g in groups]
    assert len(acc.containers) == len(loss.containers) == 4  # one errorbar per group
    assert len(acc.collections) >= 4  # per-seed points (and the baseline band)
    three = (*memory_plots.METRICS, memory_plots.CONTENT_ACCURACY)
    for g in groups:
        g["content_accuracy"] = [0.01] * len(g["accuracy"])
    assert len(memory_plots.plot_groups(groups, metrics=three).axes) == 3
    with pytest.raises(ValueError, match="groups"):
        memory_plots.plot_groups([])


def test_plot_sweep_draws_one_line_per_bucket_count():
    cells = [
        {"rank": r, "buckets": b, "accuracy": [0.3 + r / 1000, 0.31], "loss": [5.0, 5.1]}
        for r in (0, 16)
        for b in (8, 64)
    ]
    base = {"accuracy": [0.3, 0.3], "loss": [5.0, 5.0]}
    fig = memory_plots.plot_sweep(cells, baseline=base, title="sweep")
    acc = fig.axes[0]
    labels = acc.get_legend_handles_labels()[1]
    assert [s for s in labels if "buckets" in s] == ["8 buckets", "64 buckets"]
    assert len(acc.containers) == 4
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["0", "16"]


def test_steps_override_plans_distinct_runs(tmp_path, capsys):
    """--steps N keys its runs apart from the variant's own (they go to their own JSON)."""
    json_path = tmp_path / "long.json"
    default = ms.main(["--study", "table5", "--dry-run", "--results", str(json_path)])["runs"]
    longer = ms.main(
        ["--study", "table5", "--steps", "7", "--dry-run", "--results", str(json_path)]
    )["runs"]
    assert [s.setup.steps for s in longer] == [7] * len(default)
    assert {s.key for s in longer}.isdisjoint(s.key for s in default)
    with pytest.raises(SystemExit):
        ms.main(["--study", "table5", "--steps", "0", "--dry-run"])
    assert "--steps: must be >= 1" in capsys.readouterr().err
