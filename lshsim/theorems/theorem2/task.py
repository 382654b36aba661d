"""Theorem 2's task: the teacher ``y(u, q) = <Psi(u), Phi(q)>``, its inputs and seeded streams.

:func:`make_task` draws a random teacher with ``Var y = 1``; :func:`grid_instance` builds the
``b``-bit instance on which the lower bounds of :mod:`lshsim.theorems.theorem2.bounds` are tight.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np


class Task(NamedTuple):
    """One teacher instance: ``y(u, q) = <psi[u], Phi(q)>`` with ``Var y = 1``.

    Attributes:
        teacher_w: ``(D_t, d, d)`` teacher weights (layer ``l`` maps ``z -> relu(W_l z + b_l)``).
        teacher_b: ``(D_t, d)`` teacher biases.
        psi: ``(N, d)`` table, already divided by ``scale``.
        scale: The standard deviation of the raw target that ``psi`` was divided by.
    """

    teacher_w: Any
    teacher_b: Any
    psi: Any
    scale: Any


def teacher_features(task: Task, q: Any, xp: Any = jnp) -> Any:
    """``Phi(q)``: the teacher MLP, ReLU after every layer.

    Args:
        task: The teacher.
        q: ``(batch, d)`` inputs.
        xp: ``numpy`` (float64 references, constructions) or ``jax.numpy`` (training).

    Returns:
        ``(batch, d)`` non-negative features.
    """
    z = q
    for layer in range(task.teacher_w.shape[0]):
        z = xp.maximum(z @ task.teacher_w[layer].T + task.teacher_b[layer], 0.0)
    return z


def target(task: Task, u: Any, q: Any, xp: Any = jnp) -> Any:
    """``y(u, q) = <psi[u], Phi(q)>``.

    Args:
        task: The teacher.
        u: ``(batch,)`` integer categories.
        q: ``(batch, d)`` inputs.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        ``(batch,)`` targets.
    """
    return xp.sum(task.psi[u] * teacher_features(task, q, xp), axis=-1)


def rng_for(seed: int, *path: int) -> np.random.Generator:
    """The generator of the stream named ``path``: ``SeedSequence(seed, spawn_key=path)``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=path))


def sample_inputs(
    rng: np.random.Generator, batch: int | tuple[int, ...], d: int, n_categories: int
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``u ~ U{0..N-1}`` (int32) and ``q ~ N(0, I_d)`` (float32).

    Args:
        rng: Generator.
        batch: Number of pairs, or a leading shape such as ``(steps, batch)``.
        d: Dimension of ``q``.
        n_categories: ``N``.

    Returns:
        ``(u, q)`` of shapes ``(*batch,)`` and ``(*batch, d)``.
    """
    shape = (batch,) if isinstance(batch, int) else tuple(batch)
    u = rng.integers(0, n_categories, size=shape, dtype=np.int32)
    return u, rng.standard_normal((*shape, d), dtype=np.float32)


def _haar_orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed ``d x d`` orthogonal matrix (QR of a Gaussian, signs fixed)."""
    qmat, rmat = np.linalg.qr(rng.standard_normal((d, d)))
    return qmat * np.sign(np.diag(rmat))


def make_task(
    rng: np.random.Generator, d: int, teacher_depth: int, n_categories: int,
    scale_sample: int = 65536, bias_std: float = 0.1,
) -> Task:  # fmt: skip
    """A random teacher: He-scaled orthogonal weights, small biases, ``Psi ~ N(0, 1)``.

    Each teacher layer is ``sqrt(2) O`` with ``O`` Haar-orthogonal (He's gain for ReLU, so
    ``E|z|^2`` is kept from layer to layer) and biases ``N(0, bias_std^2)``. Orthogonal rather
    than Gaussian weights keep every one of the ``d`` directions of ``Phi`` strong: a square
    Gaussian matrix has singular values near 0, which would let a narrow student drop them.

    The raw target's standard deviation is estimated once from ``scale_sample`` pairs drawn
    from ``rng`` and divided out of ``psi``, so that ``Var y = 1`` up to that sample's error.

    Args:
        rng: Generator (the whole task is a function of its state).
        d: Width of the teacher and dimension of ``q``.
        teacher_depth: ``D_t >= 1``.
        n_categories: ``N >= 1``.
        scale_sample: Pairs used to estimate the scale.
        bias_std: Standard deviation of the teacher biases.

    Returns:
        The task (float64 arrays).
    """
    w = np.stack([math.sqrt(2.0) * _haar_orthogonal(rng, d) for _ in range(teacher_depth)])
    b = rng.standard_normal((teacher_depth, d)) * bias_std
    psi = rng.standard_normal((n_categories, d))
    u, q = sample_inputs(rng, scale_sample, d, n_categories)
    scale = float(np.std(target(Task(w, b, psi, 1.0), u, q.astype(np.float64), np)))
    if not scale > 0:  # a dead teacher (y == 0 on the whole sample) is left unscaled
        scale = 1.0
    return Task(w, b, psi / scale, scale)


def grid_instance(d: int, bits: int, teacher_depth: int, seed: int) -> tuple[Task, np.ndarray]:
    """An instance on which the constructions are ``b``-bit, so the bounds are tight.

    ``Q`` is the product of ``d`` sets of ``2^b`` positive values; teacher layers are positive
    scalings of permutations with zero bias (each layer maps the grid to a grid). ``Psi``'s
    rows are all ``2^(d b)`` points of a product of ``d`` random Gaussian sets of ``2^b``
    values, so ``N = M = 2^(d b)``; ``y`` is injective on ``U x Q`` almost surely.

    Args:
        d: Width.
        bits: ``b``.
        teacher_depth: ``D_t``.
        seed: NumPy seed.

    Returns:
        ``(task, Q)`` with float64 arrays; ``Q`` has shape ``(2^(d b), d)``.
    """
    rng = np.random.default_rng(seed)
    k = 1 << bits
    q_sets = np.sort(rng.uniform(0.5, 1.5, size=(d, k)), axis=1)
    psi_sets = rng.normal(size=(d, k))
    idx = np.stack(np.meshgrid(*[np.arange(k)] * d, indexing="ij"), axis=-1).reshape(-1, d)
    queries = q_sets[np.arange(d), idx]
    psi = psi_sets[np.arange(d), idx]
    w = np.zeros((teacher_depth, d, d))
    for layer in range(teacher_depth):
        w[layer][np.arange(d), rng.permutation(d)] = rng.uniform(0.5, 2.0, size=d)
    return Task(w, np.zeros((teacher_depth, d)), psi, 1.0), queries
