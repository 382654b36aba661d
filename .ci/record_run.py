"""Add a CI run (``.ci/last-run.json``, written by ``.ci/run``) to figures/ci_runs.json.

Usage: ``python .ci/record_run.py PATH [--note TEXT]``. The README's stated test-command time
is rendered from the last run of figures/ci_runs.json (``python docs/render_numbers.py
--write``); a run of a commit already recorded replaces it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RUNS = Path(__file__).resolve().parents[1] / "figures" / "ci_runs.json"
FIELDS = ("commit", "date", "seconds", "pytest_seconds", "tests", "skipped", "cpu", "cores")


def main() -> None:
    """Append the run to figures/ci_runs.json (or replace the same commit's run)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help=".ci/last-run.json of a passing fresh-clone run")
    parser.add_argument("--note", default="", help="what was special about the run, if anything")
    args = parser.parse_args()
    run = json.loads(args.run.read_text(encoding="utf-8"))
    missing = [f for f in FIELDS if f not in run]
    if missing:
        raise SystemExit(f"{args.run}: no {', '.join(missing)}: not a .ci/run record")
    if args.note:
        run["note"] = args.note
    doc = json.loads(RUNS.read_text(encoding="utf-8")) if RUNS.exists() else {"runs": []}
    doc["runs"] = [r for r in doc["runs"] if r["commit"] != run["commit"]] + [run]
    RUNS.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{RUNS.name}: {len(doc['runs'])} runs, the last {run['seconds']} s at {run['commit']}")


if __name__ == "__main__":
    main()
