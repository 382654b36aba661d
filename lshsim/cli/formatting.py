"""The help formatting shared by the command modules: :class:`Formatter` and :func:`wrap`."""

from __future__ import annotations

import argparse
import textwrap

__all__ = ["Formatter", "wrap"]


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description and epilog as written (wrapped by :func:`wrap`); wraps help."""


def wrap(text: str) -> str:
    """Wrap a command's description at 88 columns (for :class:`Formatter`).

    Args:
        text: one paragraph.

    Returns:
        The paragraph, wrapped.
    """
    return textwrap.fill(text, 88)
