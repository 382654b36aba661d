"""The model-side ``lshsim`` commands: ``params``, ``cost``, ``train`` and ``eval``.

JAX is imported only when one of these commands runs, so the rest of the CLI starts fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import textwrap

from lshsim.t5.configs import (
    COLLAPSES,
    CONFIGS,
    LOOKUPS,
    LSH_FAMILIES,
    MEMORY_METHODS,
    TABLE3,
    TABLE3_ALTUP,
    T5Config,
)

_CONFIG_HELP = "model config: " + ", ".join(CONFIGS) + " (tiny trains on 2 CPU cores)"

_MEMORY_HELP = """external memory (paper sections 3 and 6):
  --memory sum|sameup|altup  a K-block wide token embedding: summed at the bottom (sum), or
                             carried through every layer by Algorithm 2 (Predict-Compute-
                             Correct) computing block 0 (sameup) or block i mod K (altup)
  --lookup tokenid|softmax|lsh  a partial expert per layer: output L(x) + w(x) f_i(x),
                             bucket i from the token id, a learned top-1 softmax router, or
                             SimHash/cross-polytope of the layer input
  the two combine freely; see `lshsim cost --config C --compare` for their FLOPs
"""

_TRAIN_EPILOG = (
    """\
The run directory holds run.json (config and options), spm.model (the tokenizer),
metrics.jsonl (one JSON object per logged step: step, split, loss, accuracy, ...) and
checkpoints/<step>/ (orbax). A killed run continues exactly with --resume.

examples:
  lshsim train --config tiny --steps 150 --out runs/tiny
  lshsim train --config tiny --steps 300 --out runs/tiny --resume
  lshsim train --config small --steps 1000 --out runs/s --corpus c4-train.00000-of-01024.json.gz
  lshsim train --config tiny --steps 150 --out runs/altup --memory altup --K 2
  lshsim train --config tiny --steps 150 --out runs/sm --lookup softmax --rank 16 --buckets 64

"""
    + _MEMORY_HELP
)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description and epilog as written (wrapped by :func:`_wrap`); wraps help."""


def _wrap(text: str) -> str:
    return textwrap.fill(text, 88)


def _add_memory_args(p) -> None:
    """The memory and lookup flags shared by ``params``, ``cost`` and ``train``."""
    g = p.add_argument_group("external memory")
    g.add_argument("--memory", choices=MEMORY_METHODS, help="wide-embedding method (none)")
    g.add_argument("--K", type=int, metavar="K", help="blocks of width d (2)")
    g.add_argument(
        "--extra",
        type=int,
        metavar="E",
        help="extra embedding width (default (K-1) d); other values divide-and-project",
    )
    g.add_argument(
        "--cross",
        choices=COLLAPSES,
        help="decoder cross-attention reads the K-block encoder output wide (Table 3) or "
        "summed (default wide)",
    )
    g.add_argument(
        "--output",
        choices=COLLAPSES,
        help="logits from a K d x vocab table (wide, Table 3) or from the summed blocks "
        "(default wide)",
    )
    g.add_argument("--lookup", choices=LOOKUPS, help="partial experts' lookup (none)")
    g.add_argument("--rank", type=int, metavar="R", help="expert rank (0)")
    g.add_argument(
        "--buckets",
        type=int,
        metavar="N",
        help="table size per layer (tokenid: the vocabulary; default 64)",
    )
    g.add_argument("--lsh-family", choices=LSH_FAMILIES, help="LSH lookup family (simhash)")
    g.add_argument("--lookup-seed", type=int, metavar="S", help="seed of the LSH projections")
    g.add_argument("--router-jitter", type=float, metavar="EPS", help="softmax jitter (0.01)")
    g.add_argument(
        "--router-balance-loss", type=float, metavar="C", help="load-balance loss weight (0)"
    )
    g.add_argument("--router-z-loss", type=float, metavar="C", help="router z-loss weight (0)")


