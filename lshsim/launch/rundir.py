"""Run directories: one folder per training run, holding its job, its files and its result.

A launcher never runs a study's code itself: it writes ``job.json`` into the run's folder and
has a worker (this process, a Dask worker, a SLURM job) call :func:`execute_job` on the folder.
``job.json`` names the study's runner (``"module:function"``) and the payload it takes; the
runner trains in the folder (its config, metrics and checkpoints go there) and returns the
run's row, which :func:`execute_job` writes as ``result.json``, atomically and last. Files:

``job.json``        the job (:class:`Job`), written before the run is handed out
``result.json``     the row; the run is *finished* when it holds the job's key
``failed.json``     the last attempt's error (one line and the traceback), removed on a retry
``submitted.json``  the scheduler's job id (:mod:`lshsim.launch.slurm`)

A finished run is never run again (:func:`execute_job` returns its row), a failed or killed one
starts again (training resumes from its last checkpoint), and :func:`collect` reads the rows of
the finished runs and names the failed and the missing ones.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lshsim._io import json_field, json_type, read_json, write_atomic

#: Version tag of ``job.json`` and ``result.json``.
FORMAT = "lshsim-job-1"
JOB_FILE = "job.json"
RESULT_FILE = "result.json"
FAILED_FILE = "failed.json"
SUBMITTED_FILE = "submitted.json"


@dataclasses.dataclass(frozen=True)
class Job:
    """One run handed to a launcher.

    Attributes:
        key: the run's identity (a study's run key); the run directory's name.
        run_dir: the run directory (on a file system the workers share).
        runner: ``"module:function"``; called as ``function(payload, run_dir, progress=...)``,
            it does the run in ``run_dir`` and returns the row (JSON-serialisable).
        payload: everything the runner needs (JSON-serialisable).
        label: what logs call the run.
    """

    key: str
    run_dir: Path
    runner: str
    payload: dict[str, Any]
    label: str = ""


@dataclasses.dataclass
class Collected:
    """What :func:`collect` found in the run directories.

    Attributes:
        rows: key -> row of every finished run.
        failed: key -> the one-line error of runs whose last attempt failed.
        missing: keys of runs neither finished nor failed (not started, running or killed).
        submitted: key -> scheduler job id, where a launcher recorded one.
    """

    rows: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    failed: dict[str, str] = dataclasses.field(default_factory=dict)
    missing: list[str] = dataclasses.field(default_factory=list)
    submitted: dict[str, str] = dataclasses.field(default_factory=dict)


def _read_json(path: Path, strict: bool = False) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when the file is absent (or, lenient, damaged).

    Args:
        path: a run directory's file.
        strict: a file that is there but unreadable, truncated, nested too deeply or not one of
            ours is an error naming it (``--collect``); else it reads as absent (a run whose
            result is damaged runs again).

    Raises:
        ValueError: with ``strict``, one line naming ``path`` and what is wrong with it.
    """
    if not path.exists() and not path.is_symlink():
        return None
    try:
        doc = read_json(path, expect=None)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError(f"{path}: not a run file of lshsim's launcher (format {FORMAT!r})")
    except ValueError:
        if strict:
            raise
        return None
    return doc


