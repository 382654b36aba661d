"""The data x model mesh: parsing, logical specs, state shardings, and sharded steps.

The multi-device checks (gradients and train steps on several meshes, the compiled HLO's
collectives, the memory analysis as ``model`` grows, and ``lshsim.t5.loop.train`` on two
meshes) run in one subprocess with four forced CPU devices (:mod:`tests.t5.sharding_checks`),
once per test run: tests/t5/test_steps.py's data-parallel step reads the same run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

jax = pytest.importorskip("jax")

import numpy as np  # noqa: E402
from jax.sharding import AbstractMesh, PartitionSpec  # noqa: E402

from lshsim.t5 import sharding  # noqa: E402
from lshsim.t5.model import init_params, param_specs  # noqa: E402
from lshsim.t5.scan import unstack_layers  # noqa: E402
from lshsim.t5.steps import make_optimizer  # noqa: E402

from .conftest import MICRO  # noqa: E402

P = PartitionSpec
FINGERPRINT = Path(__file__).with_name("init_fingerprint.json")
#: The configs of the checked-in fingerprint (made with the model before its annotations).
FINGERPRINT_CONFIGS = {
    "base": MICRO,
    "tokenid_r2": MICRO.replace(lookup="tokenid", expert_rank=2),
    "softmax_r0": MICRO.replace(lookup="softmax", buckets=16),
    "altup_extra": MICRO.replace(memory="altup", memory_k=3, memory_extra=10),
}


@pytest.mark.parametrize(
    "text, count, want",
    [
        ("data=2,model=2", 4, {"data": 2, "model": 2}),
        ("model=4", 8, {"data": 2, "model": 4}),
        ("data=8", 8, {"data": 8, "model": 1}),
        (" data=1 , model=4", 4, {"data": 1, "model": 4}),
    ],
)
def test_parse_mesh_reads_the_axes(text, count, want):
    """An omitted model is 1, an omitted data is the rest of the devices."""
    assert sharding.parse_mesh(text, count) == want


@pytest.mark.parametrize(
    "text",
    ["data=2,model=3", "data=2,expert=2", "data=x,model=2", "data=0,model=4", "data=2,data=2", "4"],
)
def test_parse_mesh_refuses_bad_input(text):
    """Unknown or repeated axes, non-integers, sizes < 1 and a wrong product: one line."""
    with pytest.raises(ValueError, match=r"^mesh: [^\n]+$"):
        sharding.parse_mesh(text, 4)


def test_make_mesh_is_data_by_model():
    """The default mesh is data = all devices, model = 1; too many devices is refused."""
    mesh = sharding.make_mesh()
    assert mesh.axis_names == ("data", "model")
    assert dict(mesh.shape) == {"data": jax.device_count(), "model": 1}
    with pytest.raises(ValueError, match=r"^mesh: "):
        sharding.make_mesh(jax.device_count() + 1)


def test_cli_refuses_a_bad_mesh(tmp_path, capsys):
    """``lshsim train --mesh`` with an unknown axis exits 2 with one line naming mesh."""
    from lshsim.cli.main import main

    argv = ["train", "--config", "tiny", "--steps", "1", "--out", str(tmp_path / "r")]
    assert main([*argv, "--mesh", "data=1,experts=1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "mesh" in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_param_specs_name_every_sharded_axis():
    """Tables by vocab, kernels by heads / mlp, expert tables and the router by buckets."""
    cfg = MICRO.replace(lookup="tokenid", expert_rank=2, scan_layers=False)
    specs = param_specs(cfg)
    enc = specs["encoder"]["layers_0"]
    assert specs["token_embedder"]["embedding"] == P("vocab", "embed")
    assert specs["decoder"]["logits_dense"]["kernel"] == P("embed", "vocab")
    assert enc["attention"]["query"]["kernel"] == P("embed", "heads")
    assert enc["attention"]["out"]["kernel"] == P("heads", "embed")
    assert enc["mlp"]["wi_0"]["kernel"] == P("embed", "mlp")
    assert enc["mlp"]["wo"]["kernel"] == P("mlp", "embed")
    assert enc["expert"] == {
        "wi": P("buckets", "embed", "rank"),
        "wo": P("buckets", "rank", "embed"),
    }
    assert enc["pre_mlp_layer_norm"]["scale"] == P()
    assert specs["encoder"]["relpos_bias"]["rel_embedding"] == P()
    soft = param_specs(MICRO.replace(lookup="softmax", buckets=16, scan_layers=False))
    soft = soft["decoder"]["layers_0"]["expert"]
    assert soft == {"router": P("embed", "buckets"), "table": P("buckets", "embed")}
    params = jax.eval_shape(lambda: init_params(cfg, jax.random.key(0)))
    assert jax.tree.structure(params) == jax.tree.structure(
        specs, is_leaf=lambda x: isinstance(x, P)
    )
    used = {a for s in jax.tree.leaves(specs, is_leaf=lambda x: isinstance(x, P)) for a in s}
    assert used - {None} <= dict(sharding.RULES).keys()


@pytest.mark.parametrize("name", sorted(FINGERPRINT_CONFIGS))
def test_annotations_leave_the_initial_values_unchanged(name):
    """Same seed, same parameters as the unannotated model (its checked-in fingerprint)."""
    want = json.loads(FINGERPRINT.read_text())[name]
    params = init_params(FINGERPRINT_CONFIGS[name], jax.random.key(3))
    assert FINGERPRINT_CONFIGS[name].scanned  # the default layout, its layers unstacked
    flat = jax.tree_util.tree_flatten_with_path(unstack_layers(params))[0]
    got = {jax.tree_util.keystr(k): v for k, v in flat}
    assert sorted(got) == sorted(want)
    for key, (shape, total, squares) in want.items():
        v = np.asarray(got[key], np.float64)
        assert list(v.shape) == shape, key
        np.testing.assert_allclose(
            [v.sum(), (v**2).sum()], [total, squares], rtol=1e-6, err_msg=key
        )


def test_optimizer_state_is_placed_like_its_parameter():
    """Adafactor's factored moments keep the parameter's split on the axis they keep."""
    mesh = AbstractMesh((1, 4), ("data", "model"))
    params = {
        "wide": jax.ShapeDtypeStruct((256, 512), np.float32),  # embed x mlp
        "tall": jax.ShapeDtypeStruct((512, 256), np.float32),  # mlp x embed
        "cube": jax.ShapeDtypeStruct((384, 128, 16), np.float32),  # buckets x embed x rank
        "small": jax.ShapeDtypeStruct((64, 8), np.float32),  # not factored
    }
    specs = {
        "wide": P("embed", "mlp"),
        "tall": P("mlp", "embed"),
        "cube": P("buckets", "embed", "rank"),
        "small": P("vocab", None),
    }
    opt = make_optimizer(MICRO.replace(scan_layers=False))  # one Adafactor over these leaves
    state = {"step": jax.ShapeDtypeStruct((), np.int32), "params": params}
    state["opt_state"] = jax.eval_shape(opt.init, params)
    out = sharding.state_shardings(state, mesh, specs)
    moments = out["opt_state"][0]
    spec = {f: {k: getattr(moments, f)[k].spec for k in params} for f in ("v_row", "v_col", "v")}
    shapes = {f: {k: getattr(state["opt_state"][0], f)[k].shape for k in params} for f in spec}
    assert out["params"]["wide"].spec == P(None, "model")
    assert (shapes["v_row"]["wide"], spec["v_row"]["wide"]) == ((256,), P())
    assert (shapes["v_col"]["wide"], spec["v_col"]["wide"]) == ((512,), P("model"))
    assert (shapes["v_row"]["tall"], spec["v_row"]["tall"]) == ((256,), P())
    assert (shapes["v_col"]["tall"], spec["v_col"]["tall"]) == ((512,), P("model"))
    assert (shapes["v_row"]["cube"], spec["v_row"]["cube"]) == ((128, 16), P())
    assert (shapes["v_col"]["cube"], spec["v_col"]["cube"]) == ((384, 16), P("model"))
    assert (shapes["v"]["small"], spec["v"]["small"]) == ((64, 8), P("model"))
    assert spec["v"]["wide"] == P() and out["step"].spec == P()


def test_a_model_axis_that_does_not_divide_is_refused():
    """model=5 splits no 384-row vocabulary: one line naming mesh, the axis and parameter."""
    mesh = AbstractMesh((1, 5), ("data", "model"))
    params = jax.eval_shape(lambda: init_params(MICRO, jax.random.key(0)))
    with pytest.raises(
        ValueError,
        match=r"^mesh: model=5 does not divide the \w+ axis \(size \d+\) of parameter \S+$",
    ):
        sharding.param_shardings(params, param_specs(MICRO), mesh)


@pytest.fixture(scope="module")
def checks(small_corpus, tmp_path_factory):
    """The JSON of :mod:`tests.t5.sharding_checks`, run once with 4 forced CPU devices."""
    from .sharding_checks import run_once

    res = run_once(tmp_path_factory, small_corpus)
    assert res["devices"] == 4
    return res


@pytest.mark.slow
def test_sharded_gradients_equal_one_device(checks):
    """Loss and every gradient on the (1,4) and (2,2) meshes equal one device's."""
    assert list(checks["gradients"]) == ["softmax_r0_2x2"]
    for name, row in checks["gradients"].items():
        np.testing.assert_allclose(row["loss"][1], row["loss"][0], rtol=1e-5, err_msg=name)
        assert row["grad_rel"] < 1e-4, name
        assert "P('model',)" in row["expert_specs"], name  # the tables really are split


