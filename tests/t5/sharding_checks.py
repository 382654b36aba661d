"""The multi-device checks of tests/t5/test_sharding.py, run in one subprocess.

Run as ``python -m tests.t5.sharding_checks CORPUS OUT [--all]`` with
``XLA_FLAGS=--xla_force_host_platform_device_count=4``: it prints one JSON object of
measurements (the test asserts on them). One process, so JAX starts and forces its four CPU
devices once for all the checks.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from lshsim.t5 import sharding
from lshsim.t5.configs import T5Config
from lshsim.t5.model import init_params, param_specs
from lshsim.t5.steps import (
    abstract_state,
    init_state,
    make_objective,
    make_optimizer,
    make_train_step,
)
from tests.t5.conftest import MICRO

#: The small model of the model-side tests (tests/t5/conftest.py's micro).
BASE = MICRO
#: Config -> the (data, model) meshes its gradients are compared on.
LOOKUPS = {"softmax_r0": (BASE.replace(lookup="softmax", buckets=16), ((2, 2),))}
#: Also checked by hand (``python -m tests.t5.sharding_checks --all``), left out of the suite
#: for time: rank-r Token-ID (the suite runs its whole train step on model 1, 2 and 4 in
#: :func:`check_steps`), LSH (its expert reads are Token-ID's) and AltUp (dense layers only).
MORE_LOOKUPS = {
    "tokenid_r2": (BASE.replace(lookup="tokenid", expert_rank=2), ((1, 4), (2, 2))),
    "lsh_r2": (BASE.replace(lookup="lsh", expert_rank=2, buckets=16), ((1, 4),)),
    "altup_k2": (BASE.replace(memory="altup", memory_k=2), ((2, 2),)),
}
#: Expert tables dominate: 2 x 384 x 32 x 16 floats per layer against 14k dense ones.
BIG_TABLES = BASE.replace(lookup="tokenid", expert_rank=16)
COLLECTIVE = re.compile(
    r"=\s*(\w+)\[([\d,]*)\][^=]*?\s(all-gather|all-to-all|collective-permute)\("
)


def _batch(b: int = 4, length: int = 16, t: int = 8) -> dict:
    rng = np.random.default_rng(0)
    return {
        "encoder_input_tokens": rng.integers(1, 300, (b, length)).astype(np.int32),
        "decoder_input_tokens": rng.integers(1, 300, (b, t)).astype(np.int32),
        "decoder_target_tokens": rng.integers(1, 300, (b, t)).astype(np.int32),
        "decoder_loss_weights": np.ones((b, t), np.float32),
    }


def _max_rel(a, b) -> float:
    """Largest ``|a - b| / (max|b| + 1e-12)`` over matching leaves."""
    pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    return max(
        float(np.max(np.abs(np.asarray(x) - np.asarray(y))) / (np.max(np.abs(y)) + 1e-12))
        for x, y in pairs
    )


def _layer(stack: dict) -> dict:
    """Layer 0's subtree, or a scanned stack's (every layer's leaves, stacked)."""
    return stack["layers"] if "layers" in stack else stack["layers_0"]


def _layer_specs(stack: dict, part: str) -> list[str]:
    """The specs of layer 0's ``part`` leaves (a scanned stack's without its layers axis)."""
    if "layers" in stack:
        leaves = stack["layers"].get(part, {}).values()
        return sorted({str(P(*v.sharding.spec[1:])) for v in leaves})
    return sorted({str(v.sharding.spec) for v in stack["layers_0"].get(part, {}).values()})


def check_gradients(lookups: dict) -> dict:
    """Loss and gradients on one device against the (1, 4) and (2, 2) meshes."""
    out = {}
    batch = _batch()
    for name, (cfg, meshes) in lookups.items():
        params = jax.jit(lambda cfg=cfg: init_params(cfg, jax.random.key(0)))()
        grad = jax.grad(make_objective(cfg), has_aux=True)
        g1, s1 = jax.jit(grad)(params, batch, jax.random.key(1))
        specs = param_specs(cfg)
        for data, model in meshes:
            mesh = sharding.make_mesh(data, model)
            sh = sharding.param_shardings(params, specs, mesh)
            fn = jax.jit(
                grad,
                in_shardings=(sh, sharding.batch_sharded(mesh), None),
                out_shardings=(sh, None),
            )
            with sharding.mesh_context(mesh):
                g, s = fn(jax.device_put(params, sh), batch, jax.random.key(1))
            out[f"{name}_{data}x{model}"] = {
                "loss": [float(s1["loss"]), float(s["loss"])],
                "grad_rel": _max_rel(g, g1),
                "expert_specs": _layer_specs(g["encoder"], "expert"),
            }
    return out


def check_ragged() -> dict:
    """Rank-4 experts by ``ragged`` against ``gather``: value and gradients, 1 device and (2, 2).

    ``gather`` on one device is the reference; ``ragged`` (``jax.lax.ragged_dot`` on tokens
    sorted by bucket) runs on one device and on the (2, 2) mesh, tables split over ``model``
    and tokens over ``data`` (:func:`lshsim.t5.sharded_lookup.expert_rows`), through
    ``sum(sin(f_b(x)))`` and its gradients in ``x``, ``U``, ``V``.
    """
    from jax.sharding import NamedSharding, PartitionSpec

    from lshsim.t5 import sharded_lookup
    from lshsim.t5.lookups.router_layer import expert_mlp

    rng = np.random.default_rng(3)
    n, d, r, tokens = 8, 16, 4, 64
    x = jnp.asarray(rng.standard_normal((tokens, d)), jnp.float32)
    wi = jnp.asarray(rng.standard_normal((n, d, r)) / 4, jnp.float32)
    wo = jnp.asarray(rng.standard_normal((n, r, d)) / 2, jnp.float32)
    bucket = jnp.asarray(rng.integers(0, n - 1, tokens), jnp.int32)  # the last bucket empty

    def value_and_grads(impl):
        def loss(x, wi, wo):
            mlp = functools.partial(expert_mlp, impl=impl)
            return jnp.sum(jnp.sin(sharded_lookup.expert_rows(mlp, x, wi, wo, bucket)))

        return jax.value_and_grad(loss, argnums=(0, 1, 2))

    want = jax.jit(value_and_grads("gather"))(x, wi, wo)
    out = {"1x1": jax.jit(value_and_grads("ragged"))(x, wi, wo)}
    mesh = sharding.make_mesh(2, 2)
    rows, table = (
        NamedSharding(mesh, PartitionSpec("data")),
        NamedSharding(mesh, PartitionSpec("model")),
    )
    with sharding.mesh_context(mesh):
        fn = jax.jit(value_and_grads("ragged"), in_shardings=(rows, table, table))
        out["2x2"] = fn(x, wi, wo)
    return {
        name: {"value": [float(want[0]), float(got[0])], "grad_rel": _max_rel(got[1], want[1])}
        for name, got in out.items()
    }


def collectives(hlo: str) -> list[tuple[str, int]]:
    """``(op, elements of its result)`` of every all-gather, all-to-all, collective-permute."""
    found = []
    for dtype, dims, op in COLLECTIVE.findall(hlo):
        del dtype
        found.append((op, int(np.prod([int(d) for d in dims.split(",") if d]))))
    return found


def _compiled_step(cfg: T5Config, data: int, model: int, opt, abstract, specs):
    """The train step compiled ahead of time on abstract inputs for a ``data x model`` mesh."""
    mesh = sharding.make_mesh(data, model)
    sh = sharding.state_shardings(abstract, mesh, specs)
    state = jax.tree.map(
        lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract, sh
    )
    bsh = sharding.batch_sharded(mesh)
    batch = {
        k: jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=bsh) for k, v in _batch(8, 32).items()
    }
    fn = jax.jit(
        make_train_step(cfg, opt),
        in_shardings=(sh, bsh),
        out_shardings=(sh, sharding.replicated(mesh)),
    )
    with sharding.mesh_context(mesh):
        return fn.lower(state, batch).compile()


