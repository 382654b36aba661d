"""The routing probe (`lshsim.t5.probe`, `lshsim probe`): pairs, recorded buckets, theory.

The central claim: at initialisation a random router's (and LSH's) measured collision rates
agree with the theory given the measured cosines, within the probe's interval; and the probe
can tell when they do not (a collapsed router).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")

from lshsim import theory  # noqa: E402
from lshsim.cli.main import main  # noqa: E402
from lshsim.hashing import make_family  # noqa: E402
from lshsim.t5 import probe  # noqa: E402
from lshsim.t5.memory import lsh_projection  # noqa: E402
from lshsim.t5.scan import unstack_layers  # noqa: E402

from .conftest import MICRO, probe_at_initialisation  # noqa: E402

#: two layers per stack, so the upper layers see mixed (attention) inputs
PROBED = MICRO.replace(name="probed", num_encoder_layers=2, num_decoder_layers=2)


@settings(max_examples=40)
@given(
    length=st.integers(1, 40),
    overlap=st.floats(0.0, 1.0),
    samples=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_pairs_share_exactly_round_f_l_aligned_tokens(length, overlap, samples, seed):
    """Each pair differs at exactly `l - round(f l)` positions; a replaced token is an
    allowed id and never the original; the same seed gives the same pairs."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 12, (5, length))
    ids = np.arange(3, 12)  # originals 0..2 are not among the replacement ids
    a, b = probe.make_pairs(rows, overlap, samples, ids, np.random.default_rng(seed))
    a2, b2 = probe.make_pairs(rows, overlap, samples, ids, np.random.default_rng(seed))
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    changed = a != b
    assert (changed.sum(axis=1) == length - round(overlap * length)).all()
    assert np.isin(b[changed], ids).all()
    assert all(any(np.array_equal(r, row) for row in rows) for r in a)


def test_pairs_replacements_are_uniform_over_the_other_ids():
    """A replaced position takes each allowed id other than the original equally often
    (chi-square over 4 ids, 40000 draws, p > 0.001 at this fixed seed)."""
    from scipy import stats

    rows = np.full((1, 4), 2)
    _, b = probe.make_pairs(rows, 0.0, 10000, np.arange(1, 6), np.random.default_rng(1))
    counts = np.bincount(b.ravel(), minlength=6)
    assert counts[0] == 0 and counts[2] == 0
    assert stats.chisquare(counts[[1, 3, 4, 5]]).pvalue > 1e-3


def test_make_pairs_refuses_bad_input():
    """Empty rows or fewer than two replacement ids are refused, naming the parameter."""
    with pytest.raises(ValueError, match="rows"):
        probe.make_pairs(np.zeros((0, 4)), 0.5, 2, np.arange(5), np.random.default_rng(0))
    with pytest.raises(ValueError, match="replace_ids"):
        probe.make_pairs(np.zeros((2, 4)), 0.5, 2, np.array([7]), np.random.default_rng(0))


