"""Saving figures: every format written atomically, reproducibly (no dates, fixed SVG ids)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from lshsim._io import write_atomic

#: Resolution of saved PNG files.
PNG_DPI = 150


def save_figure(fig: Figure, stem: Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write ``fig`` to ``stem.<fmt>`` for each format, atomically.

    Each file is rendered in memory and written with :func:`lshsim._io.write_atomic` (a
    temporary file in the target directory, then a rename), so readers never see a partial
    figure. PNG files are written at :data:`PNG_DPI`; SVG output carries no date and a fixed id
    salt, so it is reproducible.

    Args:
        fig: The figure to save.
        stem: Output path without extension (any suffix in the name is kept, e.g. ``fig.v1``).
            Missing parent directories are created.
        formats: File formats (extensions) supported by matplotlib, e.g. ``("png", "svg")``.

    Returns:
        The written paths, in the order of ``formats``.

    Raises:
        ValueError: If a format is not supported.
    """
    stem = Path(stem)
    supported = fig.canvas.get_supported_filetypes()
    for fmt in formats:
        if fmt not in supported:
            raise ValueError(f"format {fmt!r} is not supported; choose from {sorted(supported)}")
    written = []
    for fmt in formats:
        target = stem.parent / f"{stem.name}.{fmt}"
        kwargs: dict[str, Any] = {"format": fmt}
        if fmt == "png":
            kwargs["dpi"] = PNG_DPI
        elif fmt == "svg":
            kwargs["metadata"] = {"Date": None}
        buffer = io.BytesIO()
        # a fixed salt makes the SVG element ids, hence the files, identical run to run
        with matplotlib.rc_context({"svg.hashsalt": "lshsim"}):
            fig.savefig(buffer, **kwargs)
        write_atomic(target, buffer.getvalue())
        written.append(target)
    return written
