"""Memory-augmented models train: every lookup x memory combination, under ``lshsim train``."""

from __future__ import annotations

import itertools
import json
import shutil

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.cli.main import main  # noqa: E402
from lshsim.t5.configs import LOOKUPS, MEMORY_METHODS  # noqa: E402
from lshsim.t5.scan import to_layout  # noqa: E402
from lshsim.t5.steps import (  # noqa: E402
    make_optimizer,
    make_train_step,
    seed_key_data,
    state_initializer,
)

from .conftest import MICRO  # noqa: E402

#: The paper's lookups with every method; the lookups beyond the paper with the plain model
#: (their own tests in test_lookup_layers.py check them against NumPy).
PAPER_LOOKUPS = ("none", "tokenid", "softmax", "lsh")
#: Gemma 3n's AltUp (beyond the paper) with Token-ID (its probe and checkpoints go through
#: the same code as the paper's methods).
PAPER_METHODS = tuple(m for m in MEMORY_METHODS if m != "gemma3n")
COMBOS = list(itertools.product(PAPER_METHODS, PAPER_LOOKUPS))
COMBOS += [("gemma3n", "tokenid")]
COMBOS += [("none", lookup) for lookup in LOOKUPS if lookup not in PAPER_LOOKUPS]
#: Through the CLI: every method and every lookup exactly once (all 16 pass too, ~10 s each;
#: the in-process test below covers all 16 with the same train step).
CLI_COMBOS = [
    ("none", "lsh"),
    ("sum", "tokenid"),
    ("sameup", "softmax"),
    ("altup", "none"),
]
LOOKUP_FLAGS = {
    "none": [],
    "tokenid": ["--lookup", "tokenid"],
    "softmax": ["--lookup", "softmax", "--rank", "2", "--buckets", "8"],
    "lsh": ["--lookup", "lsh", "--rank", "2", "--buckets", "8"],
}
LOOKUP_FIELDS = {
    "none": {},
    "tokenid": {"lookup": "tokenid", "expert_rank": 2},
    "softmax": {"lookup": "softmax", "expert_rank": 2, "buckets": 8},
    "lsh": {"lookup": "lsh", "expert_rank": 2, "buckets": 8},
    "productkey": {"lookup": "productkey", "expert_rank": 0, "buckets": 16, "topk": 2},
    "ngram": {"lookup": "ngram", "expert_rank": 2, "buckets": 31, "ngram": 2},
    "engram": {"lookup": "engram", "buckets": 31, "ngram": 3, "lookup_heads": 2},
}


def _batch(cfg, seed=0, b=4, length=16, targets=6):
    rng = np.random.default_rng(seed)
    tok = rng.integers(2, cfg.vocab_size, (b, length + 2 * targets))
    return {
        "encoder_input_tokens": jnp.asarray(tok[:, :length], jnp.int32),
        "decoder_input_tokens": jnp.asarray(tok[:, length : length + targets], jnp.int32),
        "decoder_target_tokens": jnp.asarray(tok[:, length + targets :], jnp.int32),
        "decoder_loss_weights": jnp.ones((b, targets), jnp.float32),
    }


def _memory_leaves(tree, path=()):
    """Leaves of the memory parameters: experts, AltUp scalars, the wide embedding."""
    for k, v in tree.items():
        p = (*path, k)
        if isinstance(v, dict):
            yield from _memory_leaves(v, p)
        elif "expert" in p or any(s.startswith("altup_") for s in p) or "token_embedder" in p:
            yield "/".join(p), v


def _memory_leaves_np(params):
    """``{path: NumPy array}`` of the memory leaves, unrolled on the host: slicing the scanned
    stacks on the device compiled one tiny program per leaf shape and layer."""
    return dict(_memory_leaves(to_layout(jax.device_get(params), scanned=False)))


