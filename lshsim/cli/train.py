"""``lshsim train`` and ``lshsim eval``: pretrain a T5 with span corruption, evaluate a run.

JAX is imported only when one of these commands runs, so the rest of the CLI starts fast.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from lshsim._validate import check_int
from lshsim.cli.checks import (
    STEP_RANGES,
    TRAIN_RANGES,
    check_eval_run,
    check_micro_batch,
    check_ranges,
    check_run_dir,
    check_train_out,
    default_dtype,
    flag,
)
from lshsim.cli.distributed import DISTRIBUTED_HELP, add_distributed_flags, start_processes
from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.model_flags import (
    MEMORY_HELP,
    add_config_flag,
    add_expert_impl_flag,
    add_memory_flags,
    add_mesh_flag,
    config_from_args,
)
from lshsim.cli.plan import parse_mesh
from lshsim.cli.vocabulary import JSON_HELP, install_aliases
from lshsim.cli.work import start_work
from lshsim.t5.data.corpus import check_corpus_paths

_TRAIN_EPILOG = (
    """\
The run directory holds run.json (config, options, mesh), spm.model (the tokenizer),
metrics.jsonl (one JSON object per logged step: step, split, loss, accuracy, ...) and
checkpoints/<step>/ (orbax). A killed run continues exactly with --resume.

examples:
  lshsim train --config tiny --steps 150 --out runs/tiny
  lshsim train --config tiny --steps 300 --out runs/tiny --resume
  lshsim train --config small --steps 1000 --out runs/s --corpus c4-train.00000-of-01024.json.gz
  lshsim train --config tiny --steps 150 --out runs/altup --memory altup --blocks 2
  lshsim train --config tiny --steps 150 --out runs/sm --lookup softmax --rank 16 --buckets 64
  lshsim train --config tiny --steps 150 --out runs/tid --lookup tokenid --mesh data=2,model=4

