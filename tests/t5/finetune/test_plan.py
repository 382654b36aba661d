"""``lshsim plan --finetune``: the fine-tuning step's lengths, batch and dropout."""

from __future__ import annotations

import argparse
import json

import pytest

from lshsim.t5.configs import get_config
from lshsim.t5.finetune.plan import FINETUNE_LENGTHS, finetune_step


def test_finetune_step_fills_unset_options():
    args = argparse.Namespace(finetune="glue", batch=None, input_length=None, target_length=7)
    cfg = finetune_step(get_config("tiny"), args)
    assert cfg.dropout_rate == 0.1 and get_config("tiny").dropout_rate == 0.0
    assert (args.batch, args.input_length, args.target_length) == (256, 512, 7)
    assert FINETUNE_LENGTHS == {"glue": (512, 84), "super_glue": (512, 62), "squad": (512, 97)}


def test_plan_cli_row(capsys):
    pytest.importorskip("jax")
    from lshsim.cli.main import main

    argv = ["plan", "--config", "tiny", "--finetune", "squad", "--batch", "2"]
    assert main([*argv, "--input-length", "32", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["batch"], row["input_length"], row["target_length"]) == (2, 32, 97)
