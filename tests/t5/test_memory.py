"""External memory: partial experts and Sum / SameUp / AltUp, against NumPy references.

Properties (hypothesis): AltUp with K=1 is the baseline; a zero expert changes nothing;
Token-ID routes by the token id only; the same input takes the same route; rank-0 experts do
not depend on the input; with p = I and g = 1 every block receives the same update.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from flax.core.meta import unbox  # noqa: E402  (module.init boxes logical axis names)

from lshsim.hashing import make_family  # noqa: E402
from lshsim.t5 import memory  # noqa: E402
from lshsim.t5.configs import CONFIGS, LSH_FAMILIES, TABLE3_ALTUP, get_config  # noqa: E402
from lshsim.t5.model import T5, init_params  # noqa: E402
from lshsim.t5.params import count_params  # noqa: E402
from lshsim.t5.scan import to_layout  # noqa: E402

from .conftest import MICRO  # noqa: E402

#: Two layers per stack, so AltUp alternates blocks.
M2 = MICRO.replace(num_encoder_layers=2, num_decoder_layers=2)
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@functools.cache
def _model(cfg):
    """``(params, jitted apply returning (logits, intermediates))`` of a config at seed 0."""
    model = T5(cfg)

    @jax.jit
    def apply(params, enc, dec):
        out, st = model.apply({"params": params}, enc, dec, dec, mutable=["intermediates"])
        return out, {"intermediates": to_layout(st.get("intermediates", {}), scanned=False)}

    return init_params(cfg, jax.random.key(0)), apply


def _tokens(seed, shape=(2, 8), vocab=M2.vocab_size):
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.integers(1, vocab, size=shape), jnp.int32)


def _graft(src: dict, dst: dict) -> dict:
    """``dst`` with every leaf that ``src`` also has replaced by ``src``'s."""
    out = {}
    for k, v in dst.items():
        if isinstance(v, dict):
            out[k] = _graft(src.get(k, {}), v)
        else:
            out[k] = src.get(k, v)
    return out


def _buckets(inter, stack, layer):
    return np.asarray(inter["intermediates"][stack][f"layers_{layer}"]["expert"]["bucket"][0])


# -- Algorithm 2 ------------------------------------------------------------------------------


def _pcc_reference(x, layer_fn, p, g, j):
    """Algorithm 2 with explicit loops over blocks."""
    k = x.shape[0]
    x_hat = [sum(p[i, m] * x[m] for m in range(k)) for i in range(k)]
    computed = layer_fn(x[j])
    return np.stack([x_hat[i] + g[i] * (computed - x_hat[j]) for i in range(k)])


@given(st.integers(1, 5), st.integers(0, 2**31 - 1), st.data())
@settings(max_examples=30, deadline=None)
def test_predict_compute_correct_matches_the_loop_reference(k, seed, data):
    rng = np.random.default_rng(seed)
    j = data.draw(st.integers(0, k - 1))
    x = rng.standard_normal((k, 3, 4, 6))
    p, g = rng.standard_normal((k, k)), rng.standard_normal(k)
    w = rng.standard_normal((6, 6))

    def layer(h):
        return np.tanh(h @ w) + h

    got = memory.predict_compute_correct(jnp.asarray(x), lambda h: jnp.tanh(h @ w) + h, p, g, j)
    np.testing.assert_allclose(
        np.asarray(got), _pcc_reference(x, layer, p, g, j), rtol=1e-4, atol=1e-4
    )


@given(st.integers(1, 5), st.integers(0, 2**31 - 1), st.data())
@settings(max_examples=30, deadline=None)
def test_identity_predictor_and_unit_gain_give_every_block_the_same_update(k, seed, data):
    """With p = I and g = 1, x_new^i - x^i = L(x^j) - x^j for every block i."""
    rng = np.random.default_rng(seed)
    j = data.draw(st.integers(0, k - 1))
    x = jnp.asarray(rng.standard_normal((k, 2, 5, 8)), jnp.float32)
    w = jnp.asarray(rng.standard_normal((8, 8)), jnp.float32)
    coeffs = memory.AltUpCoefficients(k).init(jax.random.key(0))["params"]
    p, g = coeffs["predict"], coeffs["correct"]
    new = memory.predict_compute_correct(x, lambda h: jax.nn.relu(h @ w), p, g, j)
    update = np.asarray(new) - np.asarray(x)
    expected = np.asarray(jax.nn.relu(x[j] @ w) - x[j])
    for i in range(k):
        np.testing.assert_allclose(update[i], expected, rtol=1e-5, atol=1e-5)