#: CLI flag -> config field.
_MEMORY_FIELDS = {
    "memory": "memory",
    "K": "memory_k",
    "extra": "memory_extra",
    "cross": "memory_cross",
    "output": "memory_output",
    "lookup": "lookup",
    "rank": "expert_rank",
    "buckets": "buckets",
    "lsh_family": "lsh_family",
    "lookup_seed": "lookup_seed",
    "router_jitter": "router_jitter",
    "router_balance_loss": "router_balance_loss",
    "router_z_loss": "router_z_loss",
}


def config_from_args(args) -> T5Config:
    """The named config with the memory flags applied (``ValueError`` names a bad one)."""
    from lshsim._validate import check_int
    from lshsim.t5.configs import get_config

    cfg = get_config(args.config)
    if args.buckets is not None:
        check_int("buckets", args.buckets, 1)
    if args.extra is not None:
        check_int("extra (e)", args.extra, 1)
    changes = {
        field: getattr(args, flag)
        for flag, field in _MEMORY_FIELDS.items()
        if getattr(args, flag, None) is not None
    }
    if getattr(args, "dtype", None):
        changes["dtype"] = args.dtype
    return cfg.replace(**changes) if changes else cfg


def add_parsers(sub) -> None:
    """Add ``params``, ``cost``, ``train`` and ``eval`` to the CLI's subparsers."""
    par = sub.add_parser(
        "params",
        help="count a model config's embedding and non-embedding parameters",
        description=_wrap(
            "Count parameters with jax.eval_shape (nothing is allocated). Embedding "
            "parameters are the input table shared by encoder and decoder plus the untied output "
            "projection, as in the paper's Table 3; partial experts are counted apart."
        ),
        epilog=_MEMORY_HELP + "\nexamples:\n  lshsim params --config small --memory altup --K 2   "
        "# Table 3's S + AltUp row\n",
        formatter_class=_Formatter,
    )
    par.add_argument("--config", required=True, metavar="C", help=_CONFIG_HELP)
    _add_memory_args(par)
    par.add_argument("--json", action="store_true", help="print one JSON object")
    par.set_defaults(func=_params)

    co = sub.add_parser(
        "cost",
        help="FLOPs per token from XLA's cost analysis (forward and training)",
        description=_wrap(
            "Compile the model for the local backend on abstract inputs (nothing is "
            "allocated) and report XLA's FLOPs per token (encoder plus decoder tokens) of the "
            "forward pass and of the loss gradient, at the config's input length and the targets "
            "length span corruption gives it. --compare prices the paper's variants against the "
            "baseline: AltUp K=2 and 4 (wide, and collapsed), SameUp, Sum, each lookup, and plain "
            "transformers of width 2d and 4d."
        ),
        epilog=_MEMORY_HELP,
        formatter_class=_Formatter,
    )
    co.add_argument("--config", required=True, metavar="C", help=_CONFIG_HELP)
    _add_memory_args(co)
    co.add_argument("--input-length", type=int, metavar="L", help="encoder tokens (config)")
    co.add_argument("--target-length", type=int, metavar="T", help="decoder tokens (spans)")
    co.add_argument("--compare", action="store_true", help="price the paper's variants of --config")
    co.add_argument("--json", action="store_true", help="print one JSON object")
    co.set_defaults(func=_cost)

    tr = sub.add_parser(
        "train",
        help="pretrain a T5 v1.1 with span corruption (checkpoints, resume)",
        description=_wrap(
            "Span-corruption pretraining (noise density 0.15, mean span 3) with T5's "
            "Adafactor and rsqrt schedule, data-parallel over all devices. Without --corpus it "
            "trains on the embedded corpus (CPython's documentation topics and docstrings)."
        ),
        epilog=_TRAIN_EPILOG,
        formatter_class=_Formatter,
    )
    tr.add_argument("--config", required=True, metavar="C", help=_CONFIG_HELP)
    _add_memory_args(tr)
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
        "cross-entropy per target token, span-target token accuracy, and the same over the "
        "span contents only (sentinels and EOS left out).",
    )
    ev.add_argument("--checkpoint", required=True, metavar="DIR", help="a `lshsim train` --out")
    ev.add_argument("--step", type=int, metavar="N", help="checkpoint step (default latest)")
    ev.add_argument(
        "--examples",
        type=int,
        metavar="N",
        help="held-out examples to evaluate, in batches of the run's batch size (default: the "
        "run's own 4 eval batches; the first 4 x batch examples are always those)",
    )
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.set_defaults(func=_eval)


