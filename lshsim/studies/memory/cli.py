"""The paper's memory studies: pretrain T5 variants with several seeds, compare held-out accuracy.

Usage::

    python experiments/memory_studies.py --study all --variant smoke          # run (resumes)
    python experiments/memory_studies.py --study lookups --variant real --dry-run
    python experiments/memory_studies.py --plot                               # figures only

Studies (:data:`STUDIES`, in :mod:`~lshsim.studies.memory.variants`; each has a ``smoke`` size
that runs on 2 CPU cores and the paper's ``real`` size):

- ``table1``: Tables 1 and 7: baseline vs Sum vs SameUp vs AltUp, K=2 (a second embedding
  table looked up by token id, consumed three ways).
- ``lookups``: Tables 4 and 6: baseline vs Token-ID vs Softmax vs LSH (SimHash) partial
  experts with ``max(2 rank, 1) * buckets`` within a factor sqrt(2) of Token-ID's rank-0
  budget (the vocabulary size): the paper's grid of ranks {0, 2, 4, ..., 256} and buckets
  2^3..2^15 in ``real``, two points per method in ``smoke``.
- ``softmax_sweep``: Figure 2: softmax lookup, rank x buckets.
- ``table5``: Tables 5 and 8: baseline vs AltUp K=2 vs AltUp K=4.

Every run is keyed by a hash of its full config, its training options and its seed; the JSON
(``--json``) holds one row per key, so runs that several studies share (the baseline is in
all four) are trained once, and a rerun skips finished runs (a killed run's directory is
resumed from its last checkpoint). The JSON is rewritten atomically after every run. Each run
is a job in its own directory ``OUT/<key>`` (``job.json``, the training files, ``result.json``
written last), launched here one after another (``--launcher local``, the default), on a Dask
cluster (``--launcher dask --workers N`` or ``--scheduler tcp://...``) or as one SLURM job per
run (``--launcher slurm``, resources from ``--partition``, ``--gpus-per-node``, ``--nodes``,
``--time``, ``--mem``, ``--cpus-per-task``; ``--dry-run`` prints the sbatch scripts; then
``--collect`` reads the finished runs into the JSON and names the missing and failed ones);
see :mod:`lshsim.launch`. Modules:
:mod:`~lshsim.studies.memory.variants` (sizes, variants, registry),
:mod:`~lshsim.studies.memory.runner` (plans, training, resume),
:mod:`~lshsim.studies.memory.jobs` (runs as launcher jobs, execute, collect),
:mod:`~lshsim.studies.memory.document` (the JSON), :mod:`~lshsim.studies.memory.report`
(summaries, figures) and :mod:`~lshsim.studies.memory.cli` (the command line).

Metrics: train's own final evaluation (4 held-out batches, ``final_eval``) and a larger one
of the same held-out split after training (``heldout``: ``eval_examples`` examples, by
``lshsim.t5.loop.evaluate_run``, i.e. ``lshsim eval --examples``; its first ``4 * batch``
examples are exactly train's), which the figures and summaries use. The held-out
split, the tokenizer and the initialisation all depend on the seed, so comparisons are paired
by seed (``diff_vs_baseline`` in the summary).

Sizes: ``real`` is T5 "small" (the paper's S), batch 256, input length 512, warmup 10k,
100k steps for the lookup studies (the paper reports their 100k-step accuracy) and 500k for
the AltUp tables; it needs accelerators and a real corpus (``--corpus``). ``smoke`` is "tiny"
with batch 16, input length 64, :data:`SMOKE_STEPS` steps and warmup
:data:`SMOKE_WARMUP` (all four studies, 3 seeds: 13 distinct configs, 39 runs of 20-80 s,
about 22 min on 2 quiet CPU cores, 30 min measured on a busy shared machine). At that size
the models have learnt the span structure (sentinels and EOS, about 4 of the 14 target
tokens, nearly all right) and little else, so span accuracy barely moves; the held-out loss
and the span-content accuracy (``heldout.content_accuracy``) show the differences.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lshsim._io import default_cache_dir
from lshsim.cli.parser import Parser
from lshsim.cli.vocabulary import install_aliases
from lshsim.cli.work import start_work
from lshsim.launch import add_launch_flags, collect, launcher_from_args
from lshsim.studies.memory.document import load_doc
from lshsim.studies.memory.jobs import collect_runs, launch_runs, make_jobs, parse_train_args
from lshsim.studies.memory.report import format_summary, write_figures
from lshsim.studies.memory.runner import RunSpec, plan, reeval, unique_runs
from lshsim.studies.memory.variants import STUDIES
from lshsim.t5.data.corpus import check_corpus_paths

#: The script's name in messages.
PROG = "memory_studies.py"

#: The repository root of a source checkout (results go to its ``figures/``; run directories
#: must be outside it).
REPO = Path(__file__).resolve().parents[3]
#: The most seeds a study runs: 1,000 seeds of the four smoke studies are 13,000 runs of 20-80 s
#: (3-12 days on 2 cores), and the ``real`` size is thousands of times that.
MAX_SEEDS = 1000
#: Where results go unless ``--json`` says otherwise.
DEFAULT_JSON = REPO / "figures" / "memory_studies.json"


def default_out() -> Path:
    """Run directories: ``$LSHSIM_CACHE/memory_studies`` (outside the repository)."""
    return default_cache_dir() / "memory_studies"


def dry_run(specs_by_study: dict[str, list[RunSpec]], doc: dict[str, Any]) -> list[RunSpec]:
    """Print the runs each study needs; return the distinct ones."""
    for name, specs in specs_by_study.items():
        s = specs[0].setup
        print(
            f"## {name}: {len(specs)} runs ({s.config}, {s.steps} steps, batch {s.batch_size}, "
            f"input {s.input_length}, warmup {s.warmup_steps})"
        )
        for spec in specs:
            done = "done" if spec.key in doc["runs"] else "todo"
            changes = " ".join(f"{k}={v}" for k, v in spec.variant.changes) or "-"
            print(f"  {spec.key} {done} seed {spec.seed} {spec.variant.label}: {changes}")
    todo = unique_runs([s for v in specs_by_study.values() for s in v])
    left = sum(spec.key not in doc["runs"] for spec in todo)
    total = sum(len(v) for v in specs_by_study.values())
    print(f"total: {total} runs in the studies, {len(todo)} distinct, {left} not yet done")
    return todo


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``experiments/memory_studies.py`` (see ``--help``)."""
    ap = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    studies = ap.add_argument_group("the studies and their runs")
    action = ap.add_argument_group("what to do (default: train the runs not yet done)")
    finetune = ap.add_argument_group("fine-tuning after pretraining")
    output = ap.add_argument_group("output")
    studies.add_argument(
        "--study", default="all", choices=[*STUDIES, "all"], help="the study to run (default all)"
    )
    studies.add_argument(
        "--variant",
        default="smoke",
        choices=["smoke", "real"],
        help="smoke: tiny models that train on 2 CPU cores; real: the paper's sizes "
        "(default smoke)",
    )
    studies.add_argument(
        "--seeds", type=int, default=3, metavar="N", help="seeds per variant (default 3)"
    )
    output.add_argument("--out", type=Path, default=None, help="run directories (default: cache)")
    output.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_JSON,
        metavar="PATH",
        help="the studies' results file, read and written (default: figures/memory_studies.json;\n"
        "the figures go beside it)",
    )
    studies.add_argument("--corpus", nargs="+", default=None, help="corpus files (real variant)")
    action.add_argument(
        "--dry-run",
        action="store_true",
        help="list the runs, train nothing (--launcher slurm: print the sbatch scripts)",
    )
    action.add_argument("--plot", action="store_true", help="write the figures from the JSON")
    action.add_argument(
        "--reeval",
        action="store_true",
        help="recompute the held-out evaluation of the finished runs from their checkpoints",
    )
    output.add_argument("--progress", action="store_true", help="progress bar per run")
    studies.add_argument(
        "--steps",
        type=int,
        default=None,
        help="train this many steps instead of the variant's (runs are keyed by it; give a "
        "separate --results, whose folder also gets the figures)",
    )
    finetune.add_argument(
        "--finetune",
        metavar="TASK",
        help="chain each pretraining run with fine-tuning on TASK (a `lshsim finetune` task, "
        "glue or super_glue; see lshsim.studies.memory.finetune); --dry-run prints the chains",
    )
    finetune.add_argument("--finetune-data", type=Path, metavar="DIR", help="TASK's data folder")
    finetune.add_argument(
        "--finetune-steps", type=int, metavar="N", help="fine-tuning steps (real 50000, smoke 100)"
    )
    finetune.add_argument(
        "--finetune-batch", type=int, metavar="B", help="fine-tuning batch (real 256, smoke 16)"
    )
    add_launch_flags(ap)
    install_aliases(ap, "memory_studies")
    return ap


