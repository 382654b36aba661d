"""Run manifests: what a multi-file run wrote, so a mixed or unfinished folder says so.

A writer of several files into one folder (``lshsim reproduce``) calls :func:`start` before its
first file: it replaces any manifest of an earlier run by one marked incomplete, so a run that
is interrupted never leaves a folder that looks complete. When every file is written it calls
:func:`finish`, last, which records each file's size and SHA-256. :func:`verify` then says what
is wrong with a folder (an unfinished run, files missing, changed since the run, or left over
from another run), and :func:`summary` gives the one line ``lshsim reproduce --verify`` prints.

``manifest.json`` holds ``format``, ``writer``, ``complete``, ``seed``, ``profile``, ``config``,
``versions`` (Python, the platform and CPU, the imported numerical packages, lshsim and its
git commit when run from a checkout, the lock file the environment matches and its SHA-256),
``files`` (``[{"path", "bytes", "sha256"}]``, paths relative to the folder, in the order
written) and ``owns`` (the glob patterns of every file such a run may write: a
matching file the manifest does not list is left over from another run).
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import importlib.metadata
import json
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from lshsim import __version__
from lshsim._io import read_json, write_atomic

__all__ = ["FORMAT", "MANIFEST", "finish", "header", "load", "start", "summary", "verify"]

#: The manifest's file name inside the run's folder.
MANIFEST = "manifest.json"
#: The manifest's format version.
FORMAT = 1
#: Packages whose versions are recorded when imported: module name -> distribution name.
PACKAGES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "numba": "numba",
    "llvmlite": "llvmlite",
    "matplotlib": "matplotlib",
    "jax": "jax",
    "jaxlib": "jaxlib",
    "flax": "flax",
    "optax": "optax",
    "orbax.checkpoint": "orbax-checkpoint",
}
#: The temporary files of :func:`lshsim._io.write_atomic` (left behind only by a crash).
TEMPORARY = ".*.tmp"


def git_commit() -> str | None:
    """The git commit of the checkout lshsim runs from (``+dirty`` if modified), else None."""
    tree = git_tree()
    return None if tree is None else _commit_label(tree)


def _commit_label(tree: Mapping[str, Any]) -> str:
    """``COMMIT`` or ``COMMIT+dirty`` of a :func:`git_tree` record."""
    return tree["commit"] + ("+dirty" if tree["dirty"] else "")


def git_tree() -> dict[str, Any] | None:
    """The checkout lshsim runs from: ``{"commit", "dirty", "modified"}``, else None.

    ``dirty``: tracked files differ from the commit (``git status --porcelain``, untracked
    files left out); ``modified``: those files' paths (at most 50). A run from a dirty tree
    did not run the code of its commit: ``lshsim reproduce`` says so in the manifest and in
    ``REPORT.md``.
    """
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        git = ["git", "-C", str(root)]
        head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, timeout=10)
        if head.returncode:
            return None
        status = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = status.stdout.decode().splitlines() if status.returncode == 0 else []
    modified = [line[3:] for line in lines if line.strip()]
    return {
        "commit": head.stdout.decode().strip(),
        "dirty": bool(modified),
        "modified": modified[:50],
    }


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``), else :func:`platform.processor`."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def versions(tree: Mapping[str, Any] | None = None) -> dict[str, str]:
    """What a run's numbers were made with (flat ``{name: version}``).

    Python, the platform and CPU, lshsim (and its git commit, when known), every imported
    :data:`PACKAGES`, and the lock file the environment matches with its SHA-256
    (:func:`lshsim.studies.locks.lock_record`).

    Args:
        tree: the checkout as :func:`git_tree` saw it when the run started (default: look
            now). A run that writes into a tracked folder (``reproduce`` into ``figures/``)
            makes the checkout dirty itself: its commit is the one it started from.
    """
    from lshsim.studies.locks import lock_record

    out = {"python": platform.python_version(), "platform": platform.platform()}
    out["cpu"] = cpu_model()
    out["lshsim"] = __version__
    commit = git_commit() if tree is None else _commit_label(tree)
    if commit:
        out["lshsim_git"] = commit
    for module, dist in PACKAGES.items():
        if module in sys.modules:
            try:
                out[dist] = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                out[dist] = str(getattr(sys.modules[module], "__version__", "unknown"))
    return {**out, **lock_record()}


def header(writer: str, *, seed: int, profile: str, config: Mapping[str, Any]) -> dict:
    """What a run's manifest records besides its files (call it once the run's imports ran).

    Args:
        writer: the command that writes the folder, e.g. ``lshsim reproduce``.
        seed: the run's seed.
        profile: the run profile (``default`` or ``quick``).
        config: the run's config (plain JSON data).

    Returns:
        ``{"format", "writer", "seed", "profile", "config", "versions"}``, and ``"tree"``
        (:func:`git_tree`: the commit, whether the checkout was dirty, its modified files)
        when run from a git checkout.
    """
    tree = git_tree()
    out = {
        "format": FORMAT,
        "writer": writer,
        "seed": seed,
        "profile": profile,
        "config": dict(config),
        "versions": versions(tree),
    }
    if tree is not None:
        out["tree"] = tree
    return out


def start(folder: str | Path, head: Mapping[str, Any]) -> None:
    """Mark ``folder`` as holding an unfinished run, before the run writes any file.

    Replaces any earlier manifest (atomically) by ``head`` with ``complete: false`` and no
    files, so until :func:`finish` runs the folder reads as incomplete. Creates the folder.
    """
    doc = {**head, "complete": False, "files": [], "owns": []}
    write_atomic(Path(folder) / MANIFEST, json.dumps(doc, indent=1) + "\n")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def finish(
    folder: str | Path, head: Mapping[str, Any], files: Iterable[str | Path], owns: Iterable[str]
) -> dict:
    """Write the complete manifest of the run, last: each file's size and SHA-256.

    Args:
        folder: the run's folder.
        head: what :func:`header` returned (the same as given to :func:`start`).
        files: the files the run wrote, in order (inside ``folder``; repeats are dropped).
        owns: glob patterns (relative to ``folder``) of every file such a run may write.

    Returns:
        The manifest written.
    """
    folder = Path(folder)
    entries, seen = [], set()
    for f in files:
        rel = Path(f).resolve().relative_to(folder.resolve()).as_posix()
        if rel not in seen:
            seen.add(rel)
            path = folder / rel
            entries.append({"path": rel, "bytes": path.stat().st_size, "sha256": _sha256(path)})
    doc = {**head, "complete": True, "files": entries, "owns": sorted(set(owns))}
    write_atomic(folder / MANIFEST, json.dumps(doc, indent=1) + "\n")
    return doc


def load(folder: str | Path) -> dict | None:
    """The manifest of ``folder`` (None if it has none).

    Raises:
        ValueError: If ``folder`` is not a folder, or its manifest is not a readable manifest
            (``files`` a list, ``owns`` a list of relative glob patterns).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder: {folder} is not a folder")
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        doc = read_json(path, where=MANIFEST, expect=None)
    except ValueError as exc:
        why = str(exc).removeprefix(f"{MANIFEST}: ")
        raise ValueError(f"{MANIFEST} is unreadable ({why})") from None
    keys = {"complete", "files", "owns", "seed", "profile"}
    if (
        not isinstance(doc, dict)
        or not keys <= set(doc)
        or not isinstance(doc["files"], list)
        or not isinstance(doc["owns"], list)
        or not all(_is_pattern(p) for p in doc["owns"])
    ):
        raise ValueError(f"{MANIFEST} is not a run manifest (it lacks {sorted(keys)})")
    return doc


