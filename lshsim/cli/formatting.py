"""Text shared by the command modules: :class:`Formatter`, :func:`wrap` and :func:`one_line`."""

from __future__ import annotations

import argparse
import textwrap

__all__ = ["Formatter", "one_line", "wrap"]


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


def one_line(text: str) -> str:
    r"""``text`` with every character that is not printable escaped, so it prints on one line.

    A value echoed in an error (a path holding ``\r``, ``\x1e``, ``\x85`` or a newline)
    would otherwise break the message into lines wherever a terminal or ``str.splitlines``
    breaks them.

    Args:
        text: a message.

    Returns:
        The message, its non-printable characters as Python escapes (``\r``, ``\x85``).
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
