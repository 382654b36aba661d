"""``lshsim params`` and ``lshsim cost``: a T5 config's parameter count and FLOPs per token.

JAX is imported only when one of these commands runs, so the rest of the CLI starts fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from lshsim.cli.checks import TRACE_RANGES, check_ranges
from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.model_flags import (
    MEMORY_FIELDS,
    MEMORY_HELP,
    add_config_flag,
    add_memory_flags,
    config_from_args,
)
from lshsim.cli.vocabulary import JSON_HELP
from lshsim.cli.work import start_work
from lshsim.t5.budget import check_lengths
from lshsim.t5.configs import CONFIGS, TABLE3, TABLE3_ALTUP, T5Config


def add_parsers(sub) -> None:
    """Add ``params`` and ``cost`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    _add_params_parser(sub)
    _add_cost_parser(sub)


def _add_params_parser(sub) -> None:
    par = sub.add_parser(
        "params",
        help="count a model config's embedding and non-embedding parameters",
        description=wrap(
            "Count parameters with jax.eval_shape (nothing is allocated). Embedding "
            "parameters are the input table shared by encoder and decoder plus the untied output "
            "projection, as in the paper's Table 3; partial experts are counted apart."
        ),
        epilog=MEMORY_HELP
        + "\nexample:\n  lshsim params --config small --memory altup --blocks 2   "
        "# Table 3's S + AltUp row\n",
        formatter_class=Formatter,
    )
    add_config_flag(par)
    add_memory_flags(par)
    par.add_argument("--json", action="store_true", help=JSON_HELP)
    par.set_defaults(func=run_params)


def _add_cost_parser(sub) -> None:
    co = sub.add_parser(
        "cost",
        help="FLOPs per token from XLA's cost analysis (forward and training)",
        description=wrap(
            "Compile the model for the local backend on abstract inputs (nothing is "
            "allocated) and report XLA's FLOPs per token (encoder plus decoder tokens) of the "
            "forward pass and of the loss gradient, at the config's input length and the targets "
            "length span corruption gives it. --compare prices the paper's variants against the "
            "baseline: AltUp K=2 and 4 (wide, and collapsed), SameUp, Sum, each lookup, and plain "
            "transformers of width 2d and 4d."
        ),
        epilog=MEMORY_HELP + "\nexample:\n  lshsim cost --config tiny --compare\n",
        formatter_class=Formatter,
    )
    add_config_flag(co)
    add_memory_flags(co)
    co.add_argument("--input-length", type=int, metavar="L", help="encoder tokens (config)")
    co.add_argument("--target-length", type=int, metavar="T", help="decoder tokens (spans)")
    co.add_argument("--compare", action="store_true", help="price the paper's variants of --config")
    co.add_argument("--json", action="store_true", help=JSON_HELP)
    co.set_defaults(func=run_cost)


def _memory_summary(cfg: T5Config) -> dict:
    """The config's memory and lookup fields that differ from the plain model."""
    defaults = {f.name: f.default for f in dataclasses.fields(T5Config)}
    fields = MEMORY_FIELDS.values()
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


def run_params(args: argparse.Namespace) -> int:
    """Count the config's parameters and print them (next to Table 3's, where it has the row).

    Args:
        args: the parsed ``params`` arguments.

    Returns:
        The exit status, 0.
    """
    cfg = config_from_args(args)  # checks the options' ranges and combination first
    start_work()

    from lshsim.t5.params import count_params

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


def run_cost(args: argparse.Namespace) -> int:
    """Print XLA's FLOPs per token of the config, or of the paper's variants (``--compare``).

    Args:
        args: the parsed ``cost`` arguments.

    Returns:
        The exit status, 0.
    """
    check_ranges(args, TRACE_RANGES)
    cfg = config_from_args(args)  # checks the options' ranges and combination first
    if args.compare and (cfg.memory != "none" or cfg.lookup != "none"):
        raise ValueError("compare: give a plain --config (the variants add the memory)")
    check_lengths(args.input_length, args.target_length)
    start_work()

    from lshsim.t5.cost import comparison, flops_per_token

    kw = {"input_length": args.input_length, "target_length": args.target_length}
    if args.compare:
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