@pytest.mark.parametrize(("method", "lookup"), COMBOS)
def test_every_combination_fits_one_batch_and_updates_its_memory(method, lookup):
    # MICRO's one layer per stack: a second encoder layer cost 1.2 s of CPU per combination
    # and no check needs it (a stop_gradient on the experts' output or on AltUp's p and g
    # still fails it; the alternation itself: test_memory.py)
    cfg = MICRO.replace(memory=method, **LOOKUP_FIELDS[lookup])
    opt = make_optimizer(cfg, learning_rate=0.05, warmup_steps=1)
    # the state initialised op by op: the ops' programs are shared by the combinations,
    # where init_state compiled one program per combination (102.6 -> 77.1 s of CPU for the
    # 20); init_state's own checks are test_steps.py's and test_scan_layers.py's
    state = state_initializer(cfg, opt)(seed_key_data(0))
    before = _memory_leaves_np(state["params"])
    step = jax.jit(make_train_step(cfg, opt, 0))
    batch = _batch(cfg)
    losses = []
    for _ in range(8):
        state, m = step(state, batch)
        assert bool(m["finite"])
        losses.append(float(m["loss"]))
    assert losses[-1] < losses[0] - 0.5
    after = _memory_leaves_np(state["params"])
    moved = [k for k in before if not np.array_equal(before[k], after[k])]
    expected = {"expert"} if lookup != "none" else set()
    if method in ("sameup", "altup", "gemma3n"):
        expected.add("altup_")
    for part in expected:
        assert any(part in k for k in moved), f"no {part} parameter moved: {sorted(moved)}"


def test_cli_combinations_cover_every_method_and_paper_lookup():
    methods, lookups = zip(*CLI_COMBOS, strict=True)
    assert sorted(methods) == sorted(PAPER_METHODS) and sorted(lookups) == sorted(PAPER_LOOKUPS)


@pytest.mark.parametrize(("method", "lookup"), CLI_COMBOS)
@pytest.mark.slow
def test_combinations_train_under_lshsim_train(capsys, tmp_path, method, lookup):
    argv = [
        "train", "--config", "tiny", "--steps", "2", "--batch", "2", "--input-length", "32",
        "--out", str(tmp_path / "run"), "--json", "--memory", method, *LOOKUP_FLAGS[lookup],
    ]  # fmt: skip
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["step"] == 2 and np.isfinite(summary["final_eval"]["loss"])
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["config"]["memory"] == method and run["config"]["lookup"] == lookup
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").open()]
    assert all(np.isfinite(r["loss"]) for r in records)


def test_resume_refuses_another_memory_config(capsys, tmp_path):
    base = ["train", "--config", "tiny", "--steps", "1", "--batch", "2", "--input-length", "32"]
    out = ["--out", str(tmp_path / "r"), "--json"]
    assert main([*base, *out, "--memory", "altup"]) == 0
    capsys.readouterr()
    code = main([*base[:4], "2", *base[5:], *out, "--memory", "sameup", "--resume"])
    assert code == 2
    err = capsys.readouterr().err
    assert "differs in memory" in err and err.count("\n") == 1
    # resuming to a step the run has reached would do nothing: refused (issue 48)
    assert main([*base, *out, "--memory", "altup", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "--steps 1: the run in" in err and "at step 1 already" in err and err.count("\n") == 1
    # a start cut short (run.json, no checkpoint yet) is started again by the same command
    shutil.rmtree(tmp_path / "r" / "checkpoints")
    assert main([*base, *out, "--memory", "altup"]) == 0
    assert json.loads(capsys.readouterr().out)["step"] == 1


def test_router_losses_are_logged_and_trained(tmp_path, small_corpus):
    from lshsim.t5.loop import train

    cfg = MICRO.replace(lookup="softmax", buckets=4, router_balance_loss=0.01, router_z_loss=0.001)
    res = train(cfg, tmp_path / "r", steps=3, corpus=[small_corpus], progress=False)
    assert np.isfinite(res["final_eval"]["loss"])
    records = [json.loads(line) for line in (tmp_path / "r" / "metrics.jsonl").open()]
    router = [r["router_loss"] for r in records if r["split"] == "train"]
    # balance >= coefficient (its minimum is 1 per layer) and z-loss > 0, two layers
    assert all(r > 2 * 0.01 for r in router)