@pytest.mark.slow
def test_ragged_experts_equal_gather_on_one_device_and_a_mesh(checks):
    """Experts by ragged_dot give gather's value and gradients (input and both tables), on one
    device and on the (2, 2) mesh with the tables split over model."""
    rows = checks["ragged"]
    assert set(rows) == {"1x1", "2x2"}
    for name, row in rows.items():
        np.testing.assert_allclose(row["value"][1], row["value"][0], rtol=1e-5, err_msg=name)
        assert row["grad_rel"] < 1e-5, name


@pytest.mark.slow
def test_sharded_train_step_equals_one_device(checks):
    """One Adafactor step of a rank-16 Token-ID model on model = 2 and 4 equals model = 1."""
    steps = checks["hlo"]["step"]
    for model in ("2", "4"):
        np.testing.assert_allclose(steps[model]["loss"][1], steps[model]["loss"][0], rtol=1e-5)
        assert steps[model]["state_rel"] < 1e-4, model
        assert steps[model]["expert_shards"] == int(model)


@pytest.mark.slow
def test_scanned_train_step_equals_one_device(checks):
    """One step of the scanned model (stacked tables split over model, Adafactor per layer
    with its moments placed below the layers axis) on the (2, 2) mesh equals one device's."""
    row = checks["scanned"]
    np.testing.assert_allclose(row["loss"][1], row["loss"][0], rtol=1e-5)
    assert row["state_rel"] < 1e-4
    assert row["expert_spec"] == "P(None, 'model')"  # the layers axis whole, buckets split


