"""Scanned layers (``scan_layers``): the same function, updates and cost as the unrolled model."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

optax = pytest.importorskip("optax")

from lshsim.t5.model import T5, init_params  # noqa: E402
from lshsim.t5.scan import ragged_paths, stack_layers, unstack_layers  # noqa: E402
from lshsim.t5.steps import init_state, make_optimizer, make_train_step  # noqa: E402

B, L, T = 4, 16, 8


@pytest.fixture(scope="module")
def configs(micro):
    """Unrolled and scanned configs: 3 + 2 layers, softmax rank-2 experts with router losses,
    widths of 128 so that Adafactor factors the kernels (its per-layer factoring is tested)."""
    cfg = micro.replace(
        d_model=128, d_ff=128, num_encoder_layers=3, num_decoder_layers=2,
        lookup="softmax", expert_rank=2, buckets=8, router_z_loss=1e-2, router_jitter=0.0,
        scan_layers=False,
    )  # fmt: skip
    return cfg, cfg.replace(scan_layers=True)


@pytest.fixture(scope="module")
def params(configs):
    """The unrolled model's ``init_params`` at key 0 (eager, once for the module's tests)."""
    return init_params(configs[0], jax.random.key(0))


def _numpy(tree):
    """``tree``'s leaves as NumPy arrays: host arithmetic compiles no tiny XLA programs."""
    return jax.tree.map(np.asarray, tree)


def _batch():
    rng = np.random.default_rng(0)
    return {
        "encoder_input_tokens": rng.integers(1, 300, (B, L)).astype(np.int32),
        "decoder_input_tokens": rng.integers(1, 300, (B, T)).astype(np.int32),
        "decoder_target_tokens": rng.integers(1, 300, (B, T)).astype(np.int32),
        "decoder_loss_weights": np.ones((B, T), np.int32),
    }


def _close(a, b, rel):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        assert x.shape == y.shape
        assert np.max(np.abs(x - y)) <= rel * max(np.max(np.abs(x)), 1e-30)


def test_layouts_round_trip_and_forward_agrees(configs, params):
    """``stack_layers`` gives the scanned model's tree; both models give the same logits."""
    cfg, scfg = configs
    stacked = stack_layers(params)
    shapes = jax.tree.map(
        lambda a: a.shape, jax.eval_shape(lambda: init_params(scfg, jax.random.key(1)))
    )
    assert jax.tree.map(lambda a: a.shape, stacked) == shapes
    assert jax.tree.structure(unstack_layers(stacked)) == jax.tree.structure(params)
    _close(unstack_layers(stacked), params, 0.0)
    toks = jax.numpy.asarray(_batch()["encoder_input_tokens"])
    a = jax.jit(T5(cfg).apply)({"params": params}, toks, toks)  # compiled: not op by op
    b = jax.jit(T5(scfg).apply)({"params": stacked}, toks, toks)
    _close(b, a, 1e-5)


@pytest.mark.slow
def test_train_steps_agree(configs, params):
    """Two Adafactor steps (per-layer factoring, clipping and scale) move every parameter as
    on the unrolled model. Tolerance: float32 sums in another order (the scanned backward
    accumulates the same products), 1e-4 of each tensor's largest entry.

    Both start from the module's ``init_params`` (no compiled ``init_state`` of its own:
    the start is the same for both layouts either way), the layouts converted on the host."""
    cfg, scfg = configs
    batch = _batch()
    start = {"step": jax.numpy.asarray(0, jax.numpy.int32), "params": _numpy(params)}
    runs = {}
    for c in (cfg, scfg):
        opt = make_optimizer(c, learning_rate=1.0)
        params = stack_layers(start["params"]) if c.scanned else start["params"]
        state = {**start, "params": params, "opt_state": jax.jit(opt.init)(params)}
        step = jax.jit(make_train_step(c, opt, 0))
        metrics = []
        for _ in range(2):
            state, m = step(state, batch)
            metrics.append(float(m["loss"]))
        runs[c.scanned] = state, metrics
    (plain, m0), (scanned, m1) = runs[False], runs[True]
    np.testing.assert_allclose(m1, m0, rtol=1e-5)
    plain, scanned = _numpy(plain), _numpy(scanned)
    moved = jax.tree.map(lambda a, b: np.abs(a - b).max(), plain["params"], start["params"])
    assert min(jax.tree.leaves(moved)) > 0  # every tensor moved: agreement is not vacuous
    _close(unstack_layers(scanned["params"]), plain["params"], 1e-4)
    # the per-layer optimiser state: factored moments with the leading layer axis
    v_row = scanned["opt_state"].per_layer
    rows = [x for x in jax.tree.leaves(v_row) if x.ndim == 2 and x.shape[0] == 3]
    assert rows, "no stacked factored moment"