def _is_pattern(pattern: Any) -> bool:
    """Whether ``pattern`` is a glob pattern of files inside a folder."""
    if not isinstance(pattern, str) or not pattern.isprintable():
        return False
    parts = PurePosixPath(pattern).parts  # "" and "." have none (glob refuses or fails)
    return bool(parts) and not PurePosixPath(pattern).is_absolute() and ".." not in parts


def _flat(value: Any) -> str:
    """``value`` as one short line (a manifest's or study file's field, in a problem line)."""
    return " ".join(str(value).split())[:80]


def _runs_seen(folder: Path) -> dict[str, list[str]]:
    """``"seed S, P" -> [file, ...]`` over the folder's JSON files that record a seed."""
    runs: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.json")):
        if path.name == MANIFEST:
            continue
        try:
            doc = read_json(path)
            run = f"seed {_flat(doc['seed'])}, {_flat(doc['config']['name'])}"
        except (ValueError, KeyError, TypeError):
            continue
        runs.setdefault(run, []).append(path.name)
    return runs


def _study_files(folder: Path) -> list[str]:
    """Glob patterns of the folder's study files of any run, with their figures.

    A study file is a JSON recording a seed and a config (``lshsim reproduce``'s study files
    and ``results.json``); its figures share its name.
    """
    names = [name for run in _runs_seen(folder).values() for name in run]
    return [
        glob.escape(n[: -len(".json")]) + ext for n in names for ext in (".json", ".png", ".svg")
    ]


