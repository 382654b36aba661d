"""Theorem 2's students: ``D`` ReGLU layers of width ``w``, architectures A and B.

``h_l = relu(W_l x_l + b_l) * (V_l x_l + c_l)``. ``"A"`` (input-only lookup):
``x_1 = P q + E(u)``, ``x_l = h_{l-1}``, ``y_hat = a.h_D + beta``. ``"B"``: as A, plus
``x_l = h_{l-1} + E_l(u)`` (``l >= 2``), ``y_hat = (a + E_out(u)).h_D + beta``.

References:
    Shazeer (2020), "GLU Variants Improve Transformer" (ReGLU).
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np

from lshsim.theorems.theorem2.architectures import Params, check_arch


def init_student(
    rng: np.random.Generator, arch: str, d: int, width: int, depth: int, n_categories: int,
    linear_scale: float = 0.1, linear_bias: float = 1.0,
) -> Params:  # fmt: skip
    """Random student parameters.

    LeCun-normal ``P, a``, He-normal gates ``W``, zero gate biases, an ``N(0, 1)`` input table,
    and each layer's linear branch near the constant ``linear_bias``: ``V`` is LeCun-normal
    times ``linear_scale`` and ``c = linear_bias`` (the defaults start every ReGLU layer close
    to a ReLU layer). B's extra tables (``E_up``, ``E_out``) start at 0 and the shared
    parameters are drawn in the same order, so from the same generator state B starts as
    exactly the same function as A.

    Args:
        rng: Generator.
        arch: ``"A"`` or ``"B"``.
        d: Dimension of ``q``.
        width: ``w``.
        depth: ``D >= 1`` ReGLU layers.
        n_categories: ``N``.
        linear_scale: Scale of ``V`` relative to LeCun-normal.
        linear_bias: Initial ``c``.

    Returns:
        Float32 arrays: ``P (w, d)``, ``E (N, w)``, ``W, V (D, w, w)``, ``b, c (D, w)``,
        ``a (w,)``, ``beta ()``, and for ``"B"`` also ``E_up (D-1, N, w)`` and ``E_out (N, w)``.
    """
    check_arch(arch)
    normal = lambda *shape: rng.standard_normal(shape, dtype=np.float32)  # noqa: E731
    params: Params = {
        "P": normal(width, d) / np.float32(math.sqrt(d)),
        "E": normal(n_categories, width),
        "W": normal(depth, width, width) * np.float32(math.sqrt(2.0 / width)),
        "b": np.zeros((depth, width), np.float32),
        "V": normal(depth, width, width) * np.float32(linear_scale / math.sqrt(width)),
        "c": np.full((depth, width), linear_bias, np.float32),
        "a": normal(width) / np.float32(math.sqrt(width)),
        "beta": np.zeros((), np.float32),
    }
    if arch == "B":
        params["E_up"] = np.zeros((depth - 1, n_categories, width), np.float32)
        params["E_out"] = np.zeros((n_categories, width), np.float32)
    return params


def student_interfaces(params: Params, u: Any, q: Any, xp: Any = jnp) -> tuple[list[Any], Any]:
    """Run a student and keep what it carries between layers.

    Args:
        params: From :func:`init_student`, :func:`construct_a` or :func:`construct_b`.
        u: ``(batch,)`` categories.
        q: ``(batch, d)`` inputs.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        ``([x_1, ..., x_D], y_hat)``: the layer inputs (each ``(batch, w)``) and the output.
    """
    x = q @ params["P"].T + params["E"][u]
    inputs = []
    for layer in range(params["W"].shape[0]):
        if layer > 0 and "E_up" in params:
            x = x + params["E_up"][layer - 1][u]
        inputs.append(x)
        gate = xp.maximum(x @ params["W"][layer].T + params["b"][layer], 0.0)
        x = gate * (x @ params["V"][layer].T + params["c"][layer])
    out_w = params["a"] + params["E_out"][u] if "E_out" in params else params["a"]
    return inputs, xp.sum(out_w * x, axis=-1) + params["beta"]


def student_apply(params: Params, u: Any, q: Any, xp: Any = jnp) -> Any:
    """``y_hat(u, q)``, the second output of :func:`student_interfaces` (same arguments)."""
    return student_interfaces(params, u, q, xp)[1]
