"""``lshsim plan``: XLA's per-device memory and FLOPs on forced host devices, the search.

The plans need several host devices, so one subprocess with 4 forced CPU devices computes
them all (each compile costs seconds); the tests read its JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jax")

from lshsim.cli.main import main
from lshsim.cli.plan import parse_mesh
from lshsim.t5.plan import candidate_meshes, host_device_flags
from tests import once_per_run

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent(
    """
    import json
    from lshsim.t5.hardware import Hardware
    from lshsim.t5.plan import minimal_plan, plan
    from tests.t5.conftest import MICRO

    # big tables, small activations: a token-ID lookup of rank 8 on the micro model
    cfg = MICRO.replace(lookup="tokenid", expert_rank=8)
    kw = dict(batch=16, input_length=32)
    out = {"model": {m: plan(cfg, data=1, model=m, hardware="h100", **kw) for m in (1, 2)}}
    out["data2"] = plan(cfg, data=2, model=1, **kw)
    # a device that holds the model = 2 plan exactly; the search's compiles repeat the plans
    # above (served by the persistent compilation cache when the tests run with it)
    toy = Hardware("toy", "toy", 1e12, out["model"][2]["per_device_bytes"], 1e11, "test")
    out["minimal"] = minimal_plan(cfg, hardware=toy, max_devices=2, **kw)
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """The subprocess's plans: model = 1, 2; data = 2; a search on a toy device (once per
    run: :func:`tests.once_per_run`)."""
    return once_per_run(tmp_path_factory, "plan-subprocess", _plans)


def _plans():
    env = dict(os.environ, **host_device_flags(4), PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_plan_json_keys(plans):
    row = plans["model"]["2"]
    for key in ("per_device_bytes", "fits", "flops_per_step", "roofline_step_seconds"):
        assert key in row
    assert row["mesh"] == {"data": 1, "model": 2} and row["hardware"]["name"] == "h100"
    assert row["params"]["expert"] > row["params"]["non_embedding"]
    assert row["per_device_bytes"] == (
        row["argument_bytes"] + row["output_bytes"] + row["temp_bytes"] - row["alias_bytes"]
    )
    # the donated state is aliased: its bytes count once
    assert row["alias_bytes"] == pytest.approx(row["state_bytes"], rel=1e-3)


def test_per_device_bytes_fall_as_model_grows(plans):
    """Splitting the tables over model = 2 devices shrinks each device's share (measured:
    11.5 -> 6.8 MB; the batch's activations, not all split by ``model``, are the rest)."""
    b = [plans["model"][str(m)]["per_device_bytes"] for m in (1, 2)]
    s = [plans["model"][str(m)]["state_bytes"] for m in (1, 2)]
    assert b[1] < 0.7 * b[0]
    assert s[1] < 0.6 * s[0]  # the state's shards: about 1/model


def test_flops_are_per_device(plans):
    """XLA's cost analysis of the partitioned program is one device's: on data = 2 each device
    computes half the batch (plus the replicated optimiser update, O), so its FLOPs are
    (F + O) / 2 + O / 2 of data = 1's F + O: between half and 60% here, where a global count
    would be equal. The total (the unpartitioned step's) is the same for both meshes."""
    one, two = plans["model"]["1"], plans["data2"]
    assert 0.5 * one["flops_per_step"] < two["flops_per_step"] < 0.6 * one["flops_per_step"]
    assert two["flops_per_step_total"] == pytest.approx(one["flops_per_step_total"], rel=1e-6)
    assert one["flops_per_step"] == pytest.approx(one["flops_per_step_total"], rel=0.02)


def test_minimal_finds_the_first_mesh_that_fits(plans):
    """On a device that holds exactly the data = 1, model = 2 plan, the search answers the
    first of 1 x 1, 2 x 1, 1 x 2 whose plan fits, having ruled out the ones before it."""
    res, hbm = plans["minimal"], plans["model"]["2"]["per_device_bytes"]
    known = {(1, 1): plans["model"]["1"], (2, 1): plans["data2"], (1, 2): plans["model"]["2"]}
    want = next(m for m in candidate_meshes(2, 16, 1) if known[m]["per_device_bytes"] <= hbm)
    best = res["best"]
    assert (best["mesh"]["data"], best["mesh"]["model"]) == want
    assert best["fits"] and best["per_device_bytes"] <= hbm
    tried = [(t["data"], t["model"]) for t in res["tried"]]
    assert tried == candidate_meshes(2, 16, 1)[: tried.index(want) + 1]
    for t in res["tried"][:-1]:  # every earlier mesh was over the memory (or skipped as such)
        assert t.get("skipped", "").startswith("state and batch alone") or not t["fits"]


def test_candidate_meshes_order():
    assert candidate_meshes(4, 8, 1) == [(1, 1), (2, 1), (1, 2), (4, 1), (2, 2), (1, 4)]
    assert candidate_meshes(4, 8, 4) == [(1, 1), (2, 1), (1, 2), (2, 2), (1, 4)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mesh", "data=2,modl=1"], "mesh: expected data=A,model=B"),
        (["--mesh", "data=0"], "mesh: data must be an integer >= 1"),
        (["--batch", "30", "--accumulate", "4"], "accumulate must divide the batch (30)"),
        (["--batch", "32", "--mesh", "data=3"], "mesh: data=3 must divide the micro-batch"),
        (["--hardware", "v100"], "invalid choice: 'v100'"),
        (["--rank", "2"], "--rank"),
    ],
)
def test_bad_input_exits_2(capsys, argv, message):
    """Bad sizes, a mesh typo, an unknown device: one line, exit 2, before JAX compiles."""
    try:
        status = main(["plan", "--config", "tiny", *argv])
    except SystemExit as exc:  # argparse's own choices check
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_parse_mesh():
    assert parse_mesh("data=4,model=2") == (4, 2)
    assert parse_mesh("model=8") == (1, 8)


