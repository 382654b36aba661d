"""Theorem 2 (embedding lookups at upper layers): constructions, bounds, read-out, sweep, script.

Each test checks one statement of ``proofs/theorem2.md`` (named in its docstring).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lshsim.theorems import theorem2 as t2
from tests import once_per_run

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "theorem2_width.py"


# ------------------------------------------------------------------------------ slow references


def reference_phi(w: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Phi(q) unit by unit, layer by layer, with Python loops."""
    out = np.empty_like(q)
    for s in range(q.shape[0]):
        z = list(q[s])
        for layer in range(w.shape[0]):
            z = [
                max(0.0, sum(w[layer, i, j] * z[j] for j in range(len(z))) + b[layer, i])
                for i in range(len(z))
            ]
        out[s] = z
    return out


def reference_y(task: t2.Task, u: np.ndarray, q: np.ndarray) -> np.ndarray:
    """y(u, q) = sum_i Psi_i(u) Phi_i(q), by loops."""
    phi = reference_phi(np.asarray(task.teacher_w), np.asarray(task.teacher_b), q)
    return np.array(
        [sum(task.psi[u[s], i] * phi[s, i] for i in range(q.shape[1])) for s in range(len(u))]
    )


def small_task(d: int, depth: int, n: int, seed: int) -> t2.Task:
    return t2.make_task(t2.rng_for(seed, 0), d, depth, n, scale_sample=512)


def sample(d: int, n: int, seed: int, batch: int = 24) -> tuple[np.ndarray, np.ndarray]:
    u, q = t2.sample_inputs(t2.rng_for(seed, 1), batch, d, n)
    return u, q.astype(np.float64)


# ----------------------------------------------------------------------- (a), (b): constructions


@given(
    d=st.integers(1, 5),
    depth=st.integers(1, 3),
    n=st.integers(1, 9),
    seed=st.integers(0, 2**16),
    extra_width=st.integers(0, 2),
    extra_depth=st.integers(0, 1),
)
def test_constructions_reproduce_the_target(d, depth, n, seed, extra_width, extra_depth):
    """(a), (b): B of width d and A of width 2d compute y exactly (also when padded)."""
    task = small_task(d, depth, n, seed)
    u, q = sample(d, n, seed)
    y = reference_y(task, u, q)
    tol = 1e-9 * (1.0 + np.max(np.abs(y)))
    builds = {
        "B": t2.construct_b(task, width=d + extra_width, depth=depth + extra_depth),
        "A": t2.construct_a(task, width=2 * d + extra_width, depth=depth + 1 + extra_depth),
    }
    for arch, params in builds.items():
        got = t2.student_apply(params, u, q, np)
        assert np.max(np.abs(got - y)) <= tol, arch


def test_constructions_in_float32_jax():
    """(a), (b): the same parameters run through the trained (JAX float32) code path."""
    import jax.numpy as jnp

    task = small_task(6, 2, 16, 3)
    u, q = sample(6, 16, 3, batch=256)
    y = reference_y(task, u, q)
    for build in (t2.construct_a, t2.construct_b):
        p32 = {k: jnp.asarray(v, jnp.float32) for k, v in build(task).items()}
        got = np.asarray(t2.student_apply(p32, jnp.asarray(u), jnp.asarray(q, jnp.float32)))
        assert np.max(np.abs(got - y)) < 1e-4 * (1.0 + np.max(np.abs(y)))


def test_construction_widths_and_tables():
    """(a), (b): default widths are d (B) and 2d (A); B uses only E_out, A only d columns of E."""
    d, depth, n = 5, 2, 7
    task = small_task(d, depth, n, 0)
    b, a = t2.construct_b(task), t2.construct_a(task)
    assert b["a"].shape == (d,) and a["a"].shape == (2 * d,)
    assert b["W"].shape[0] == a["W"].shape[0] == depth + 1
    assert not b["E"].any() and not b["E_up"].any()
    np.testing.assert_array_equal(b["E_out"], task.psi)
    assert np.count_nonzero(a["E"]) == n * d
    with pytest.raises(ValueError, match="width"):
        t2.construct_b(task, width=d - 1)
    with pytest.raises(ValueError, match="width"):
        t2.construct_a(task, width=2 * d - 1)
    with pytest.raises(ValueError, match="depth"):
        t2.construct_a(task, depth=depth)