def _memory_summary(cfg: T5Config) -> dict:
    """The config's memory and lookup fields that differ from the plain model."""
    defaults = {f.name: f.default for f in dataclasses.fields(T5Config)}
    fields = _MEMORY_FIELDS.values()
    return {f: getattr(cfg, f) for f in fields if getattr(cfg, f) != defaults[f]}


def _table3_reference(cfg: T5Config) -> tuple[float, float] | None:
    """Table 3's (embedding, non-embedding) row for this config, if it has one."""
    plain = CONFIGS.get(cfg.name)
    if plain is None or cfg.lookup != "none":
        return None
    if cfg == plain:
        return TABLE3.get(cfg.name)
    if cfg == plain.replace(memory="altup", memory_k=2):
        return TABLE3_ALTUP.get(cfg.name)
    return None


def _params(args) -> int:
    from lshsim.t5.params import count_params

    cfg = config_from_args(args)
    counts = count_params(cfg)
    row = {"config": cfg.name, **_memory_summary(cfg), **counts}
    ref = _table3_reference(cfg)
    if ref is not None:
        row["table3_embedding"], row["table3_non_embedding"] = ref
    if args.json:
        print(json.dumps(row))
        return 0
    print(f"config         {cfg.name}")
    for k, v in _memory_summary(cfg).items():
        print(f"{k:<14s} {v}")
    for k in ("embedding", "non_embedding", "expert", "total"):
        extra = ""
        if f"table3_{k}" in row:
            ref = row[f"table3_{k}"]
            extra = f"   (paper Table 3: {ref:.2E}, {counts[k] / ref - 1:+.2%})"
        print(f"{k:<14s} {counts[k]:>13,d}  {counts[k]:.2E}{extra}")
    return 0


def _cost(args) -> int:
    from lshsim.t5.cost import comparison, flops_per_token

    cfg = config_from_args(args)
    kw = {"input_length": args.input_length, "target_length": args.target_length}
    if args.compare:
        if cfg.memory != "none" or cfg.lookup != "none":
            raise ValueError("compare: give a plain --config (the variants add the memory)")
        rows = comparison(cfg, **kw)
        if args.json:
            print(json.dumps({"config": cfg.name, "rows": rows}))
            return 0
        print(
            f"{cfg.name}: XLA FLOPs per token (input {rows[0]['input_length']}, "
            f"targets {rows[0]['target_length']})"
        )
        print(f"{'variant':<30s} {'forward':>11s} {'ratio':>7s} {'train':>11s} {'ratio':>7s}")
        for r in rows:
            print(
                f"{r['name']:<30s} {r['flops_per_token']:11.4g} {r['ratio']:7.3f} "
                f"{r['train_flops_per_token']:11.4g} {r['train_ratio']:7.3f}"
            )
        return 0
    row = {"config": cfg.name, **_memory_summary(cfg), **flops_per_token(cfg, **kw)}
    if args.json:
        print(json.dumps(row))
        return 0
    print(
        f"{cfg.name}: {row['flops_per_token']:.4g} FLOPs per token forward, "
        f"{row['train_flops_per_token']:.4g} training (input {row['input_length']}, "
        f"targets {row['target_length']})"
    )
    return 0


def _train(args) -> int:
    from lshsim.t5.loop import train

    config = config_from_args(args)
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
    from lshsim.t5.loop import evaluate_run

    res = evaluate_run(args.checkpoint, step=args.step, examples=args.examples)
    if args.json:
        print(json.dumps(res))
    else:
        print(
            f"{res['config']} step {res['step']}: held-out loss {res['loss']:.4f}, span "
            f"accuracy {res['accuracy']:.4f} over {res['tokens']} target tokens; span-content "
            f"loss {res['content_loss']:.4f}, accuracy {res['content_accuracy']:.4f} over "
            f"{res['content_tokens']} tokens ({res['examples']} examples)"
        )
    return 0
