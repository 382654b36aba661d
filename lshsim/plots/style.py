"""The figures' shared style: colours, figure and axis helpers, and checked access to the data.

Colours are consistent across figures: the overlap ``f`` always maps to the same colour of a
truncated viridis map over ``f`` in [0.1, 0.9] (:func:`f_color`), and categories (families,
dimensions, layers) take the colour-blind-safe :data:`CATEGORY_COLORS` in order. A figure that
styles families by name keeps one table keyed by the family *classes* and reads it with
:func:`family_style`, which names an unknown or unstyled family. The data helpers raise
:class:`KeyError` naming a missing key and the figure, and :class:`ValueError` for malformed
values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import Colormap, ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

#: Overlap range that the sequential colour map spans.
F_NORM = Normalize(vmin=0.1, vmax=0.9)
#: Viridis without its pale-yellow end, which is hard to see on white.
F_CMAP: Colormap = ListedColormap(colormaps["viridis"](np.linspace(0.0, 0.88, 256)), "viridis_f")
#: Smallest probability drawn on log axes; smaller values (and zeros) are clipped or dropped.
Y_FLOOR = 1e-6
#: Qualitative colours for families and other categories (Okabe-Ito, colour-blind safe).
CATEGORY_COLORS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#D55E00",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
#: Font size of legends.
LEGEND_FONT = "small"

_T = TypeVar("_T")


def family_style(table: Mapping[type, _T], family: str, figure: str) -> _T:
    """A family's entry in a figure's style table, which is keyed by family class.

    Args:
        table: ``{family class: style}`` (:class:`lshsim.hashing.HashFamily` subclasses).
        family: a registered family name (a key of :data:`lshsim.hashing.FAMILIES`).
        figure: the figure's name, for the error.

    Raises:
        ValueError: ``family`` is not registered, or the figure has no style for its class.
    """
    from lshsim.hashing import FAMILIES

    cls = FAMILIES.get(family) if isinstance(family, str) else None
    if cls is None or cls not in table:
        styled = ", ".join(getattr(c, "name", repr(c)) for c in table)
        raise ValueError(
            f"{figure}: no style for family {family!r} (styled: {styled}); add its class "
            "to the figure's style table"
        )
    return table[cls]


def f_color(f: float | str) -> tuple[float, float, float, float]:
    """Return the RGBA colour of overlap ``f`` (shared by every figure).

    Args:
        f: Overlap in [0, 1], as a number or a string key such as ``"0.3"``.

    Returns:
        The RGBA tuple of ``f`` in the truncated viridis map over [0.1, 0.9].
    """
    return F_CMAP(F_NORM(float(f)))


def get_key(data: Mapping[str, Any], key: str, where: str) -> Any:
    """Return ``data[key]`` or raise a ``KeyError`` that names the key and where it was expected."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {type(data).__name__}")
    try:
        return data[key]
    except KeyError:
        raise KeyError(f"{where}: missing key {key!r}") from None


def as_array(values: Any, where: str) -> np.ndarray:
    """Return ``values`` as a 1-D float array, or raise ``ValueError`` naming ``where``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: expected a list of numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{where}: expected a 1-D list, got shape {arr.shape}")
    return arr


def same_length(where: str, **arrays: np.ndarray) -> None:
    """Raise ``ValueError`` unless all ``arrays`` have the same length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{where}: lists must have equal lengths, got {lengths}")


def pow2_label(k: float, _pos: Any = None) -> str:
    """Format an exponent ``k`` as the mathtext label ``2^k``."""
    return rf"$2^{{{round(k)}}}$"


def pow2_exponents(lo: float, hi: float, max_ticks: int = 7) -> list[int]:
    """Return integer exponents in ``[lo, hi]`` with an even stride, at most ``max_ticks``."""
    k_lo, k_hi = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
    if k_hi < k_lo:
        return [round(lo)]
    step = max(1, math.ceil((k_hi - k_lo + 1) / max_ticks))
    start = k_lo + (-k_lo) % step  # prefer multiples of the stride
    ks = list(range(start, k_hi + 1, step))
    return ks or [k_lo]


def log2_xaxis(ax: Any, n_values: Sequence[float]) -> None:
    """Put ``ax``'s x axis on a base-2 log scale with ``2^k`` tick labels spanning ``n_values``."""
    ax.set_xscale("log", base=2)
    n = np.asarray([v for v in n_values if v > 0], dtype=float)
    if n.size == 0:
        return
    ks = pow2_exponents(math.log2(n.min()), math.log2(n.max()))
    ax.xaxis.set_major_locator(FixedLocator([2.0**k for k in ks]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p: pow2_label(math.log2(x))))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def positive(y: np.ndarray, floor: float = Y_FLOOR) -> np.ndarray:
    """Return ``y`` with values below ``floor`` (zeros, negatives) replaced by NaN."""
    y = y.astype(float, copy=True)
    y[~(y >= floor)] = np.nan
    return y


def marker_handle(label: str) -> Line2D:
    """Legend entry for Monte-Carlo points: an open grey circle."""
    return Line2D([], [], color="0.25", ls="none", marker="o", ms=4, mfc="white", label=label)


def new_figure(width: float, height: float) -> Figure:
    """Return an empty constrained-layout figure of the given size in inches."""
    return Figure(figsize=(width, height), layout="constrained")