def _pcc_autodiff(x, layer_fn, p, g, j):
    """Algorithm 2 as the einsum and broadcast that autodiff differentiates (no custom VJP)."""
    x_hat = jnp.einsum("ij,j...->i...", p, x)
    delta = layer_fn(x[j]) - x_hat[j]
    return x_hat + g.reshape((-1,) + (1,) * (x.ndim - 1)) * delta[None]


@pytest.mark.parametrize("k", [2, 5])
def test_predict_compute_correct_gradients_match_autodiff(k):
    """The custom-VJP backward pass equals autodiff of the plain formula (x, p, g, layer)."""
    rng = np.random.default_rng(k)
    x = jnp.asarray(rng.standard_normal((k, 3, 4, 6)), jnp.float32)
    p = jnp.asarray(rng.standard_normal((k, k)), jnp.float32)
    g = jnp.asarray(rng.standard_normal(k), jnp.float32)
    w = jnp.asarray(rng.standard_normal((6, 6)), jnp.float32)
    weight = jnp.asarray(rng.standard_normal((k, 3, 4, 6)), jnp.float32)
    j = k - 1

    def loss(pcc, x, p, g, w):
        return jnp.sum(weight * jnp.tanh(pcc(x, lambda h: jnp.tanh(h @ w) + h, p, g, j)))

    got = jax.grad(functools.partial(loss, memory.predict_compute_correct), (0, 1, 2, 3))
    want = jax.grad(functools.partial(loss, _pcc_autodiff), (0, 1, 2, 3))
    for a, b in zip(got(x, p, g, w), want(x, p, g, w), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("k", [2, 5])
def test_collapse_sum_adds_the_blocks(k):
    """``sum`` (a product with ones) equals the blocks' sum; at K = 2 bit for bit."""
    x = jnp.asarray(np.random.default_rng(k).standard_normal((k, 3, 4, 6)), jnp.float32)
    got, want = np.asarray(memory.collapse(x, "sum")), np.asarray(jnp.sum(x, axis=0))
    assert got.shape == (3, 4, 6)
    if k == 2:
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_altup_alternates_blocks_and_sameup_keeps_block_zero():
    alt, same = M2.replace(memory="altup", memory_k=3), M2.replace(memory="sameup", memory_k=3)
    assert [memory.compute_block(alt, i) for i in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert [memory.compute_block(same, i) for i in range(4)] == [0, 0, 0, 0]


@given(
    st.integers(0, 2**31 - 1),
    st.sampled_from(["altup", "sameup"]),
    st.sampled_from(["none", "tokenid"]),
)
@SETTINGS
def test_altup_with_k1_equals_the_baseline(seed, method, lookup):
    """K=1 at its initial p = 1, g = 1 computes the plain model (same shared weights)."""
    base_cfg = M2.replace(lookup=lookup)
    base_params, base_apply = _model(base_cfg)
    alt_params, alt_apply = _model(base_cfg.replace(memory=method, memory_k=1))
    alt_params = _graft(base_params, alt_params)
    enc, dec = _tokens(seed), _tokens(seed + 1, (2, 5))
    want, _ = base_apply(base_params, enc, dec)
    got, _ = alt_apply(alt_params, enc, dec)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)


def test_divide_and_project_matches_numpy():
    cfg = M2.replace(memory="altup", memory_k=3, memory_extra=10)
    proj = memory.MemoryProjection(cfg)
    extra = np.random.default_rng(0).standard_normal((2, 4, 10)).astype(np.float32)
    params = unbox(proj.init(jax.random.key(1), jnp.asarray(extra)))
    kernel = np.asarray(params["params"]["kernel"])  # [K-1, e/(K-1), d]
    assert kernel.shape == (2, 5, cfg.d_model)
    embedded = np.concatenate([np.ones((2, 4, cfg.d_model), np.float32), extra], axis=-1)
    blocks = memory.embed_blocks(cfg, jnp.asarray(embedded), proj.bind(params))
    assert [b.shape for b in blocks] == [(2, 4, cfg.d_model)] * 3
    np.testing.assert_array_equal(np.asarray(blocks[0]), 1.0)
    for j in range(2):
        want = extra[..., 5 * j : 5 * (j + 1)] @ kernel[j]
        np.testing.assert_allclose(np.asarray(blocks[j + 1]), want, rtol=1e-5, atol=1e-6)


def test_sum_memory_adds_the_blocks_at_the_bottom():
    """Sum: the plain model run on the sum of the K embedding blocks."""
    cfg = M2.replace(memory="sum", memory_k=3)
    params, apply = _model(cfg)
    base_params, base_apply = _model(M2)
    table = np.asarray(params["token_embedder"]["embedding"])
    d = M2.d_model
    summed = table[:, :d] + table[:, d : 2 * d] + table[:, 2 * d :]
    swapped = _graft(params, base_params)
    swapped["token_embedder"] = {"embedding": jnp.asarray(summed)}
    enc, dec = _tokens(3), _tokens(4, (2, 5))
    np.testing.assert_allclose(
        np.asarray(apply(params, enc, dec)[0]),
        np.asarray(base_apply(swapped, enc, dec)[0]),
        rtol=1e-4,
        atol=1e-4,
    )


# -- partial experts ----------------------------------------------------------------------------

LOOKUP_CONFIGS = [
    M2.replace(lookup="tokenid"),
    M2.replace(lookup="tokenid", expert_rank=3),
    M2.replace(lookup="softmax", buckets=16),
    M2.replace(lookup="softmax", buckets=16, expert_rank=3),
    M2.replace(lookup="lsh", buckets=16),
    M2.replace(lookup="lsh", buckets=16, expert_rank=3, lsh_family="crosspolytope"),
    M2.replace(lookup="softmax", buckets=8, expert_rank=2, memory="altup", memory_k=2),
]


def _zero_experts(tree):
    """Every expert table / matrix set to zero (the router is kept)."""
    if not isinstance(tree, dict):
        return tree
    out = {}
    for k, v in tree.items():
        if k == "expert":
            out[k] = {n: (w if n == "router" else np.zeros_like(w)) for n, w in v.items()}
        else:
            out[k] = _zero_experts(v)
    return out


@given(st.integers(0, 2**31 - 1), st.sampled_from(LOOKUP_CONFIGS))
@SETTINGS
def test_a_zero_expert_leaves_the_model_unchanged(seed, cfg):
    params, apply = _model(cfg)
    plain_cfg = cfg.replace(lookup="none", buckets=0, expert_rank=0, lsh_family="simhash")
    plain_params, plain_apply = _model(plain_cfg)
    enc, dec = _tokens(seed), _tokens(seed + 7, (2, 5))
    want, _ = plain_apply(_graft(params, plain_params), enc, dec)
    got, _ = apply(_zero_experts(params), enc, dec)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@given(st.integers(0, 2**31 - 1), st.booleans())
@SETTINGS
def test_tokenid_routing_depends_only_on_the_token_id(seed, altup):
    cfg = M2.replace(lookup="tokenid", expert_rank=2)
    if altup:
        cfg = cfg.replace(memory="altup", memory_k=2)
    params, apply = _model(cfg)
    enc, dec = _tokens(seed), _tokens(seed + 1, (2, 5))
    _, inter = apply(params, enc, dec)
    for layer in range(2):
        np.testing.assert_array_equal(_buckets(inter, "encoder", layer), np.asarray(enc))
        np.testing.assert_array_equal(_buckets(inter, "decoder", layer), np.asarray(dec))


@given(st.integers(0, 2**31 - 1), st.sampled_from(LOOKUP_CONFIGS))
@SETTINGS
def test_the_same_input_takes_the_same_route(seed, cfg):
    """A sequence's buckets do not depend on the call or on the other rows of its batch."""
    params, apply = _model(cfg)
    enc, dec = _tokens(seed, (3, 8)), _tokens(seed + 1, (3, 5))
    _, first = apply(params, enc, dec)
    _, again = apply(params, enc, dec)
    others = enc.at[1:].set(_tokens(seed + 2, (2, 8)))
    dec_others = dec.at[1:].set(_tokens(seed + 3, (2, 5)))
    _, mixed = apply(params, others, dec_others)
    for stack in ("encoder", "decoder"):
        for layer in range(2):
            a, b = _buckets(first, stack, layer), _buckets(again, stack, layer)
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a[0], _buckets(mixed, stack, layer)[0])