@functools.cache
def _one_device_init(cfg: T5Config) -> dict:
    """:func:`init_state` of ``cfg`` (seed 0) on one device, traced once for the checks."""
    return init_state(cfg, make_optimizer(cfg), 0)


def check_steps() -> dict:
    """The train step compiled for ``model`` 1, 2, 4: its bytes, collectives, and one step run.

    Also a detector control, and whether the expert reads go through ``shard_map``.
    """
    n, d, r = BIG_TABLES.vocab_size, BIG_TABLES.d_model, BIG_TABLES.expert_rank
    out: dict = {"table_elements": n * d * r, "memory": {}, "step": {}}
    opt = make_optimizer(BIG_TABLES)
    abstract, specs = abstract_state(BIG_TABLES, opt), param_specs(BIG_TABLES)
    state = _one_device_init(BIG_TABLES)
    batch, ref = _batch(8, 32), None
    for model in (1, 2, 4):
        compiled = _compiled_step(BIG_TABLES, 1, model, opt, abstract, specs)
        mem = compiled.memory_analysis()
        out["memory"][str(model)] = {
            "argument": int(mem.argument_size_in_bytes),
            "temp": int(mem.temp_size_in_bytes),
        }
        if model == 4:
            out["collectives"] = collectives(compiled.as_text())
        mesh = sharding.make_mesh(1, model)
        sh = sharding.state_shardings(abstract, mesh, specs)
        new, metrics = compiled(jax.device_put(state, sh), sharding.shard_batch(batch, mesh))
        ref = ref or (new, metrics)
        out["step"][str(model)] = {
            "loss": [float(ref[1]["loss"]), float(metrics["loss"])],
            "state_rel": _max_rel(new, ref[0]),
            "expert_shards": len(
                _layer(new["params"]["encoder"])["expert"]["wi"].sharding.device_set
            ),
        }
    # Control: a table explicitly gathered onto every device is what the detector must see.
    mesh = sharding.make_mesh(1, 4)
    table_sh = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("model"))
    gather = jax.jit(
        lambda t: jax.lax.with_sharding_constraint(t, sharding.replicated(mesh)) * 2.0,
        in_shardings=table_sh,
    )
    spec = jax.ShapeDtypeStruct((n, d, r), jnp.float32, sharding=table_sh)
    out["control"] = collectives(gather.lower(spec).compile().as_text())
    # The reads go through shard_map under the mesh (XLA alone might also avoid the gather).
    objective, batch = make_objective(BIG_TABLES), _batch()
    params = abstract["params"]
    with sharding.mesh_context(mesh):
        jaxpr = str(jax.make_jaxpr(objective)(params, batch, jax.random.key(0)))
    plain = str(jax.make_jaxpr(objective)(params, batch, jax.random.key(0)))
    out["shard_maps"] = [jaxpr.count("shard_map["), plain.count("shard_map[")]
    return out


