"""The memory studies' runs as launcher jobs: job payloads, the runner, execute and collect.

Each distinct run (:class:`~lshsim.studies.memory.runner.RunSpec`) becomes a
:class:`lshsim.launch.Job` whose run directory is ``OUT/<run key>`` and whose payload is the
spec as JSON; :func:`run_payload` (the jobs' runner, in whichever process runs the job) rebuilds
the spec, checks its key against the directory and calls
:func:`~lshsim.studies.memory.runner.train_one`. :func:`execute` launches the runs the results
JSON lacks (``local``: today's sequential run, the JSON rewritten after every run) and
:func:`collect_runs` fills the JSON from the run directories after a SLURM launch.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import math
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lshsim.launch import Collected, Job, Launcher, LaunchReport, LocalLauncher, collect
from lshsim.launch.rundir import RESULT_FILE
from lshsim.studies.memory import runner
from lshsim.studies.memory.document import check_row, load_doc, save_doc
from lshsim.studies.memory.runner import RunSpec, study_entry, unique_runs
from lshsim.studies.memory.variants import STUDIES, Setup, Variant
from lshsim.t5.configs import T5Config

#: The runner every memory-study job names.
RUNNER = "lshsim.studies.memory.jobs:run_payload"
#: ``lshsim train`` options a study run sets itself (they are hashed into its key).
FIXED = {
    "config",
    "steps",
    "out",
    "corpus",
    "batch",
    "input_length",
    "seed",
    "warmup",
    "eval_every",
    "checkpoint_every",
    "resume",
}
#: Options that would change what is trained without changing the run key.
#: ``--accumulate k > 1`` draws each micro-batch's dropout / jitter key apart (see
#: :func:`lshsim.t5.steps.make_train_step`), so it changes the numbers as well as the memory
CHANGES_RESULT = {"lr", "target_length", "dtype", "tokenizer", "accumulate"}


def cli_flag(dest: str) -> str:
    """``lshsim train``'s spelling of an option's ``dest`` (``K`` -> ``--blocks``)."""
    from lshsim.cli.checks import flag

    return flag(dest)


def _train_parser() -> argparse.ArgumentParser:
    """``lshsim train``'s parser, raising ``ValueError`` instead of exiting."""
    from lshsim.cli.train import add_parsers

    sub = argparse.ArgumentParser().add_subparsers()
    add_parsers(sub)
    parser = sub.choices["train"]

    def error(message: str):
        raise ValueError(f"--train-args: {message}")

    parser.error = error  # type: ignore[method-assign]
    return parser


def parse_train_args(text: str) -> dict[str, Any]:
    """The keyword arguments of :func:`lshsim.t5.loop.train` that ``--train-args`` gives.

    Only options that change how a run executes, not what it computes, may be given (today
    ``--devices`` and ``--keep-checkpoints``; later options of ``lshsim train`` pass through
    when ``train`` takes a keyword of the same name, e.g. mesh options).

    Args:
        text: ``lshsim train`` flags, as one shell-quoted string (may be empty).

    Returns:
        ``{train keyword: value}``.

    Raises:
        ValueError: a flag ``lshsim train`` does not know, a bad value, or a flag the study
            sets, that changes the result, or that ``train`` does not take (one line).
    """
    from lshsim.cli.model_flags import MEMORY_FIELDS
    from lshsim.t5.loop import train

    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"--train-args: {exc}: {text!r}") from None
    if not tokens:
        return {}
    parser = _train_parser()
    base = ["--config", "tiny", "--steps", "1", "--out", "-"]
    defaults = vars(parser.parse_args(base))
    given = {k: v for k, v in vars(parser.parse_args(base + tokens)).items() if v != defaults[k]}
    keywords = inspect.signature(train).parameters
    out = {}
    for dest, value in given.items():
        flag = cli_flag(dest)
        if dest in FIXED or dest in MEMORY_FIELDS:
            raise ValueError(f"--train-args: {flag} is set by the study (it is in the run key)")
        if dest in CHANGES_RESULT:
            raise ValueError(f"--train-args: {flag} changes what is trained, not the run key")
        if dest not in keywords:
            raise ValueError(f"--train-args: {flag} has no effect on a study run")
        out[dest] = value
    if "mesh" in out:
        _check_mesh_form(out["mesh"])
    return out


