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
    """The text of ``docs/cli/vocabulary.md``, from the table and the parsers as they are.

    Ends with the exit statuses of every command (:data:`lshsim.cli.errors.EXIT_CODES`).
    """
    from lshsim.cli.errors import EXIT_CODES, TRACEBACK_VARIABLE

    lines = [
        "",
        "## Exit statuses",
        "",
        "Every command (and the launcher script) ends with one of these; an error is one line "
        f"on stderr, and `{TRACEBACK_VARIABLE}=1` in the environment prints its traceback "
        "first, for bug reports.",
        "",
        "| status | meaning |",
        "| --- | --- |",
        *(f"| {code} | {meaning} |" for code, meaning in EXIT_CODES.items()),
    ]
    return render_markdown(option_uses()) + "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - the docs' generator
    sys.stdout.write(page())
