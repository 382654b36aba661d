"""The T5 v1.1 model: parameter counts, position buckets, masking, dtypes."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.t5.configs import CONFIGS, TABLE3, get_config, padded_vocab  # noqa: E402
from lshsim.t5.model import (  # noqa: E402
    T5,
    add_position_bias,
    init_params,
    relative_position_bucket,
)
from lshsim.t5.params import count_params  # noqa: E402
from lshsim.t5.scan import unstack_layers  # noqa: E402

#: Each config's counts traced once: both count tests ask for small, base and large (large's
#: trace alone is several seconds of CPU).
_counts = functools.cache(count_params)


def _formula(cfg):
    """Hand count of a T5 v1.1 (no biases, gated FFN, untied output, one bias table per stack)."""
    d, inner, ff = cfg.d_model, cfg.num_heads * cfg.d_kv, cfg.d_ff
    enc_layer = 4 * d * inner + 3 * d * ff + 2 * d
    dec_layer = 8 * d * inner + 3 * d * ff + 3 * d
    non_emb = (
        cfg.num_encoder_layers * enc_layer
        + cfg.num_decoder_layers * dec_layer
        + 2 * cfg.relative_attention_num_buckets * cfg.num_heads
        + 2 * d
    )
    return 2 * cfg.vocab_size * d, non_emb


@pytest.mark.parametrize("name", list(CONFIGS))
def test_counts_equal_the_hand_formula(name):
    cfg = get_config(name)
    emb, non_emb = _formula(cfg)
    counts = _counts(cfg)
    assert (counts["embedding"], counts["non_embedding"]) == (emb, non_emb)
    assert counts["total"] == emb + non_emb


@pytest.mark.parametrize("name", list(TABLE3))
def test_counts_match_table3_within_1_percent(name):
    counts = _counts(get_config(name))
    emb, non_emb = TABLE3[name]
    assert abs(counts["embedding"] / emb - 1) < 0.01
    assert abs(counts["non_embedding"] / non_emb - 1) < 0.01


def test_paper_vocabulary_is_32000_pieces_plus_sentinels_padded():
    assert padded_vocab(32000) == 32128
    assert padded_vocab(2000) == 2176
    assert all(CONFIGS[n].vocab_size == 32128 for n in TABLE3)


def test_unknown_config_is_one_line_error():
    with pytest.raises(ValueError, match=r"^config: unknown config 'huge'; choose one of tiny"):
        get_config("huge")


def test_config_json_round_trip_and_unknown_field():
    cfg = get_config("tiny")
    assert type(cfg).from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown field"):
        cfg.replace(width=3)


def _bucket_reference(offset: int, bidirectional: bool, num_buckets=32, max_distance=128) -> int:
    """T5's bucket of one offset, with Python floats (the obvious slow version)."""
    b = 0
    if bidirectional:
        num_buckets //= 2
        if offset > 0:
            b += num_buckets
        n = abs(offset)
    else:
        n = max(-offset, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return b + n
    large = max_exact + int(
        math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    )
    return b + min(large, num_buckets - 1)


@given(st.integers(-1000, 1000), st.booleans())
def test_bucket_matches_reference(offset, bidirectional):
    got = int(
        relative_position_bucket(
            np.array([offset]), bidirectional=bidirectional, num_buckets=32, max_distance=128
        )[0]
    )
    ref = _bucket_reference(offset, bidirectional)
    # float32 vs float64 logs may differ only exactly at a bucket edge
    assert abs(got - ref) <= 1
    assert 0 <= got < 32


def test_bucket_structure():
    off = np.arange(-300, 301)
    bi = relative_position_bucket(off, bidirectional=True, num_buckets=32, max_distance=128)
    causal = relative_position_bucket(off, bidirectional=False, num_buckets=32, max_distance=128)
    assert np.array_equal(bi[300:292:-1], np.arange(8))  # exact buckets for small offsets
    assert np.array_equal(bi[301:308], 16 + np.arange(1, 8))
    assert np.all(bi[301:] >= 16) and np.all(bi[:301] < 16)  # keys after / before the query
    assert np.all(np.diff(bi[301:]) >= 0) and bi[-1] == 31  # log-spaced, clipped
    assert np.all(causal[301:] == 0)  # the decoder never sees the future
    assert causal[300 - 200] == 31 and np.all(np.diff(causal[:301][::-1]) >= 0)


@functools.cache
def _apply(cfg):
    """``T5(cfg).apply``, jitted: one compile per input shape instead of every op of the
    forward pass compiled eagerly (the three tests below: 5.8 -> 3.1 s of CPU)."""
    return jax.jit(T5(cfg).apply)


def _tokens(rng, shape, vocab):
    return jnp.asarray(rng.integers(3, vocab, shape), jnp.int32)


def test_decoder_is_causal(micro):
    params = init_params(micro, jax.random.key(0))
    rng = np.random.default_rng(0)
    enc = _tokens(rng, (2, 9), micro.vocab_size)
    dec = np.asarray(_tokens(rng, (2, 7), micro.vocab_size))
    model = _apply(micro)
    a = model({"params": params}, enc, jnp.asarray(dec))
    dec2 = dec.copy()
    dec2[:, 4:] = 5
    b = model({"params": params}, enc, jnp.asarray(dec2))
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-6)
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_encoder_padding_is_ignored(micro):
    params = init_params(micro, jax.random.key(1))
    rng = np.random.default_rng(1)
    enc = np.asarray(_tokens(rng, (2, 9), micro.vocab_size))
    dec = _tokens(rng, (2, 5), micro.vocab_size)
    padded = np.concatenate([enc, np.zeros((2, 6), np.int32)], axis=1)
    model = _apply(micro)
    a = model({"params": params}, jnp.asarray(enc), dec)
    b = model({"params": params}, jnp.asarray(padded), dec)
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_bfloat16_compute_stays_close_to_float32(micro):
    params = init_params(micro, jax.random.key(2))
    rng = np.random.default_rng(2)
    enc, dec = _tokens(rng, (2, 9), micro.vocab_size), _tokens(rng, (2, 5), micro.vocab_size)
    a = _apply(micro)({"params": params}, enc, dec)
    b = _apply(micro.replace(dtype="bfloat16"))({"params": params}, enc, dec)
    assert b.dtype == jnp.float32
    assert float(jnp.max(jnp.abs(a - b))) < 0.1 * float(jnp.std(a)) + 0.05