@given(st.integers(0, 2**31 - 1), st.sampled_from(["tokenid", "softmax", "lsh"]))
@SETTINGS
def test_rank0_experts_do_not_depend_on_the_input(seed, lookup):
    """Rank 0: the expert is the bucket's constant b_i, whatever the input (times w(x))."""
    cfg = M2.replace(lookup=lookup, buckets=0 if lookup == "tokenid" else 16)
    module = memory.PartialExpert(cfg, 0, 0)
    rng = np.random.default_rng(seed)
    ids = jnp.asarray(rng.integers(1, cfg.vocab_size, (4, 6)), jnp.int32)
    x1 = jnp.asarray(rng.standard_normal((4, 6, cfg.d_model)), jnp.float32)
    x2 = jnp.asarray(rng.standard_normal((4, 6, cfg.d_model)) * 5, jnp.float32)
    variables = unbox(module.init(jax.random.key(0), x1, ids))
    table = np.asarray(variables["params"]["table"])
    for x in (x1, x2):
        out, inter = module.apply(variables, x, ids, mutable=["intermediates"])
        bucket = np.asarray(inter["intermediates"]["bucket"][0])
        want = table[bucket]
        if lookup == "softmax":  # w(x) = the router probability of the chosen bucket
            logits = np.asarray(x, np.float64) @ np.asarray(variables["params"]["router"])
            prob = np.exp(logits - logits.max(-1, keepdims=True))
            prob /= prob.sum(-1, keepdims=True)
            want = want * np.take_along_axis(prob, bucket[..., None], -1)
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-7)
    if lookup == "tokenid":
        o1 = module.apply(variables, x1, ids)
        o2 = module.apply(variables, x2, ids)
        np.testing.assert_array_equal(np.asarray(o1), np.asarray(o2))