#: Scanned layers (``scan_layers``): stacked tables split over ``model`` below the layers axis.
SCANNED = BASE.replace(
    lookup="tokenid", expert_rank=2, num_encoder_layers=2, num_decoder_layers=2, scan_layers=True
)


def check_scanned() -> dict:
    """One Adafactor step of the scanned model (per-layer optimiser) on (2, 2) against 1 device.

    Returns:
        ``{"loss": [one device, mesh], "state_rel", "expert_spec"}``: the stacked ``wi``'s
        mesh spec (the layers axis whole, the buckets split over ``model``).
    """
    opt = make_optimizer(SCANNED)
    abstract, specs = abstract_state(SCANNED, opt), param_specs(SCANNED)
    state = init_state(SCANNED, opt, 0)
    batch = _batch(8, 32)
    one, ref = jax.jit(make_train_step(SCANNED, opt))(state, batch)
    mesh = sharding.make_mesh(2, 2)
    sh = sharding.state_shardings(abstract, mesh, specs)
    compiled = _compiled_step(SCANNED, 2, 2, opt, abstract, specs)
    new, metrics = compiled(jax.device_put(state, sh), sharding.shard_batch(batch, mesh))
    return {
        "loss": [float(ref["loss"]), float(metrics["loss"])],
        "state_rel": _max_rel(new, one),
        "expert_spec": str(new["params"]["encoder"]["layers"]["expert"]["wi"].sharding.spec),
    }


