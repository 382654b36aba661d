"""Product-key and hashed n-gram lookups against NumPy and pure-Python references.

Product keys: PKM's top-k (top-k per half, then top-k of the k^2 sums) selects exactly the
brute-force top-k of all s^2 sums; the layer's slots, weights and output are recomputed in
NumPy from its parameters. N-grams: the jitted buckets equal a pure-Python hash (Python
integers, no NumPy overflow), the decoder's are causal, and the gate is Engram's. Parameter
counts: traced = closed form = an independent count written out here.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.hashing import make_family  # noqa: E402
from lshsim.hashing.ngram import ngram_moduli  # noqa: E402
from lshsim.t5 import memory  # noqa: E402
from lshsim.t5.budget import param_count  # noqa: E402
from lshsim.t5.configs import CONFIGS  # noqa: E402
from lshsim.t5.lookups.ngram_layer import ngram_buckets, ngram_family  # noqa: E402
from lshsim.t5.lookups.productkey_layer import productkey_select  # noqa: E402
from lshsim.t5.lookups.sizes import ngram_table_sizes  # noqa: E402
from lshsim.t5.model import T5, init_params  # noqa: E402
from lshsim.t5.params import count_params  # noqa: E402
from lshsim.t5.scan import unstack_layers  # noqa: E402

from .conftest import MICRO  # noqa: E402

PK = MICRO.replace(lookup="productkey", buckets=64, topk=3, lookup_heads=2)
NG = MICRO.replace(lookup="ngram", buckets=40, ngram=3, lookup_heads=3, lookup_seed=5)


def _brute_topk(q: np.ndarray, keys: np.ndarray, k: int):
    """All s^2 sums of one head: ``(scores, slots)`` of the k best, descending."""
    half = keys.shape[-1]
    s1 = keys[0] @ q[:half]
    s2 = keys[1] @ q[half:]
    sums = (s1[:, None] + s2[None, :]).ravel()
    order = np.argsort(-sums, kind="stable")[:k]
    return sums[order], order


@pytest.mark.parametrize("k", [1, 2, 5, 8])
def test_pkm_topk_is_the_brute_force_topk_of_all_sums(k):
    rng = np.random.default_rng(k)
    s, h, half = 8, 3, 6
    q = rng.standard_normal((20, h, 2 * half)).astype(np.float32)
    keys = rng.standard_normal((h, 2, s, half)).astype(np.float32)
    scores, slots = productkey_select(jnp.asarray(q), jnp.asarray(keys), k)
    for i in range(q.shape[0]):
        for j in range(h):
            want_scores, want_slots = _brute_topk(q[i, j].astype(np.float64), keys[j], k)
            np.testing.assert_array_equal(np.asarray(slots[i, j]), want_slots)
            np.testing.assert_allclose(np.asarray(scores[i, j]), want_scores, rtol=1e-5)


def _rms(x, scale, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * scale


@pytest.mark.parametrize("rank", [0, 2])
def test_productkey_layer_matches_numpy(rank):
    cfg = PK.replace(expert_rank=rank)
    module = memory.PartialExpert(cfg, 0, 0)
    rng = np.random.default_rng(3 + rank)
    x = rng.standard_normal((2, 5, cfg.d_model)).astype(np.float32)
    ids = jnp.ones((2, 5), jnp.int32)
    variables = module.init(jax.random.key(1), jnp.asarray(x), ids)
    params = jax.tree_util.tree_map(
        lambda v: np.asarray(v, np.float64), nn_unbox(variables["params"])
    )
    out, inter = module.apply({"params": params}, jnp.asarray(x), ids, mutable=["intermediates"])
    slots = np.asarray(inter["intermediates"]["slots"][0]).reshape(10, 2, 3)
    x2 = x.reshape(10, -1).astype(np.float64)
    q = _rms(np.einsum("nd,dhe->nhe", x2, params["query"]), params["query_scale"])
    want = np.zeros_like(x2)
    for i in range(10):
        for j in range(2):
            sc, sl = _brute_topk(q[i, j], params["sub_keys"][j], 3)
            np.testing.assert_array_equal(slots[i, j], sl)
            w = np.exp(sc - sc.max())
            w /= w.sum()
            for wt, slot in zip(w, sl, strict=True):
                if rank == 0:
                    want[i] += wt * params["table"][slot]
                else:
                    hid = np.maximum(x2[i] @ params["wi"][slot], 0)
                    want[i] += wt * hid @ params["wo"][slot]
    bucket = np.asarray(inter["intermediates"]["bucket"][0]).ravel()
    np.testing.assert_array_equal(bucket, slots[:, 0, 0])  # head 0's top-1
    np.testing.assert_allclose(np.asarray(out).reshape(10, -1), want, rtol=2e-4, atol=2e-5)


def _python_hash(window: list[int], mults: list[int], salt: int, modulus: int) -> int:
    """The NGram hash in Python integers: salt XOR (token_{t-j} * a_j mod 2^32), fmix32, mod m."""
    mask = 2**32 - 1
    v = salt
    for tok, a in zip(window, mults, strict=True):
        v ^= (tok * a) & mask
    v ^= v >> 16
    v = (v * 0x85EBCA6B) & mask
    v ^= v >> 13
    v = (v * 0xC2B2AE35) & mask
    v ^= v >> 16
    return v % modulus


def test_table_sizes_follow_the_ngram_familys_rule():
    for m, h in [(2, 3), (40, 1), (40, 3), (1000, 4), (32128, 2)]:
        assert ngram_table_sizes(m, h) == ngram_moduli(m, h)


def test_ngram_buckets_are_the_ngram_familys_in_both_stacks():
    """The sown buckets equal the NumPy family's (Numba kernel) on the left-padded ids, for the
    function drawn from SeedSequence([seed, stack, layer]), and a pure-Python hash."""
    cfg = NG
    params = init_params(cfg, jax.random.key(0))
    rng = np.random.default_rng(7)
    enc = rng.integers(1, cfg.vocab_size, (3, 9)).astype(np.int32)
    dec = rng.integers(1, cfg.vocab_size, (3, 6)).astype(np.int32)
    run = jax.jit(lambda p, e, d: T5(cfg).apply({"params": p}, e, d, d, mutable=["intermediates"]))
    _, st = run(params, enc, dec)
    checked = 0
    for stack_id, (stack, toks) in enumerate((("encoder", enc), ("decoder", dec))):
        node = unstack_layers(st["intermediates"])[stack]["layers_0"]["expert"]
        slots = np.asarray(node["slots"][0])
        seed = np.random.SeedSequence([cfg.lookup_seed, stack_id, 0])
        fam = make_family("ngram", cfg.buckets, 1, seed, ngram=cfg.ngram, heads=cfg.lookup_heads)
        padded = np.pad(toks.astype(np.int64), ((0, 0), (cfg.ngram - 1, 0)))
        np.testing.assert_array_equal(slots, fam.hash(padded))
        for b in range(toks.shape[0]):
            for t in range(toks.shape[1]):
                window = [int(padded[b, t + cfg.ngram - 1 - i]) for i in range(cfg.ngram)]
                for j, m in enumerate(fam.moduli):
                    mults = [int(a) for a in fam.multipliers[j]]
                    assert slots[b, t, j] == _python_hash(window, mults, int(fam.salts[j]), int(m))
                    checked += 1
        np.testing.assert_array_equal(np.asarray(node["bucket"][0]), slots[..., 0])
    assert checked == (3 * 9 + 3 * 6) * 3


def test_ngram_buckets_are_causal_and_local():
    fam = ngram_family(NG, 1, 0)
    rng = np.random.default_rng(2)
    toks = rng.integers(1, 300, (1, 12))
    base = np.asarray(
        ngram_buckets(jnp.asarray(toks, jnp.int32), fam.multipliers, fam.salts, fam.moduli)
    )
    changed = toks.copy()
    changed[0, 5] += 1
    other = np.asarray(
        ngram_buckets(jnp.asarray(changed, jnp.int32), fam.multipliers, fam.salts, fam.moduli)
    )
    differs = np.any(base != other, axis=-1)[0]
    assert not differs[:5].any() and not differs[5 + NG.ngram :].any()
    assert differs[5 : 5 + NG.ngram].all()  # (with 3 heads a miss would need 3 collisions)


def test_ngram_layer_output_is_the_gated_sum_of_the_heads_rows():
    cfg = NG
    module = memory.PartialExpert(cfg, 0, 0)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 7, cfg.d_model)).astype(np.float32)
    ids = rng.integers(1, cfg.vocab_size, (2, 7)).astype(np.int32)
    variables = module.init(jax.random.key(2), jnp.asarray(x), jnp.asarray(ids))
    params = jax.tree_util.tree_map(
        lambda v: np.asarray(v, np.float64), nn_unbox(variables["params"])
    )
    out = np.asarray(module.apply({"params": params}, jnp.asarray(x), jnp.asarray(ids)))
    fam = ngram_family(cfg, 0, 0)
    primes = [int(m) for m in fam.moduli]
    buckets = fam.hash(np.pad(ids.astype(np.int64), ((0, 0), (cfg.ngram - 1, 0))))
    offsets = np.concatenate([[0], np.cumsum(primes)[:-1]])
    e = params["table"][buckets + offsets].sum(axis=-2)
    x64 = x.astype(np.float64)
    logit = np.sum(
        _rms(x64, params["gate_query_scale"]) * _rms(e, params["gate_key_scale"]), axis=-1
    ) / math.sqrt(cfg.d_model)
    want = e / (1 + np.exp(-logit))[..., None]
    np.testing.assert_allclose(out, want, rtol=2e-4, atol=2e-5)


def nn_unbox(tree):
    """Parameters without their logical-partitioning boxes."""
    from flax.linen import meta

    return meta.unbox(tree)


@functools.cache
def _tiny_counts() -> dict:
    """``count_params("tiny")``, traced once for the four cases below."""
    return count_params("tiny")


@pytest.mark.parametrize(
    "changes",
    [
        {"lookup": "productkey", "buckets": 1024, "topk": 4, "lookup_heads": 2},
        {"lookup": "productkey", "buckets": 256, "topk": 1, "expert_rank": 3},
        {"lookup": "ngram", "buckets": 5000, "ngram": 2, "lookup_heads": 4},
        {"lookup": "ngram", "buckets": 300, "ngram": 3, "lookup_heads": 2, "expert_rank": 2},
    ],
)
def test_expert_parameter_counts_traced_closed_form_and_by_hand(changes):
    cfg = CONFIGS["tiny"].replace(**changes)
    d, r, h = cfg.d_model, cfg.expert_rank, cfg.lookup_heads
    per_row = d if r == 0 else 2 * d * r
    if cfg.lookup == "productkey":
        s = math.isqrt(cfg.buckets)
        # query W [d, h, d] and its RMSNorm scale [h, d]; sub-keys 2 x s x d/2 per head
        by_hand = h * d * d + h * d + h * 2 * s * (d // 2) + cfg.buckets * per_row
    else:
        rows = sum(ngram_moduli(cfg.buckets, h))
        by_hand = rows * per_row + 2 * d  # two gate RMSNorm scales
    layers = cfg.num_encoder_layers + cfg.num_decoder_layers
    traced = count_params(cfg)
    assert traced["expert"] == layers * by_hand
    assert param_count(cfg) == traced
    assert traced["non_embedding"] == _tiny_counts()["non_embedding"]


def test_gradients_reach_every_new_parameter():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((2, 8, MICRO.d_model)), jnp.float32)
    toks = jnp.asarray(rng.integers(1, 300, (2, 8)), jnp.int32)
    for cfg in (PK.replace(expert_rank=1), NG):
        module = memory.PartialExpert(cfg, 0, 0)
        params = nn_unbox(module.init(jax.random.key(0), x, toks)["params"])

        def loss(p, module=module):
            return jnp.sum(module.apply({"params": p}, x, toks) ** 2)

        grads = jax.jit(jax.grad(loss))(params)
        for name, g in grads.items():
            assert np.all(np.isfinite(g)) and np.any(np.asarray(g) != 0), name


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"lookup": "productkey", "buckets": 60}, r"^buckets: productkey needs a perfect square"),
        ({"lookup": "productkey", "buckets": 64, "topk": 9}, r"^topk: productkey needs 1 <= k"),
        ({"lookup": "productkey", "topk": 0}, r"^topk must be an integer >= 1"),
        ({"lookup": "softmax", "topk": 2}, r"^topk: only the productkey lookup"),
        ({"lookup": "ngram", "ngram": 0}, r"^ngram must be an integer in \[1, 64\]"),
        ({"lookup": "ngram", "buckets": 1}, r"^buckets: ngram needs a table size in \[2, 2\^31\]"),
        ({"lookup": "ngram", "lookup_heads": 0}, r"^heads \(lookup_heads\) must be"),
    ],
)
def test_bad_lookup_fields_are_one_line_errors(changes, message):
    with pytest.raises(ValueError, match=message) as err:
        MICRO.replace(**changes)
    assert "\n" not in str(err.value)


def test_productkey_flops_in_cost_are_its_query_and_sub_key_products():
    """XLA's forward FLOPs per token (lshsim cost) grow by the query projection (2 d h d)
    and the sub-key scores (2 h s d), plus at most 25% for norms, top-k, softmax and the
    weighted rows (MICRO: one layer per stack, so one expert per token)."""
    from lshsim.t5.cost import flops_per_token

    base = MICRO.replace(input_length=32)
    cfg = base.replace(lookup="productkey", buckets=256, topk=2, lookup_heads=2)
    extra = flops_per_token(cfg)["flops_per_token"] - flops_per_token(base)["flops_per_token"]
    d, h, s = cfg.d_model, cfg.lookup_heads, 16
    matmuls = h * (2 * d * d + 2 * s * d)
    assert matmuls <= extra <= 1.25 * matmuls
