"""Span-corruption pretraining of T5 v1.1: Adafactor, rsqrt schedule, jit-compiled steps.

The optimiser is T5's Adafactor (optax): decay rate 0.8, update clipping 1.0, updates scaled by
the parameter RMS (floor 1e-3), second moments factored for dimensions >= 128, no momentum.
The learning rate is ``base * rsqrt(max(step, warmup))`` (T5: base 1.0, warmup 10k, so 0.01
for the first 10k steps).

The loss is the mean cross-entropy per target token, plus ``z_loss * logsumexp(logits)^2``
(T5X's auxiliary loss that keeps the softmax normaliser near 1). "Accuracy" is the fraction
of target tokens (span tokens, sentinels and EOS) whose argmax prediction is right: the
paper's "pretrain accuracy" (a target tied for the largest logit counts as right).

Training is exactly resumable: the batch of step ``s`` is a pure function of the seed and
``s``, dropout keys are ``fold_in(seed, s)``, and the whole state {step, params, opt_state} is
checkpointed; on CPU a resumed run reproduces the uninterrupted run's losses bit for bit.

References:
    Shazeer & Stern 2018, "Adafactor"; Raffel et al. 2020 (T5); T5X ``t5x/losses.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lshsim._validate import check_int
from lshsim.t5 import scan
from lshsim.t5.configs import T5Config
from lshsim.t5.lookups import lookup_of
from lshsim.t5.model import T5, init_params


def rsqrt_schedule(base: float = 1.0, warmup_steps: int = 10000) -> Callable:
    """``base / sqrt(max(step, warmup_steps))``: constant during warmup, then rsqrt decay."""

    def schedule(step):
        return base * jax.lax.rsqrt(jnp.maximum(jnp.asarray(step, jnp.float32), warmup_steps))

    return schedule


def make_optimizer(
    config: T5Config, learning_rate: float = 1.0, warmup_steps: int | None = None
) -> optax.GradientTransformation:
    """T5's Adafactor with the rsqrt schedule (``warmup_steps`` defaults to the config's).

    With ``scan_layers`` it runs on each layer's slice of the stacked parameters
    (:func:`lshsim.t5.scan.per_layer`): the same updates as on the unrolled model.
    """
    warmup = config.warmup_steps if warmup_steps is None else warmup_steps
    return adafactor(config, rsqrt_schedule(learning_rate, warmup))


def adafactor(config: T5Config, learning_rate) -> optax.GradientTransformation:
    """T5's Adafactor settings at ``learning_rate`` (a float or a schedule).

    Factored second moments of kernels with both sides >= 128, decay 0.8, update clipping
    at 1, relative step (parameter scale), no momentum. With scanned layers it runs per
    layer (:func:`lshsim.t5.scan.per_layer`): factoring, update clipping and the parameter
    scale of each layer's slice, as on the unrolled model.
    """
    tx = optax.adafactor(
        learning_rate=learning_rate,
        min_dim_size_to_factor=128,
        decay_rate=0.8,
        clipping_threshold=1.0,
        multiply_by_parameter_scale=True,
        momentum=None,
        factored=True,
        eps=1e-30,
    )
    return scan.per_layer(tx) if config.scanned else tx


def cross_entropy(
    logits: jax.Array,
    targets: jax.Array,
    weights: jax.Array,
    z_loss: float,
    special_ids: Sequence[int] | None = None,
) -> dict[str, jax.Array]:
    """Weighted sums over target tokens: cross-entropy, z-loss, correct tokens, weight.

    Args:
        logits: ``[B, T, V]`` float32.
        targets: ``[B, T]`` int token ids.
        weights: ``[B, T]`` float loss weights (0 on padding).
        z_loss: coefficient of ``logsumexp(logits)^2``.
        special_ids: token ids left out of the "content" sums (sentinels and EOS); ``None``:
            no content sums.

    Returns:
        dict of scalar sums ``loss``, ``z_loss``, ``correct``, ``weight``; with
        ``special_ids`` also ``content_loss``, ``content_correct``, ``content_weight``: the
        same sums over the target tokens that are not special (the span contents).
    """
    lse = jax.nn.logsumexp(logits, axis=-1)
    target_logit = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    ce = lse - target_logit
    # "argmax == target" as "the target's logit is the maximum": one max reduction instead of
    # argmax's (value, index) one, which took 64 ms of small's step on [8, 114, 32128] logits
    # (the max: 3 ms; measured). They differ only on an exact tie for the maximum, where this
    # counts the target correct whatever its index.
    correct = (target_logit >= jnp.max(logits, axis=-1)).astype(jnp.float32)
    sums = {
        "loss": jnp.sum(ce * weights),
        "z_loss": jnp.sum(z_loss * lse**2 * weights),
        "correct": jnp.sum(correct * weights),
        "weight": jnp.sum(weights),
    }
    if special_ids is not None:
        special = jnp.asarray(np.asarray(special_ids, np.int32).reshape(-1))
        content = weights * ~jnp.isin(targets, special)
        sums["content_loss"] = jnp.sum(ce * content)
        sums["content_correct"] = jnp.sum(correct * content)
        sums["content_weight"] = jnp.sum(content)
    return sums


def has_aux_losses(config: T5Config) -> bool:
    """Whether the model sows router losses (softmax lookup with a balance or z coefficient)."""
    lookup = lookup_of(config)
    return lookup is not None and lookup.sows_aux_losses(config)


def is_deterministic(config: T5Config) -> bool:
    """Whether a training step needs no randomness (no dropout, no router jitter)."""
    lookup = lookup_of(config)
    jitter = lookup is not None and lookup.needs_rng(config)
    return config.dropout_rate == 0.0 and not jitter


def _forward_sums(model: T5, params, batch, dropout_key, deterministic: bool, special_ids=None):
    """Cross-entropy sums; ``aux`` (router losses, summed over layers) when the config has them.

    ``special_ids``: see :func:`cross_entropy` (content sums for evaluation).
    """
    aux_losses = has_aux_losses(model.config)
    out = model.apply(
        {"params": params},
        batch["encoder_input_tokens"],
        batch["decoder_input_tokens"],
        batch["decoder_target_tokens"],
        deterministic=deterministic,
        rngs=None if deterministic else {"dropout": dropout_key},
        mutable=["aux_loss"] if aux_losses else False,
    )
    logits, aux = out if aux_losses else (out, {})
    sums = cross_entropy(
        logits,
        batch["decoder_target_tokens"],
        batch["decoder_loss_weights"].astype(jnp.float32),
        model.config.z_loss,
        special_ids,
    )
    sums["aux"] = sum(jnp.sum(v) for v in jax.tree_util.tree_leaves(aux)) + jnp.float32(0)
    return sums


def state_initializer(config: T5Config, optimizer: optax.GradientTransformation) -> Callable:
    """``key_data -> {"step", "params", "opt_state"}`` at step 0: the function to compile.

    The argument is the raw data of the seed's key (:func:`seed_key_data`), so the compiled
    initialisation takes it as an input: a jit without arguments is all constants, which XLA's
    GPU compiler folds on its host (the random bits of every parameter; ``base`` ran over 117 s
    on an H100 without finishing, where the CPU takes 3 s).

    Args:
        config: the model config.
        optimizer: its optimiser (:func:`make_optimizer`).

    Returns:
        The pure function ``init(key_data)`` (``jax.random.key_data`` of the parameters' key).
    """

    def init(key_data: jax.Array) -> dict:
        params = init_params(config, jax.random.wrap_key_data(key_data))
        return {
            "step": jnp.asarray(0, jnp.int32),
            "params": params,
            "opt_state": optimizer.init(params),
        }

    return init


def seed_key_data(seed: int) -> np.ndarray:
    """The raw ``uint32`` data of ``jax.random.key(seed)``, as a host array (an input to jit).

    Args:
        seed: the seed (any integer ``jax.random.key`` takes).

    Returns:
        A NumPy ``uint32`` array: every process of a multi-process run passes the same one.
    """
    return np.asarray(jax.random.key_data(jax.random.key(seed)))


def init_state(config: T5Config, optimizer: optax.GradientTransformation, seed: int) -> dict:
    """``{"step", "params", "opt_state"}`` at step 0, compiled with the seed as an input.

    The values are :func:`lshsim.t5.model.init_params`'s within one float32 rounding (XLA
    folds the scale of a normal initialiser into one product: up to 3e-8 on ``tiny``), the
    same on every mesh: :func:`lshsim.t5.sharding.init_on` compiles the same function with
    the mesh's ``out_shardings``.

    Args:
        config: the model config.
        optimizer: its optimiser (:func:`make_optimizer`).
        seed: the parameters' seed.

    Returns:
        The state, on the default device.
    """
    return jax.jit(state_initializer(config, optimizer))(seed_key_data(seed))


def abstract_state(config: T5Config, optimizer: optax.GradientTransformation) -> dict:
    """Shapes and dtypes of :func:`init_state`, allocating nothing."""
    return jax.eval_shape(state_initializer(config, optimizer), seed_key_data(0))


def make_objective(config: T5Config) -> Callable:
    """``(params, batch, key) -> (loss, sums)``: the training loss and its cross-entropy sums.

    The loss is the per-token mean of cross-entropy plus z-loss, plus the router losses when
    configured; ``key`` feeds dropout and router jitter.
    """
    scaled = _scaled_objective(config)

    def objective(params, batch, key):
        denom = jnp.maximum(jnp.sum(batch["decoder_loss_weights"].astype(jnp.float32)), 1.0)
        return scaled(params, batch, key, denom, 1.0)

    return objective


def _scaled_objective(config: T5Config) -> Callable:
    """``(params, batch, key, denom, aux_scale) -> (loss, sums)``.

    ``loss = (ce + z) / denom + aux_scale * aux`` with ``ce`` and ``z`` the sums over the
    batch's target tokens: with ``denom`` the whole batch's token count, the micro-batches'
    losses (and so their gradients) add up to the whole batch's.
    """
    model = T5(config)
    deterministic = is_deterministic(config)

    def objective(params, batch, key, denom, aux_scale):
        sums = _forward_sums(model, params, batch, key, deterministic)
        return (sums["loss"] + sums["z_loss"]) / denom + aux_scale * sums["aux"], sums

    return objective


def split_micro(batch: dict, accumulate: int) -> dict:
    """``[B, ...]`` leaves as ``[k, B/k, ...]``: micro-batch ``j`` holds examples ``j, j+k, ...``.

    The strided split keeps every micro-batch spread over all the ``data`` devices: a batch
    split in contiguous blocks over ``D`` devices is reshaped to ``[B/k, k, ...]`` locally
    (when ``B/k`` is a multiple of ``D``) and only the unsplit axis moves to the front.

    Raises:
        ValueError: ``accumulate`` does not divide the batch.
    """
    size = jax.tree_util.tree_leaves(batch)[0].shape[0]
    if size % accumulate:
        raise ValueError(f"accumulate must divide the batch ({size}), got {accumulate}")

    def split(x):
        return jnp.swapaxes(x.reshape(size // accumulate, accumulate, *x.shape[1:]), 0, 1)

    return jax.tree_util.tree_map(split, batch)


def make_grad_fn(config: T5Config, accumulate: int = 1) -> Callable:
    """``(params, batch, key) -> (grads, sums)``: the step's gradient, in ``accumulate`` parts.

    With ``accumulate = k > 1`` the batch is cut into ``k`` micro-batches
    (:func:`split_micro`) that a ``jax.lax.scan`` runs one after another, adding their
    gradients and cross-entropy sums: every micro-batch's loss is divided by the *whole*
    batch's target-token count, so the sum is the full batch's loss and gradient (to float
    rounding; only ``k``'s activations are live at once). The router losses, which are means
    over the tokens they see, are averaged over the micro-batches (``sums["aux"]``); they are
    then each micro-batch's (a load-balance loss over B/k examples, not B).

    Randomness: micro-batch ``j`` draws dropout and router jitter from ``fold_in(key, j)``,
    and ``k = 1`` from ``key`` itself, so a run is reproducible for a given ``k``, but the
    masks (not the expected update) depend on ``k``.

    Raises:
        ValueError: ``accumulate`` is not an integer >= 1.
    """
    accumulate = check_int("accumulate", accumulate, 1)
    if accumulate == 1:
        return jax.grad(make_objective(config), has_aux=True)
    grad = jax.grad(_scaled_objective(config), has_aux=True)

    def grad_fn(params, batch, key):
        denom = jnp.maximum(jnp.sum(batch["decoder_loss_weights"].astype(jnp.float32)), 1.0)
        micro = split_micro(batch, accumulate)

        def body(carry, xs):
            j, mb = xs
            g, s = grad(params, mb, jax.random.fold_in(key, j), denom, 1.0 / accumulate)
            acc_g, acc_s = carry
            return (_tree_add(acc_g, g), _tree_add(acc_s, s)), None

        zero_g = jax.tree_util.tree_map(jnp.zeros_like, params)
        first = jax.tree_util.tree_map(lambda x: x[0], micro)
        zero_s = jax.tree_util.tree_map(
            lambda x: jnp.zeros(x.shape, x.dtype),
            jax.eval_shape(lambda: grad(params, first, key, denom, 1.0)[1]),
        )
        xs = (jnp.arange(accumulate), micro)
        (grads, sums), _ = jax.lax.scan(body, (zero_g, zero_s), xs)
        return grads, {**sums, "aux": sums["aux"] / accumulate}

    return grad_fn


def _tree_add(a, b):
    return jax.tree_util.tree_map(jnp.add, a, b)


def make_train_step(
    config: T5Config,
    optimizer: optax.GradientTransformation,
    seed: int = 0,
    accumulate: int = 1,
) -> Callable[[dict, dict], tuple[dict, dict]]:
    """A pure ``(state, batch) -> (state, metrics)`` function, to be ``jax.jit``-ed.

    ``metrics`` holds per-token means ``loss`` (cross-entropy), ``z_loss``, ``accuracy``,
    ``router_loss`` (the softmax lookup's optional balance and z losses, summed over layers;
    0 without them), ``finite`` (whether loss and gradients are finite) and ``params_finite``
    (whether the updated parameters are: a finite loss can still take a step to infinite or NaN
    parameters; one fused reduction on the device, read only when the metrics are). Router
    jitter and dropout draw from ``fold_in(key(seed), step)``. ``accumulate``: the gradient
    of the batch in that many micro-batches, one optimiser update (see :func:`make_grad_fn`).

    Raises:
        ValueError: ``accumulate`` is not an integer >= 1 (one that does not divide the batch
            raises when the step is traced).
    """
    grad_fn = make_grad_fn(config, accumulate)

    def step_fn(state, batch):
        key = jax.random.fold_in(jax.random.key(seed), state["step"])
        grads, sums = grad_fn(state["params"], batch, key)
        updates, opt_state = optimizer.update(grads, state["opt_state"], state["params"])
        params = optax.apply_updates(state["params"], updates)
        denom = jnp.maximum(sums["weight"], 1.0)
        finite = jnp.isfinite(sums["loss"]) & _all_finite(grads)
        metrics = {
            "loss": sums["loss"] / denom,
            "z_loss": sums["z_loss"] / denom,
            "router_loss": sums["aux"],
            "accuracy": sums["correct"] / denom,
            "finite": finite,
            "params_finite": _all_finite(params),
        }
        new_state = {"step": state["step"] + 1, "params": params, "opt_state": opt_state}
        return new_state, metrics

    return step_fn


def _all_finite(tree) -> jax.Array:
    """Whether every leaf of ``tree`` is finite (a scalar bool on the device)."""
    return jnp.all(jnp.asarray([jnp.all(jnp.isfinite(x)) for x in jax.tree_util.tree_leaves(tree)]))


def make_eval_step(
    config: T5Config, special_ids: Sequence[int] | None = None
) -> Callable[[Any, dict], dict]:
    """``(params, batch) -> sums`` (``loss``, ``z_loss``, ``correct``, ``weight``), no dropout.

    With ``special_ids`` (the tokenizer's sentinels and EOS) the sums also hold
    ``content_loss``, ``content_correct`` and ``content_weight`` (see :func:`cross_entropy`).
    """
    model = T5(config)
    special = None if special_ids is None else tuple(int(i) for i in special_ids)

    def eval_fn(params, batch):
        return _forward_sums(model, params, batch, None, True, special)

    return eval_fn


#: Sums that :func:`evaluate` accumulates over batches (the content ones when present).
_EVAL_SUMS = ("loss", "correct", "weight", "content_loss", "content_correct", "content_weight")


def evaluate(eval_step: Callable, params, batches: list[dict]) -> dict[str, Any]:
    """Held-out ``loss`` (cross-entropy per target token), ``accuracy`` and ``tokens``.

    When ``eval_step`` returns content sums (:func:`make_eval_step` with ``special_ids``), also
    ``content_loss``, ``content_accuracy`` and ``content_tokens``: the same over the span
    contents (target tokens that are not sentinels or EOS).
    """
    totals = {"loss": 0.0, "correct": 0.0, "weight": 0.0}
    for batch in batches:
        sums = jax.device_get(eval_step(params, batch))
        for k in _EVAL_SUMS:
            if k in sums:
                totals[k] = totals.get(k, 0.0) + float(sums[k])
    out: dict[str, Any] = {}
    for prefix in ("", "content_"):
        if prefix + "weight" not in totals:
            continue
        w = max(totals[prefix + "weight"], 1.0)
        out[prefix + "loss"] = totals[prefix + "loss"] / w
        out[prefix + "accuracy"] = totals[prefix + "correct"] / w
        out[prefix + "tokens"] = int(totals[prefix + "weight"])
    return out


def learning_rate(step: int, base: float, warmup: int) -> float:
    """The scheduled learning rate at ``step`` (for logging)."""
    return float(rsqrt_schedule(base, warmup)(step))
