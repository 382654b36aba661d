"""AltUp on stacked blocks (O(1) of K) and Gemma 3n's AltUp against ``transformers``.

* the traced model does not grow with ``K`` (the stacked Algorithm 2);
* Gemma 3n's predict and correct equal ``transformers``' ``Gemma3nTextAltUp`` with the same
  random weights (evaluation mode unclipped; training mode with a clip that binds);
* with zero coefficient maps, Gemma 3n's step is the paper's Algorithm 2 at ``p = I, g = 1``;
* the block projections and their magnitude matching equal a NumPy transcription of
  ``Gemma3nTextModel.forward``; the closed-form parameter count equals the traced one.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.t5 import altup_gemma3n, memory  # noqa: E402
from lshsim.t5.budget import param_count  # noqa: E402
from lshsim.t5.model import T5, init_params  # noqa: E402
from lshsim.t5.params import count_tree  # noqa: E402
from lshsim.t5.scan import unstack_layers  # noqa: E402

from .conftest import MICRO  # noqa: E402

M2 = MICRO.replace(num_encoder_layers=2, num_decoder_layers=2)


def _equations(jaxpr) -> int:
    """Equations of a jaxpr, counting those of the sub-jaxprs (pjit, custom_vjp, ...) too."""
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    n += _equations(inner)
    return n


@pytest.mark.parametrize("method", ["altup", "gemma3n"])
def test_the_traced_model_does_not_grow_with_k(method):
    """The forward pass traces as many equations at K = 16 as at K = 2 (was 2 K^2 per layer)."""
    tokens = jax.ShapeDtypeStruct((2, 8), jnp.int32)
    counts = []
    for k in (2, 16):
        cfg = M2.replace(memory=method, memory_k=k)
        params = jax.eval_shape(lambda c=cfg: init_params(c, jax.random.key(0)))
        jaxpr = jax.make_jaxpr(lambda p, t, c=cfg: T5(c).apply({"params": p}, t, t))(params, tokens)
        counts.append(_equations(jaxpr.jaxpr))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("k", [1, 3])
def test_gemma3n_parameters_match_the_closed_form(k):
    cfg = M2.replace(memory="gemma3n", memory_k=k)
    params = jax.eval_shape(lambda: init_params(cfg, jax.random.key(0)))
    assert count_tree(params) == param_count(cfg)
    assert cfg.embed_width == cfg.d_model
    layer = jax.eval_shape(unstack_layers, params)["encoder"]["altup_1"]
    assert {n: v.shape for n, v in layer.items()} == {
        "router_norm": (32,),
        "modality_router": (32, k),
        "prediction_coefs": (k, k * k),
        "correction_coefs": (k, k),
    }


def test_gemma3n_refuses_the_paper_methods_options():
    with pytest.raises(ValueError, match=r"^memory_extra, memory_cross and memory_output do not"):
        M2.replace(memory="gemma3n", memory_k=3, memory_extra=4)
    with pytest.raises(ValueError, match=r"do not apply to memory 'gemma3n'"):
        M2.replace(memory="gemma3n", memory_output="sum")


# -- Gemma 3n against transformers ---------------------------------------------------------


def _torch_altup(k: int, d: int, clip: float, active: int, seed: int):
    """``transformers``' ``Gemma3nTextAltUp`` with N(0, 0.5^2) weights and its JAX copy."""
    torch = pytest.importorskip("torch")
    gemma3n = pytest.importorskip("transformers.models.gemma3n.modeling_gemma3n")
    from transformers.models.gemma3n.configuration_gemma3n import Gemma3nTextConfig

    config = Gemma3nTextConfig(
        hidden_size=d,
        altup_num_inputs=k,
        altup_active_idx=active,
        altup_coef_clip=clip,
        rms_norm_eps=1e-6,
        num_hidden_layers=1,
        vocab_size=16,
        vocab_size_per_layer_input=16,
    )
    torch.manual_seed(seed)
    ref = gemma3n.Gemma3nTextAltUp(config).double()
    with torch.no_grad():
        for w in (ref.correction_coefs, ref.prediction_coefs, ref.modality_router):
            w.weight.normal_(0.0, 0.5)
        ref.router_norm.weight.uniform_(0.5, 1.5)
    params = {
        "router_norm": ref.router_norm.weight.detach().numpy().copy(),
        "modality_router": ref.modality_router.weight.detach().numpy().T.copy(),
        "prediction_coefs": ref.prediction_coefs.weight.detach().numpy().T.copy(),
        "correction_coefs": ref.correction_coefs.weight.detach().numpy().T.copy(),
    }
    return torch, ref, params


#: Both sides take the router's tanh in float32 (torch's ``.float()``), the rest in float64:
#: each router output may differ by two float32 ulps of a value in (-1, 1).
TANH_ERROR = 2.0**-23


