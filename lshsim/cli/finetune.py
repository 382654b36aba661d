"""``lshsim finetune``: fine-tune a pretrained run on GLUE, SuperGLUE, SQuAD or one's own data.

Every check comes first, without JAX and without writing anything: the options' ranges (those
of ``train``, :data:`FINETUNE_RANGES`), the folders, then the library's own
(:func:`lshsim.t5.finetune.prepare.prepare`: the data files read and tokenized, a resumed
run's options, the memory estimate of ``train``). Only then does :func:`run_finetune` call
:func:`~lshsim.cli.work.start_work` and start JAX.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from lshsim.cli.checks import TRAIN_RANGES, check_ranges
from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.vocabulary import JSON_HELP

#: The ranges of ``finetune``'s integer options: ``train``'s (0 is an error, never "the
#: default"), a checkpoint step, and lengths of at least 2 (a length of 1 holds EOS alone).
FINETUNE_RANGES = {
    **TRAIN_RANGES,
    "step": (0, None),
    "batch": (1, None),
    "seed": (0, 2**32 - 1),
    "input_length": (2, None),
    "target_length": (2, None),
    "cap": (1, None),
    "eval_examples": (1, None),
    "devices": (1, None),
}

_EPILOG = """\
tasks (T5's text-to-text recasts; --data is the benchmark's folder for the task, or a folder
holding it):
  GLUE (TSV)        cola sst2 mrpc qqp stsb mnli qnli rte wnli
  SuperGLUE (JSONL) boolq cb copa multirc record super_glue_rte wic wsc
  SQuAD v1.1 (JSON) squad          your own JSON lines {"input","target"}: user
  mixtures          glue (T5's glue_v002_proportional), super_glue (super_glue_v102_proportional)

The out folder is a run folder (run.json, spm.model, metrics.jsonl, checkpoints/); each
evaluation appends one {"split": "dev", "task": ...} record per dev split to metrics.jsonl,
and the GLUE / SuperGLUE averages when a mixture's tasks are all there. It holds a run once it
has a first checkpoint: a start cut short before it (killed) is started again by a plain
retry, or by --resume. --run may be a fine-tuning run (fine-tuning in stages).

--resume continues the run in --out with its recorded options: --task, --run, --step, --batch,
--lr, --dropout, --seed, --input-length, --target-length, --cap, --eval-examples and
--scan-layers may be given only with the recorded value; --data (the folder moved) and
--keep-checkpoints are applied and recorded; --eval-every, --checkpoint-every, --mesh and
--devices apply to the session; --steps must exceed the run's step.

examples:
  lshsim finetune --run runs/tiny --task sst2 --data glue_data/SST-2 --out runs/tiny-sst2 \\
      --steps 2000 --batch 32
  lshsim finetune --run runs/tiny --task glue --data glue_data --out runs/tiny-glue --steps 50000
  lshsim finetune --out runs/tiny-sst2 --task sst2 --steps 4000 --resume
"""


def add_parser(sub) -> None:
    """Add ``finetune`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    ft = sub.add_parser(
        "finetune",
        help="fine-tune a pretrained run on GLUE, SuperGLUE, SQuAD or your own data",
        description=wrap(
            "Continue from a `lshsim train` run's checkpoint with the paper's fine-tuning "
            "setup: Adafactor at a constant learning rate of 0.001, dropout 0.1 (batch 256 "
            "and 50,000 steps in the paper). Each evaluation decodes the dev splits greedily "
            "and scores them as the benchmarks define (accuracy, F1, Matthews, Pearson / "
            "Spearman, MultiRC F1a / EM, SQuAD and ReCoRD EM / F1)."
        ),
        epilog=_EPILOG,
        formatter_class=Formatter,
    )
    src = ft.add_argument_group("the pretrained run and the task")
    src.add_argument("--run", metavar="DIR", help="the pretrained run folder (`lshsim train`)")
    src.add_argument("--step", type=int, metavar="N", help="its checkpoint (default: latest good)")
    src.add_argument("--task", required=True, metavar="NAME", help="a task or mixture (below)")
    src.add_argument("--data", metavar="DIR", help="the task's data folder")
    src.add_argument("--cap", type=int, metavar="K", help="mixture examples cap (default 1e6)")
    src.add_argument("--input-length", type=int, metavar="L", help="encoder tokens (from data)")
    src.add_argument("--target-length", type=int, metavar="T", help="decoder tokens (from data)")
    run = ft.add_argument_group("the fine-tuning run")
    run.add_argument("-o", "--out", required=True, metavar="DIR", help="the fine-tuning run folder")
    run.add_argument("--steps", required=True, type=int, metavar="N", help="total steps")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    opt = ft.add_argument_group("optimisation")
    opt.add_argument("--batch", type=int, metavar="B", help="examples per step (default 256)")
    opt.add_argument("--lr", type=float, metavar="X", help="constant learning rate (default 1e-3)")
    opt.add_argument("--dropout", type=float, metavar="P", help="dropout rate (default 0.1)")
    opt.add_argument("--seed", type=int, metavar="s", help="seed (default 0)")
    opt.add_argument(
        "--scan-layers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="layers scanned (the default) or unrolled; the pretrained parameters are "
        "converted from the layout they were saved in",
    )
    keep = ft.add_argument_group("evaluation and checkpoints")
    keep.add_argument("--eval-every", type=int, metavar="K", help="evaluate every K steps")
    keep.add_argument(
        "--eval-examples", type=int, metavar="N", help="evaluate at most N examples per split"
    )
    keep.add_argument("--checkpoint-every", type=int, metavar="K", help="checkpoint every K steps")
    keep.add_argument("--keep-checkpoints", type=int, metavar="N", help="keep N (default 3)")
    dev = ft.add_argument_group("devices")
    dev.add_argument(
        "--mesh",
        metavar="data=A,model=B",
        help="device mesh of A x B devices, as for train (default: data = all devices)",
    )
    dev.add_argument("--devices", type=int, metavar="D", help="data-parallel devices: data=D")
    out = ft.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    ft.set_defaults(func=run_finetune)


def _check_folder(path: str, option: str) -> None:
    """One line naming ``option`` unless ``path`` is an existing folder."""
    p = Path(path)
    if not p.is_dir():
        what = "is a file, not a folder" if p.exists() else "does not exist"
        raise ValueError(f"{option}: {p} {what}")


def run_finetune(args: argparse.Namespace) -> int:
    """Fine-tune (or resume) into ``--out`` and print the last dev metrics.

    Args:
        args: the parsed ``finetune`` arguments.

    Returns:
        The exit status, 0.

    Raises:
        ValueError: one line naming the option, file or folder (before any work).
    """
    from lshsim._io import check_output_dir
    from lshsim.cli.work import start_work
    from lshsim.t5.finetune.prepare import prepare, task_names

    task_names(args.task)  # an unknown task: one line, before anything else
    check_ranges(args, FINETUNE_RANGES)
    if args.resume:
        _check_folder(args.out, "--out")
    else:
        if args.run is None or args.data is None:
            raise ValueError("--run, --data: a new fine-tuning run needs both")
        _check_folder(args.run, "--run")
        _check_folder(args.data, "--data")
    check_output_dir(args.out, "--out")
    if args.mesh is not None and args.devices is None:
        from lshsim.cli.plan import parse_mesh

        parse_mesh(args.mesh)
    prepared = prepare(
        args.run,
        args.task,
        args.data,
        args.out,
        steps=args.steps,
        step=args.step,
        batch_size=args.batch,
        learning_rate=args.lr,
        dropout=args.dropout,
        seed=args.seed,
        input_length=args.input_length,
        target_length=args.target_length,
        cap=args.cap,
        eval_every=args.eval_every,
        eval_examples=args.eval_examples,
        checkpoint_every=args.checkpoint_every,
        keep_checkpoints=args.keep_checkpoints,
        resume=args.resume,
        scan_layers=args.scan_layers,
    )
    start_work()

    from lshsim.t5.finetune.run import run_prepared

    summary = run_prepared(prepared, mesh=args.mesh, devices=args.devices, progress=not args.json)
    _report(summary, args.json)
    return 0


def _report(summary: dict, as_json: bool) -> None:
    """Print the run's summary: JSON (non-finite numbers as null) or a line per dev split."""
    if as_json:
        clean = {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in summary.items()
        }
        print(json.dumps(clean))
        return
    for split, res in summary["dev"].items():
        scores = ", ".join(f"{k} {v:.2f}" for k, v in res.items())
        print(f"{split}: {scores}")
    for name, score in summary["averages"].items():
        print(f"{name}: {score:.2f}")
    print(f"{summary['step']} steps; run in {summary['out']}")