def _expert_reference(x, wi, wo, bucket):
    """``V_b relu(U_b^T x)``, one row at a time."""
    return np.stack(
        [wo[b].T @ np.maximum(wi[b].T @ row, 0.0) for row, b in zip(x, bucket, strict=True)]
    )


@pytest.mark.parametrize("impl", ["gather", "ragged"])
def test_expert_mlp_matches_the_row_reference(impl):
    rng = np.random.default_rng(0)
    n, d, r, rows = 6, 8, 3, 40
    x = rng.standard_normal((rows, d)).astype(np.float32)
    wi = rng.standard_normal((n, d, r)).astype(np.float32)
    wo = rng.standard_normal((n, r, d)).astype(np.float32)
    bucket = rng.integers(0, n, rows).astype(np.int32)
    bucket[:5] = 2  # a crowded bucket; bucket 5 may be empty
    got = memory.expert_mlp(
        jnp.asarray(x), jnp.asarray(wi), jnp.asarray(wo), jnp.asarray(bucket), impl
    )
    np.testing.assert_allclose(
        np.asarray(got), _expert_reference(x, wi, wo, bucket), rtol=1e-4, atol=1e-5
    )


def test_ragged_and_gather_experts_train_alike():
    a = M2.replace(lookup="softmax", buckets=8, expert_rank=4)
    b = a.replace(expert_impl="ragged")
    params, apply_a = _model(a)
    _, apply_b = _model(b)
    enc, dec = _tokens(5), _tokens(6, (2, 5))
    np.testing.assert_allclose(
        np.asarray(apply_a(params, enc, dec)[0]),
        np.asarray(apply_b(params, enc, dec)[0]),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("family", LSH_FAMILIES)
def test_lsh_lookup_gives_the_hash_familys_ids_for_the_same_seed(family):
    """The model's LSH buckets are lshsim.hashing's, drawn from SeedSequence([seed, stack, i])."""
    cfg = M2.replace(lookup="lsh", buckets=32, lsh_family=family, lookup_seed=11)
    params, apply = _model(cfg)
    _, inter = apply(params, _tokens(9, (3, 8)), _tokens(10, (3, 5)))
    checked = 0
    for stack_id, stack in enumerate(("encoder", "decoder")):
        for layer in range(2):
            node = inter["intermediates"][stack][f"layers_{layer}"]["expert"]
            x = np.asarray(node["layer_input"][0], np.float64).reshape(-1, cfg.d_model)
            seed = np.random.SeedSequence([11, stack_id, layer])
            extra = {"rotation": "gaussian"} if family == "crosspolytope" else {}
            fam = make_family(family, 32, cfg.d_model, seed=seed, **extra)
            np.testing.assert_array_equal(np.asarray(node["bucket"][0]).reshape(-1), fam.hash(x))
            checked += x.shape[0]
    assert checked == 2 * (3 * 8) + 2 * (3 * 5)  # every position of both stacks' two layers


def test_softmax_route_is_the_argmax_and_its_weight_the_probability():
    cfg = M2.replace(lookup="softmax", buckets=16, expert_rank=0)
    module = memory.PartialExpert(cfg, 0, 0)
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.standard_normal((3, 5, cfg.d_model)), jnp.float32)
    ids = jnp.ones((3, 5), jnp.int32)
    variables = unbox(module.init(jax.random.key(2), x, ids))
    router = np.asarray(variables["params"]["router"])
    assert router.shape == (cfg.d_model, 16)
    assert abs(router.std() - memory.ROUTER_STD) < 0.003  # N(0, 0.02^2) init
    _, inter = module.apply(variables, x, ids, mutable=["intermediates"])
    logits = np.asarray(x, np.float64).reshape(-1, cfg.d_model) @ router
    np.testing.assert_array_equal(
        np.asarray(inter["intermediates"]["bucket"][0]).reshape(-1), logits.argmax(-1)
    )