def _init_memory(compiled) -> dict:
    """XLA's memory analysis of a compiled init, as ``lshsim plan`` reads it."""
    from lshsim.t5.plan import analyse

    mem = analyse(compiled)
    keys = ("argument", "output", "temp", "alias")
    return {k: mem[f"{k}_bytes"] for k in keys} | {"per_device": mem["per_device_bytes"]}


def _shard_fraction(x) -> float:
    return float(np.prod(x.sharding.shard_shape(x.shape)) / np.prod(x.shape))


def check_init() -> dict:
    """The sharded initialisation of :data:`BIG_TABLES` on (2, 2): memory, placement, values.

    Returns:
        ``{"memory", "replicated_memory", "plan", "unequal_leaves", "misplaced_leaves",
        "leaves", "table_shard"}``: XLA's memory analysis of the compiled init (and of a
        control compiled with every leaf replicated), the plan's per-device state and step
        bytes on the same mesh, the leaves whose values differ from the one-device init,
        those placed otherwise than the state's shardings, and the fraction of the first
        encoder table one device holds.
    """
    from lshsim.t5.plan import plan
    from lshsim.t5.steps import seed_key_data

    opt = make_optimizer(BIG_TABLES)
    mesh = sharding.make_mesh(2, 2)
    _, sh = sharding.train_state_shardings(BIG_TABLES, opt, mesh)
    init = sharding.init_on(mesh, BIG_TABLES, opt, sh)
    key = seed_key_data(0)
    control = sharding.init_on(
        mesh, BIG_TABLES, opt, jax.tree.map(lambda _: sharding.replicated(mesh), sh)
    )
    state, one = init(key), _one_device_init(BIG_TABLES)
    pairs = list(zip(jax.tree.leaves(state), jax.tree.leaves(one), strict=True))
    placed = zip(jax.tree.leaves(state), jax.tree.leaves(sh), strict=True)
    planned = plan(BIG_TABLES, data=2, model=2, batch=8, input_length=32, target_length=8)
    return {
        "memory": _init_memory(init.lower(key).compile()),
        "replicated_memory": _init_memory(control.lower(key).compile()),
        "plan": {k: planned[k] for k in ("state_bytes", "per_device_bytes")},
        "leaves": len(pairs),
        "unequal_leaves": sum(not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in pairs),
        "misplaced_leaves": sum(not a.sharding.is_equivalent_to(s, a.ndim) for a, s in placed),
        "table_shard": _shard_fraction(_layer(state["params"]["encoder"])["expert"]["wi"]),
    }


