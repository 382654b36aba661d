"""A model's bytes before anything is built: closed-form parameter counts and memory estimates.

:func:`param_count` counts the parameters of a :class:`~lshsim.t5.configs.T5Config` from its
fields alone (equal to :func:`lshsim.t5.params.count_params`, which traces the model: tests
check that they agree), so a request can be priced without tracing ``K`` blocks.
:func:`model_bytes` adds an upper-order estimate of one step's working memory (optimiser
state, gradients, activations kept for the backward pass, logits); :func:`check_model_fits`
and :func:`check_params_fit` refuse, in one line naming the option, what this machine cannot
hold (see :mod:`lshsim._memory`).

JAX is not imported here.
"""

from __future__ import annotations

import dataclasses

from lshsim._memory import available_bytes, check_fits, format_bytes
from lshsim._validate import check_int
from lshsim.t5.configs import T5Config, get_config
from lshsim.t5.lookups import lookup_of
from lshsim.t5.memory_methods import METHODS

#: Bytes of one parameter (parameters are float32 whatever the compute dtype).
PARAM_BYTES = 4
#: Host bytes per (query, key) pair of tracing a stack's relative position bias: NumPy builds
#: the relative positions and their buckets as ``[q, k]`` int64 arrays (measured peak: 53).
TRACE_BYTES_PER_POSITION_PAIR = 56
#: The flags :func:`check_params_fit` may blame, by config field (the CLI's spelling).
_FLAGS = {
    "memory_k": "--blocks",
    "memory_extra": "--extra",
    "buckets": "--buckets",
    "expert_rank": "--rank",
}


def check_lengths(
    input_length: int | None, target_length: int | None, available: int | None = None
) -> tuple[int | None, int | None]:
    """Validate the priced lengths and refuse, before tracing, those this machine cannot trace.

    Tracing the model at ``L`` encoder and ``T`` decoder tokens builds the position biases on
    the host: about :data:`TRACE_BYTES_PER_POSITION_PAIR` bytes per pair of positions, ``L^2``
    for the encoder and ``T^2`` for the decoder (``T <= L`` is assumed while span corruption
    has not yet derived it).

    Args:
        input_length: encoder tokens, ``None`` for the config's.
        target_length: decoder tokens, ``None`` for what span corruption needs.
        available: bytes available (default: :func:`lshsim._memory.available_bytes`).

    Returns:
        The lengths, checked (``None`` stays ``None``).

    Raises:
        ValueError: a length that is not an integer >= 1, or too long for this machine's
            memory (the message names the option, the estimate and the available memory).
    """
    if input_length is not None:
        input_length = check_int("--input-length", input_length, 1)
        need = TRACE_BYTES_PER_POSITION_PAIR * 2 * input_length**2
        check_fits(
            "--input-length", f"{input_length} tokens", need, "the position biases", available
        )
    if target_length is not None:
        target_length = check_int("--target-length", target_length, 1)
        need = TRACE_BYTES_PER_POSITION_PAIR * target_length**2
        check_fits(
            "--target-length", f"{target_length} tokens", need, "the position biases", available
        )
    return input_length, target_length


def _projected(cfg: T5Config) -> bool:
    """Whether the K blocks are projected from a ``d``-wide embedding (Gemma 3n's AltUp)."""
    return cfg.memory in METHODS and not METHODS[cfg.memory].wide_embedding


def _altup_params(cfg: T5Config) -> tuple[int, int]:
    """Parameters of one layer's AltUp, and of the block projections (all stacks together).

    The paper's: ``p [K, K]`` and ``g [K]`` per layer. Gemma 3n's: router norm ``d``, router
    ``d K``, prediction map ``K K^2``, correction map ``K K``; projections ``K-1`` of ``d x d``
    into the blocks (shared) and out of them (per stack).
    """
    k, d = cfg.memory_k, cfg.d_model
    if not cfg.widened:
        return 0, 0
    if _projected(cfg):
        return d + d * k + k**3 + k * k, 3 * (k - 1) * d * d
    return k * (k + 1), 0


def _widths(cfg: T5Config) -> tuple[int, int]:
    """Widths of the encoder output seen by cross-attention, and of the decoder's logits input."""
    wide = cfg.memory_k * cfg.d_model if cfg.widened and not _projected(cfg) else cfg.d_model
    cross = wide if cfg.memory_cross == "wide" else cfg.d_model
    out = wide if cfg.memory_output == "wide" else cfg.d_model
    return cross, out