@pytest.mark.parametrize("arch", ["A", "B"])
@pytest.mark.parametrize(
    ("d", "width", "depth", "n"), [(4, 8, 3, 10), (3, 3, 1, 5), (8, 20, 2, 64)]
)
def test_param_counts_match_the_parameter_tree(arch, d, width, depth, n):
    """Parameter counts: param_counts equals the sizes of the initialised parameters."""
    params = t2.init_student(np.random.default_rng(0), arch, d, width, depth, n)
    tables = {"E", "E_up", "E_out"}
    counts = t2.param_counts(arch, d, width, depth, n)
    assert counts["table"] == sum(v.size for k, v in params.items() if k in tables)
    assert counts["non_table"] == sum(v.size for k, v in params.items() if k not in tables)
    assert counts["total"] == counts["table"] + counts["non_table"]


def test_param_counts_by_hand():
    """Parameter counts, d=4, w=8, D=3, N=10 by hand: P 32, layers 3 (128 + 16), a 8, beta 1."""
    a = t2.param_counts("A", 4, 8, 3, 10)
    b = t2.param_counts("B", 4, 8, 3, 10)
    assert a == {"non_table": 473, "table": 80, "total": 553, "table_used_by_construction": 40}
    assert b["non_table"] == 473 and b["table"] == 4 * 80
    # at the construction widths (d = 8, D = 3, N = 256): A has ~3.5x the non-table parameters
    at_a = t2.param_counts("A", 8, 16, 3, 256)["non_table"]
    at_b = t2.param_counts("B", 8, 8, 3, 256)["non_table"]
    assert (at_a, at_b) == (16 * 8 + 3 * (2 * 256 + 32) + 17, 8 * 8 + 3 * (2 * 64 + 16) + 9)


# ----------------------------------------------------------------------------- (c): pigeonhole


@given(n_values=st.integers(1, 5000), bits=st.integers(1, 4))
def test_min_width_bits_is_the_brute_force_pigeonhole(n_values, bits):
    """(c): the smallest w with an injection of n values into w-tuples of b-bit values."""
    w = 0
    while (
        len(list(itertools.islice(itertools.product(range(2**bits), repeat=w), n_values)))
        < n_values
    ):
        w += 1
    assert t2.min_width_bits(n_values, bits) == w
    assert w == math.ceil(round(math.log2(n_values) / bits, 12))


@given(d=st.integers(1, 6), bits=st.integers(1, 3))
def test_lower_bounds_are_2d_and_d(d, bits):
    """(c): with N = M = 2^(d b), A needs w >= 2d and B needs w >= d; B's bound ignores N."""
    n = m = 2 ** (d * bits)
    assert t2.lower_bound_width("A", n, m, bits) == 2 * d
    assert t2.lower_bound_width("B", n, m, bits) == d
    assert t2.lower_bound_width("B", 4 * n, m, bits) == d
    assert t2.lower_bound_width("A", 2 * n, m, bits) == 2 * d + 1  # A's grows with log N
    assert t2.lower_bound_width("A", 2**bits * n, m, bits) == 2 * d + 1


def test_bad_bounds_input():
    with pytest.raises(ValueError, match="bits"):
        t2.min_width_bits(4, 0)
    with pytest.raises(ValueError, match="arch"):
        t2.lower_bound_width("C", 4, 4, 1)