def test_jitter_reaches_the_router_but_not_the_expert_input():
    """In training the router sees x * U[1-eps, 1+eps]; the expert computes on x itself."""
    cfg = M2.replace(lookup="softmax", buckets=16, expert_rank=3, router_jitter=0.9)
    module = memory.PartialExpert(cfg, 0, 0)
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.standard_normal((4, 16, cfg.d_model)), jnp.float32)
    ids = jnp.ones((4, 16), jnp.int32)
    variables = unbox(module.init(jax.random.key(0), x, ids))
    p = {k: np.asarray(v, np.float64) for k, v in variables["params"].items()}
    out, inter = module.apply(
        variables, x, ids, False, rngs={"dropout": jax.random.key(5)}, mutable=["intermediates"]
    )
    bucket = np.asarray(inter["intermediates"]["bucket"][0]).reshape(-1)
    x64 = np.asarray(x, np.float64).reshape(-1, cfg.d_model)
    clean = (x64 @ p["router"]).argmax(-1)
    assert (bucket != clean).any()  # the jitter moved some routes
    f = _expert_reference(x64, p["wi"], p["wo"], bucket)
    live = np.abs(f).max(axis=1) > 1e-3  # rows whose relu is not all zero
    assert live.sum() > len(live) // 2
    ratio = np.asarray(out, np.float64).reshape(-1, cfg.d_model)[live] / f[live]
    # out = w * f(x) with f on the un-jittered input: one positive weight per row, <= 1
    np.testing.assert_allclose(ratio, ratio[:, :1] * np.ones_like(ratio), rtol=2e-3)
    assert ((ratio[:, 0] > 0) & (ratio[:, 0] <= 1 + 1e-6)).all()
    # evaluation (deterministic) is jitter-free
    _, inter = module.apply(variables, x, ids, mutable=["intermediates"])
    np.testing.assert_array_equal(
        np.asarray(inter["intermediates"]["bucket"][0]).reshape(-1), clean
    )


def test_router_losses_match_their_formulas():
    cfg = M2.replace(lookup="softmax", buckets=8, router_balance_loss=0.5, router_z_loss=0.25)
    module = memory.PartialExpert(cfg, 0, 0)
    rng = np.random.default_rng(4)
    x = jnp.asarray(rng.standard_normal((2, 9, cfg.d_model)), jnp.float32)
    ids = jnp.ones((2, 9), jnp.int32)
    variables = unbox(module.init(jax.random.key(1), x, ids))
    _, aux = module.apply(variables, x, ids, mutable=["aux_loss"])
    logits = np.asarray(x, np.float64).reshape(-1, cfg.d_model) @ np.asarray(
        variables["params"]["router"], np.float64
    )
    prob = np.exp(logits - logits.max(-1, keepdims=True))
    lse = np.log(prob.sum(-1)) + logits.max(-1)
    prob /= prob.sum(-1, keepdims=True)
    frac = np.bincount(logits.argmax(-1), minlength=8) / logits.shape[0]
    balance = 8 * np.sum(frac * prob.mean(0))
    assert float(aux["aux_loss"]["balance"][0]) == pytest.approx(0.5 * balance, rel=1e-5)
    assert float(aux["aux_loss"]["router_z"][0]) == pytest.approx(0.25 * np.mean(lse**2), rel=1e-5)


# -- parameter counts ---------------------------------------------------------------------------

#: Each config's counts traced once: the tests below ask for tiny seven times, and for
#: small's and base's plain and K = 2 AltUp counts twice each.
_counts = functools.cache(count_params)