def _mixed(folder: Path) -> list[str]:
    """One problem line if the folder's study files come from more than one run."""
    runs = _runs_seen(folder)
    if len(runs) < 2:
        return []
    parts = []
    for run, names in runs.items():
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        parts.append(f"{run} ({', '.join(names[:3])}{more})")
    return ["files of different runs: " + "; ".join(parts)]


def _check_file(folder: Path, entry: Any) -> str | None:
    """What is wrong with one listed file (None: it is there, unchanged)."""
    try:
        rel = PurePosixPath(entry["path"])
        size, digest = int(entry["bytes"]), str(entry["sha256"])
        if not entry["path"].isprintable() or not entry["path"].strip():
            raise ValueError
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError):
        return f"{MANIFEST} has a malformed entry {entry!r:.80}"
    if rel.is_absolute() or ".." in rel.parts:
        return f"{MANIFEST} lists {rel}, outside the folder"
    path = folder / rel
    if not path.is_file():
        return f"{rel} is missing"
    if path.stat().st_size != size or _sha256(path) != digest:
        return f"{rel} changed since the run"
    return None


def verify(folder: str | Path) -> list[str]:
    """What is wrong with the run in ``folder``; an empty list when it is complete and intact.

    Problems: no manifest, or an unfinished run's (an interrupted run), with a note when the
    folder's study files come from different runs; a listed file missing or changed since the
    run; a file the run does not list that it could have written (its ``owns`` patterns) or
    that is another run's study file or figure (left over); a temporary file left by a crash;
    an unreadable manifest.

    Raises:
        ValueError: If ``folder`` is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder: {folder} is not a folder")
    try:
        doc = load(folder)
    except ValueError as exc:
        return [str(exc)]
    if doc is None:
        return [f"incomplete: no {MANIFEST} (an interrupted run?)", *_mixed(folder)]
    if doc["complete"] is not True:
        return [
            f"incomplete: the run of seed {_flat(doc['seed'])} ({_flat(doc['profile'])}) did "
            "not finish (interrupted?)",
            *_mixed(folder),
        ]
    problems = [p for p in (_check_file(folder, e) for e in doc["files"]) if p]
    listed = {str(e.get("path")) for e in doc["files"] if isinstance(e, dict)}
    extra = {
        p.relative_to(folder).as_posix()
        for pattern in [*doc["owns"], TEMPORARY, *_study_files(folder)]
        for p in folder.glob(pattern)
        if p.is_file()
    }
    extra -= listed | {MANIFEST}
    for rel in sorted(extra):
        if fnmatch.fnmatch(PurePosixPath(rel).name, TEMPORARY):
            problems.append(f"{rel} is a temporary file left by an interrupted write")
        else:
            problems.append(f"{rel} is not from this run (left over from another?)")
    return problems


def summary(folder: str | Path) -> tuple[bool, list[str]]:
    """The lines ``lshsim reproduce --verify`` prints for ``folder``, and whether it is intact.

    Returns:
        ``(True, ["FOLDER: complete (seed S, PROFILE, N files)"])``, or ``(False, lines)`` with
        one ``"FOLDER: problem"`` line per problem of :func:`verify`.

    Raises:
        ValueError: If ``folder`` is not a folder.
    """
    problems = verify(folder)
    if problems:
        return False, [f"{folder}: {p}" for p in problems]
    doc = load(folder) or {}
    n = len(doc["files"])
    seed, profile = _flat(doc["seed"]), _flat(doc["profile"])
    return True, [f"{folder}: complete (seed {seed}, {profile}, {n} files)"]