def _expert_params(cfg: T5Config) -> int:
    """Parameters of every layer's partial expert (its lookup's closed form; 0 without one)."""
    lookup = lookup_of(cfg)
    return lookup.stack_params(cfg) if lookup else 0


def param_count(config: T5Config | str) -> dict[str, int]:
    """``{"embedding", "non_embedding", "expert", "total"}`` from the config's fields alone.

    The same split as :func:`lshsim.t5.params.count_params`, without tracing the model.
    """
    cfg = get_config(config)
    d, inner, ff, v = cfg.d_model, cfg.num_heads * cfg.d_kv, cfg.d_ff, cfg.vocab_size
    cross, out = _widths(cfg)
    ne, nd = cfg.num_encoder_layers, cfg.num_decoder_layers
    embedding = v * cfg.embed_width + out * v
    mlp, attn = 3 * d * ff, 4 * d * inner
    altup, altup_projections = _altup_params(cfg)
    rel = 2 * cfg.relative_attention_num_buckets * cfg.num_heads
    encoder = ne * (2 * d + attn + mlp + altup) + cross  # + encoder_norm (width cross)
    cross_attn = 2 * d * inner + 2 * cross * inner  # query, out; key, value read `cross`
    decoder = nd * (3 * d + attn + cross_attn + mlp + altup) + out  # + decoder_norm
    projection = cfg.memory_extra * d if cfg.memory != "none" and cfg.memory_extra else 0
    counts = {
        "embedding": embedding,
        "non_embedding": encoder + decoder + rel + projection + altup_projections,
        "expert": _expert_params(cfg),
    }
    counts["total"] = sum(counts.values())
    return counts


def _dtype_bytes(cfg: T5Config) -> int:
    return 2 if cfg.dtype in ("bfloat16", "float16") else 4


def activation_bytes(cfg: T5Config, batch: int, input_length: int, target_length: int) -> int:
    """Upper-order bytes of the activations one training step keeps for the backward pass.

    Per token and layer: the residual stream and norms (``6 d``, times ``K`` blocks with
    AltUp), queries, keys, values and attention output (``4 h d_kv``), the gated MLP's
    ``4 d_ff``, and with a rank-``r`` gather expert the per-token ``2 d r`` weights; per layer
    the float32 attention logits and weights (``2 h L_q L_k``) and masks; at the top the
    float32 logits, their softmax and gradient (``3 V`` per target token).
    """
    c = _dtype_bytes(cfg)
    d, inner, ff, h = cfg.d_model, cfg.num_heads * cfg.d_kv, cfg.d_ff, cfg.num_heads
    blocks = cfg.memory_k if cfg.widened else 1
    expert = 2 * d * cfg.expert_rank if cfg.lookup != "none" and cfg.expert_impl != "ragged" else 0
    per_token = c * (6 * d * blocks + 4 * inner + 4 * ff + expert)
    cross, _ = _widths(cfg)
    L, T = input_length, target_length
    enc = cfg.num_encoder_layers * (L * per_token + 4 * 2 * h * L * L)
    dec = cfg.num_decoder_layers * (
        T * (per_token + c * 4 * inner) + 4 * 2 * h * (T * T + T * L) + c * 2 * L * inner
    )
    masks = 4 * (L * L + T * T + T * L)
    logits = 4 * 3 * T * cfg.vocab_size
    embed = c * (L + T) * (cfg.embed_width + cross)
    return batch * (enc + dec + masks + logits + embed)


def model_bytes(
    config: T5Config | str,
    batch: int,
    input_length: int,
    target_length: int,
    *,
    training: bool = True,
) -> int:
    """Estimated peak bytes of one step: parameters, optimiser state, gradients, activations.

    An upper-order estimate (within a small factor of XLA's own ``memory_analysis()``, see the
    tests), not a measurement: training counts the float32 parameters, their gradients and
    updates (``3 x``), Adafactor's second moments (at most one more copy: factored ones are
    far smaller), the step's batch and :func:`activation_bytes`; evaluation counts the
    parameters, the batch and the activations of the forward pass alone (the same estimate:
    XLA frees them early, so it is an upper bound there).

    Args:
        config: a config or its name.
        batch: examples per step.
        input_length: encoder tokens per example.
        target_length: decoder tokens per example.
        training: price a training step (else a forward pass).
    """
    cfg = get_config(config)
    batch = check_int("batch", batch, 1)
    input_length = check_int("input_length", input_length, 1)
    target_length = check_int("target_length", target_length, 1)
    params = PARAM_BYTES * param_count(cfg)["total"]
    state = 4 * params if training else params
    tokens = 4 * batch * (input_length + 3 * target_length)  # int32 ids, float32 weights
    return state + tokens + activation_bytes(cfg, batch, input_length, target_length)