def _check_mesh_form(text: str) -> None:
    """Refuse a malformed ``--mesh`` now; its device count is checked where the run starts."""
    from lshsim.t5.sharding import parse_mesh

    try:
        parse_mesh(text, device_count=0)  # no mesh has 0 devices: only the form can fail first
    except ValueError as exc:
        if "must equal the" not in str(exc):
            raise ValueError(f"--train-args: {exc}") from None


def spec_payload(spec: RunSpec, train_kwargs: dict[str, Any], train_args: str) -> dict:
    """``spec`` as JSON, with the ``--train-args`` text and its keyword arguments."""
    return {
        "study": spec.study,
        "variant": dataclasses.asdict(spec.variant),
        "config": spec.config.to_dict(),
        "setup": dataclasses.asdict(spec.setup),
        "seed": spec.seed,
        "train_kwargs": train_kwargs,
        "train_args": train_args,
    }


def spec_from_payload(payload: dict[str, Any]) -> RunSpec:
    """The :class:`RunSpec` :func:`spec_payload` wrote (lists back to tuples)."""
    v = payload["variant"]
    variant = Variant(v["label"], tuple(tuple(c) for c in v["changes"]), v["series"])
    s = dict(payload["setup"])
    s["overrides"] = tuple(tuple(o) for o in s["overrides"])
    s["corpus"] = tuple(s["corpus"]) if s["corpus"] else None
    config = T5Config.from_dict(payload["config"])
    return RunSpec(payload["study"], variant, config, Setup(**s), payload["seed"])


def run_payload(payload: dict[str, Any], run_dir: Path, progress: bool = False) -> dict:
    """The jobs' runner: train the run in ``run_dir`` and return its row.

    Raises:
        ValueError: the payload's run key is not the run directory's name.
    """
    spec = spec_from_payload(payload)
    run_dir = Path(run_dir)
    if spec.key != run_dir.name:
        raise ValueError(f"run_dir: {run_dir} holds run {spec.key}, not {run_dir.name}")
    return runner.train_one(
        spec, run_dir.parent, progress=progress, train_kwargs=payload["train_kwargs"]
    )


def make_jobs(specs: Sequence[RunSpec], out: Path, train_args: str = "") -> list[Job]:
    """One job per spec, in ``out/<key>`` (``train_args`` checked by :func:`parse_train_args`)."""
    kwargs = parse_train_args(train_args)
    return [
        Job(
            s.key,
            Path(out) / s.key,
            RUNNER,
            spec_payload(s, kwargs, train_args),
            f"{s.study}: {s.variant.label} seed {s.seed}",
        )
        for s in specs
    ]


def _start(specs_by_study: dict[str, list[RunSpec]], variant: str, json_path: Path):
    """The document with the study entries, and the distinct runs in seed-major order."""
    doc = load_doc(json_path)
    studies = doc["studies"].setdefault(variant, {})
    for name, specs in specs_by_study.items():
        studies[name] = study_entry(name, variant, specs)
    todo = unique_runs([s for v in specs_by_study.values() for s in v])
    # Seed-major order: a run cut short leaves every variant with the same seeds done.
    return doc, sorted(todo, key=lambda s: s.seed)