def test_too_few_devices_reruns_in_a_child(monkeypatch):
    """With JAX already started on fewer devices, the command re-runs itself in a child
    process with the host-device flag and the same options, and returns the child's status."""
    import subprocess as sp

    import jax

    calls = []

    def fake_run(cmd, env):
        calls.append((cmd, env))
        return sp.CompletedProcess(cmd, 3)

    monkeypatch.setattr("lshsim.cli.plan.subprocess.run", fake_run)
    monkeypatch.delenv("LSHSIM_PLAN_CHILD", raising=False)
    n = len(jax.devices("cpu")) + 1
    argv = ["plan", "--config", "tiny", "--lookup", "tokenid", "--mesh", f"data=1,model={n}"]
    assert main([*argv, "--batch", "8", "--json"]) == 3
    ((cmd, env),) = calls
    assert cmd[:3] == [sys.executable, "-m", "lshsim"]
    assert cmd[3:] == [*argv, "--batch", "8", "--json"]
    assert f"--xla_force_host_platform_device_count={n}" in env["XLA_FLAGS"].split()
    assert env["JAX_PLATFORMS"] == "cpu" and env["LSHSIM_PLAN_CHILD"] == "1"


def test_the_search_prices_its_mesh_as_plan_does(plans):
    """The search prices the whole step (FLOPs, bytes accessed) only for the mesh that fits,
    the others by their memory alone; the mesh it answers has the direct plan's figures."""
    best = plans["minimal"]["best"]
    mesh = (best["mesh"]["data"], best["mesh"]["model"])
    known = {(1, 1): plans["model"]["1"], (2, 1): plans["data2"], (1, 2): plans["model"]["2"]}
    for key in ("per_device_bytes", "flops_per_step", "flops_per_step_total", "temp_bytes"):
        assert best[key] == known[mesh][key], key
    assert best["expert_impl"] == "ragged"  # auto, planned for its accelerator


def _step_costs(batch: int, accumulate: int, one_batch: bool = True, **changes):
    """Unpartitioned (FLOPs, bytes accessed) of the micro model's step on a 1 x 1 mesh:
    ``(with every loop's passes, the one-batch step's)``, the plan's and the earlier method."""
    import jax

    from lshsim.t5.experts import priced_on_host
    from lshsim.t5.plan import _abstract, abstract_batch, host_mesh, target_config
    from lshsim.t5.scan import body_cost, loop_cost, xla_cost
    from lshsim.t5.steps import make_train_step
    from tests.t5.conftest import MICRO

    cfg = target_config(MICRO.replace(lookup="tokenid", expert_rank=8, **changes))
    optimizer, state = _abstract(cfg)
    inputs = abstract_batch(batch, 32, 8)

    def whole(traced):
        looped = xla_cost(traced.lower().cost_analysis())
        extra = loop_cost(traced.jaxpr.jaxpr, body_cost)
        return tuple(x + e for x, e in zip(looped, extra, strict=True))

    with jax.set_mesh(host_mesh(1, 1)), priced_on_host():
        traced = jax.jit(make_train_step(cfg, optimizer, 0, accumulate)).trace(state, inputs)
        one = jax.jit(make_train_step(cfg, optimizer, 0, 1)).trace if one_batch else None
        return whole(traced), one and whole(one(state, inputs)), state["params"]


def test_scanned_layers_are_priced_as_the_unrolled_ones():
    """XLA prices a loop's body once; with every scan's passes added (micro-batches, and the
    layers' forward and backward scans inside them) the scanned model's FLOPs are the unrolled
    model's (3 + 2 layers, 2 micro-batches; one pass per scan counted 58% short)
    but for the scan's backward recomputing each layer's elementwise operations (``SCAN_SAVES``):
    3.3% more at this micro width, 1.6% at ``base``."""
    layers = {"num_encoder_layers": 3, "num_decoder_layers": 2, "one_batch": False}
    (unrolled, _, _), (scanned, _, _) = (
        _step_costs(8, 2, scan_layers=False, **layers), _step_costs(8, 2, **layers)
    )  # fmt: skip
    assert unrolled[0] <= scanned[0] <= 1.05 * unrolled[0]


def test_the_loop_body_prices_the_accumulated_step():
    """With ``accumulate = k`` the whole step's count is the looped step's plus k - 1 loop
    bodies. It exceeds the one-batch step's (the earlier price) by the accumulation alone:
    per micro-batch, per parameter, a few FLOPs and 10-30 bytes accessed (the gradient read
    and added into the carry), the same at every batch size; the model's own FLOPs agree."""
    import jax

    k = 4
    unrolled = {"scan_layers": False}  # the accumulation loop alone (scans: the test above)
    (small, one_small, params), (big, one_big, _) = (
        _step_costs(16, k, **unrolled), _step_costs(64, k, **unrolled)
    )  # fmt: skip
    n = sum(x.size for x in jax.tree_util.tree_leaves(params))
    extra = [w - o for w, o in zip(small, one_small, strict=True)]
    assert [w - o for w, o in zip(big, one_big, strict=True)] == pytest.approx(extra, rel=1e-3)
    assert 1.0 * k * n < extra[0] < 2.5 * k * n
    assert 10 * k * n < extra[1] < 30 * k * n
    assert big[0] == pytest.approx(one_big[0], rel=0.02)  # 1.3% here, less on a real batch