def test_bounds_and_readout_do_not_import_jax():
    """The counting and read-out modules are pure Python: importing them leaves JAX unloaded."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); "
        "import lshsim.theorems.theorem2.bounds, lshsim.theorems.theorem2.readout; "
        "print('jax' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- (d): injectivity


def test_target_is_injective_on_a_random_product_set():
    """(d): with Gaussian Psi and Phi injective, nonzero on Q, y takes N M distinct values."""
    d, n, m = 6, 24, 40
    task = small_task(d, 2, n, 11)
    _, q = sample(d, n, 12, batch=4 * m)
    phi = reference_phi(task.teacher_w, task.teacher_b, q)
    q = q[np.linalg.norm(phi, axis=1) > 1e-3][:m]  # Phi(q) != 0
    assert len(q) == m
    phi = t2.teacher_features(task, q, np)
    gaps = [np.linalg.norm(phi[i] - phi[j]) for i in range(m) for j in range(i)]
    assert min(gaps) > 1e-6  # Phi injective on Q
    y = np.sort((task.psi @ phi.T).ravel())
    assert len(y) == n * m and np.min(np.diff(y)) > 1e-12 * np.max(np.abs(y))


# ------------------------------------------------------------------------------ (e): tightness


def distinct_per_unit(x: np.ndarray) -> int:
    return max(len(np.unique(np.round(x[:, i], 12))) for i in range(x.shape[1]))


@pytest.mark.parametrize(("d", "bits", "depth"), [(1, 2, 1), (2, 2, 2), (2, 3, 1), (3, 1, 2)])
def test_grid_instance_makes_the_bounds_tight(d, bits, depth):
    """(e): on a grid instance y is injective and both constructions are b-bit, so w = 2d, d."""
    task, q_grid = t2.grid_instance(d, bits, depth, seed=d + bits)
    n = m = 2 ** (d * bits)
    assert task.psi.shape == (n, d) and q_grid.shape == (m, d)
    u = np.repeat(np.arange(n), m)
    q = np.tile(q_grid, (n, 1))
    y = reference_y(task, u, q)
    assert len(np.unique(y)) == n * m  # injective on S = U x Q
    for arch, build in (("A", t2.construct_a), ("B", t2.construct_b)):
        params = build(task)
        inputs, y_hat = t2.student_interfaces(params, u, q, np)
        np.testing.assert_allclose(y_hat, y, rtol=1e-12, atol=1e-12)
        assert all(distinct_per_unit(x) <= 2**bits for x in inputs), arch  # b-bit interfaces
        assert len(np.unique(np.round(inputs[-1], 12), axis=0)) >= (n * m if arch == "A" else m)
        assert params["a"].shape[0] == t2.lower_bound_width(arch, n, m, bits)


# ------------------------------------------------------------------------------ read-out


def test_minimal_width_read_out():
    """Read-out: the smallest swept width at or below the target, None if never reached."""
    widths = [4, 8, 12, 16]
    assert t2.minimal_width(widths, [0.5, 0.2, 0.04, 0.01], 0.05) == 12
    assert t2.minimal_width(widths, [0.5, 0.05, 0.06, 0.01], 0.05) == 8  # <= counts, first wins
    assert t2.minimal_width([16, 4, 8], [0.01, 0.5, 0.02], 0.05) == 8  # order does not matter
    assert t2.minimal_width(widths, [0.5, 0.4, 0.3, float("nan")], 0.05) is None
    with pytest.raises(ValueError, match="losses"):
        t2.minimal_width(widths, [0.1], 0.05)


def test_median_width():
    """Read-out: median over seeds, None ranked above every width."""
    assert t2.median_width([8, 16, 12]) == 12
    assert t2.median_width([8, None, 12]) == 12
    assert t2.median_width([8, None, None]) is None
    assert t2.median_width([8, 12]) == 10
    assert t2.median_width([8, None]) is None
    with pytest.raises(ValueError, match="values"):
        t2.median_width([])


# ------------------------------------------------------------------------------ tiny sweep


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """The library's smoke sweeps for seeds 0 and 1 (once per run: :func:`tests.once_per_run`)."""
    return once_per_run(
        tmp_path_factory,
        "theorem2-smoke",
        lambda: (t2.run_sweep(t2.SMOKE, 0), t2.run_sweep(t2.SMOKE, 1)),
    )


