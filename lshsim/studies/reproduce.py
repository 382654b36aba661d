"""``lshsim reproduce``: run the theory-vs-experiment studies, check the claims, draw the figures.

Each study of :data:`~lshsim.studies.STUDIES` returns plain data (the schemas of
:mod:`lshsim.plots`), written to ``<out>/<name>.json`` with the run's config and seed; the
figures are drawn from those files, the claims of Theorem 1 are evaluated
(:mod:`lshsim.theorems.claims`), and ``REPORT.md`` (:mod:`lshsim.studies.report`) plus
``results.json`` summarise the run. Every file is written to a temporary name and renamed, so
an interrupted run never leaves a complete-looking file behind. The run manifest
(:mod:`lshsim.studies.manifest`) is marked incomplete before the first file and written last,
with every file's SHA-256, so a folder whose run was interrupted (or whose files were changed
or mixed with another run's) says so: ``lshsim reproduce --verify DIR``. Same seed, same numbers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lshsim import __version__
from lshsim._io import write_atomic
from lshsim.studies import STUDIES, manifest
from lshsim.studies.base import Study
from lshsim.studies.kinds import rules
from lshsim.studies.report import report

__all__ = ["DEFAULT", "QUICK", "STUDIES", "WRITER", "owned", "run", "run_config", "write_study"]

#: The run profiles: the committed run and the smoke run (``--quick``).
DEFAULT = "default"
QUICK = "quick"
#: The writer named in the run manifest.
WRITER = "lshsim reproduce"


def run_config(profile: str, studies: Iterable[Study] | None = None) -> dict[str, Any]:
    """The config a run records: the profile's name and every study's config fields.

    Args:
        profile: ``default`` or ``quick``.
        studies: the studies run (default: all of :data:`~lshsim.studies.STUDIES`).

    Returns:
        ``{"name": profile, field: value, ...}`` (studies sharing a config share its fields).

    Raises:
        ValueError: If the profile is unknown or two studies give a field different values.
    """
    out: dict[str, Any] = {"name": profile}
    for study in STUDIES.values() if studies is None else studies:
        for key, value in asdict(study.config(profile)).items():
            if out.setdefault(key, value) != value:
                raise ValueError(f"config: field {key!r} differs between studies")
    return out


def write_study(out: Path | str, name: str, config: dict, seed: int, data: dict) -> Path:
    """Write ``<out>/<name>.json`` (``{"config", "seed", "data"}``) atomically; return its path."""
    path = Path(out) / f"{name}.json"
    write_atomic(path, json.dumps({"config": config, "seed": seed, "data": data}))
    return path


def owned() -> list[str]:
    """Every file name a run may write (besides the manifest): one per study and format."""
    names = [f"{name}.{ext}" for name in STUDIES for ext in ("json", "png", "svg")]
    return [*names, "results.json", "REPORT.md"]


def _draw(out: Path, progress: Callable[[str], None] | None) -> tuple[list[str], list[Path]]:
    """Draw every study's figure from its JSON file; return the names drawn and files written."""
    from lshsim.plots import save_figure

    drawn, files = [], []
    for name, study in STUDIES.items():
        if progress:
            progress(f"figure {name}")
        data = json.loads((out / f"{name}.json").read_text())["data"]
        files += save_figure(study.figure(data), out / name)
        drawn.append(name)
    return drawn, files


def _compute(
    out: Path, profile: str, config: dict, seed: int, progress: Callable[[str], None] | None
) -> tuple[dict, dict, list[Path]]:
    """Run every study, writing its JSON; return the data and seconds by name, and the files."""
    data, timing, files = {}, {}, []
    for name, study in STUDIES.items():
        if progress:
            progress(name)
        t0 = time.perf_counter()
        data[name] = study(profile, seed)
        timing[name] = time.perf_counter() - t0
        files.append(write_study(out, name, config, seed, data[name]))
    return data, timing, files


def run(
    out: Path | str = "figures",
    *,
    quick: bool = False,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    figures: bool = True,
) -> dict:
    """Run every study, draw the figures, check the claims; return the results dict.

    Before the first study the folder's manifest is replaced by one marked incomplete; the
    complete manifest (:mod:`lshsim.studies.manifest`: seed, profile, config, versions, each
    file's size and SHA-256) is written last.

    Args:
        out: output folder (created).
        quick: the smoke run (profile ``quick``: small studies, each claim's quick check)
            instead of the committed one (full checks).
        seed: the seed of every study.
        progress: called with each step's name (each study, each figure, ``claims``).
        figures: draw the figures.

    Returns:
        What ``results.json`` holds (``lshsim``, ``config``, ``seed``, ``studies``, ``claims``
        (``claims_check``: ``quick`` or ``full``),
        ``holds``, ``versions``: what the numbers were made with, ``kinds``: the
        reproducibility kind of each part, see :mod:`lshsim.studies.kinds`) plus ``timing``
        (seconds per step).
    """
    from lshsim.theorems import claims

    out = Path(out)
    profile = QUICK if quick else DEFAULT
    start = time.perf_counter()
    config = run_config(profile)
    head = manifest.header(WRITER, seed=seed, profile=profile, config=config)
    manifest.start(out, head)
    data, timing, files = _compute(out, profile, config, seed, progress)
    results = {"lshsim": __version__, "config": config, "seed": seed, "studies": data}
    results["claims_check"] = "quick" if quick else "full"
    drawn, figure_files = _draw(out, progress) if figures else ([], [])
    if progress:
        progress("claims")
    t0 = time.perf_counter()
    verdicts = claims.check(quick=quick)  # --quick: each claim's quick check (smaller grid)
    timing["claims"] = time.perf_counter() - t0
    results["claims"] = [v.to_dict() for v in verdicts]
    for c in results["claims"]:
        c.pop("seconds", None)  # timings stay out of the numbers
    results["holds"] = all(v.holds for v in verdicts)
    # now that every study's packages are imported; the commit as the run started (its own
    # files make a checkout's figures/ dirty)
    head["versions"] = manifest.versions(head.get("tree"))
    results["versions"] = head["versions"]
    # what each number promises (lshsim compare): the studies' rules and each claim's
    results["kinds"] = rules(STUDIES.values(), results["claims"])
    seconds = time.perf_counter() - start
    write_atomic(out / "results.json", json.dumps(results, indent=1))
    text = report(verdicts, drawn, profile, seed, seconds, data, STUDIES, run_info=head)
    write_atomic(out / "REPORT.md", text)
    files += [*figure_files, out / "results.json", out / "REPORT.md"]
    manifest.finish(out, head, files, owned())
    results["timing"] = timing
    return results