def check_data_parallel() -> dict:
    """Three steps of a micro model, state replicated, on 1 device and on a data=4 mesh.

    (Was its own subprocess in tests/t5/test_steps.py; it shares this one's start-up.)

    Returns:
        ``{"devices", "batch_devices_N", "loss_N", "params_N"}`` for N = 1 and 4: the devices
        holding the sharded batch, the three losses, and the first 50 values of each
        parameter after the steps.
    """
    cfg = BASE.replace(warmup_steps=1)
    rng = np.random.default_rng(0)
    b, li, lt = 8, 16, 8
    tgt = rng.integers(3, cfg.vocab_size, (b, lt)).astype(np.int32)
    batch = {
        "encoder_input_tokens": rng.integers(3, cfg.vocab_size, (b, li)).astype(np.int32),
        "decoder_input_tokens": np.concatenate([np.zeros((b, 1), np.int32), tgt[:, :-1]], 1),
        "decoder_target_tokens": tgt,
        "decoder_loss_weights": np.ones((b, lt), np.float32),
    }
    opt = make_optimizer(cfg, 0.1)
    out: dict = {"devices": jax.device_count()}
    for n in (1, 4):
        mesh = sharding.make_mesh(n)
        step = jax.jit(
            make_train_step(cfg, opt),
            in_shardings=(sharding.replicated(mesh), sharding.batch_sharded(mesh)),
            out_shardings=(sharding.replicated(mesh), sharding.replicated(mesh)),
        )
        state = sharding.replicate(init_state(cfg, opt, 0), mesh)
        sb = sharding.shard_batch(batch, mesh)
        out[f"batch_devices_{n}"] = len(sb["encoder_input_tokens"].sharding.device_set)
        losses = []
        for _ in range(3):
            state, m = step(state, sb)
            losses.append(float(m["loss"]))
        out[f"loss_{n}"] = losses
        out[f"params_{n}"] = [
            np.asarray(x).ravel().tolist()[:50] for x in jax.tree_util.tree_leaves(state["params"])
        ]
    return out


def check_training(corpus: str, out_dir: str) -> dict:
    """Per-step train losses of ``lshsim.t5.loop.train`` on one device and on data=2,model=2.

    (data=4,model=1 against one device: tests/t5/test_steps.py.)
    """
    from lshsim.t5.loop import train

    cfg = MORE_LOOKUPS["tokenid_r2"][0]
    losses = {}
    for name, kw in {
        "1": {"devices": 1},
        "2x2": {"mesh": "data=2,model=2"},
    }.items():
        seen = []
        train(
            cfg,
            f"{out_dir}/{name}",
            steps=3,
            corpus=[corpus],
            batch_size=4,
            learning_rate=0.1,
            eval_every=3,
            progress=False,
            on_step=lambda step, rec, seen=seen: seen.append(rec["loss"]),
            **kw,
        )
        losses[name] = seen
    return losses


def run_once(tmp_path_factory, corpus) -> dict:
    """This module's JSON, run once per test run in a subprocess with 4 forced CPU devices.

    tests/t5/test_sharding.py and tests/t5/test_steps.py both assert on it; under
    pytest-xdist the first worker to ask runs it and the others read its result
    (:func:`tests.once_per_run`).

    Args:
        tmp_path_factory: pytest's fixture (the run's folders).
        corpus: the text file the training check reads.

    Returns:
        The parsed JSON object :func:`main` prints.
    """
    import os
    import subprocess
    from pathlib import Path

    from lshsim.t5.plan import host_device_flags
    from tests import once_per_run

    root = Path(__file__).parents[2]

    def compute() -> dict:
        env = dict(
            os.environ,
            **host_device_flags(4),  # keeps the session's XLA flags
            PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
        )
        out = tmp_path_factory.mktemp("mesh-runs")
        proc = subprocess.run(
            [sys.executable, "-m", "tests.t5.sharding_checks", str(corpus), str(out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            cwd=root,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    return once_per_run(tmp_path_factory, "t5-sharding-checks", compute)


def main(argv: list[str]) -> None:
    """Print the JSON object of all checks."""
    lookups = {**LOOKUPS, **MORE_LOOKUPS} if "--all" in argv else LOOKUPS
    corpus, out_dir = [a for a in argv if a != "--all"]
    result: dict = {"devices": jax.device_count(), "cpu_seconds": {}}
    for name, check in (
        ("gradients", lambda: check_gradients(lookups)),
        ("ragged", check_ragged),
        ("hlo", check_steps),
        ("scanned", check_scanned),
        ("init", check_init),
        ("train", lambda: check_training(corpus, out_dir)),
        ("data_parallel", check_data_parallel),
    ):
        start = time.process_time()
        result[name] = check()
        result["cpu_seconds"][name] = round(time.process_time() - start, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
