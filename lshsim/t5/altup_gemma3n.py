"""AltUp as Gemma 3n runs it: input-dependent coefficients and learned block projections.

The memory method ``gemma3n`` (:data:`lshsim.t5.memory_methods.METHODS`) carries ``K`` stacked
blocks ``x [K, ..., d]`` through every layer like the paper's Algorithm 2
(:func:`lshsim.t5.memory.predict_compute_correct`), with what Hugging Face's
``Gemma3nTextAltUp`` and ``Gemma3nTextModel`` do instead of the constant scalars:

* router: ``m = tanh(W_r (RMSNorm(x) / d))``, ``m [..., K]``, of the active block (predict)
  or of the layer output (correct); RMSNorm with its own learned scale;
* predict: ``x_hat^i = x^i + sum_j C_ij x^j`` with ``C = reshape(W_p m, [K, K])``, i.e.
  ``P = I + W_p m`` per token;
* the layer runs on the *predicted* active block ``x_hat^{j*}`` (the paper's on ``x^{j*}``);
  ``j* = 0`` in every layer (Gemma 3n's ``altup_active_idx``);
* correct: ``x^i = x_hat^i + g_i (L(x_hat^{j*}) - x_hat^{j*})`` with ``g = 1 + W_c m'``;
* clipping: ``W_p`` and ``W_c`` are used clipped to ``[-120, 120]`` (Gemma 3n's
  ``altup_coef_clip``). ``W_p`` is clipped with a straight-through gradient (torch clamps the
  stored weight in place, so its gradient is that of the clamped weight, unmasked), ``W_c``
  plainly (torch clamps a copy: no gradient beyond the clip). Torch clips in training only;
  here the clip also applies at evaluation (lshsim's training and evaluation passes are the
  same deterministic pass), which differs only for a correction weight beyond 120;
* blocks made and removed by learned projections with magnitude matching: block 0 is the
  token embedding, block ``i >= 1`` is ``A_i x^0`` rescaled to ``x^0``'s root mean square
  (``sqrt(max(mean(y^2), 1e-5))`` in the denominator); at the top of each stack block
  ``i >= 1`` becomes ``U_i x^i`` rescaled to block 0's root mean square and the ``K`` blocks
  are averaged before the stack's final norm. The embedding table stays ``vocab x d``.

Left out, with reasons: Gemma 3n's ``correct_output_scale`` (a learned ``[d]`` vector, zeros
at init) scales the corrected active block only on its way into the per-layer-embedding
(PLE) path (``per_layer_input_gate`` ... ``corrected_predictions[1:] += first_prediction``),
which T5 does not have; without PLE it would be a parameter with no effect and no gradient.

Parameters (names as ``transformers``' modules; kernels ``[in, out]``, the transpose of
torch's ``weight``): per layer ``altup_{i}/{router_norm [d], modality_router [d, K],
prediction_coefs [K, K^2], correction_coefs [K, K]}``; ``altup_projections/kernel
[K-1, d, d]`` (shared by both stacks, as the embedding); ``{encoder,decoder}/
altup_unembed_projections/kernel [K-1, d, d]``. Initialisation as ``transformers``:
``N(0, 0.02^2)`` for the maps and projections, ones for the router norm.

References:
    Baykal et al. 2023, "Alternating Updates for Efficient Transformers" (NeurIPS);
    Hugging Face ``transformers/models/gemma3n/modeling_gemma3n.py`` (``Gemma3nTextAltUp``,
    ``Gemma3nTextDecoderLayer.forward``, ``Gemma3nTextModel.forward``).
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from lshsim.t5.configs import T5Config

#: Gemma 3n's ``altup_coef_clip``: the coefficient maps are used clipped to +-this.
COEF_CLIP = 120.0
#: ``transformers``' ``initializer_range``: the std of the maps' and projections' init.
INIT_STD = 0.02
#: Floor of the mean square in magnitude matching (Gemma 3n's ``clamp(min=1e-5)``).
MAGNITUDE_FLOOR = 1e-5


def _rms(x):
    """Root mean square over the last axis (float32 in, keepdims)."""
    return jnp.mean(x * x, axis=-1, keepdims=True) ** 0.5


def match_magnitude(y, reference):
    """``y`` rescaled to ``reference``'s root mean square over the last axis (Gemma 3n).

    Args:
        y: ``[..., d]``.
        reference: ``[..., d]`` (broadcast against ``y``).

    Returns:
        ``y * rms(reference) / sqrt(max(mean(y^2), 1e-5))`` in ``y``'s dtype.
    """
    new = jnp.sqrt(jnp.maximum(jnp.mean(y * y, axis=-1, keepdims=True), MAGNITUDE_FLOOR))
    return (y * _rms(reference) / new).astype(y.dtype)


def _matched_projections(module: nn.Module, equation: str, x, reference):
    """The ``K-1`` projections of ``x``, each matched to ``reference``'s magnitude.

    The shared step of Gemma 3n's ``altup_projections`` and ``altup_unembed_projections``:
    ``module``'s ``kernel [K-1, d, d]``, then :func:`match_magnitude`.

    Args:
        module: the calling module (owns the ``kernel`` parameter; ``config.memory_k``,
            ``config.d_model``).
        equation: the einsum of ``x`` with the kernel (one projection per block).
        x: the blocks to project.
        reference: the magnitudes to match, broadcast against the projections.

    Returns:
        ``[K-1, ..., d]`` in ``x``'s dtype.
    """
    k1, d = module.config.memory_k - 1, module.config.d_model
    kernel = module.param("kernel", nn.initializers.normal(INIT_STD), (k1, d, d), jnp.float32)
    return match_magnitude(jnp.einsum(equation, x, kernel.astype(x.dtype)), reference)


class AltUpProjections(nn.Module):
    """Gemma 3n's ``altup_projections``: block 0 and ``K-1`` magnitude-matched projections.

    Attributes:
        config: the model config (``memory_k``, ``d_model``).
    """

    config: T5Config

    @nn.compact
    def __call__(self, x0):
        """``x0 [..., d]`` -> the ``K`` stacked blocks ``[K, ..., d]``."""
        y = _matched_projections(self, "...d,kde->k...e", x0, x0[None])
        return jnp.concatenate([x0[None], y], axis=0)


class AltUpUnembed(nn.Module):
    """Gemma 3n's ``altup_unembed_projections``: the ``K`` blocks back to one ``[..., d]``.

    Attributes:
        config: the model config (``memory_k``, ``d_model``).
    """

    config: T5Config

    @nn.compact
    def __call__(self, x):
        """``x [K, ..., d]`` -> the mean of block 0 and the ``K-1`` matched projections."""
        y = _matched_projections(self, "k...d,kde->k...e", x[1:], x[:1])
        return jnp.mean(jnp.concatenate([x[:1], y], axis=0), axis=0)


def _straight_through_clip(w, clip: float):
    """``clip(w)`` forward, the identity's gradient (torch's in-place ``weight.data.clamp_``)."""
    return w + jax.lax.stop_gradient(jnp.clip(w, -clip, clip) - w)


class Gemma3nAltUp(nn.Module):
    """One layer's Gemma 3n AltUp (``Gemma3nTextAltUp``): router, predict and correct.

    Attributes:
        k: the number of blocks ``K``.
        d: the block width.
        eps: the router norm's epsilon.
        clip: the coefficient maps' clip (``None``: unclipped, torch's evaluation mode).
    """

    k: int
    d: int
    eps: float = 1e-6
    clip: float | None = COEF_CLIP

    def setup(self):
        """The router norm's scale and the three maps (kernels ``[in, out]``)."""
        k, d = self.k, self.d
        init = nn.initializers.normal(INIT_STD)
        self.router_norm = self.param("router_norm", nn.initializers.ones, (d,), jnp.float32)
        self.modality_router = self.param("modality_router", init, (d, k), jnp.float32)
        self.prediction_coefs = self.param("prediction_coefs", init, (k, k * k), jnp.float32)
        self.correction_coefs = self.param("correction_coefs", init, (k, k), jnp.float32)

    def router(self, x):
        """``tanh(W_r (RMSNorm(x) / d))``: ``x [..., d]`` -> ``m [..., K]`` in ``x``'s dtype."""
        x32 = x.astype(jnp.float32)
        ms = jnp.mean(x32 * x32, axis=-1, keepdims=True) + self.eps
        normed = (x32 * ms**-0.5 * self.router_norm).astype(x.dtype)
        routed = (normed * (1.0 / self.d)) @ self.modality_router.astype(x.dtype)
        return jnp.tanh(routed.astype(jnp.float32)).astype(x.dtype)

    def predict(self, x, block: int = 0):
        """``x_hat^i = x^i + sum_j C_ij x^j``, ``C = reshape(W_p m(x^{block}), [K, K])``.

        Args:
            x: the stacked blocks ``[K, ..., d]``.
            block: the active block (Gemma 3n's ``altup_active_idx``).

        Returns:
            ``[K, ..., d]``.
        """
        m = self.router(x[block])
        w = self.prediction_coefs
        if self.clip is not None:
            w = _straight_through_clip(w, self.clip)
        coefs = (m @ w.astype(x.dtype)).reshape((*m.shape[:-1], self.k, self.k))
        return jnp.einsum("...ij,j...d->i...d", coefs, x) + x

    def correct(self, predictions, activated, block: int = 0):
        """``x_hat^i + g_i (activated - x_hat^{block})`` with ``g = 1 + W_c m(activated)``.

        Args:
            predictions: ``[K, ..., d]`` from :meth:`predict`.
            activated: the layer's output on ``predictions[block]``, ``[..., d]``.
            block: the active block.

        Returns:
            ``[K, ..., d]``.
        """
        m = self.router(activated)
        w = self.correction_coefs
        if self.clip is not None:
            w = jnp.clip(w, -self.clip, self.clip)
        g = m @ w.astype(activated.dtype) + 1.0  # [..., K]
        innovation = activated - predictions[block]
        return jnp.moveaxis(g, -1, 0)[..., None] * innovation[None] + predictions

    def __call__(self, x, layer_fn, block: int = 0):
        """Predict, run ``layer_fn`` on the predicted active block, correct: ``[K, ..., d]``."""
        predictions = self.predict(x, block)
        return self.correct(predictions, layer_fn(predictions[block]), block)
