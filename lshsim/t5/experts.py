"""How a rank-``r`` partial expert is computed: per-token gather or grouped matmul.

Every token ``t`` of a layer reads its bucket's expert ``V_b relu(U_b^T x_t)``
(:func:`lshsim.t5.lookups.router_layer.expert_mlp`). Two implementations give the same numbers:

* ``gather``: each token's ``U_b, V_b`` taken from the table, then a batched product:
  ``N d r`` elements of per-token weights per matrix (for ``base`` Softmax r256 b128, 16k tokens
  a micro-batch: 3.2 GB a layer in bf16). Fast on CPU.
* ``ragged``: the tokens sorted by bucket and multiplied with ``jax.lax.ragged_dot`` (the
  grouped matmul of MoE trainers: one contiguous slice of tokens per bucket): ``N d`` memory.
  On GPU and TPU it is XLA's ragged-dot kernel; on CPU, JAX lowers it to a dense product over
  *every* bucket (``buckets`` times the FLOPs and a ``[buckets, N, d]`` temporary), so it is slow
  there beyond a few buckets.

``auto`` (the config's default) is ``ragged`` on an accelerator and ``gather`` on CPU
(:func:`resolve_expert_impl`): a run resolves it with its JAX backend, ``lshsim plan`` with
its target (``--hardware``, always an accelerator).

Planning: ``lshsim plan`` compiles on CPU for an accelerator, where ``ragged_dot``'s CPU lowering
is not what would run. Inside :func:`priced_on_host`, :func:`grouped_dot` is one dense product
of the same operands against the sum of the bucket weights: the same shapes in and out, the
grouped matmul's FLOPs (``2 N d r``, forward and each backward product) and no per-bucket
temporary, i.e. what XLA's GPU/TPU ragged-dot kernels allocate and compute (its numbers are
not the expert's).

This module imports nothing of the package (the CLI reads :data:`EXPERT_IMPLS` without JAX).

References:
    The JAX ``jax.lax.ragged_dot`` documentation; Gale et al. 2023 (MegaBlocks: grouped
    matrix products for MoE); Fedus et al. 2022 (Switch Transformer).
"""

from __future__ import annotations

import contextlib
import contextvars

#: ``T5Config.expert_impl``'s choices (``auto``, the default, first).
EXPERT_IMPLS = ("auto", "gather", "ragged")
#: JAX platform names of accelerators, where ``auto`` is the grouped matmul.
ACCELERATOR_PLATFORMS = ("gpu", "cuda", "rocm", "tpu")

_PRICED = contextvars.ContextVar("lshsim_grouped_priced_on_host", default=False)


def resolve_expert_impl(impl: str, platform: str) -> str:
    """The implementation that runs: ``impl``, with ``auto`` resolved for ``platform``.

    Args:
        impl: one of :data:`EXPERT_IMPLS`.
        platform: a JAX platform name (``cpu``, ``gpu``, ``tpu``, ...; a run's
            ``jax.default_backend()``), or ``accelerator`` (a plan's target).

    Returns:
        ``gather`` or ``ragged``: ``auto`` is ``ragged`` on an accelerator, ``gather`` elsewhere.

    Raises:
        ValueError: an unknown ``impl``.
    """
    if impl not in EXPERT_IMPLS:
        raise ValueError(
            f"expert_impl: unknown value {impl!r}; choose one of {', '.join(EXPERT_IMPLS)}"
        )
    if impl != "auto":
        return impl
    return "ragged" if platform in (*ACCELERATOR_PLATFORMS, "accelerator") else "gather"


@contextlib.contextmanager
def priced_on_host():
    """Within: :func:`grouped_dot` traces the grouped matmul's accelerator cost (see above).

    For ahead-of-time analysis on host devices only (:mod:`lshsim.t5.plan`): the traced values
    are not the expert's.
    """
    token = _PRICED.set(True)
    try:
        yield
    finally:
        _PRICED.reset(token)


def grouped_dot(x, w, sizes):
    """``ragged_dot``: row block ``g`` of ``x [N, k]`` (``sizes[g]`` rows) times ``w[g] [k, m]``.

    Args:
        x: ``[N, k]``, rows sorted by group.
        w: ``[groups, k, m]``.
        sizes: ``[groups]`` int32, summing to ``N``.

    Returns:
        ``[N, m]``. Inside :func:`priced_on_host`: ``x @ sum_g w[g]`` instead (same shapes
        and FLOPs, not the same values).
    """
    import jax
    import jax.numpy as jnp

    if _PRICED.get():
        return x @ jnp.sum(w, axis=0)
    return jax.lax.ragged_dot(x, w, sizes)