def _plans(args: argparse.Namespace) -> dict[str, list[RunSpec]]:
    """The runs of each study the arguments name, with ``--corpus`` and ``--steps`` applied."""
    names = list(STUDIES) if args.study == "all" else [args.study]
    specs = {}
    for name in names:
        setup = STUDIES[name].setups[args.variant]
        if args.corpus:
            setup = dataclasses.replace(setup, corpus=tuple(args.corpus))
        if args.steps:
            every = min(setup.checkpoint_every, args.steps)
            setup = dataclasses.replace(setup, steps=args.steps, checkpoint_every=every)
        specs[name] = plan(name, args.variant, args.seeds, setup)
    return specs


def _out(args: argparse.Namespace, ap: argparse.ArgumentParser) -> Path:
    """The run directories' parent: ``--out`` (or the cache) / the variant, outside the repo."""
    out = (args.out or default_out()) / args.variant
    resolved = out.resolve()
    if resolved == REPO or REPO in resolved.parents:
        ap.error(f"--out: {out} is inside the repository; choose a directory outside it")
    return out


def _slurm_dry_run(launcher, specs_by_study, doc, out, train_args) -> list[RunSpec]:
    """Print the sbatch script of every run not yet done; return those runs."""
    todo = unique_runs([s for v in specs_by_study.values() for s in v])
    jobs = make_jobs([s for s in todo if s.key not in doc["runs"]], out, train_args)
    finished = collect(jobs).rows
    jobs = [j for j in jobs if j.key not in finished]
    launcher.launch(jobs)
    print(f"{len(jobs)} sbatch scripts, one per run not yet done; nothing submitted")
    keys = {j.key for j in jobs}
    return [s for s in todo if s.key in keys]


