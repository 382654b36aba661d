"""``docs/cli/vocabulary.md``: the vocabulary table with, per option, the commands that have it.

Walks every ``lshsim`` sub-parser and the launcher script's parser (so it imports the whole
command tree; :mod:`lshsim.cli.vocabulary` imports none of it). Run as
``python -m lshsim.cli.vocabulary_doc > docs/cli/vocabulary.md``.
"""

from __future__ import annotations

import argparse
import sys

from lshsim.cli.vocabulary import render_markdown

__all__ = ["option_uses", "page", "parsers"]


def option_uses() -> dict[str, list[str]]:
    """Option -> the commands that have it, walking every ``lshsim`` sub-parser and the launcher.

    Returns:
        Each option's commands, in ``lshsim --help``'s order, ``memory_studies`` last.
    """
    uses: dict[str, list[str]] = {}
    for command, parser in parsers().items():
        for action in parser._actions:
            for opt in action.option_strings:
                if opt.startswith("--") and opt != "--help":
                    uses.setdefault(opt, []).append(command)
    return uses


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every ``lshsim`` command's parser, and ``memory_studies``'s (the launcher script's)."""
    from lshsim.cli.parser import build_parser
    from lshsim.studies.memory.cli import build_parser as studies_parser

    root = build_parser()
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return {**sub.choices, "memory_studies": studies_parser()}


def page() -> str:
    """The text of ``docs/cli/vocabulary.md``, from the table and the parsers as they are."""
    return render_markdown(option_uses())


if __name__ == "__main__":  # pragma: no cover - the docs' generator
    sys.stdout.write(page())
