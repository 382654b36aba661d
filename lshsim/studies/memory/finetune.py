"""Pretrain -> fine-tune chains of the memory studies: one launcher job per variant and seed.

The paper reports each memory variant's pretraining accuracy and its fine-tuned GLUE,
SuperGLUE and SQuAD scores. A chain job (:func:`chain_jobs`) holds a study run's pretraining
job and a fine-tuning setup; its runner (:func:`run_chain`, in whichever process the launcher
uses) first runs the pretraining job in its own directory through
:func:`lshsim.launch.rundir.execute_job` (a finished one is not run again: its row is read back;
a killed one resumes), then fine-tunes from it (:func:`lshsim.t5.finetune.run.finetune`,
resuming a killed fine-tuning run) in ``OUT/<pretrain key>-ft-<task>-<hash>`` and returns the
row: the pretraining row's held-out accuracy beside the fine-tuned dev metrics. So the chain
is one job for every launcher (local, Dask, SLURM), and a pretraining run the studies already
did is reused. The rows go to their own JSON (:func:`finetune_json`), next to ``--json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lshsim._io import json_field, json_type, read_json, write_atomic
from lshsim.launch import Job

__all__ = ["FinetuneSetup", "chain_jobs", "finetune_json", "format_chain", "run_chain"]

#: The runner every chain job names.
RUNNER = "lshsim.studies.memory.finetune:run_chain"
#: Version tag of the fine-tuning results JSON.
FORMAT = "lshsim-memory-finetune-1"


@dataclasses.dataclass(frozen=True)
class FinetuneSetup:
    """What each chain fine-tunes: the task (or mixture), its data and the step options.

    The defaults are the paper's (batch 256, learning rate 1e-3, dropout 0.1); ``steps`` is
    50,000 in the paper.
    """

    task: str
    data: str
    steps: int
    batch_size: int = 256
    learning_rate: float = 1e-3
    dropout: float = 0.1
    eval_every: int | None = None

    def options(self) -> dict[str, Any]:
        """The setup as JSON."""
        return dataclasses.asdict(self)

    def key(self) -> str:
        """``ft-<task>-<8 hex digits of the options' hash>``."""
        text = json.dumps(self.options(), sort_keys=True)
        return f"ft-{self.task}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def chain_jobs(pretrain: Sequence[Job], setup: FinetuneSetup) -> list[Job]:
    """One chain job per pretraining job, its directory beside the pretraining run's."""
    out = []
    for job in pretrain:
        key = f"{job.key}-{setup.key()}"
        payload = {
            "pretrain": {
                "key": job.key,
                "run_dir": str(job.run_dir),
                "runner": job.runner,
                "payload": job.payload,
                "label": job.label,
            },
            "finetune": setup.options(),
        }
        label = f"{job.label} -> finetune {setup.task}"
        out.append(Job(key, Path(job.run_dir).parent / key, RUNNER, payload, label))
    return out


def run_chain(payload: dict[str, Any], run_dir: Path, progress: bool = False) -> dict:
    """The chain's runner: the pretraining job (run, resumed or read back), then fine-tuning.

    Returns:
        The row: ``key``, ``pretrain_key``, ``label``, ``pretrain`` (the pretraining row's
        ``heldout`` evaluation), ``finetune`` (the setup), ``step``, ``dev`` and ``averages``.
    """
    from lshsim.launch.rundir import JOB_FILE, execute_job, write_job
    from lshsim.t5 import checkpoint as ckpt
    from lshsim.t5.finetune.run import finetune

    p = payload["pretrain"]
    pre = Job(p["key"], Path(p["run_dir"]), p["runner"], p["payload"], p["label"])
    if not (pre.run_dir / JOB_FILE).is_file():
        write_job(pre)
    pre_row = execute_job(pre.run_dir, progress=progress)
    s = FinetuneSetup(**payload["finetune"])
    run_dir = Path(run_dir)
    res = finetune(
        pre.run_dir,
        s.task,
        s.data,
        run_dir,
        steps=s.steps,
        batch_size=s.batch_size,
        learning_rate=s.learning_rate,
        dropout=s.dropout,
        eval_every=s.eval_every,
        resume=(run_dir / ckpt.RUN_FILE).is_file(),
        progress=progress,
    )
    return {
        "key": run_dir.name,
        "pretrain_key": pre.key,
        "label": pre.label,
        "pretrain": pre_row.get("heldout"),
        "finetune": s.options(),
        "step": res["step"],
        "dev": res["dev"],
        "averages": res["averages"],
    }


