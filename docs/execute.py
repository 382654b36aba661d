"""Execute the tutorials and store their outputs: ``python docs/execute.py [NAME ...]``.

Each tutorial's source is a MyST Markdown notebook, ``docs/tutorials/src/NAME.md``. This script
reads it with jupytext, runs it top to bottom in a fresh Python kernel (nbclient, the kernel
of the running interpreter's environment), and writes ``docs/tutorials/NAME.ipynb`` with its
outputs and, in the notebook's metadata under ``lshsim``, the SHA-256 of the source and the
run's seconds. The documentation build renders the stored notebooks and runs nothing;
``tests/docs/test_tutorials.py`` fails when a source's hash differs from its notebook's (the
source changed after its outputs were stored). Each tutorial must finish within
``--timeout`` seconds (default 60: the budget is a minute on 2 idle CPU cores). The
notebook records the seconds and the machine's 1-minute load average during the run, so a run
on a shared machine (load L > 2 gives it about 2/L of the 2 cores) is judged against
60 * L/2 seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

TUTORIALS = Path(__file__).resolve().parent / "tutorials"
SOURCES = TUTORIALS / "src"


def source_hash(path: Path) -> str:
    """The SHA-256 of a tutorial's source file (hex).

    Args:
        path: the ``.md`` source.

    Returns:
        64 hex digits.
    """
    return hashlib.sha256(path.read_bytes()).hexdigest()


def execute(source: Path, timeout: float) -> float:
    """Run one tutorial and store its notebook with outputs.

    Args:
        source: ``docs/tutorials/src/NAME.md``.
        timeout: seconds allowed for the whole notebook.

    Returns:
        The seconds it took.

    Raises:
        RuntimeError: it took longer than ``timeout``.
    """
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    start = time.perf_counter()
    load0 = os.getloadavg()[0]
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(TUTORIALS)}}
    ).execute()
    seconds = time.perf_counter() - start
    if seconds > timeout:
        raise RuntimeError(f"{source.name}: {seconds:.1f} s, over its budget of {timeout} s")
    nb.metadata.pop("jupytext", None)
    nb.metadata["lshsim"] = {
        "source": source.relative_to(TUTORIALS.parent).as_posix(),
        "source_sha256": source_hash(source),
        "seconds": round(seconds, 1),
        "load_average": round(max(load0, os.getloadavg()[0]), 1),
    }
    nbformat.write(nb, TUTORIALS / (source.stem + ".ipynb"))
    return seconds


def main(argv: list[str] | None = None) -> int:
    """Run the tutorials named (default: all) and store their outputs.

    Args:
        argv: tutorial names (``01_routers``) and ``--timeout S``.

    Returns:
        The exit status: 0 when every tutorial ran within its budget.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="tutorials to run (default: all)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per tutorial")
    args = parser.parse_args(argv)
    sources = sorted(SOURCES.glob("*.md"))
    if args.names:
        sources = [s for s in sources if s.stem in args.names]
    for source in sources:
        seconds = execute(source, args.timeout)
        print(f"{source.stem}: {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
