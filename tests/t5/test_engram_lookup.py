"""The engram lookup (Engram as deployed) against Engram's own module and hash.

The layer's hashes equal the NumPy transcription of ``NgramHashMapping`` (compressing map of a
SentencePiece vocabulary, orders 2 and 3 together, one multiplier set per layer, one prime
search over the model's layers); its output equals a torch transcription of ``Engram.forward``
(gate with the signed square root, ``ShortConv``) on the same random weights; it is causal;
parameter counts traced = closed form = by hand; bad fields and flags are one-line errors.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import flax.linen as nn  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from lshsim.cli.main import main  # noqa: E402
from lshsim.hashing.engram import compress_table, sentencepiece_texts  # noqa: E402
from lshsim.laws.engram import engram_primes  # noqa: E402
from lshsim.studies.routing import INIT_LOOKUPS  # noqa: E402
from lshsim.t5 import memory, probe  # noqa: E402
from lshsim.t5.budget import param_count  # noqa: E402
from lshsim.t5.lookups.engram_layer import model_compress_table  # noqa: E402
from lshsim.t5.params import count_params  # noqa: E402
from lshsim.testing.engram_reference import (  # noqa: E402
    NgramHashMappingRef,
    engram_module_forward,
    handmade_sentencepiece_model,
)

from .conftest import MICRO  # noqa: E402

EG = MICRO.replace(lookup="engram", buckets=40, ngram=3, lookup_heads=2, lookup_seed=5)


@pytest.fixture(scope="module")
def spm_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("engram") / "hand.model"
    path.write_bytes(handmade_sentencepiece_model())
    return str(path)


def _randomised(params, seed: int):
    """Every parameter drawn anew (scales near 1, the rest N(0, 0.5^2)): a sensitive check."""
    leaves, tree = jax.tree_util.tree_flatten_with_path(nn.unbox(params))
    rng = np.random.default_rng(seed)
    out = []
    for path, leaf in leaves:
        noise = rng.normal(0.0, 0.5, leaf.shape)  # (leaves of jax.eval_shape: shapes only)
        base = 1.0 if "scale" in jax.tree_util.keystr(path) else 0.0
        out.append(jnp.asarray(base + noise, jnp.float32))
    return jax.tree_util.tree_unflatten(tree, out)


def test_layer_equals_engrams_hash_and_module(spm_path):
    """Decoder layer 0 (global layer 1): the sown hashes are NgramHashMappingRef's on the
    compressed ids, and the output is Engram.forward's (torch, float64) within float32
    rounding; changing token 6 leaves positions < 6 unchanged (the hash and conv are causal)."""
    cfg = EG.replace(engram_tokenizer=spm_path)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, cfg.vocab_size, size=(2, 12))
    ids[0, :4] = [4, 5, 6, 5]  # ▁Café ▁cafe CAFE ▁cafe: one compressed id
    x = rng.normal(size=(2, 12, cfg.d_model)).astype(np.float32)
    expert = memory.PartialExpert(cfg, 1, 0)
    shapes = jax.eval_shape(expert.init, jax.random.PRNGKey(0), x, ids)["params"]
    params = _randomised(shapes, 1)
    apply = jax.jit(lambda p, t: expert.apply({"params": p}, x, t, mutable=["intermediates"]))
    out, sown = apply(params, ids)
    hashes = np.asarray(sown["intermediates"]["slots"][0])

    texts, raw = sentencepiece_texts(spm_path)
    lookup = model_compress_table(spm_path, cfg.vocab_size)
    assert lookup[4] == lookup[5] == lookup[6] and len(set(lookup[270:].tolist())) == 242
    np.testing.assert_array_equal(lookup[:270], compress_table(texts, raw)[0])
    vocab = int(lookup.max()) + 1
    ref = NgramHashMappingRef([40, 40], 3, 2, [0, 1], 0, 5, vocab, lookup_table=lookup)
    want = ref.hash(ids)[1]
    np.testing.assert_array_equal(hashes, want)
    assert (hashes[0, 1, :2] == hashes[0, 3, :2]).all()  # the 2-grams (Café, cafe) are equal
    primes = [p for order in ref.vocab_size_across_layers[1] for p in order]
    weights = {k: np.asarray(v, np.float64) for k, v in params.items()}
    got = np.asarray(out, np.float64)
    ref_out = engram_module_forward(x, want, primes, weights, kernel_size=4, dilation=3)
    # float32 against float64: |error| <~ eps32 sqrt(E) (E = 64 products) ~ 1e-6 of the scale
    # (measured 2.3e-7); without the signed square root it is 7e-2, without the conv 0.5
    assert np.abs(got - ref_out).max() <= 1e-5 * np.abs(ref_out).max()
    changed = ids.copy()
    changed[:, 6] = (changed[:, 6] + 1) % cfg.vocab_size
    out2 = np.asarray(apply(params, changed)[0])
    np.testing.assert_array_equal(out2[:, :6], np.asarray(out)[:, :6])
    assert not np.allclose(out2[:, 6], np.asarray(out)[:, 6])


def test_parameter_counts_traced_closed_form_and_by_hand():
    """Each layer's table is the sum of its own primes (one search over 2 layers x 2 orders)."""
    d, h = EG.d_model, EG.lookup_heads
    primes = engram_primes([40, 40], h, [0, 1])
    by_hand = sum(
        sum(p for o in per for p in o) * (d // h) + 2 * (4 * (d // h) * d + d) + 3 * d + 4 * d
        for per in primes.values()
    )
    assert count_params(EG)["expert"] == param_count(EG)["expert"] == by_hand


def test_cli_chooses_it_and_refuses_bad_fields(capsys):
    """``--lookup engram`` reaches the config; a flag without effect or a bad field: exit 2."""
    argv = ["params", "--config", "tiny", "--lookup", "engram", "--ngram", "3", "--heads", "2"]
    assert main([*argv, "--json"]) == 0
    capsys.readouterr()
    bad = [
        (["--lookup", "ngram", "--engram-tokenizer", "x.model"], "--engram-tokenizer has no"),
        (["--lookup", "engram", "--rank", "2"], "--rank has no effect"),
        (["--lookup", "engram", "--ngram", "1"], "ngram: the engram lookup hashes orders 2..N"),
        (["--lookup", "engram", "--heads", "7"], "heads (lookup_heads): engram's head width"),
    ]
    for flags, message in bad:
        assert main(["params", "--config", "tiny", *flags]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    with pytest.raises(ValueError, match=r"^engram_tokenizer: no such SentencePiece model"):
        model_compress_table("/nonexistent.model", 512)


def test_probe_at_initialisation_agrees_with_the_law_on_compressed_ids(spm_path):
    """Order 2's head 0 over 2 layers x 3 overlaps: at least 5 of 6 predictions
    (compressed-window equality + (1 - it) rho(p_0)) inside the 95% intervals, no |z| > 4;
    the re-drawn seeds' mean agrees too (the hash's distinct-window rate is ~1/p_0)."""
    assert "engram" not in INIT_LOOKUPS  # the routing study's figure keeps its lookups
    config = EG.replace(buckets=16, ngram=2, engram_tokenizer=spm_path)
    rows, ids = probe.sentence_source(config, length=32)
    params = probe.initial_params(config, 0)
    kw = {"overlaps": (0.2, 0.5, 0.8), "samples": 32, "router_draws": 4, "seed": 0}
    result = probe.probe(config, params, rows, ids, **kw)
    assert len(result) == 6 and {r["layer"] for r in result} == {"encoder/0", "decoder/0"}
    assert sum(r["ci_low"] <= r["predicted"] <= r["ci_high"] for r in result) >= 5, result
    assert max(abs(r["z"]) for r in result) <= 4
    for r in result:
        assert abs(r["redrawn"] - r["predicted"]) <= 4 * r["sd_router"] / 2 + 0.02, r