@pytest.mark.slow
def test_sweep_is_deterministic_and_the_script_writes_json_and_figure(tmp_path, smoke_runs):
    """Experiment: the script's smoke run (seed 0) gives the library's numbers for seed 0
    exactly (the same seed, two runs), another seed different ones; the script writes its
    JSON, PNG and SVG. (The determinism and the script tests were two, each with a second
    seed-0 sweep.)"""
    first, other = smoke_runs
    losses = lambda r: [row["heldout_nmse"] for row in r["rows"]]  # noqa: E731
    assert losses(first) != losses(other)
    rc = load_script().main(["--smoke", "--out", str(tmp_path)])
    assert rc == 0
    doc = json.loads((tmp_path / "theorem2_width.json").read_text())
    assert doc["seed"] == 0 and doc["config"]["dims"] == list(t2.SMOKE.dims)
    assert json.dumps(doc["data"], sort_keys=True) == json.dumps(first, sort_keys=True)
    assert (tmp_path / "theorem2_width.png").stat().st_size > 0
    assert (tmp_path / "theorem2_width.svg").stat().st_size > 0


def test_sweep_result_layout(smoke_runs):
    """Experiment: run_sweep's result is JSON-able and complete."""
    res = smoke_runs[0]
    cfg = t2.SMOKE
    json.dumps(res, allow_nan=False)
    assert len(res["rows"]) == 2 * len(cfg.widths(cfg.dims[0])) * cfg.seeds * len(cfg.dims)
    key = str(cfg.dims[0])
    for arch in "AB":
        assert len(res["minimal"][key][arch]["per_seed"]) == cfg.seeds
        assert res["constructions"][key][arch]["max_abs_error_float64"] < 1e-12
        assert res["constructions"][key][arch]["max_abs_error_float32"] < 1e-4
    assert res["params"][key]["A"]["width"] == 2 * res["params"][key]["B"]["width"]


def test_b_beats_a_at_width_d(smoke_runs):
    """Experiment: at width d the B student's held-out loss is below A's, for every replicate.

    SMOKE (d=4, N=16, 3000 steps of 128) is fixed by its seeds. Over seeds 0-5 (12 replicates)
    A's loss at width d was 1.7x to 5.1x B's (seeds 0 and 1, tested here: 3.5, 3.0, 2.7, 1.7),
    so the strict inequality holds with a wide margin and does not hinge on rounding.
    """
    for res in smoke_runs:
        d = t2.SMOKE.dims[0]
        at_d = {
            (r["arch"], r["replicate"]): r["heldout_nmse"] for r in res["rows"] if r["width"] == d
        }
        for rep in range(t2.SMOKE.seeds):
            assert at_d[("B", rep)] < at_d[("A", rep)]


def test_bad_config():
    with pytest.raises(ValueError, match="seeds"):
        t2.run_sweep(dataclasses.replace(t2.SMOKE, seeds=0), 0)
    with pytest.raises(ValueError, match="width_ratios"):
        dataclasses.replace(t2.SMOKE, width_ratios=(0.0,)).validate()
    with pytest.raises(ValueError, match="seed"):
        t2.run_sweep(t2.SMOKE, -1)


# ------------------------------------------------------------------------------ figure, script


@pytest.mark.slow
def test_width_figure(smoke_runs):
    from lshsim.plots.theorem2 import width_figure

    fig = width_figure(smoke_runs[0])
    assert len(fig.axes) == len(t2.SMOKE.dims)
    with pytest.raises(KeyError, match="rows"):
        width_figure({"config": smoke_runs[0]["config"], "minimal": {}})


def load_script():
    spec = importlib.util.spec_from_file_location("theorem2_width", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_script_help():
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--quick" in out.stdout and "--seeds" in out.stdout


@pytest.mark.parametrize(
    ("argv", "param"),
    [(["--seeds", "0"], "--seeds"), (["--seed", "-3"], "--seed"), (["--bogus"], "unrecognized")],
)
def test_script_bad_input(argv, param, capsys):
    with pytest.raises(SystemExit) as exc:
        load_script().main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("theorem2_width: error: ") and param in err[0]
