"""Similarity distributions of the threshold form: the pairs below and above the threshold.

datasketch's ``MinHashLSH`` weighs its false positives and negatives by the *areas*
``FP = int_0^t P(s) ds`` and ``FN = int_t^1 (1 - P(s)) ds`` (``datasketch/lsh.py``), which
are probabilities only after dividing by the interval's length (datasketch issue #129: a flat
curve at 0.5 would have "false positive probability" ``0.5 t``). Here a :class:`Prior` holds a
distribution of pair similarities split at the threshold ``t``, and the rates are the
conditional probabilities

    FP = P(candidate | s < t) = E[P_{k,L}(s) | s < t],
    FN = P(missed | s >= t) = E[1 - P_{k,L}(s) | s >= t],

each a weighted mean over nodes (:func:`conditional_mean`). The default is uniform on
``[lo, t]`` and ``[t, 1]`` (``lo`` = 0: Jaccard, overlap, and cosines too): min-hash's
curves ``1 - (1 - s^k)^L`` integrate in closed form (:func:`lshsim.tune.law.banded_areas`,
incomplete beta functions, exact to rounding), the smooth laws by Gauss-Legendre quadrature
(:data:`PANELS` panels of :data:`PANEL_NODES` nodes, agreeing with adaptive quadrature to
``1e-8``). A threshold at an end of the range makes that side a point
mass at the end (the limit of the uniform law as the interval shrinks). A file of sampled
similarities (or a histogram) gives the empirical law instead. The overlap families take
the sentence model's grid ``f = s / l``, uniform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from lshsim._validate import check_float

__all__ = [
    "Prior",
    "conditional_mean",
    "grid_prior",
    "normalise",
    "read_similarities",
    "sample_prior",
    "uniform_prior",
]

#: Gauss-Legendre panels and nodes per panel of a smooth (non-polynomial) law.
PANELS = 16
PANEL_NODES = 24


def normalise(area, mass):
    """``area / mass``: a side's integral (or weighted sum) made a conditional probability.

    The one place where rates become probabilities (datasketch stops at the area).

    Args:
        area: ``int P`` over the side (or ``sum_i w_i P(s_i)``), any shape.
        mass: the side's length (or ``sum_i w_i``), > 0.

    Returns:
        ``area / mass``.
    """
    return area / mass


def conditional_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_i w_i v_i / sum_i w_i`` over the first axis: a probability given the side.

    Args:
        values: float64[S, ...], a quantity at each node.
        weights: float64[S], the nodes' weights (quadrature weights or counts), sum > 0.

    Returns:
        float64[...]: the weighted mean.
    """
    w = weights.reshape(weights.shape + (1,) * (values.ndim - 1))
    return normalise((w * values).sum(axis=0), weights.sum())


@dataclass(frozen=True)
class Prior:
    """Pair similarities split at ``threshold``: nodes and weights on each side.

    Attributes:
        threshold: ``t``.
        below, below_weights: the nodes with ``s < t`` and their weights (may be empty).
        above, above_weights: the nodes with ``s >= t`` and their weights (may be empty).
        description: one line saying what the law is.
        uniform: ``(lo, hi)`` where the law is uniform on ``[lo, t]`` and ``[t, hi]`` (a
            closed form may replace the nodes), else None.
    """

    threshold: float
    below: np.ndarray
    below_weights: np.ndarray
    above: np.ndarray
    above_weights: np.ndarray
    description: str
    uniform: tuple[float, float] | None = None


@lru_cache(maxsize=8)
def _legendre(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(nodes)


def _gauss_legendre(lo: float, hi: float, nodes: int, panels: int = 1):
    x, w = _legendre(nodes)
    edges = np.linspace(lo, hi, panels + 1)
    half = np.diff(edges) / 2
    mid = (edges[:-1] + edges[1:]) / 2
    return (mid[:, None] + half[:, None] * x).ravel(), (half[:, None] * w).ravel()


def uniform_prior(threshold: float, lo: float, hi: float) -> Prior:
    """Uniform on ``[lo, t]`` and ``[t, hi]``, by Gauss-Legendre quadrature of a smooth law.

    Args:
        threshold: ``t`` in ``[lo, hi]``.
        lo: the similarity's lowest value.
        hi: its highest.

    Returns:
        The :class:`Prior` (:data:`PANELS` panels of :data:`PANEL_NODES` nodes per side,
        marked uniform so that a closed form may replace them); a side of zero length is a
        point mass at its end.
    """
    t = check_float("threshold", threshold, lo, hi)

    def side(a: float, b: float, end: float):
        if a == b:
            return np.array([end]), np.array([1.0])
        return _gauss_legendre(a, b, PANEL_NODES, PANELS)

    below, wb = side(lo, t, lo)
    above, wa = side(t, hi, hi)
    text = f"uniform on [{lo:g}, {t:g}] and [{t:g}, {hi:g}]"
    return Prior(t, below, wb, above, wa, text, (lo, hi))


def grid_prior(threshold: float, grid: np.ndarray, lo: float, hi: float) -> Prior:
    """Uniform over a discrete grid of similarities (the sentence model's ``f = s / l``)."""
    t = check_float("threshold", threshold, lo, hi)
    ones = np.ones_like(grid)
    low = grid < t
    return Prior(
        t,
        grid[low],
        ones[low],
        grid[~low],
        ones[~low],
        f"uniform over the {grid.size} overlaps s/l",
    )


def sample_prior(threshold: float, values, counts, lo: float, hi: float, source: str) -> Prior:
    """The empirical law of sampled similarities (``counts`` of each value), split at ``t``."""
    t = check_float("threshold", threshold, lo, hi)
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    low = v < t
    return Prior(t, v[low], c[low], v[~low], c[~low], f"the {c.sum():g} similarities of {source}")


def read_similarities(path: str | Path, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Read a similarity file: one sampled value per line, or ``value count`` (a histogram).

    Blank lines and ``#`` comments are skipped; equal values are merged.

    Args:
        path: the file.
        lo: the similarity's lowest value (a value below is an error).
        hi: its highest.

    Returns:
        ``(values, counts)``, float64 each, values increasing.

    Raises:
        ValueError: an unreadable file or a bad line (naming the file and line), or counts
            whose sum no float holds.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"similarities: cannot read {path}: {err}") from None
    found: dict[float, float] = {}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"similarities: {path}:{number}"
        if len(fields) > 2:
            raise ValueError(f"{where}: expected 'value' or 'value count', got {line.strip()!r}")
        try:
            value = float(fields[0])
            count = float(fields[1]) if len(fields) == 2 else 1.0
        except ValueError:
            raise ValueError(f"{where}: not a number: {line.strip()!r}") from None
        if not (math.isfinite(value) and lo <= value <= hi):
            raise ValueError(f"{where}: a similarity must be in [{lo:g}, {hi:g}], got {value!r}")
        if not (math.isfinite(count) and count >= 0):
            raise ValueError(f"{where}: a count must be finite and >= 0, got {count!r}")
        found[value] = found.get(value, 0.0) + count
    total = sum(found.values())
    if not found or total == 0:
        raise ValueError(f"similarities: {path} holds no similarity with a positive count")
    if not math.isfinite(total):
        raise ValueError(f"similarities: {path}: the counts sum to more than a float holds")
    keys = sorted(found)
    return np.array(keys), np.array([found[k] for k in keys])
