"""The documentation site builds with every warning an error (the README's test command).

The build runs here, as one of the suite's slow tests, rather than before pytest: alone it
kept one of the two cores idle for its 44 s (Sphinx reads and writes the pages in one
process; ``-j auto`` saved 5 s of them), while a pytest-xdist worker runs it beside the
other tests.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import needs
from tests.docs.examples import ROOT

#: The build, as docs/guide/install.md gives it (``-q``: only warnings and errors printed),
#: with ``-E``: every page read again, so that an earlier build's saved environment cannot
#: hide an unchanged page's warning (a fresh clone has none).
BUILD = ["-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html", "docs", "docs/_build/html"]


@pytest.mark.slow
@needs("sphinx", "myst_nb", "furo")
def test_the_docs_build_with_warnings_as_errors():
    """``sphinx-build -W --keep-going -b html docs docs/_build/html`` exits 0 and prints no
    warning, and writes the site's front page and every guide page."""
    proc = subprocess.run(
        [sys.executable, *BUILD], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-4000:]
    html = ROOT / "docs" / "_build" / "html"
    assert (html / "index.html").stat().st_size > 0
    for page in sorted((ROOT / "docs" / "guide").glob("*.md")):
        assert (html / "guide" / f"{page.stem}.html").stat().st_size > 0, page.name
