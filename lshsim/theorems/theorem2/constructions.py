"""The exact constructions of ``proofs/theorem2.md``: B at width ``d``, A at width ``2d``.

Both return float64 NumPy parameters that :func:`lshsim.theorems.theorem2.students.student_apply`
maps to ``y`` exactly (up to rounding).
"""

from __future__ import annotations

import numpy as np

from lshsim.theorems.theorem2.architectures import Params
from lshsim.theorems.theorem2.task import Task


def _prepare(task: Task, width: int | None, depth: int | None, least: tuple[int, int]) -> tuple:
    """Float64 teacher, and the width/depth (defaults: the least allowed; depth ``D_t + 1``)."""
    tw, tb, psi = (np.asarray(x, dtype=np.float64) for x in task[:3])
    dt, d = tw.shape[0], tw.shape[1]
    min_w, min_d = least[0] * d, dt + least[1]
    width = min_w if width is None else width
    depth = dt + 1 if depth is None else depth
    if width < min_w or depth < min_d:
        raise ValueError(f"width, depth: the construction needs width >= {min_w} and depth >= "
                         f"{min_d}, got {width}, {depth}")  # fmt: skip
    return tw, tb, psi, dt, d, width, depth


def _empty(d: int, width: int, depth: int, n: int, arch: str) -> Params:
    shapes = {"P": (width, d), "E": (n, width), "W": (depth, width, width), "b": (depth, width)}
    shapes |= {"V": (depth, width, width), "c": (depth, width), "a": (width,), "beta": ()}
    if arch == "B":
        shapes |= {"E_up": (depth - 1, n, width), "E_out": (n, width)}
    return {k: np.zeros(v) for k, v in shapes.items()}


def construct_b(task: Task, width: int | None = None, depth: int | None = None) -> Params:
    """Architecture B computing ``y`` exactly at width ``d`` (Construction B).

    Layer ``l <= D_t`` is teacher layer ``l`` (gate ``W = W_l, b = b_l``; linear branch
    ``V = 0, c = 1``); layers above ``D_t`` are ``relu(x) * 1 = x`` (their input is ``>= 0``);
    ``P = I``, all input/upper tables 0, ``a = 0``, ``E_out(u) = Psi(u)``, ``beta = 0``.
    Extra units (``width > d``) are identically 0.

    Args:
        task: The teacher.
        width: ``w >= d`` (default ``d``).
        depth: ``D >= D_t`` (default ``D_t + 1``, the experiment's student depth).

    Returns:
        Float64 NumPy parameters for :func:`student_apply`.
    """
    tw, tb, psi, dt, d, width, depth = _prepare(task, width, depth, (1, 0))
    p = _empty(d, width, depth, psi.shape[0], "B")
    p["P"][:d, :d] = np.eye(d)
    for layer in range(depth):
        if layer < dt:
            p["W"][layer, :d, :d], p["b"][layer, :d] = tw[layer], tb[layer]
        else:
            p["W"][layer, :d, :d] = np.eye(d)
        p["c"][layer, :d] = 1.0
    p["E_out"][:, :d] = psi
    return p


def construct_a(
    task: Task, width: int | None = None, depth: int | None = None, margin: float = 1.0
) -> Params:
    """Architecture A computing ``y`` exactly at width ``2d`` (Construction A).

    ``x_1 = [q ; Psi(u) + C]`` with ``C = max|Psi| + margin``. Layers ``1..D_t`` run the teacher
    on the first half and carry the second half unchanged (``relu(x) * 1 = x`` as ``x > 0``);
    layers between ``D_t`` and the last are identities; the last layer's unit ``i`` is
    ``relu(Phi_i) * ((Psi_i + C) - C) = Phi_i Psi_i``; ``a = 1`` on those ``d`` units.

    Args:
        task: The teacher.
        width: ``w >= 2d`` (default ``2d``); extra units are identically 0.
        depth: ``D >= D_t + 1`` (default ``D_t + 1``).
        margin: ``C - max|Psi| > 0``.

    Returns:
        Float64 NumPy parameters for :func:`student_apply`.
    """
    tw, tb, psi, dt, d, width, depth = _prepare(task, width, depth, (2, 1))
    if not margin > 0:
        raise ValueError(f"margin: must be > 0, got {margin}")
    shift = float(np.max(np.abs(psi))) + margin
    eye = np.eye(d)
    p = _empty(d, width, depth, psi.shape[0], "A")
    p["P"][:d, :d] = eye
    p["E"][:, d : 2 * d] = psi + shift
    for layer in range(depth - 1):
        if layer < dt:
            p["W"][layer, :d, :d], p["b"][layer, :d] = tw[layer], tb[layer]
        else:
            p["W"][layer, :d, :d] = eye
        p["W"][layer, d : 2 * d, d : 2 * d] = eye
        p["c"][layer, : 2 * d] = 1.0
    last = depth - 1
    p["W"][last, :d, :d] = eye
    p["V"][last, :d, d : 2 * d] = eye
    p["c"][last, :d] = -shift
    p["a"][:d] = 1.0
    return p
