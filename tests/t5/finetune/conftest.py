"""Fixtures of the fine-tuning tests: a pretrained micro run and a keyword task in SST-2 form."""

from __future__ import annotations

import random

import pytest

WORDS = "file list value function module return object class string number data name".split()


def keyword_sst2(n: int, seed: int) -> str:
    """SST-2-format rows whose label is decided by one keyword: "good" 1, "bad" 0."""
    rng = random.Random(seed)
    rows = ["sentence\tlabel"]
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 7))]
        label = rng.randint(0, 1)
        words.insert(rng.randint(0, len(words)), "good" if label else "bad")
        rows.append(f"{' '.join(words)}\t{label}")
    return "\n".join(rows) + "\n"


@pytest.fixture(scope="session")
def pretrained(micro, small_corpus, tmp_path_factory):
    """A micro model pretrained for 2 steps (the run folder a user would fine-tune).

    Unrolled, as every run was before scanning became the default: each fine-tuning test
    converts its parameters to the scanned layout (the fine-tuning default)."""
    pytest.importorskip("jax")
    from lshsim.t5.loop import train

    out = tmp_path_factory.mktemp("pre") / "run"
    cfg = micro.replace(scan_layers=False)
    train(cfg, out, steps=2, corpus=[small_corpus], learning_rate=0.1, progress=False)
    return out


@pytest.fixture(scope="session")
def keyword(tmp_path_factory):
    """``SST-2/train.tsv`` (400 rows) and ``dev.tsv`` (64 rows) of the keyword task."""
    from tests.t5.finetune import formats

    root = tmp_path_factory.mktemp("kw")
    return formats.write_glue(root, "sst2", train=keyword_sst2(400, 0), dev=keyword_sst2(64, 1))
