"""The model-side ``lshsim`` commands: ``params``, ``train`` and ``eval``.

JAX is imported only when one of these commands runs, so the rest of the CLI starts fast.
"""

from __future__ import annotations

import argparse
import json

from lshsim.t5.configs import CONFIGS, TABLE3

_CONFIG_HELP = "model config: " + ", ".join(CONFIGS) + " (tiny trains on 2 CPU cores)"

_TRAIN_EPILOG = """\
The run directory holds run.json (config and options), spm.model (the tokenizer),
metrics.jsonl (one JSON object per logged step: step, split, loss, accuracy, ...) and
checkpoints/<step>/ (orbax). A killed run continues exactly with --resume.

examples:
  lshsim train --config tiny --steps 150 --out runs/tiny
  lshsim train --config tiny --steps 300 --out runs/tiny --resume
  lshsim train --config small --steps 1000 --out runs/s --corpus c4-train.00000-of-01024.json.gz
"""


def add_parsers(sub) -> None:
    """Add ``params``, ``train`` and ``eval`` to the CLI's subparsers."""
    par = sub.add_parser(
        "params",
        help="count a model config's embedding and non-embedding parameters",
        description="Count parameters with jax.eval_shape (nothing is allocated). Embedding "
        "parameters are the input table shared by encoder and decoder plus the untied output "
        "projection, as in the paper's Table 3.",
    )
    par.add_argument("--config", required=True, metavar="C", help=_CONFIG_HELP)
    par.add_argument("--json", action="store_true", help="print one JSON object")
    par.set_defaults(func=_params)

    tr = sub.add_parser(
        "train",
        help="pretrain a T5 v1.1 with span corruption (checkpoints, resume)",
        description="Span-corruption pretraining (noise density 0.15, mean span 3) with T5's "
        "Adafactor and rsqrt schedule, data-parallel over all devices. Without --corpus it "
        "trains on the embedded corpus (CPython's documentation topics and docstrings).",
        epilog=_TRAIN_EPILOG,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    tr.add_argument("--config", required=True, metavar="C", help=_CONFIG_HELP)
    tr.add_argument("--steps", required=True, type=int, metavar="N", help="total training steps")
    tr.add_argument("--out", required=True, metavar="DIR", help="run directory")
    tr.add_argument(
        "--corpus",
        nargs="+",
        metavar="PATH",
        help="text files, C4-style JSON lines ({'text': ...}, .gz ok) or directories "
        "(default: the embedded corpus)",
    )
    tr.add_argument("--batch", type=int, metavar="B", help="examples per step (config default)")
    tr.add_argument("--input-length", type=int, metavar="L", help="encoder tokens (config default)")
    tr.add_argument(
        "--target-length", type=int, metavar="T", help="decoder tokens (default: as needed)"
    )
    tr.add_argument("--seed", type=int, metavar="s", help="seed (default 0)")
    tr.add_argument("--lr", type=float, metavar="X", help="base learning rate (default 1.0)")
    tr.add_argument(
        "--warmup", type=int, metavar="W", help="rsqrt schedule warmup steps (config default)"
    )
    tr.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        help="compute dtype (default float32; bfloat16 on accelerators); parameters stay f32",
    )
    tr.add_argument("--tokenizer", metavar="FILE", help="use this SentencePiece .model")
    tr.add_argument("--eval-every", type=int, metavar="K", help="evaluate every K steps")
    tr.add_argument("--checkpoint-every", type=int, metavar="K", help="checkpoint every K steps")
    tr.add_argument("--devices", type=int, metavar="D", help="data-parallel devices (all)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out")
    tr.add_argument("--json", action="store_true", help="print the summary as JSON, no bar")
    tr.set_defaults(func=_train)

    ev = sub.add_parser(
        "eval",
        help="held-out loss and span accuracy of a training run's checkpoint",
        description="Evaluate a run's latest checkpoint (or --step) on its held-out batches: "
        "cross-entropy per target token and span-target token accuracy.",
    )
    ev.add_argument("--checkpoint", required=True, metavar="DIR", help="a `lshsim train` --out")
    ev.add_argument("--step", type=int, metavar="N", help="checkpoint step (default latest)")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.set_defaults(func=_eval)


def _params(args) -> int:
    from lshsim.t5.configs import get_config
    from lshsim.t5.params import count_params

    cfg = get_config(args.config)
    counts = count_params(cfg)
    row = {"config": cfg.name, **counts}
    if cfg.name in TABLE3:
        row["table3_embedding"], row["table3_non_embedding"] = TABLE3[cfg.name]
    if args.json:
        print(json.dumps(row))
        return 0
    print(f"config         {cfg.name}")
    for k in ("embedding", "non_embedding", "total"):
        extra = ""
        if f"table3_{k}" in row:
            ref = row[f"table3_{k}"]
            extra = f"   (paper Table 3: {ref:.2E}, {counts[k] / ref - 1:+.2%})"
        print(f"{k:<14s} {counts[k]:>13,d}  {counts[k]:.2E}{extra}")
    return 0


def _train(args) -> int:
    from lshsim.t5.configs import get_config
    from lshsim.t5.run import train

    config = get_config(args.config)
    if args.dtype:
        config = config.replace(dtype=args.dtype)
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
        devices=args.devices,
        progress=not args.json,
    )
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
    print(
        f"{summary['step']} steps, {summary['examples_per_second']:.1f} examples/s; "
        f"run in {summary['out']}"
    )
    return 0


def _eval(args) -> int:
    from lshsim.t5.run import evaluate_run

    res = evaluate_run(args.checkpoint, step=args.step)
    if args.json:
        print(json.dumps(res))
    else:
        print(
            f"{res['config']} step {res['step']}: held-out loss {res['loss']:.4f}, span "
            f"accuracy {res['accuracy']:.4f} over {res['tokens']} target tokens"
        )
    return 0