@pytest.mark.parametrize(("k", "active", "clip"), [(3, 0, None), (4, 1, 0.3)])
def test_gemma3n_predict_and_correct_equal_transformers(k, active, clip):
    """Same weights, same float64 inputs: within the bound the float32 router tanh allows.

    ``clip`` None: ``transformers`` in evaluation mode (no clip); 0.3: training mode, which
    clamps the N(0, 0.5^2) weights (most of them bind). The bound: ``|dC_ij| <= sum_l
    |W_p[l, iK+j]| e`` so ``|d x_hat^i| <= sum_j |dC_ij| |x^j|``; ``|d g_i| <= sum_l |W_c[l, i]|
    e`` so ``|d x^i| <= |d g_i| |innovation|`` (correct is fed the same predictions).
    """
    d, shape = 8, (2, 5)
    torch, ref, params = _torch_altup(k, d, 1.0 if clip is None else clip, active, seed=k)
    ref.train(clip is not None)
    rng = np.random.default_rng(k)
    x = rng.standard_normal((k, *shape, d))
    activated = rng.standard_normal((*shape, d))
    wp, wc = params["prediction_coefs"], params["correction_coefs"]
    if clip is not None:
        assert np.abs(wp).max() > clip and np.abs(wc).max() > clip  # the clip binds
        wp, wc = np.clip(wp, -clip, clip), np.clip(wc, -clip, clip)
    want_p = ref.predict(torch.from_numpy(x)).detach().numpy()
    want_c = ref.correct(torch.from_numpy(want_p), torch.from_numpy(activated)).detach().numpy()
    with jax.enable_x64(True):
        mod = altup_gemma3n.Gemma3nAltUp(k, d, 1e-6, clip)
        variables = {"params": jax.tree.map(jnp.asarray, params)}
        got_p = np.asarray(mod.apply(variables, jnp.asarray(x), active, method="predict"))
        got_c = mod.apply(
            variables, jnp.asarray(want_p), jnp.asarray(activated), active, method="correct"
        )
        got_c = np.asarray(got_c)
    d_coef = (np.abs(wp).sum(0) * TANH_ERROR).reshape(k, k)
    bound_p = np.einsum("ij,j...->i...", d_coef, np.abs(x))
    innovation = np.abs(activated - want_p[active])
    bound_c = (np.abs(wc).sum(0) * TANH_ERROR)[:, None, None, None] * innovation[None]
    assert np.all(np.abs(got_p - want_p) <= bound_p + 1e-12)
    assert np.all(np.abs(got_c - want_c) <= bound_c + 1e-12)
    assert np.abs(got_p - x).max() > 0.1  # the maps moved the prediction off the input
    assert np.abs(got_c - want_p).max() > 0.1


def test_gemma3n_with_zero_maps_is_the_papers_algorithm_2():
    """W_p = W_c = 0: P = I and g = 1, the paper's AltUp at its initial scalars, bit for bit."""
    k, d, block = 3, 8, 1
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((k, 2, 5, d)), jnp.float32)
    w = jnp.asarray(rng.standard_normal((d, d)), jnp.float32)

    def layer(h):
        return jnp.tanh(h @ w) + h

    mod = altup_gemma3n.Gemma3nAltUp(k, d)
    params = mod.init(jax.random.key(0), x, layer, block)["params"]
    zero = dict(params, prediction_coefs=0 * params["prediction_coefs"])
    zero["correction_coefs"] = 0 * params["correction_coefs"]
    got = mod.apply({"params": zero}, x, layer, block)
    want = memory.predict_compute_correct(x, layer, jnp.eye(k), jnp.ones(k), block)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert not np.array_equal(np.asarray(mod.apply({"params": params}, x, layer, block)), want)


def _match(y, ref):
    """``Gemma3nTextModel.forward``'s magnitude matching, transcribed in NumPy."""
    target = np.mean(ref**2, axis=-1, keepdims=True) ** 0.5
    new = np.sqrt(np.maximum(np.mean(y**2, axis=-1, keepdims=True), 1e-5))
    return y * target / new


def test_gemma3n_block_projections_match_the_reference_transcription():
    """Blocks made from the embedding and averaged back as ``Gemma3nTextModel.forward``."""
    cfg = M2.replace(memory="gemma3n", memory_k=3)
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((2, 4, 32)).astype(np.float32)
    x0[0, 0] = 0.0  # a zero token: the 1e-5 floor keeps it finite (and zero)
    embed = altup_gemma3n.AltUpProjections(cfg)
    p = embed.init(jax.random.key(1), jnp.asarray(x0))
    a = np.asarray(p["params"]["kernel"])
    blocks = np.asarray(embed.apply(p, jnp.asarray(x0)))
    want = np.stack([x0, *(_match(x0 @ a[i], x0) for i in range(2))])
    np.testing.assert_allclose(blocks, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.sqrt(np.mean(blocks[1:, 1:] ** 2, -1)),
        np.sqrt(np.mean(x0[None, 1:] ** 2, -1)).repeat(2, 0),
        rtol=1e-5,
    )

    unembed = altup_gemma3n.AltUpUnembed(cfg)
    xs = rng.standard_normal((3, 2, 4, 32)).astype(np.float32)
    q = unembed.init(jax.random.key(2), jnp.asarray(xs))
    u = np.asarray(q["params"]["kernel"])
    got = np.asarray(unembed.apply(q, jnp.asarray(xs)))
    want = np.mean(np.stack([xs[0], *(_match(xs[i + 1] @ u[i], xs[0]) for i in range(2))]), 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