@pytest.mark.parametrize("name", list(TABLE3_ALTUP))
def test_altup_k2_reproduces_table3(name):
    counts = _counts(get_config(name).replace(memory="altup", memory_k=2))
    emb, non_emb = TABLE3_ALTUP[name]
    assert abs(counts["embedding"] / emb - 1) < 0.01
    assert abs(counts["non_embedding"] / non_emb - 1) < 0.01


@pytest.mark.parametrize("name", ["tiny", "small", "base"])
@pytest.mark.parametrize("k", [2, 4])
def test_altup_growth_is_the_wide_cross_attention_exactly(name, k):
    """Extra non-embedding = decoder K/V kernels reading (K-1) d more, two wider final norms
    and the K^2 + K scalars of every layer; embedding = K times the baseline's. (``large``,
    the same formula at 14 s of tracing, is held to Table 3 by the test above.)"""
    cfg = get_config(name)
    base = _counts(cfg)
    alt = _counts(cfg.replace(memory="altup", memory_k=k))
    d, inner = cfg.d_model, cfg.num_heads * cfg.d_kv
    layers = cfg.num_encoder_layers + cfg.num_decoder_layers
    cross = 2 * (k - 1) * d * inner * cfg.num_decoder_layers
    assert alt["non_embedding"] - base["non_embedding"] == cross + 2 * (k - 1) * d + layers * (
        k * k + k
    )
    assert alt["embedding"] == k * base["embedding"]
    collapsed = _counts(
        cfg.replace(memory="altup", memory_k=k, memory_cross="sum", memory_output="sum")
    )
    assert collapsed["non_embedding"] - base["non_embedding"] == layers * (k * k + k)
    assert collapsed["embedding"] == base["embedding"] * (k + 1) // 2


@pytest.mark.parametrize(
    ("lookup", "rank", "buckets"),
    [
        ("tokenid", 0, 0),
        ("tokenid", 5, 0),
        ("softmax", 16, 64),
        ("lsh", 0, 2048),
        ("lsh", 128, 128),
    ],
)
def test_expert_parameters_are_max_2rank_1_times_buckets_times_d_per_layer(lookup, rank, buckets):
    cfg = CONFIGS["tiny"].replace(lookup=lookup, expert_rank=rank, buckets=buckets)
    layers = cfg.num_encoder_layers + cfg.num_decoder_layers
    n = cfg.num_buckets
    router = cfg.d_model * n if lookup == "softmax" else 0
    counts = count_params(cfg)
    assert counts["expert"] == layers * (max(2 * rank, 1) * n * cfg.d_model + router)
    assert counts["non_embedding"] == _counts(get_config("tiny"))["non_embedding"]


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"memory": "concat"}, r"^memory: unknown value 'concat'; choose one of none, sum"),
        ({"lookup": "random"}, r"^lookup: unknown value 'random'"),
        ({"memory": "altup", "memory_k": 0}, r"^K \(memory_k\) must be an integer >= 1, got 0"),
        (
            {"lookup": "softmax", "expert_rank": -1},
            r"^rank \(expert_rank\) must be an integer >= 0",
        ),
        ({"lookup": "softmax", "buckets": -3}, r"^buckets must be an integer >= 1, got -3"),
        ({"lookup": "lsh", "buckets": 48}, r"^buckets: simhash needs a power of two"),
        (
            {"lookup": "lsh", "lsh_family": "crosspolytope", "buckets": 7},
            r"^buckets: crosspolytope",
        ),
        ({"lookup": "tokenid", "buckets": 100}, r"^buckets: tokenid's table is the vocabulary"),
        (
            {"memory": "altup", "memory_k": 3, "memory_extra": 33},
            r"^memory_extra \(e=33\) cannot be divided into K-1=2",
        ),
        (
            {"memory": "altup", "memory_k": 1, "memory_extra": 8},
            r"^memory_extra \(e=8\) cannot be divided",
        ),
        ({"memory_extra": 8}, r"^memory_extra \(e\) needs a memory method"),
        ({"memory_cross": "mean"}, r"^memory_cross: unknown value 'mean'"),
        ({"lookup": "softmax", "router_jitter": 1.5}, r"^router_jitter must be in \[0, 1\)"),
    ],
)
def test_bad_memory_fields_are_one_line_errors(changes, message):
    with pytest.raises(ValueError, match=message) as info:
        M2.replace(**changes)
    assert "\n" not in str(info.value)


def test_transformers_export_refuses_memory():
    from lshsim.t5.hf import hf_config_dict

    with pytest.raises(ValueError, match=r"^hf: transformers' T5 has no external memory"):
        hf_config_dict(M2.replace(memory="altup"))
