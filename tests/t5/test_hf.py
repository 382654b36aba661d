"""Hugging Face interop: weights, configs and files against ``transformers`` itself."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from tests import LazyModule, needs

pytest.importorskip("jax")
pytest.importorskip("flax")
pytestmark = needs("transformers", "torch", "safetensors")
transformers, torch = LazyModule("transformers"), LazyModule("torch")

import jax  # noqa: E402

from lshsim.t5 import hf  # noqa: E402
from lshsim.t5.model import T5, init_params, relative_position_bucket  # noqa: E402
from lshsim.t5.params import abstract_params  # noqa: E402

TOL = 1e-4
HF_KW = dict(
    vocab_size=256,
    d_model=64,
    d_kv=16,
    d_ff=96,
    num_layers=2,
    num_decoder_layers=3,
    num_heads=4,
    relative_attention_num_buckets=32,
    relative_attention_max_distance=128,
    feed_forward_proj="gated-gelu",
    tie_word_embeddings=False,
    dropout_rate=0.0,
)


def _fresh_hf(hf_cfg):
    return hf.untie_lm_head(transformers.T5ForConditionalGeneration(hf_cfg)).eval()


@pytest.fixture(scope="module")
def hf_cfg():
    return transformers.T5Config(**HF_KW)


@pytest.fixture(scope="module")
def cfg(hf_cfg):
    return hf.config_from_hf(hf_cfg)


@pytest.fixture(scope="module")
def hf_model(hf_cfg):
    """Random HF model with every weight random (norm scales too), so swaps show up."""
    torch.manual_seed(0)
    model = _fresh_hf(hf_cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name:
                p.uniform_(0.5, 1.5)
            elif p.ndim == 2 and "relative_attention_bias" not in name and "shared" not in name:
                p.normal_(0.0, p.shape[1] ** -0.5)
            else:
                p.normal_(0.0, 1.0)
    assert not torch.equal(model.lm_head.weight, model.shared.weight)
    return model


def _tokens(rng, shape, lengths):
    tok = rng.integers(2, HF_KW["vocab_size"], size=shape).astype(np.int32)
    for row, n in enumerate(lengths):
        tok[row, n:] = 0
    return tok


def _inputs(enc_len, enc_lengths, dec_len, dec_lengths, seed=0):
    rng = np.random.default_rng(seed)
    enc = _tokens(rng, (len(enc_lengths), enc_len), enc_lengths)
    target = _tokens(rng, (len(dec_lengths), dec_len), dec_lengths)
    dec_in = np.concatenate([np.zeros_like(target[:, :1]), target[:, :-1]], axis=1)
    return enc, dec_in, target


def _ours(params, cfg, enc, dec_in, target):
    return np.asarray(T5(cfg).apply({"params": params}, enc, dec_in, target))


def _theirs(model, enc, dec_in):
    with torch.no_grad():
        enc_t = torch.from_numpy(enc).long()
        out = model(
            input_ids=enc_t,
            attention_mask=(enc_t != 0).long(),
            decoder_input_ids=torch.from_numpy(dec_in).long(),
        )
    return out.logits.float().numpy()


def _max_diff(a, b, target):
    valid = target > 0
    return float(np.max(np.abs(a - b)[valid]))


def _assert_trees_equal(a, b):
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


CASES = {
    # (encoder length, encoder lengths per row, decoder length, decoder lengths per row)
    "short": (7, [7], 5, [5]),
    "padded": (20, [20, 13], 9, [9, 6]),
    # offsets up to 159 (> max_distance 128): exact, log-spaced and clipped buckets
    "long": (160, [160, 101], 140, [140, 77]),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_imported_weights_give_hf_logits(case, hf_model, cfg):
    """Logits of the imported weights equal transformers' on every non-padded position."""
    enc, dec_in, target = _inputs(*CASES[case])
    params = hf.params_from_hf(hf_model.state_dict(), cfg)
    diff = _max_diff(
        _ours(params, cfg, enc, dec_in, target), _theirs(hf_model, enc, dec_in), target
    )
    print(f"max |dlogits| {case}: {diff:.2e}")
    assert diff <= TOL