@pytest.mark.slow
def test_no_collective_moves_a_table(checks):
    """The compiled (1,4) train step gathers nothing of a table's shard size.

    The control, a table explicitly gathered onto every device, is seen by the same detector.
    """
    hlo = checks["hlo"]
    table = hlo["table_elements"]
    assert any(n >= table for _, n in hlo["control"])
    assert hlo["collectives"] is not None
    assert all(n < table // 4 for _, n in hlo["collectives"]), hlo["collectives"]
    assert hlo["shard_maps"] == [2, 0]  # one per expert layer under the mesh, none without


@pytest.mark.slow
def test_per_device_memory_falls_as_model_grows(checks):
    """Arguments + temporaries per device: model 1 > 2 > 4 (expert tables dominate)."""
    mem = checks["hlo"]["memory"]
    total = [mem[m]["argument"] + mem[m]["temp"] for m in ("1", "2", "4")]
    assert total[0] > total[1] > total[2]
    assert mem["4"]["argument"] < 0.3 * mem["1"]["argument"]


@pytest.mark.slow
def test_initialisation_is_sharded_and_within_the_plan(checks):
    """The compiled init of a model whose expert tables dominate, on data=2, model=2.

    Each device draws only its shards: the outputs are exactly the plan's per-device state
    bytes (plus XLA's 8-byte pointer per output leaf), the values are the one-device init's
    bit for bit, each leaf is placed by the state's shardings, and the whole init (outputs
    and the random bits it draws on the way) needs no more memory than the planned step.
    Control: the same init with every leaf replicated holds the whole tables (outputs about
    twice the state) and exceeds the step's plan.
    """
    init, plan = checks["init"], checks["init"]["plan"]
    mem, replicated = init["memory"], init["replicated_memory"]
    assert mem["output"] == plan["state_bytes"] + 8 * init["leaves"]
    assert init["unequal_leaves"] == 0 and init["misplaced_leaves"] == 0
    assert init["table_shard"] == 0.5  # split over model = 2
    assert mem["per_device"] <= plan["per_device_bytes"]
    assert replicated["output"] > 1.9 * plan["state_bytes"]
    assert replicated["per_device"] > plan["per_device_bytes"]


@pytest.mark.slow
def test_training_losses_equal_on_every_mesh(checks):
    """``train`` on data=2,model=2 logs one device's losses (4x1: tests/t5/test_steps.py)."""
    losses = checks["train"]
    assert len(losses["1"]) == 3
    np.testing.assert_allclose(losses["2x2"], losses["1"], rtol=1e-5)