def write_job(job: Job) -> None:
    """Write ``job.json`` into the job's run directory (created), atomically."""
    doc = {
        "format": FORMAT,
        "key": job.key,
        "runner": job.runner,
        "label": job.label,
        "payload": job.payload,
    }
    write_atomic(Path(job.run_dir) / JOB_FILE, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def read_job(run_dir: str | Path) -> Job:
    """The job recorded in ``run_dir``.

    Raises:
        ValueError: ``run_dir`` holds no ``job.json``, or one that is damaged (naming it and
            the field: ``key``, ``runner`` and ``label`` are strings, ``payload`` an object).
    """
    run_dir = Path(run_dir)
    path = run_dir / JOB_FILE
    doc = _read_json(path, strict=True)
    if doc is None:
        raise ValueError(f"run_dir: {run_dir} holds no {JOB_FILE} of format {FORMAT}")
    key = json_field(doc, "key", "string", str(path))
    if not key:
        raise ValueError(f"{path}: field 'key' is empty")
    runner = json_field(doc, "runner", "string", str(path))
    payload = json_field(doc, "payload", "object", str(path))
    label = json_field(doc, "label", "string", str(path), optional=True) or ""
    return Job(key, run_dir, runner, payload, label)


def _field(doc: dict | None, path: Path, name: str, strict: bool):
    """``doc[name]``; a missing field is damage (an error with ``strict``, else None)."""
    if doc is None:
        return None
    if name not in doc:
        if strict:
            raise ValueError(f"{path}: has no {name!r} (damaged or written by something else)")
        return None
    return doc[name]


def read_result(run_dir: str | Path, key: str, strict: bool = False) -> dict[str, Any] | None:
    """The row of the finished run ``key`` in ``run_dir``, or None if it is not finished.

    Raises:
        ValueError: with ``strict``, a ``result.json`` that is there but damaged (named).
    """
    path = Path(run_dir) / RESULT_FILE
    doc = _read_json(path, strict)
    if doc is not None and strict and not isinstance(doc.get("key"), str):
        raise ValueError(f"{path}: has no run key (damaged or written by something else)")
    if doc is None or doc.get("key") != key:
        return None
    row = _field(doc, path, "row", strict)
    if row is not None and not isinstance(row, dict):
        if strict:
            raise ValueError(f"{path}: its 'row' is not a JSON object")
        return None
    return row


def read_failure(run_dir: str | Path, strict: bool = False) -> str | None:
    """The one-line error of the run's last failed attempt, or None.

    Raises:
        ValueError: with ``strict``, a ``failed.json`` that is there but damaged (named).
    """
    path = Path(run_dir) / FAILED_FILE
    error = _field(_read_json(path, strict), path, "error", strict)
    if error is not None and not isinstance(error, str):
        if strict:
            raise ValueError(f"{path}: its 'error' is {json_type(error)}, not a string")
        return None
    return None if error is None else " ".join(error.split()) or f"{path}: an empty 'error'"


def read_submission(run_dir: str | Path, strict: bool = False) -> str | None:
    """The scheduler job id a launcher recorded for the run, or None.

    Raises:
        ValueError: with ``strict``, a ``submitted.json`` that is there but damaged (named).
    """
    path = Path(run_dir) / SUBMITTED_FILE
    job_id = _field(_read_json(path, strict), path, "job_id", strict)
    if isinstance(job_id, bool) or not isinstance(job_id, str | int | type(None)):
        if strict:
            raise ValueError(f"{path}: its 'job_id' is {json_type(job_id)}, not an id")
        return None
    if isinstance(job_id, str) and not job_id.isprintable():
        if strict:
            raise ValueError(f"{path}: its 'job_id' {job_id!r:.40} is not printable")
        return None
    return None if job_id is None else str(job_id)


def one_line(exc: BaseException) -> str:
    """``Type: message`` of an exception, on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _runner(name: str):
    """The function that ``"module:function"`` names."""
    module, _, attr = name.partition(":")
    if not module or not attr:
        raise ValueError(f"runner: {name!r} is not of the form 'module:function'")
    return getattr(importlib.import_module(module), attr)


def execute_job(run_dir: str | Path, progress: bool = False, primary: bool = True) -> dict:
    """Run the job in ``run_dir`` (unless finished) and return its row.

    This is what every launcher hands to its workers. A finished run returns its recorded
    row. Otherwise ``failed.json`` is removed, the runner is called, and its row is written to
    ``result.json`` (atomically); if the runner raises, ``failed.json`` records the error and
    the exception propagates.

    Args:
        run_dir: a run directory holding ``job.json``.
        progress: passed to the runner (a progress bar per run).
        primary: whether this process writes the files (process 0 of a multi-host run).

    Returns:
        The row, as ``result.json`` holds it (a JSON round trip of the runner's).

    Raises:
        ValueError: ``run_dir`` holds no job.
    """
    job = read_job(run_dir)
    run_dir = job.run_dir
    done = read_result(run_dir, job.key)
    if done is not None:
        return done
    if primary:
        (run_dir / FAILED_FILE).unlink(missing_ok=True)
    try:
        row = _runner(job.runner)(job.payload, run_dir, progress=progress)
    except Exception as exc:
        if primary:
            failure = {
                "format": FORMAT,
                "key": job.key,
                "error": one_line(exc),
                "traceback": traceback.format_exc(),
            }
            write_atomic(run_dir / FAILED_FILE, json.dumps(failure, indent=1) + "\n")
        raise
    text = json.dumps({"format": FORMAT, "key": job.key, "row": row}, sort_keys=True)
    if primary:
        write_atomic(run_dir / RESULT_FILE, text + "\n")
    return json.loads(text)["row"]


def collect(jobs: Sequence[Job]) -> Collected:
    """Read the run directories of ``jobs``: rows of the finished runs, the failed, the missing.

    Args:
        jobs: the runs to look for (their ``run_dir`` and ``key``; nothing else is read).

    Returns:
        A :class:`Collected`, keys in the order of ``jobs``. A run whose directory is a file,
        or whose ``result.json`` (or ``failed.json``, ``submitted.json``) is there but
        unreadable, truncated, not an object or missing its fields, is ``failed`` with one line
        naming the file: never "missing" (not submitted), never a traceback.
    """
    out = Collected()
    for job in jobs:
        run_dir = Path(job.run_dir)
        if run_dir.exists() and not run_dir.is_dir():
            out.failed[job.key] = f"{run_dir}: a file, not a run directory"
            continue
        try:  # a damaged file is a failed run named by its file, not "not submitted"
            row = read_result(run_dir, job.key, strict=True)
            job_id = read_submission(run_dir, strict=True)
            error = None if row is not None else read_failure(run_dir, strict=True)
        except ValueError as exc:
            out.failed[job.key] = str(exc)
            continue
        if job_id is not None:
            out.submitted[job.key] = job_id
        if row is not None:
            out.rows[job.key] = row
        elif error is not None:
            out.failed[job.key] = error
        else:
            out.missing.append(job.key)
    return out