def test_imported_tree_matches_eval_shape(hf_model, cfg):
    """params_from_hf has exactly the structure, shapes and dtypes of the model's init."""
    params = hf.params_from_hf(hf_model.state_dict(), cfg)
    expected = abstract_params(cfg)
    assert jax.tree_util.tree_structure(params) == jax.tree_util.tree_structure(expected)
    for got, want in zip(
        jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(expected), strict=True
    ):
        assert got.shape == want.shape and got.dtype == want.dtype == np.float32


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (16, 64)])
def test_relative_position_bucket_matches_hf(bidirectional, num_buckets, max_distance):
    """Our buckets equal transformers' for every offset in [-600, 600]."""
    rp = np.arange(-600, 601)
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    ours = relative_position_bucket(rp, **kw)
    from transformers.models.t5.modeling_t5 import T5Attention

    theirs = T5Attention._relative_position_bucket(torch.from_numpy(rp), **kw).numpy()
    assert rp[ours != theirs].tolist() == []


def test_exported_params_give_our_logits(cfg, hf_cfg):
    """init_params -> params_to_hf -> strict load into HF reproduces our logits."""
    params = init_params(cfg, jax.random.key(0))
    model = _fresh_hf(hf_cfg)
    state = {k: torch.from_numpy(v) for k, v in hf.params_to_hf(params, cfg).items()}
    model.load_state_dict(state, strict=True)
    enc, dec_in, target = _inputs(*CASES["padded"], seed=1)
    diff = _max_diff(_ours(params, cfg, enc, dec_in, target), _theirs(model, enc, dec_in), target)
    print(f"max |dlogits| export: {diff:.2e}")
    assert diff <= TOL


def test_params_round_trip_is_exact(cfg):
    """params_from_hf(params_to_hf(p)) == p bit for bit."""
    params = init_params(cfg, jax.random.key(1))
    _assert_trees_equal(hf.params_from_hf(hf.params_to_hf(params, cfg), cfg), params)


def test_config_round_trip(cfg):
    assert hf.config_from_hf(hf.config_to_hf(cfg)) == cfg
    assert hf.config_from_hf(hf.hf_config_dict(cfg), name="x") == cfg.replace(name="x")


def test_save_then_load_and_from_pretrained(tmp_path, cfg):
    """Our safetensors checkpoint reloads exactly and loads into transformers unchanged."""
    params = init_params(cfg, jax.random.key(2))
    hf.save_hf_checkpoint(tmp_path, params, cfg)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model.safetensors"]
    cfg2, params2 = hf.load_hf_checkpoint(tmp_path)
    assert cfg2 == cfg
    _assert_trees_equal(params2, params)
    _, params3 = hf.load_hf_checkpoint(tmp_path / "model.safetensors", cfg)
    _assert_trees_equal(params3, params)

    model, info = transformers.T5ForConditionalGeneration.from_pretrained(
        tmp_path, output_loading_info=True
    )
    assert not info["missing_keys"] and not info["unexpected_keys"]
    model.eval()
    enc, dec_in, target = _inputs(*CASES["padded"], seed=2)
    diff = _max_diff(_ours(params, cfg, enc, dec_in, target), _theirs(model, enc, dec_in), target)
    print(f"max |dlogits| from_pretrained: {diff:.2e}")
    assert diff <= TOL


def test_load_pytorch_bin(tmp_path, hf_model, cfg):
    """A directory with torch.save(state_dict) and HF's own config.json loads."""
    torch.save(hf_model.state_dict(), tmp_path / "pytorch_model.bin")
    hf_model.config.to_json_file(tmp_path / "config.json")
    cfg2, params = hf.load_hf_checkpoint(tmp_path)
    assert cfg2 == cfg
    _assert_trees_equal(params, hf.params_from_hf(hf_model.state_dict(), cfg))