def format_chain(jobs: Sequence[Job], done: set[str] = frozenset()) -> str:
    """The dry run: one line per chain, pretraining run -> fine-tuning run."""
    lines = []
    for j in jobs:
        p, f = j.payload["pretrain"], j.payload["finetune"]
        state = "done" if j.key in done else "todo"
        lines.append(
            f"  {state} {p['label']}: pretrain {p['key']} -> finetune {f['task']} "
            f"({f['steps']} steps, batch {f['batch_size']}, lr {f['learning_rate']:g}, dropout "
            f"{f['dropout']:g}, data {f['data']}) -> {j.run_dir}"
        )
    return "\n".join([f"{len(jobs)} pretrain -> fine-tune chains:", *lines])


def finetune_json(json_path: Path) -> Path:
    """The fine-tuning rows' JSON beside the studies' ``--json``: ``<stem>_finetune.json``."""
    return Path(json_path).with_name(Path(json_path).stem + "_finetune.json")


def load_rows(path: Path) -> dict[str, Any]:
    """``{chain key: row}`` of the fine-tuning JSON (empty if there is none).

    Raises:
        ValueError: one line naming the file: unreadable, not JSON, not a fine-tuning file,
            or ``runs`` not an object of rows (objects).
    """
    if not Path(path).is_file():
        return {}
    where = f"json: {path}"
    doc = read_json(path, where=where)
    if doc.get("format") != FORMAT:
        raise ValueError(f"{where} is not a memory-studies fine-tuning file ({FORMAT})")
    runs = json_field(doc, "runs", "object", where)
    for key, row in runs.items():
        if not isinstance(row, dict):
            raise ValueError(f"{where}: runs[{key!r:.40}] is {json_type(row)}, not an object")
    return runs


def save_row(path: Path, key: str, row: dict[str, Any]) -> None:
    """Add ``row`` to the fine-tuning JSON (atomically, keeping the rows on disk)."""
    from lshsim.studies.memory.document import finite

    runs = {**load_rows(path), key: row}
    doc = {"format": FORMAT, "runs": runs}
    write_atomic(Path(path), json.dumps(finite(doc), indent=1, sort_keys=True) + "\n")


def launch_chains(
    jobs: Sequence[Job], launcher, json_path: Path, log: Callable[[str], None] = print
) -> tuple[dict[str, Any], Any]:
    """Launch the chains not yet in the fine-tuning JSON; each row is saved as it finishes."""
    path = finetune_json(json_path)
    rows = load_rows(path)
    todo = [j for j in jobs if j.key not in rows]
    log(f"{len(jobs)} chains, {len(jobs) - len(todo)} already done, {len(todo)} to do")

    def on_result(job: Job, row: dict[str, Any]) -> None:
        rows[job.key] = row
        save_row(path, job.key, row)
        dev = ", ".join(f"{k} {v['score']:.2f}" for k, v in row["dev"].items())
        log(f"{job.label} ({job.key}): {dev}")

    report = launcher.launch(todo, on_result)
    for key, error in report.failed.items():
        log(f"failed: {key}: {error}")
    return rows, report


#: Fine-tuning steps and batch by variant when not given: the paper's for ``real``; a few
#: CPU-sized steps for ``smoke``.
DEFAULT_STEPS = {"smoke": 100, "real": 50_000}
DEFAULT_BATCH = {"smoke": 16, "real": 256}


def chains_from_args(args, specs_by_study: dict[str, list], out: Path) -> list[Job]:
    """The chain jobs of ``memory_studies.py --finetune TASK --finetune-data DIR``.

    Raises:
        ValueError: no ``--finetune-data``, an unknown task, steps or batch below 1.
    """
    from lshsim.studies.memory.jobs import make_jobs
    from lshsim.studies.memory.runner import unique_runs
    from lshsim.t5.finetune.run import task_names

    task_names(args.finetune)
    if args.finetune_data is None:
        raise ValueError("--finetune-data: give the task's data folder with --finetune")
    steps = args.finetune_steps or DEFAULT_STEPS[args.variant]
    batch = args.finetune_batch or DEFAULT_BATCH[args.variant]
    if steps < 1 or batch < 1:
        raise ValueError("--finetune-steps, --finetune-batch: must be >= 1")
    setup = FinetuneSetup(args.finetune, str(Path(args.finetune_data).absolute()), steps, batch)
    todo = unique_runs([s for v in specs_by_study.values() for s in v])
    pretrain = make_jobs(sorted(todo, key=lambda s: s.seed), out, args.train_args)
    return chain_jobs(pretrain, setup)
