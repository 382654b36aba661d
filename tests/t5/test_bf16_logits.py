"""bfloat16 compute: the output projection and the loss run in float32 (as T5X's ``logits_dense``).

Numbers used below: bfloat16 keeps 8 significant bits, so one rounding has relative error at
most ``u = 2^-8`` (root mean square ``u / sqrt(3)`` for a uniformly distributed error);
float32 keeps 24, ``u32 = 2^-24``.

Before the change, ``logits_dense`` ran in bfloat16: its float32 kernel was rounded to
bfloat16 and its output, the logits, too; a logit ``z`` then carried an error of up to
``u |z|`` (0.12 at ``|z| = 30``). Measured on ``tiny`` at initialisation (seed 0, the tests'
batch), against the exact product of the same bfloat16 decoder output and float32 kernel: a
per-token cross-entropy error up to 7.6e-3 (rms 2.4e-3) before, 1.4e-6 after; with the
logits kernel scaled to logit std 6.8, up to 7.4e-2 (rms 3.1e-2) before, 1.4e-5 after.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lshsim.bench.t5_step import make_batch
from lshsim.t5.configs import get_config
from lshsim.t5.model import T5, init_params
from lshsim.t5.steps import cross_entropy

#: bfloat16's unit roundoff (8 significant bits) and float32's (24).
U_BF16 = 2.0**-8
U_F32 = 2.0**-24
#: Batch of the tests: 4 sequences of 32 input and 16 target tokens.
BATCH, INPUT_LENGTH, TARGET_LENGTH = 4, 32, 16


@pytest.fixture(scope="module")
def tiny_setup():
    """``(config, params, batch)``: ``tiny`` at initialisation (seed 0) and a seeded batch."""
    cfg = get_config("tiny")
    params = init_params(cfg, jax.random.key(0))
    batch = {
        k: jnp.asarray(v)
        for k, v in make_batch(cfg, BATCH, INPUT_LENGTH, TARGET_LENGTH, seed=0).items()
    }
    return cfg, params, batch


def _logits_and_hidden(cfg, params, batch):
    """The model's logits and its decoder output after the final norm (the projection's input).

    Returns:
        ``(logits [B, T, V], hidden [B, T, d])``, the hidden state in the compute dtype.
    """

    def run(p):
        logits, state = T5(cfg).apply(
            {"params": p},
            batch["encoder_input_tokens"],
            batch["decoder_input_tokens"],
            batch["decoder_target_tokens"],
            capture_intermediates=lambda mdl, _: mdl.name == "decoder_norm",
            mutable=["intermediates"],
        )
        return logits, state["intermediates"]["decoder"]["decoder_norm"]["__call__"][0]

    return jax.jit(run)(params)


def _gamma(n: int) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)`` for float32: ``n`` roundings' relative bound."""
    return n * U_F32 / (1 - n * U_F32)


def _per_token_ce(logits, targets):
    """``logsumexp(logits) - logits[target]`` per token, float32 ``[B, T]``."""
    lse = jax.nn.logsumexp(logits, axis=-1)
    return lse - jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]