def _check_inputs(args: argparse.Namespace) -> None:
    """The files and the fine-tuning task the arguments name, checked before any run starts.

    Raises:
        ValueError: one line naming ``--corpus``, ``--finetune`` or ``--finetune-data``.
    """
    check_corpus_paths(args.corpus)
    if args.finetune is None:
        for name in ("finetune_data", "finetune_steps", "finetune_batch"):
            if getattr(args, name) is not None:
                raise ValueError(f"--{name.replace('_', '-')} has no effect without --finetune")
        return
    from lshsim.t5.finetune.run import task_names

    try:
        task_names(args.finetune)
    except ValueError as err:
        raise ValueError(f"--finetune: {err}") from None
    if args.finetune_data is not None and not Path(args.finetune_data).is_dir():
        raise ValueError(f"--finetune-data: {args.finetune_data} is not a folder")


def run(argv: Sequence[str] | None = None) -> tuple[dict[str, Any], int]:
    """Run, collect, re-evaluate, plot or list the memory studies; print the summary.

    Args:
        argv: command-line arguments (default ``sys.argv[1:]``); see :func:`build_parser`.

    Returns:
        The results document (or, with ``--dry-run``, ``{"runs": [the distinct runs]}``)
        and the exit status: 1 if a run failed, or ``--collect`` found runs missing or
        failed; else 0.

    Raises:
        SystemExit: 2 for bad arguments (argparse), or ``--out`` inside the repository.
        ValueError: For an unknown study or variant, a config the variant makes invalid, bad
            launch options or ``--train-args``, or an unreachable Dask scheduler.
    """
    ap = build_parser()
    args = ap.parse_args(argv)
    if not 1 <= args.seeds <= MAX_SEEDS:
        ap.error(
            f"--seeds: must be in [1, {MAX_SEEDS}], got {args.seeds} ({MAX_SEEDS} seeds are "
            f"{MAX_SEEDS * 13:,} runs of the smoke studies, about {MAX_SEEDS * 13 * 20 // 86400} "
            "days at 20 s a run)"
        )
    if args.steps is not None and args.steps < 1:
        ap.error(f"--steps: must be >= 1, got {args.steps}")
    if args.collect and (args.dry_run or args.plot or args.reeval):
        ap.error("--collect: not with --dry-run, --plot or --reeval")
    launches = not (args.plot or args.reeval or args.collect)
    launcher = launcher_from_args(args, progress=args.progress) if launches else None
    parse_train_args(args.train_args)  # a bad --train-args fails before any work
    specs = _plans(args)
    doc = load_doc(args.results)
    if args.out is not None:
        _out(args, ap)
    _check_inputs(args)
    start_work()
    status = 0
    if args.finetune:
        from lshsim.studies.memory import finetune as ft

        jobs = ft.chains_from_args(args, specs, _out(args, ap))
        if args.dry_run and args.launcher != "slurm":
            print(ft.format_chain(jobs, set(ft.load_rows(ft.finetune_json(args.results)))))
            return {"chains": [j.key for j in jobs]}, 0
        rows, report = ft.launch_chains(jobs, launcher, args.results)
        return {"finetune": rows}, int(bool(report.failed))
    if args.dry_run and args.launcher == "slurm":
        out = _out(args, ap)
        return {"runs": _slurm_dry_run(launcher, specs, doc, out, args.train_args)}, 0
    if args.dry_run:
        return {"runs": dry_run(specs, doc)}, 0
    if args.reeval:
        doc = reeval(doc, [s.key for v in specs.values() for s in v], args.results)
    elif args.collect:
        doc, found = collect_runs(specs, args.variant, _out(args, ap), args.results)
        status = int(bool(found.missing or found.failed))
    elif not args.plot:
        out = _out(args, ap)
        doc, report = launch_runs(
            specs, args.variant, out, args.results, launcher=launcher, train_args=args.train_args
        )
        status = int(bool(report.failed))
    else:
        if not doc["runs"]:  # nothing to draw: said, not an empty success
            raise ValueError(f"--plot: {args.results} holds no runs yet; run the studies first")
        for path in write_figures(doc, args.variant, args.results.parent):
            print(f"wrote {path}")
    print(format_summary(doc, args.variant, STUDIES))
    return doc, status


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """:func:`run`'s document (the same arguments and exceptions)."""
    return run(argv)[0]


def console(argv: Sequence[str] | None = None) -> int:
    """:func:`run` as a script, its failures reported as ``lshsim``'s are.

    One line on stderr, exit 2 for bad input (:func:`lshsim.cli.errors.guarded`).

    Args:
        argv: command-line arguments (default ``sys.argv[1:]``).

    Returns:
        :func:`run`'s status, or :func:`lshsim.cli.errors.guarded`'s.
    """
    from lshsim.cli.errors import guarded

    return guarded(lambda: run(argv)[1], PROG)