def test_load_sharded_save_pretrained(tmp_path, hf_model, cfg):
    """transformers' sharded safetensors (with model.safetensors.index.json) loads."""
    hf_model.save_pretrained(tmp_path, max_shard_size="100KB")
    assert (tmp_path / "model.safetensors.index.json").is_file()
    _, params = hf.load_hf_checkpoint(tmp_path)
    _assert_trees_equal(params, hf.params_from_hf(hf_model.state_dict(), cfg))


def test_load_save_pretrained_of_tied_model(tmp_path, hf_cfg, cfg):
    """transformers >= 5 may save a v1.1 model without lm_head.weight (tied to shared)."""
    torch.manual_seed(1)
    model = transformers.T5ForConditionalGeneration(hf_cfg).eval()
    model.save_pretrained(tmp_path)
    if int(transformers.__version__.split(".")[0]) >= 5:
        from safetensors.numpy import load_file

        assert "lm_head.weight" not in load_file(tmp_path / "model.safetensors")
    _, params = hf.load_hf_checkpoint(tmp_path)
    enc, dec_in, target = _inputs(*CASES["padded"], seed=3)
    diff = _max_diff(_ours(params, cfg, enc, dec_in, target), _theirs(model, enc, dec_in), target)
    assert diff <= TOL


def _state(hf_model):
    return {k: v.numpy().copy() for k, v in hf_model.state_dict().items()}


def test_missing_key(hf_model, cfg):
    state = _state(hf_model)
    del state["decoder.block.2.layer.1.EncDecAttention.k.weight"]
    with pytest.raises(ValueError, match=r"missing key 'decoder\.block\.2\.layer\.1\.EncDec"):
        hf.params_from_hf(state, cfg)


def test_unexpected_key(hf_model, cfg):
    state = _state(hf_model)
    state["decoder.block.3.layer.0.layer_norm.weight"] = np.ones(64, np.float32)
    with pytest.raises(ValueError, match=r"unexpected key 'decoder\.block\.3\.layer"):
        hf.params_from_hf(state, cfg)


def test_shape_mismatch(hf_model, cfg):
    state = _state(hf_model)
    state["shared.weight"] = np.zeros((100, 64), np.float32)
    with pytest.raises(ValueError, match=r"shape of shared\.weight is \(100, 64\), config expects"):
        hf.params_from_hf(state, cfg)


def test_duplicate_embedding_must_match(hf_model, cfg):
    state = _state(hf_model)
    state["decoder.embed_tokens.weight"] = state["shared.weight"] + 1.0
    with pytest.raises(ValueError, match=r"decoder\.embed_tokens\.weight differs"):
        hf.params_from_hf(state, cfg)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"feed_forward_proj": "relu"}, "feed_forward_proj"),
        ({"tie_word_embeddings": True}, "tie_word_embeddings"),
        ({"model_type": "bart"}, "model_type"),
    ],
)
def test_non_v11_config_rejected(change, field):
    with pytest.raises(ValueError, match=field):
        hf.config_from_hf({**HF_KW, **change})


def test_non_v11_transformers_config_rejected():
    tied = transformers.T5Config(**{**HF_KW, "tie_word_embeddings": True})
    with pytest.raises(ValueError, match="tie_word_embeddings"):
        hf.config_from_hf(tied)


def test_single_file_needs_cfg(tmp_path, hf_model):
    torch.save(hf_model.state_dict(), tmp_path / "w.bin")
    with pytest.raises(ValueError, match="cfg"):
        hf.load_hf_checkpoint(tmp_path / "w.bin")
    with pytest.raises(ValueError, match="path"):
        hf.load_hf_checkpoint(tmp_path / "nothing")


def test_missing_dependency_hint(monkeypatch, tmp_path, cfg):
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r"lshsim\[hf\]"):
        hf.save_hf_checkpoint(tmp_path, init_params(cfg, jax.random.key(0)), cfg)
    assert not list(tmp_path.iterdir())


def test_hf_config_dict_is_json(cfg):
    d = json.loads(json.dumps(hf.hf_config_dict(cfg)))
    assert d["feed_forward_proj"] == "gated-gelu" and d["tie_word_embeddings"] is False
    assert d["num_layers"] == 2 and d["num_decoder_layers"] == 3