#: Every memory method and every lookup with per-layer data, two to a model (3 + 2 layers: an
#: AltUp K = 2 encoder computes blocks 0, 1, 0), on micro widths; Engram's tables differ in
#: size from layer to layer (kept per layer beside the scan); Token-ID's table is the
#: vocabulary (softmax: ``configs`` above).
VARIANTS = {
    "altup+lsh": {"memory": "altup", "lookup": "lsh", "buckets": 8, "expert_rank": 2},
    "sameup+ngram": {"memory": "sameup", "memory_k": 3, "lookup": "ngram", "buckets": 16,
                     "lookup_heads": 2},
    "gemma3n+crosspolytope": {"memory": "gemma3n", "lookup": "lsh", "buckets": 8,
                              "lsh_family": "crosspolytope"},
    "sum+productkey": {"memory": "sum", "lookup": "productkey", "buckets": 16, "topk": 2},
    "engram": {"lookup": "engram", "buckets": 16, "lookup_heads": 2, "ngram": 3},
    "tokenid": {"lookup": "tokenid", "expert_rank": 2},
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_scans_with_the_unrolled_init_and_losses(micro, variant):
    """Scanned by default: from one seed the scanned model starts from the unrolled model's
    parameters, stacked (exactly), its gradients there are the unrolled model's (1e-4 of
    each tensor's largest entry; float32 sums in another order: 3.2e-5 seen), and three
    steps give the same losses (1e-4 relative).

    The steps are plain gradient descent, so the first one's move is the gradient itself and
    one compiled step serves both checks. Adafactor would hide the gradients: its first
    update of an entry is about ``g / |g|``, so an entry whose gradient is float noise moves
    by a full step in either direction (Engram: a table entry at -5.9e-9, against 1.2e-2 for
    the tensor, flipped sign, and after three steps some entries differed by 29 % of the
    tensor's largest). The per-layer Adafactor is checked by ``test_train_steps_agree``.
    """
    cfg = micro.replace(num_encoder_layers=3, num_decoder_layers=2, **VARIANTS[variant])
    assert cfg.scan_layers and cfg.scanned  # the default
    unrolled = cfg.replace(scan_layers=False)
    batch, rate = _batch(), 0.5
    runs = {}
    for c in (unrolled, cfg):
        opt = optax.sgd(rate)
        state = init_state(c, opt, 7)
        start = _numpy(state["params"])  # host arithmetic below: no eager XLA op per shape
        step = jax.jit(make_train_step(c, opt, 0))
        losses, grad = [], None
        for _ in range(3):
            state, m = step(state, batch)
            losses.append(float(m["loss"]))
            if grad is None:  # the first move: -rate * gradient
                moved = _numpy(state["params"])
                grad = jax.tree.map(lambda a, b: (a - b) / np.float32(rate), start, moved)
        runs[c.scanned] = start, grad, losses
    (start0, grad0, loss0), (start1, grad1, loss1) = runs[False], runs[True]
    _close(start1, stack_layers(start0, ragged_paths(cfg)), 0.0)
    _close(unstack_layers(grad1), grad0, 1e-4)
    np.testing.assert_allclose(loss1, loss0, rtol=1e-4)
    assert loss0[2] != loss0[0]  # the steps moved the model


def test_a_record_without_the_field_is_unrolled(micro):
    """Runs recorded before scanning was the default have no ``scan_layers``: unrolled."""
    from lshsim.t5.configs import T5Config

    record = micro.to_dict()
    assert T5Config.from_dict(record).scan_layers is True
    del record["scan_layers"]
    assert T5Config.from_dict(record).scan_layers is False


def test_an_unscannable_plugin_lookup_runs_unrolled(micro, monkeypatch, capsys):
    """A lookup that declares ``scannable = False`` (a plugin's) runs unrolled under the
    default, and an explicit ``--scan-layers`` with it is one line, exit 2."""
    from lshsim.cli.main import main
    from lshsim.t5.lookups import LOOKUPS

    monkeypatch.setattr(type(LOOKUPS["ngram"]), "scannable", False)
    cfg = micro.replace(lookup="ngram", buckets=16)
    assert cfg.scan_layers and not cfg.scanned
    assert "layers_0" in jax.eval_shape(lambda: init_params(cfg, jax.random.key(0)))["encoder"]
    argv = ["plan", "--config", "tiny", "--lookup", "ngram", "--scan-layers", "--batch", "4"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--scan-layers: lookup ngram" in err


def test_hf_and_shardings_of_the_scanned_layout(configs, params):
    """HF export reads the stacked layers as the unrolled ones, and import stacks them; the
    per-layer optimiser's factored moments are placed like their parameter's slice."""
    from lshsim.t5.hf import params_from_hf, params_to_hf
    from lshsim.t5.plan import host_mesh
    from lshsim.t5.sharding import train_state_shardings

    cfg, scfg = configs
    params = _numpy(params)
    cfg, scfg = cfg.replace(lookup="none"), scfg.replace(lookup="none")  # HF T5 has no experts
    params = {k: v for k, v in params.items()}
    for stack in ("encoder", "decoder"):
        params[stack] = {
            name: {k: v for k, v in layer.items() if k != "expert"} if name.startswith("layers_")
            else layer
            for name, layer in params[stack].items()
        }  # fmt: skip
    hf = params_to_hf(params, cfg)
    stacked = params_to_hf(stack_layers(params), scfg)
    assert hf.keys() == stacked.keys()
    assert all(np.array_equal(hf[k], stacked[k]) for k in hf)
    back = params_from_hf(hf, scfg)
    _close(back, stack_layers(params), 0.0)
    _, shardings = train_state_shardings(scfg, make_optimizer(scfg), host_mesh(1, 1))
    enc = shardings["opt_state"].per_layer[0]
    specs = [s.spec for s in jax.tree.leaves(enc)]
    assert specs and all(len(s) == 0 or s[0] is None for s in specs)  # the layers axis: whole


def test_cost_counts_every_scanned_layer(micro):
    """``lshsim cost``'s FLOPs per token: the scanned model's equal the unrolled model's (XLA
    prices a loop's body once; the other passes are added). Forward within 1% (the programs
    differ in layout only); the gradient's within 3%: the scan's backward recomputes each
    layer's elementwise operations (``SCAN_SAVES``), 1.3% more at this micro width."""
    from lshsim.t5.cost import flops_per_token

    cfg = micro.replace(
        num_encoder_layers=3, num_decoder_layers=2, lookup="tokenid", scan_layers=False
    )
    scfg = cfg.replace(scan_layers=True)
    a, b = (flops_per_token(c, input_length=16, target_length=8) for c in (cfg, scfg))
    assert b["flops_per_token"] == pytest.approx(a["flops_per_token"], rel=0.01)
    assert b["train_flops_per_token"] == pytest.approx(a["train_flops_per_token"], rel=0.03)
    assert b["train_flops_per_token"] >= a["train_flops_per_token"]  # recomputation, not less


def test_the_plan_says_its_layers_are_scanned():
    """``lshsim plan --scan-layers`` reports which program it priced (text and JSON)."""
    from lshsim.cli.plan import format_plan
    from lshsim.t5.plan import plan
    from tests.t5.conftest import MICRO

    cfg = MICRO.replace(num_encoder_layers=2, num_decoder_layers=2, scan_layers=True)
    row = plan(cfg, batch=4, input_length=16, target_length=8, hardware="h100")
    assert row["scan_layers"] is True
    assert "layers scanned" in format_plan(row)
