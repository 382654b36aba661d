"""Fixtures of the fine-tuning tests: a pretrained micro run, a keyword task in SST-2 form and
a run fine-tuned on it.

Each is made once per test run and shared by every pytest-xdist worker
(:func:`tests.once_per_run`): the fine-tuned run records the pretrained run's and the data's
paths, so all three are the same folders in every worker. The tests only read them (a test
that continues the fine-tuned run copies it first).
"""

from __future__ import annotations

import random

import pytest

from tests import once_per_run

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

    def compute():
        from lshsim.t5.loop import train

        out = tmp_path_factory.mktemp("pre") / "run"
        cfg = micro.replace(scan_layers=False)
        train(cfg, out, steps=2, corpus=[small_corpus], learning_rate=0.1, progress=False)
        return out

    return once_per_run(tmp_path_factory, "finetune-pretrained", compute)


@pytest.fixture(scope="session")
def keyword(tmp_path_factory):
    """``SST-2/train.tsv`` (400 rows) and ``dev.tsv`` (64 rows) of the keyword task."""

    def compute():
        from tests.t5.finetune import formats

        root = tmp_path_factory.mktemp("kw")
        train, dev = keyword_sst2(400, 0), keyword_sst2(64, 1)
        return formats.write_glue(root, "sst2", train=train, dev=dev)

    return once_per_run(tmp_path_factory, "finetune-keyword", compute)


#: The fine-tuned run's options (``finetune``'s keywords): 2 steps of batch 4, a checkpoint
#: at step 2, 8 dev examples scored (test_resume_equals_uninterrupted continues it to 4).
TUNED = dict(batch_size=4, eval_every=4, checkpoint_every=2, eval_examples=8)


@pytest.fixture(scope="session")
def tuned(pretrained, keyword, tmp_path_factory):
    """``pretrained`` fine-tuned on ``keyword`` for 2 steps with :data:`TUNED`."""
    pytest.importorskip("jax")

    def compute():
        from lshsim.t5.finetune.run import finetune

        out = tmp_path_factory.mktemp("tuned") / "ft"
        finetune(pretrained, "sst2", keyword, out, steps=2, **TUNED)
        return out

    return once_per_run(tmp_path_factory, "finetune-tuned", compute)