def test_bf16_logits_are_the_float32_projection_of_the_decoder_output(tiny_setup):
    """In bfloat16, logits and loss are the float32 product ``hidden @ kernel``, to f32 error.

    Tolerances, against the exact (float64) product of the model's own bfloat16 decoder output
    ``y`` and float32 kernel ``W``: a float32 dot product of ``d`` terms is off by at most
    ``gamma_d sum_i |y_i W_ij|``, ``gamma_n = n u32 / (1 - n u32)`` (Higham, Thm 3.5): about
    1e-4 here. A token's cross-entropy ``lse(z) - z_t`` then moves by at most twice the
    largest logit error, plus float32's ``logsumexp`` error: a relative ``gamma_{V+2}`` on
    the sum of ``V`` exponentials, absolute on its log (with ``max(1, |lse|)`` for the final
    rounding); in all about 3e-4. Measured: logits off by 1.9e-6 (bound 5e-5 to 8e-5),
    cross-entropy by 1.4e-6. The old bfloat16 projection fails both: logits off by up to
    1.3e-2 (``u |z|``), cross-entropy by up to 7.6e-3.
    The matmul precision is pinned to float32 so that a GPU's TF32 default cannot blur it.
    """
    cfg, params, batch = tiny_setup
    with jax.default_matmul_precision("float32"):
        logits, hidden = _logits_and_hidden(cfg.replace(dtype="bfloat16"), params, batch)
    assert logits.dtype == jnp.float32 and hidden.dtype == jnp.bfloat16
    y = np.asarray(hidden.astype(jnp.float32), np.float64)
    w = np.asarray(params["decoder"]["logits_dense"]["kernel"], np.float64)
    exact = y @ w
    d, vocab = w.shape
    dot_bound = _gamma(d) * (np.abs(y) @ np.abs(w))
    got = np.asarray(logits, np.float64)
    assert np.all(np.abs(got - exact) <= dot_bound), float(np.max(np.abs(got - exact)))

    targets = np.asarray(batch["decoder_target_tokens"])
    top = exact.max(-1)
    lse = np.log(np.sum(np.exp(exact - top[..., None]), -1)) + top
    ce_exact = lse - np.take_along_axis(exact, targets[..., None], -1)[..., 0]
    ce_model = np.asarray(_per_token_ce(logits, batch["decoder_target_tokens"]), np.float64)
    ce_tol = 2 * dot_bound.max(-1) + _gamma(vocab + 2) + 4 * U_F32 * np.maximum(1.0, np.abs(lse))
    err = np.abs(ce_model - ce_exact)
    assert np.all(err <= ce_tol), (float(err.max()), float(ce_tol.min()))

    # The training loss (steps.cross_entropy) of those logits: the mean of the same terms.
    sums = cross_entropy(logits, batch["decoder_target_tokens"], batch["decoder_loss_weights"], 0.0)
    mean = float(sums["loss"] / sums["weight"])
    assert abs(mean - float(np.mean(ce_exact))) <= float(np.max(ce_tol))


def test_bf16_loss_is_within_the_rounding_bound_of_float32_at_init(tiny_setup):
    """The bfloat16 model's loss agrees with the float32 model's within bfloat16's rounding.

    Derivation. From the embedding to the final norm, the residual stream of ``tiny`` passes
    ``k = 73`` bfloat16 roundings (embedding and final norm: 2; per encoder layer 14: the
    norm, q/k/v, attention scores and weights, attention output, out projection, residual;
    the MLP's norm, wi_0, GELU, wi_1, product, wo, residual; per decoder layer 21, the
    cross-attention adding 7). Independent roundings each add relative rms ``u / sqrt(3)``,
    so the final hidden state is off by a relative ``eps = sqrt(k) u / sqrt(3)`` = 0.0193 (an
    upper estimate: a rounding inside a branch is damped by the branch's share of the
    stream). A logit ``z_j = y . W_j`` with ``W`` of variance ``1/d`` is then off by
    ``eps sigma_z`` rms, and a token's cross-entropy ``lse - z_t`` by about as much (at
    initialisation the softmax is spread out, ``sum_j p_j^2 << 1``). Tolerances:
    per-token rms error ``<= eps sigma_z`` and mean-loss error ``<= 4 eps sigma_z / sqrt(B)``
    (four standard errors, counting only the ``B`` sequences as independent).

    Measured (seed 0): rms 9.0e-3 and mean -8.6e-4, against tolerances 1.9e-2 and 3.8e-2.
    This end-to-end check cannot tell the old bfloat16 projection from the new one: the
    roundings upstream dominate (old: rms 9.1e-3, mean -5.7e-4); the previous test can.
    """
    cfg, params, batch = tiny_setup
    targets = batch["decoder_target_tokens"]
    logits32, _ = _logits_and_hidden(cfg, params, batch)
    logits16, _ = _logits_and_hidden(cfg.replace(dtype="bfloat16"), params, batch)
    diff = np.asarray(_per_token_ce(logits16, targets) - _per_token_ce(logits32, targets))
    sigma_z = float(jnp.std(logits32))
    layers = 2 + 14 * cfg.num_encoder_layers + 21 * cfg.num_decoder_layers
    eps = math.sqrt(layers) * U_BF16 / math.sqrt(3)
    assert float(np.sqrt(np.mean(diff**2))) <= eps * sigma_z
    loss32 = float(jnp.mean(_per_token_ce(logits32, targets)))
    loss16 = float(jnp.mean(_per_token_ce(logits16, targets)))
    assert abs(loss16 - loss32) <= 4 * eps * sigma_z / math.sqrt(BATCH), (loss16, loss32)
