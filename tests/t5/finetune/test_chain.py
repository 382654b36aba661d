"""Memory studies: pretrain -> fine-tune chains (the dry run, and one chain run to the end)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lshsim.launch import Job, LocalLauncher
from lshsim.studies.memory import finetune as ft


def copy_pretrained(payload: dict, run_dir: Path, progress: bool = False) -> dict:
    """A pretraining job's runner that copies a finished run (the chain's first link)."""
    shutil.copytree(payload["source"], run_dir, dirs_exist_ok=True)
    return {"heldout": {"accuracy": 0.5}}


def test_chain_pretrains_then_finetunes(pretrained, keyword, tmp_path):
    pytest.importorskip("jax")
    pre = Job("pre", tmp_path / "pre", f"{__name__}:copy_pretrained", {"source": str(pretrained)})
    setup = ft.FinetuneSetup("sst2", str(keyword), steps=2, batch_size=4)
    (job,) = ft.chain_jobs([pre], setup)
    assert job.run_dir == tmp_path / f"pre-{setup.key()}"
    assert "pre -> finetune sst2 (2 steps, batch 4, lr 0.001, dropout 0.1" in ft.format_chain([job])
    rows, report = ft.launch_chains([job], LocalLauncher(), tmp_path / "studies.json")
    assert report.failed == {}
    row = rows[job.key]
    assert row["pretrain"] == {"accuracy": 0.5} and row["step"] == 2
    assert set(row["dev"]) == {"sst2"} and (tmp_path / "pre" / "result.json").is_file()
    saved = json.loads((tmp_path / "studies_finetune.json").read_text())["runs"]
    assert saved[job.key]["dev"] == row["dev"]
    # done: the next launch runs nothing
    rows2, report2 = ft.launch_chains([job], LocalLauncher(), tmp_path / "studies.json")
    assert report2.done == [] and rows2 == rows


def test_memory_studies_dry_run_prints_the_chains(tmp_path, capsys, keyword):
    from lshsim.studies.memory.cli import run

    argv = ["--study", "table1", "--seeds", "1", "--out", str(tmp_path), "--dry-run"]
    argv += ["--results", str(tmp_path / "m.json"), "--finetune", "sst2"]
    doc, status = run([*argv, "--finetune-data", str(keyword)])
    out = capsys.readouterr().out
    assert status == 0 and len(doc["chains"]) == 4
    assert out.startswith("4 pretrain -> fine-tune chains:")
    assert "table1: AltUp K=2 seed 0: pretrain " in out and "-> finetune sst2 (100 steps" in out
    with pytest.raises(ValueError, match="--finetune-data"):
        run(argv)
    with pytest.raises(ValueError, match="unknown task 'sst3'"):
        run([*argv[:-1], "sst3", "--finetune-data", str(keyword)])