def check_model_fits(
    config: T5Config | str,
    batch: int,
    input_length: int,
    target_length: int,
    *,
    training: bool = True,
    option: str = "--batch",
    available: int | None = None,
) -> int:
    """Refuse a step that :func:`model_bytes` says this machine cannot hold; return its bytes.

    Args:
        config: a config or its name.
        batch: examples per step.
        input_length: encoder tokens per example.
        target_length: decoder tokens per example.
        training: price a training step (else a forward pass).
        option: the option to name (``--batch``, ``--input-length``).
        available: bytes available (default: :func:`lshsim._memory.available_bytes`).

    Raises:
        ValueError: one line with the option, the estimate and the available memory.
    """
    need = model_bytes(config, batch, input_length, target_length, training=training)
    cfg = get_config(config)
    what = "one training step" if training else "one forward pass"
    subject = f"{batch} examples of {input_length} + {target_length} tokens"
    check_fits(option, subject, need, f"{what} of config '{cfg.name}'", available)
    return need


def check_train_fits(
    config: T5Config | str,
    batch: int,
    input_length: int,
    target_length: int | None = None,
    *,
    training: bool = True,
    available: int | None = None,
) -> int:
    """Refuse, before any data or model is built, a train (or eval) step that cannot fit.

    Checks the position biases' trace at ``input_length`` first (so an absurd length is
    refused before span corruption derives ``target_length`` from it), then
    :func:`model_bytes`, naming ``--batch`` or ``--input-length``: whichever, set back to the
    config's default, saves more.

    Args:
        config: a config or its name.
        batch: examples per step.
        input_length: encoder tokens per example.
        target_length: decoder tokens (``None``: what span corruption needs).
        training: price a training step (else a forward pass).
        available: bytes available (default: :func:`lshsim._memory.available_bytes`).

    Returns:
        The estimated bytes.

    Raises:
        ValueError: one line with the option, the estimate and the available memory.
    """
    from lshsim.t5.data.spans import compute_input_and_target_lengths

    cfg = get_config(config)
    batch = check_int("--batch", batch, 1)
    input_length, target_length = check_lengths(input_length, target_length, available)
    if target_length is None:
        target_length = compute_input_and_target_lengths(input_length)[1]
    need = model_bytes(cfg, batch, input_length, target_length, training=training)
    by_batch = need - model_bytes(cfg, cfg.batch_size, input_length, target_length)
    by_length = need - model_bytes(cfg, batch, cfg.input_length, target_length)
    return check_model_fits(
        cfg,
        batch,
        input_length,
        target_length,
        training=training,
        option="--batch" if by_batch >= by_length else "--input-length",
        available=available,
    )


def check_params_fit(config: T5Config | str, available: int | None = None) -> int:
    """Refuse a config whose parameters this machine cannot hold.

    Prices the config in closed form (:func:`param_count`) before
    anything is traced, and names the memory flag whose value drives the size: the one whose
    reset to the base config's value saves the most (``--config`` when none is set).

    Returns:
        The estimated bytes.

    Raises:
        ValueError: ``--blocks: the 3.29e+16 parameters of K = 1000000000 need about 132 PB ...``.
    """
    cfg = get_config(config)
    params = param_count(cfg)["total"]
    need = PARAM_BYTES * params
    if available is None:
        available = available_bytes()
    if available is None or need <= available:
        return need
    field, saved = "", 0
    defaults = {f.name: f.default for f in dataclasses.fields(T5Config)}
    for name in _FLAGS:
        value = getattr(cfg, name)
        if value == defaults[name]:
            continue
        base = cfg.replace(**{name: defaults[name]})
        smaller = PARAM_BYTES * param_count(base)["total"]
        if need - smaller > saved:
            field, saved = name, need - smaller
    if not field:
        check_fits(
            "--config",
            f"the {params:.3g} parameters of '{cfg.name}'",
            need,
            "holding them",
            available,
        )
    label = _FLAGS[field].lstrip("-")
    check_fits(
        _FLAGS[field],
        f"the {params:.3g} parameters of {label} = {getattr(cfg, field)}",
        need,
        "holding them",
        available,
    )
    return need  # pragma: no cover - check_fits raised


__all__ = [
    "activation_bytes",
    "check_lengths",
    "check_model_fits",
    "check_params_fit",
    "check_train_fits",
    "format_bytes",
    "model_bytes",
    "param_count",
]
