"""Output helpers shared by the commands: an aligned table and a per-step progress bar."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm


def print_rows(rows: Iterable[tuple[str, Any]]) -> None:
    """Print ``(name, value)`` rows as an aligned two-column table.

    Args:
        rows: the ``(name, value)`` pairs, printed in order.
    """
    rows = list(rows)
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


class StepBar:
    """A progress bar (stderr, terminals only) for callbacks that announce each step.

    ``progress(name)`` is called as a step starts; a step counts as done when the next one
    starts, or when the ``with`` block ends.

    Args:
        total: the number of steps.
        desc: the bar's label.
        show: whether to show it at all (it also needs stderr to be a terminal).
    """

    def __init__(self, total: int, desc: str, show: bool):
        self.bar = tqdm(
            total=total,
            desc=desc,
            disable=not (show and sys.stderr.isatty()),
            file=sys.stderr,
            leave=False,
        )
        self.started = False

    def __enter__(self):
        return self

    def __call__(self, step: str) -> None:
        """Start step ``step`` (the previous one, if any, is done)."""
        if self.started:
            self.bar.update()
        self.started = True
        self.bar.set_postfix_str(step)

    def __exit__(self, *exc) -> None:
        if self.started:
            self.bar.update()
        self.bar.close()