@pytest.mark.parametrize(
    ("family", "params"),
    [("voronoi", {}), ("simhash", {}), ("crosspolytope", {"rotation": "gaussian"})],
)
def test_redrawn_rates_equal_the_hash_kernels(family, params):
    """The BLAS re-draw gives exactly the rates of hashing with each drawn family's own
    kernel (the slow, obvious reference)."""
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((300, 16))
    xb = xa + 0.8 * rng.standard_normal((300, 16))
    seq = np.random.SeedSequence(5)
    got = probe.redrawn_rates(family, 16, params, xa, xb, 6, seq)
    want = []
    for child in np.random.SeedSequence(5).spawn(6):
        fam = make_family(family, 16, 16, seed=child, **params)
        want.append(np.mean(fam.hash(xa) == fam.hash(xb)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("family", "params"),
    [("voronoi", {}), ("simhash", {}), ("crosspolytope", {"rotation": "gaussian"})],
)
def test_redrawn_mean_is_the_theory_given_the_cosines(family, params):
    """Conditionally on the inputs, a random lookup collides with probability P(n, cos) at
    each pair: the mean over 200 re-drawn lookups equals the mean prediction within 4
    standard errors of that mean."""
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((400, 24))
    xb = rng.uniform(0.0, 1.5, (400, 1)) * xa + rng.standard_normal((400, 24))
    rates = probe.redrawn_rates(family, 32, params, xa, xb, 200, np.random.SeedSequence(3))
    cos = np.sum(xa * xb, 1) / np.linalg.norm(xa, axis=1) / np.linalg.norm(xb, axis=1)
    predicted = theory.probabilities(family, 32, cos, **params).mean()
    se = rates.std(ddof=1) / np.sqrt(rates.size)
    assert abs(rates.mean() - predicted) <= 4 * se


def _pairs(config, samples=8, length=16, seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.integers(3, 200, (20, length))
    return probe.make_pairs(rows, 0.5, samples, np.arange(3, 200), rng)


@pytest.mark.parametrize("lookup", ["softmax", "lsh", "tokenid"])
def test_recorded_buckets_are_the_lookup_of_the_recorded_inputs(lookup):
    """What a layer sows is consistent: softmax buckets = argmax(input @ router), LSH
    buckets = the layer's SimHash of its input, Token-ID buckets = the tokens the layer's
    positions carry (encoder: the input; decoder: the input shifted right)."""
    config = PROBED.replace(lookup=lookup, buckets=16 if lookup != "tokenid" else 0)
    params = probe.initial_params(config, 1)
    a, _ = _pairs(config)
    rec = probe.record_layers(config, params, a, batch=3)
    layers = unstack_layers(jax.tree.map(np.asarray, params))  # on the host: no eager XLA ops
    assert list(rec) == ["encoder/0", "encoder/1", "decoder/0", "decoder/1"]
    for name, (bucket, x, _) in rec.items():
        stack, i = name.split("/")
        assert bucket.shape == a.shape and x.shape == (*a.shape, config.d_model)
        if lookup == "softmax":
            router = layers[stack][f"layers_{i}"]["expert"]["router"]
            want = np.argmax(x.astype(np.float64) @ router, axis=-1)
        elif lookup == "lsh":
            planes = lsh_projection(config, config.d_model, 0 if stack == "encoder" else 1, int(i))
            want = (x.astype(np.float64) @ planes.T > 0) @ (1 << np.arange(planes.shape[0]))
        else:
            want = a if stack == "encoder" else np.pad(a[:, :-1], ((0, 0), (1, 0)))
        assert (bucket == want).mean() > 0.999, name  # float32 vs float64 near-ties only


def _corpus_source(config):
    return probe.sentence_source(config, length=32)


@pytest.mark.parametrize(
    ("lookup", "extra"),
    [
        ("softmax", {}),
        ("lsh", {"lsh_family": "simhash"}),
        ("lsh", {"lsh_family": "crosspolytope"}),
    ],
)
@pytest.mark.slow
def test_random_lookups_agree_with_the_theory_at_initialisation(lookup, extra):
    """At initialisation every layer's router / LSH matrix is a random draw independent of
    its inputs, so the measured rates agree with the theory given the measured cosines:
    over 4 layers x 3 overlaps, at least 10 of the 12 predictions lie inside the 95%
    intervals (P(< 10 | p = 0.95) ~ 2%, rows of a layer share a router), no |z| exceeds 4,
    and the re-drawn lookups' mean matches the prediction within 4 of its standard errors."""
    config = PROBED.replace(lookup=lookup, buckets=16, **extra)
    rows, ids = _corpus_source(config)
    result = probe_at_initialisation(config, rows, ids, samples=48, router_draws=24)
    for r in result:
        assert 1.0 <= r["effective_buckets"] <= 16.0
        assert abs(r["redrawn"] - r["predicted"]) <= 4 * r["sd_router"] / np.sqrt(24) + 1e-12
        assert 0 <= r["pairs_low"] <= r["measured"] <= r["pairs_high"] <= 1
    summary = probe.summarise(result)
    assert [s["layer"] for s in summary] == ["encoder/0", "encoder/1", "decoder/0", "decoder/1"]
    inside = sum(r["ci_low"] <= r["predicted"] <= r["ci_high"] for r in result)
    assert sum(s["inside"] for s in summary) == inside


def test_tokenid_collides_exactly_where_tokens_are_equal():
    """Token-ID's measured rate is the fraction of equal aligned tokens, exactly the
    prediction; at the encoder it is round(f l) / l for every pair (a zero-width interval;
    the decoder's shifted inputs vary by a token per pair)."""
    config = PROBED.replace(lookup="tokenid")
    rows, ids = _corpus_source(config)
    result = probe.probe(
        config, probe.initial_params(config, 0), rows, ids, overlaps=(0.25, 0.75), samples=6
    )
    for r in result:
        assert r["measured"] == r["predicted"] and r["z"] == 0.0
        if r["stack"] == "encoder":
            assert r["measured"] == r["ci_low"] == r["ci_high"] == round(r["overlap"] * 32) / 32


def test_a_collapsed_router_is_reported_as_departing():
    """The probe can fail: a router whose columns are all zero sends every token to bucket 0,
    so it collides always, far above the random-router prediction (z > 10, outside CI), and
    it uses one bucket."""
    config = PROBED.replace(lookup="softmax", buckets=16)
    params = probe.initial_params(config, 0)
    params = jax.tree_util.tree_map_with_path(
        lambda path, v: v * 0 if "router" in jax.tree_util.keystr(path) else v, params
    )
    rows, ids = _corpus_source(config)
    result = probe.probe(config, params, rows, ids, overlaps=(0.3,), samples=16, router_draws=8)
    for r in result:
        assert r["measured"] == 1.0 and r["effective_buckets"] == 1.0
        assert r["z"] > 10 and not r["ci_low"] <= r["predicted"] <= r["ci_high"]


def test_probe_refuses_a_model_without_lookup_and_bad_arguments():
    """A plain model, too few samples or an overlap outside [0, 1] are refused by name."""
    rows = np.arange(3, 67).reshape(2, 32)
    with pytest.raises(ValueError, match="lookup"):
        probe.probe(PROBED, None, rows, np.arange(3, 100))
    config = PROBED.replace(lookup="tokenid")
    with pytest.raises(ValueError, match="samples"):
        probe.probe(config, None, rows, np.arange(3, 100), samples=1)
    with pytest.raises(ValueError, match="overlap"):
        probe.probe(config, None, rows, np.arange(3, 100), overlaps=(1.5,))


# -- the command -------------------------------------------------------------------------------


def test_cli_probe_config_json(capsys):
    """`lshsim probe --config tiny --lookup softmax --json` prints rows with the documented
    keys, one per (layer, overlap), and a per-layer summary."""
    rc = main(
        [
            "probe",
            "--config",
            "tiny",
            "--lookup",
            "softmax",
            "--samples",
            "4",
            "--length",
            "16",
            "--overlap",
            "0.5",
            "--router-draws",
            "4",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["theory"] == "voronoi" and out["lookup"] == "softmax"
    assert [r["layer"] for r in out["rows"]] == ["encoder/0", "encoder/1", "decoder/0", "decoder/1"]
    for r in out["rows"]:
        for key in ("layer", "overlap", "measured", "ci_low", "ci_high", "predicted"):
            assert key in r
    assert len(out["summary"]) == 4


@pytest.fixture(scope="module")
def softmax_run(tmp_path_factory, small_corpus):
    from lshsim.t5.loop import train

    out = tmp_path_factory.mktemp("probe") / "run"
    # unrolled, as runs before scanning was the default (the probes at initialisation above
    # read the scanned default's layers)
    config = MICRO.replace(lookup="softmax", buckets=8, scan_layers=False)
    train(config, out, steps=4, corpus=[small_corpus], progress=False, checkpoint_every=2)
    return out


def test_cli_probe_checkpoint_text_and_step(softmax_run, capsys):
    """A trained run is probed on its own held-out split (latest step, or --step), and the
    table names the checkpoint and the theory."""
    rc = main(["probe", "--run", str(softmax_run), "--samples", "4", "--length", "16"])
    out = capsys.readouterr().out
    assert rc == 0 and "step 4" in out and "theory voronoi" in out and "encoder/0" in out
    rc = main(["probe", "--run", str(softmax_run), "--step", "2", "--samples", "3", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["model"].endswith("step 2")


@pytest.mark.parametrize(
    ("argv", "param"),
    [
        (["--config", "tiny", "--lookup", "softmax", "--overlap", "0.5,1.5"], "--overlap"),
        (["--config", "tiny", "--lookup", "softmax", "--overlap", "a"], "--overlap"),
        (["--config", "tiny", "--lookup", "softmax", "--samples", "1"], "samples"),
        (["--config", "tiny"], "lookup"),
        (["--config", "tiny", "--lookup", "none"], "lookup"),
        (["--config", "tiny", "--lookup", "lsh", "--step", "3"], "step"),
        (["--config", "tiny", "--lookup", "lsh", "--seed", "-1"], "seed"),
    ],
)
def test_cli_probe_bad_input_is_one_line_exit_2(argv, param, capsys):
    """Bad input: exit 2, one line naming the parameter, no traceback."""
    rc = main(["probe", *argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"lshsim: error: {param}") and err.count("\n") == 1


def test_cli_probe_checkpoint_refuses_memory_flags_and_other_lookup(softmax_run, capsys):
    """A checkpoint's memory is fixed: --rank or a different --lookup is refused by name."""
    rc = main(["probe", "--run", str(softmax_run), "--rank", "4"])
    assert rc == 2 and capsys.readouterr().err.startswith("lshsim: error: rank")
    rc = main(["probe", "--run", str(softmax_run), "--lookup", "lsh"])
    assert rc == 2 and capsys.readouterr().err.startswith("lshsim: error: lookup")


def test_same_seed_same_rows_and_seed_is_used():
    """The probe is reproducible: the same seed gives identical rows, another seed other
    pairs (so other measured rates)."""
    config = PROBED.replace(lookup="lsh", buckets=16)
    rows, ids = _corpus_source(config)
    params = probe.initial_params(config, 0)

    def run(seed):
        return probe.probe(
            config, params, rows, ids, overlaps=(0.5,), samples=6, router_draws=3, seed=seed
        )

    first = run(4)
    assert json.dumps(first) == json.dumps(run(4))
    assert json.dumps(first) != json.dumps(run(5))