def test_init_scales_follow_t5x(micro):
    """Embeddings ~ N(0, 1); query kernels have variance 1/(d * d_kv); others 1/fan_in."""
    cfg = get_config("tiny")
    p = unstack_layers(init_params(cfg, jax.random.key(3)))
    emb = np.asarray(p["token_embedder"]["embedding"])
    assert abs(emb.std() - 1.0) < 0.02
    att = p["encoder"]["layers_0"]["attention"]
    q, k = np.asarray(att["query"]["kernel"]), np.asarray(att["key"]["kernel"])
    assert abs(q.std() / (cfg.d_model * cfg.d_kv) ** -0.5 - 1) < 0.05
    assert abs(k.std() / cfg.d_model**-0.5 - 1) < 0.05


def test_position_bias_gradient_is_the_batch_sum():
    """add_position_bias: value and both gradients equal those of the broadcast add."""
    rng = np.random.default_rng(3)
    logits = jnp.asarray(rng.normal(size=(5, 2, 3, 4)).astype(np.float32))
    bias = jnp.asarray(rng.normal(size=(1, 2, 3, 4)).astype(np.float32))
    w = jnp.asarray(rng.normal(size=(5, 2, 3, 4)).astype(np.float32))

    def loss(f):
        return lambda a, b: jnp.sum(jnp.sin(f(a, b)) * w)

    np.testing.assert_array_equal(add_position_bias(logits, bias), logits + bias)
    got = jax.grad(loss(add_position_bias), argnums=(0, 1))(logits, bias)
    want = jax.grad(loss(jnp.add), argnums=(0, 1))(logits, bias)
    for g, h in zip(got, want, strict=True):
        assert g.shape == h.shape
        np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-6)
