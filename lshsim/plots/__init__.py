"""Figures: plain data in, :class:`matplotlib.figure.Figure` out.

Every ``plot_*`` function takes the already-loaded JSON payload of one study (dicts and lists,
overlap keys as strings such as ``"0.1"``) and returns a new figure. Figures are built with
:class:`matplotlib.figure.Figure` directly, so nothing touches pyplot's global state and the
package works under any backend (Agg included). A missing key raises :class:`KeyError` naming the
key and the figure; malformed values raise :class:`ValueError`.

One module per study group, on a shared style (:mod:`lshsim.plots.style`: colours, figure and
axis helpers) and one saver (:func:`save_figure`, every format written atomically):
:mod:`~lshsim.plots.collision` (collision against ``n``, ``rho`` against ``f``),
:mod:`~lshsim.plots.ordering`, :mod:`~lshsim.plots.sentences` (cosine, Token-ID against min-hash),
:mod:`~lshsim.plots.probe` (the routing probe), :mod:`~lshsim.plots.theorem2` and
:mod:`~lshsim.plots.memory` (the memory studies). Which figure draws which study is recorded in
the study registry, :data:`lshsim.studies.STUDIES`.

Example:
    >>> fig = plot_rho_vs_f(data)  # doctest: +SKIP
    >>> save_figure(fig, Path("figures/rho_vs_f"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from matplotlib.figure import Figure

from lshsim.plots.collision import plot_collision_vs_n, plot_rho_vs_f
from lshsim.plots.ordering import plot_ordering_map
from lshsim.plots.save import PNG_DPI, save_figure
from lshsim.plots.sentences import plot_sentence_cosine, plot_tokenid_vs_minhash
from lshsim.plots.style import CATEGORY_COLORS, F_CMAP, F_NORM, Y_FLOOR, f_color

__all__ = [
    "CATEGORY_COLORS",
    "FIGURES",
    "F_CMAP",
    "F_NORM",
    "PNG_DPI",
    "Y_FLOOR",
    "f_color",
    "plot_collision_vs_n",
    "plot_ordering_map",
    "plot_rho_vs_f",
    "plot_sentence_cosine",
    "plot_tokenid_vs_minhash",
    "save_figure",
]

#: The figure functions of the theory studies by study name (the figures of every study,
#: these and the model studies', are the ``figure`` fields of :data:`lshsim.studies.STUDIES`).
FIGURES: dict[str, Callable[[Mapping[str, Any]], Figure]] = {
    "collision_vs_n": plot_collision_vs_n,
    "rho_vs_f": plot_rho_vs_f,
    "ordering_map": plot_ordering_map,
    "sentence_cosine": plot_sentence_cosine,
    "tokenid_vs_minhash": plot_tokenid_vs_minhash,
}