"""
    + MEMORY_HELP
    + "\n"
    + DISTRIBUTED_HELP
)


def add_parsers(sub) -> None:
    """Add ``train`` and ``eval`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    _add_train_parser(sub)
    _add_eval_parser(sub)


def _add_train_parser(sub) -> None:
    tr = sub.add_parser(
        "train",
        help="pretrain a T5 v1.1 with span corruption (checkpoints, resume)",
        description=wrap(
            "Span-corruption pretraining (noise density 0.15, mean span 3) with T5's "
            "Adafactor and rsqrt schedule, over a data x model device mesh (default: data-parallel "
            "over all devices). Without --corpus it "
            "trains on the embedded corpus (CPython's documentation topics and docstrings)."
        ),
        epilog=_TRAIN_EPILOG,
        formatter_class=Formatter,
    )
    add_config_flag(tr)
    add_memory_flags(tr)
    run = tr.add_argument_group("the run")
    run.add_argument("--steps", required=True, type=int, metavar="N", help="total training steps")
    run.add_argument("-o", "--out", required=True, metavar="DIR", help="run directory")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument(
        "--corpus",
        nargs="+",
        metavar="PATH",
        help="text files, C4-style JSON lines ({'text': ...}, .gz ok) or directories "
        "(default: the embedded corpus)",
    )
    run.add_argument("--tokenizer", metavar="FILE", help="use this SentencePiece .model")
    opt = tr.add_argument_group("optimisation")
    opt.add_argument("--batch", type=int, metavar="B", help="examples per step (config default)")
    opt.add_argument(
        "--accumulate",
        type=int,
        metavar="k",
        help="split each batch into k micro-batches, one optimiser update (k divides --batch; "
        "same update, k times less activation memory; default 1)",
    )
    opt.add_argument(
        "--input-length", type=int, metavar="L", help="encoder tokens (config default)"
    )
    opt.add_argument(
        "--target-length", type=int, metavar="T", help="decoder tokens (default: as needed)"
    )
    opt.add_argument("--seed", type=int, metavar="s", help="seed (default 0)")
    opt.add_argument("--lr", type=float, metavar="X", help="base learning rate (default 1.0)")
    opt.add_argument(
        "--warmup", type=int, metavar="W", help="rsqrt schedule warmup steps (config default)"
    )
    opt.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        help="compute dtype (default by backend: float32 on CPU, bfloat16 on GPU/TPU; a resumed "
        "run keeps its own); parameters stay float32",
    )
    keep = tr.add_argument_group("evaluation and checkpoints")
    keep.add_argument("--eval-every", type=int, metavar="K", help="evaluate every K steps")
    keep.add_argument("--checkpoint-every", type=int, metavar="K", help="checkpoint every K steps")
    keep.add_argument(
        "--keep-checkpoints",
        type=int,
        metavar="N",
        help="keep the newest N checkpoints (default 3, at least 2: a damaged or diverged "
        "latest one falls back to the one before)",
    )
    dev = tr.add_argument_group("devices")
    dev.add_argument(
        "--devices", type=int, metavar="D", help="data-parallel devices: --mesh data=D,model=1"
    )
    add_mesh_flag(dev)
    out = tr.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    add_distributed_flags(tr)
    tr.set_defaults(func=run_train)


def _add_eval_parser(sub) -> None:
    ev = sub.add_parser(
        "eval",
        help="held-out loss and span accuracy of a training run's checkpoint",
        description=wrap(
            "Evaluate a run's latest checkpoint (or --step) on its held-out batches: "
            "cross-entropy per target token, span-target token accuracy, and the same over the "
            "span contents only (sentinels and EOS left out). Nothing random is drawn: the "
            "held-out batches are the run's own."
        ),
        epilog="example:\n  lshsim eval --run runs/tiny --step 100 --json\n",
        formatter_class=Formatter,
    )
    what = ev.add_argument_group("the run and what to evaluate")
    what.add_argument(
        "--run",
        required=True,
        metavar="DIR",
        help="a `lshsim train` run folder (formerly --checkpoint)",
    )
    what.add_argument("--step", type=int, metavar="N", help="checkpoint step (default latest)")
    what.add_argument(
        "--examples",
        type=int,
        metavar="N",
        help="held-out examples to evaluate, in batches of the run's batch size (default: the "
        "run's own 4 eval batches; the first 4 x batch examples are always those)",
    )
    what.add_argument(
        "--bands",
        action="store_true",
        help="also the span-content loss by target-token frequency band (top 1%%, next 9%%, "
        "rest of the token types by training count; lshsim.t5.bands)",
    )
    dev = ev.add_argument_group("devices")
    add_mesh_flag(dev)
    add_expert_impl_flag(dev)
    ev.add_argument_group("output").add_argument("--json", action="store_true", help=JSON_HELP)
    ev.set_defaults(func=run_eval)
    install_aliases(ev, "eval")


def run_train(args: argparse.Namespace) -> int:
    """Train (or resume) a run in ``--out`` and print the held-out loss and accuracy.

    Args:
        args: the parsed ``train`` arguments.

    Returns:
        The exit status, 0.
    """
    check_ranges(args, TRAIN_RANGES)
    check_train_out(args)
    config = config_from_args(args)
    _check_mesh(args, config)
    _check_options(args, config)
    start_work()
    primary = start_processes(args)  # before anything touches JAX's backend
    from lshsim.t5.checkpoint import RUN_FILE, read_run

    run_file = Path(args.out) / RUN_FILE
    saved = read_run(Path(args.out))[0] if args.resume and run_file.is_file() else None
    if args.dtype is None:  # by backend (float32 on CPU, else bfloat16); a resumed run's own
        import jax

        dtype = saved.dtype if saved else default_dtype(jax.default_backend())
        config = config.replace(dtype=dtype)
    if args.scan_layers is None and saved:  # a resumed run keeps its layout (an old one: unrolled)
        config = config.replace(scan_layers=saved.scan_layers)

    from lshsim.t5.loop import train

    summary = train(
        config,
        args.out,
        steps=args.steps,
        resume=args.resume,
        corpus=args.corpus,
        batch_size=args.batch,
        input_length=args.input_length,
        target_length=args.target_length,
        seed=args.seed,
        learning_rate=args.lr,
        warmup_steps=args.warmup,
        tokenizer=args.tokenizer,
        eval_every=args.eval_every,
        checkpoint_every=args.checkpoint_every,
        keep_checkpoints=args.keep_checkpoints,
        accumulate=args.accumulate,
        devices=args.devices,
        mesh=args.mesh,
        progress=not args.json and primary,
    )
    if not primary:  # process 0 reports the run
        return 0
    rate = summary["examples_per_second"]
    if rate is not None and not math.isfinite(rate):  # no step after the first: nothing timed
        summary = {**summary, "examples_per_second": None}
    if args.json:
        print(json.dumps(summary))
        return 0
    first, last = summary["initial_eval"], summary["final_eval"]
    if first is not None:
        print(
            f"held-out loss {first['loss']:.4f} -> {last['loss']:.4f}, span accuracy "
            f"{first['accuracy']:.4f} -> {last['accuracy']:.4f}"
        )
    else:
        print(f"held-out loss {last['loss']:.4f}, span accuracy {last['accuracy']:.4f}")
    rate = summary["examples_per_second"]
    speed = "" if rate is None else f", {rate:.1f} examples/s"
    print(f"{summary['step']} steps{speed}; run in {summary['out']}")
    return 0


#: :class:`~lshsim.t5.options.TrainOptions` fields that ``train`` sets -> their argparse dests.
OPTION_DESTS = {
    "batch_size": "batch",
    "input_length": "input_length",
    "target_length": "target_length",
    "seed": "seed",
    "learning_rate": "lr",
    "warmup_steps": "warmup",
    "keep_checkpoints": "keep_checkpoints",
    "accumulate": "accumulate",
}


def _said(field: str) -> str:
    """How :meth:`TrainOptions.from_config` names ``field`` in its messages."""
    return "batch" if field == "batch_size" else field


def _check_options(args: argparse.Namespace, config) -> None:
    """The library's checks of ``train``'s options and its memory estimate, before JAX starts.

    A resumed run's recorded options are checked against the given ones by
    :func:`lshsim.t5.loop.train`; a new run's are built here as the library will build them.

    Raises:
        ValueError: one line naming the first bad option, file or folder.
    """
    from lshsim.t5.budget import check_train_fits
    from lshsim.t5.options import TrainOptions

    check_int("--steps", args.steps, 1)
    check_corpus_paths(args.corpus)
    if args.tokenizer is not None and not Path(args.tokenizer).is_file():
        raise ValueError(f"--tokenizer: {args.tokenizer} is not a file")
    if args.resume:
        from lshsim.t5.checkpoint import saved_steps

        latest = max(saved_steps(Path(args.out)), default=0)
        if args.steps <= latest:  # it would stop at once, having done nothing
            raise ValueError(
                f"--steps {args.steps}: the run in {args.out} is at step {latest} already; ask "
                "for more steps to continue it (lshsim eval reads it as it is)"
            )
        return
    given = {field: getattr(args, dest) for field, dest in OPTION_DESTS.items()}
    try:
        opts = TrainOptions.from_config(config, **given)
    except ValueError as err:  # the library names its fields; the message adds the flag
        field = next((f for f in OPTION_DESTS if str(err).startswith(_said(f))), None)
        if field is None:
            raise
        raise ValueError(f"{flag(OPTION_DESTS[field])}: {err}") from None
    check_train_fits(
        config, opts.batch_size // opts.accumulate, opts.input_length, opts.target_length
    )


def _check_mesh(args: argparse.Namespace, config) -> None:
    """The micro-batch check ``plan`` makes, where the data axis is given (before JAX starts)."""
    if args.mesh is not None:  # its form, before JAX counts the devices
        parse_mesh(args.mesh)
    if (args.mesh is None) == (args.devices is None):  # unknown yet, or both (refused later)
        return
    data = parse_mesh(args.mesh)[0] if args.mesh is not None else args.devices
    batch = config.batch_size if args.batch is None else args.batch
    accumulate = 1 if args.accumulate is None else args.accumulate
    if data >= 1 and batch >= 1 and accumulate >= 1 and batch % accumulate == 0:
        check_micro_batch(batch, accumulate, data, "mesh" if args.mesh else "--devices")


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate a run's checkpoint on its held-out batches and print the result.

    Args:
        args: the parsed ``eval`` arguments.

    Returns:
        The exit status, 0.
    """
    check_ranges(args, STEP_RANGES)
    check_run_dir(args.run, "--run")
    if args.examples is not None:
        check_int("examples", args.examples, 1)
    if args.mesh is not None:  # its form, before JAX counts the devices
        parse_mesh(args.mesh)
    check_eval_run(args)  # a fine-tuning run, --expert-impl without experts: one line
    start_work()

    from lshsim.t5.loop import evaluate_run

    res = evaluate_run(
        args.run,
        step=args.step,
        examples=args.examples,
        mesh=args.mesh,
        expert_impl=args.expert_impl,
    )
    if args.bands:
        from lshsim.t5.bands import evaluate_bands

        res["bands"] = evaluate_bands(args.run, step=res["step"], examples=args.examples)["bands"]
    if args.json:
        print(json.dumps(res))
    else:
        print(
            f"{res['config']} step {res['step']}: held-out loss {res['loss']:.4f}, span "
            f"accuracy {res['accuracy']:.4f} over {res['tokens']} target tokens; span-content "
            f"loss {res['content_loss']:.4f}, accuracy {res['content_accuracy']:.4f} over "
            f"{res['content_tokens']} tokens ({res['examples']} examples)"
        )
        for b in res.get("bands", []):
            loss = "-" if b["loss"] is None else f"{b['loss']:.4f}"
            print(
                f"  {b['band']:<8s} {b['types']:>6d} types  {b['tokens']:>7d} tokens  loss {loss}"
            )
    return 0