def execute(
    specs_by_study: dict[str, list[RunSpec]],
    variant: str,
    out: Path,
    json_path: Path,
    *,
    launcher: Launcher | None = None,
    train_args: str = "",
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """:func:`launch_runs`'s document (the arguments are the same)."""
    return launch_runs(
        specs_by_study,
        variant,
        out,
        json_path,
        launcher=launcher,
        train_args=train_args,
        progress=progress,
        log=log,
    )[0]


def launch_runs(
    specs_by_study: dict[str, list[RunSpec]],
    variant: str,
    out: Path,
    json_path: Path,
    *,
    launcher: Launcher | None = None,
    train_args: str = "",
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> tuple[dict[str, Any], LaunchReport]:
    """Launch every run neither in the JSON nor finished in its run directory.

    Rows of finished run directories are taken into the JSON first; the JSON is rewritten
    after every run that finishes here (the local and Dask launchers, and SLURM's ``wait``).

    Args:
        specs_by_study: the runs of each study (:func:`~lshsim.studies.memory.runner.plan`).
        variant: ``smoke`` or ``real``.
        out: the run directories' parent.
        json_path: the results document.
        launcher: how to run them (default: :class:`~lshsim.launch.LocalLauncher`).
        train_args: ``lshsim train`` flags for every run (:func:`parse_train_args`).
        progress: a progress bar per run (default launcher only).
        log: where progress lines go.

    Returns:
        The results document and the launcher's report.
    """
    launcher = launcher or LocalLauncher(progress=progress)
    doc, todo = _start(specs_by_study, variant, json_path)
    pending = [s for s in todo if s.key not in doc["runs"]]
    jobs = make_jobs(pending, out, train_args)
    found = collect(jobs).rows
    doc["runs"].update(found)
    jobs = [j for j in jobs if j.key not in found]
    log(f"{len(todo)} distinct runs, {len(todo) - len(jobs)} already done, {len(jobs)} to do")
    save_doc(json_path, doc, STUDIES)
    finished: list[str] = []

    def on_result(job: Job, row: dict[str, Any]) -> None:
        doc["runs"][job.key] = row
        save_doc(json_path, doc, STUDIES)
        finished.append(job.key)
        h = row["heldout"]
        log(
            f"[{len(finished)}/{len(jobs)}] {job.label} ({job.key}): acc {h['accuracy']:.4f} "
            f"loss {h['loss']:.4f} {row['examples_per_second'] or math.nan:.0f} ex/s "
            f"{row['wall_seconds']:.0f} s"
        )

    result = launcher.launch(jobs, on_result)
    for key, error in result.failed.items():
        log(f"failed: {key}: {error}")
    if result.submitted:
        log(f"submitted {len(result.submitted)} jobs; when they are done, run with --collect")
    if result.skipped:
        log(f"{len(result.skipped)} runs already submitted and not finished: skipped")
    return doc, result


def collect_runs(
    specs_by_study: dict[str, list[RunSpec]],
    variant: str,
    out: Path,
    json_path: Path,
    log: Callable[[str], None] = print,
) -> tuple[dict[str, Any], Collected]:
    """Read the finished runs' rows from their directories into the JSON; name the rest.

    Returns:
        The document (written to ``json_path``) and what was found (``missing`` and
        ``failed`` leave out runs the JSON already holds).
    """
    doc, todo = _start(specs_by_study, variant, json_path)
    pending = [s for s in todo if s.key not in doc["runs"]]
    jobs = make_jobs(pending, out)
    found = collect(jobs)
    for job in jobs:  # a row the summaries cannot read fails its run, naming its file
        try:
            if job.key in found.rows:
                check_row(found.rows[job.key], f"{Path(job.run_dir) / RESULT_FILE}: row")
        except ValueError as exc:
            found.failed[job.key] = str(exc)
            del found.rows[job.key]
    doc["runs"].update(found.rows)
    save_doc(json_path, doc, STUDIES)
    labels = {s.key: f"{s.study}: {s.variant.label} seed {s.seed}" for s in pending}
    log(
        f"{len(todo)} distinct runs: {len(todo) - len(pending)} already in the JSON, "
        f"{len(found.rows)} collected, {len(found.failed)} failed, {len(found.missing)} missing"
    )
    for key, error in found.failed.items():
        log(f"failed: {key} ({labels[key]}): {error}")
    for key in found.missing:
        job = f" (job {found.submitted[key]})" if key in found.submitted else " (not submitted)"
        log(f"missing: {key} ({labels[key]}){job}")
    return doc, found
