"""The model flags shared by ``params``, ``cost``, ``train``, ``eval`` and ``probe``.

``--config`` names a :data:`lshsim.t5.configs.CONFIGS` entry; the external-memory flags
(:func:`add_memory_flags`) override its fields (:data:`MEMORY_FIELDS`), and
:func:`config_from_args` builds the resulting :class:`~lshsim.t5.configs.T5Config`. Importing
this module does not import JAX.
"""

from __future__ import annotations

import argparse

from lshsim.cli.vocabulary import install_aliases
from lshsim.t5.configs import (
    COLLAPSES,
    CONFIGS,
    EXPERT_IMPLS,
    LOOKUPS,
    LSH_FAMILIES,
    MEMORY_METHODS,
    T5Config,
)
from lshsim.t5.lookups import LOOKUPS as LOOKUP_REGISTRY

#: Help of ``--config``.
CONFIG_HELP = "model config: " + ", ".join(CONFIGS) + " (tiny trains on 2 CPU cores)"

#: The external-memory flags explained, for the model commands' epilogs.
MEMORY_HELP = """how the external-memory options combine (paper sections 3 and 6):
  --memory sum|sameup|altup  a K-block wide token embedding: summed at the bottom (sum), or
                             carried through every layer by Algorithm 2 (Predict-Compute-
                             Correct) computing block 0 (sameup) or block i mod K (altup)
  --memory gemma3n           AltUp as Gemma 3n runs it: K blocks made from a d-wide embedding
                             by learned projections, coefficients from a router on the
                             active block (P = I + W_p m, g = 1 + W_c m); only --blocks tunes it
  --lookup tokenid|softmax|lsh  a partial expert per layer: output L(x) + w(x) f_i(x),
                             bucket i from the token id, a learned top-1 softmax router, or
                             SimHash/cross-polytope of the layer input
  --lookup productkey|ngram  beyond the paper: a product-key memory (n = s^2 slots, PKM's
                             top-k, --heads summed, PEER experts with --rank) or hashed
                             n-gram tables (Engram: --ngram N tokens, --heads hash tables of
                             prime sizes >= --buckets, sigmoid-gated)
  --lookup engram            Engram as deployed: orders 2..--ngram hashed together (exact
                             NgramHashMapping, --heads primes per order), compressed by
                             --engram-tokenizer, signed-sqrt gate, short causal convolution
  the two combine freely (see `lshsim cost --config C --compare` for their FLOPs); the other
  flags need the method or lookup they tune: one that would have no effect is an error
"""

#: CLI flag (argparse dest) -> config field.
MEMORY_FIELDS = {
    "memory": "memory",
    "K": "memory_k",
    "extra": "memory_extra",
    "cross": "memory_cross",
    "output": "memory_output",
    "lookup": "lookup",
    "rank": "expert_rank",
    "expert_impl": "expert_impl",
    "buckets": "buckets",
    "lsh_family": "lsh_family",
    "lookup_seed": "lookup_seed",
    "router_jitter": "router_jitter",
    "router_balance_loss": "router_balance_loss",
    "router_z_loss": "router_z_loss",
    "topk": "topk",
    "heads": "lookup_heads",
    "ngram": "ngram",
    "engram_tokenizer": "engram_tokenizer",
    "scan_layers": "scan_layers",
}


def add_config_flag(p: argparse.ArgumentParser) -> None:
    """Add the required ``--config C`` flag.

    Args:
        p: a model command's parser.
    """
    p.add_argument("--config", required=True, metavar="C", help=CONFIG_HELP)


def add_expert_impl_flag(p) -> None:
    """Add ``--expert-impl gather|ragged|auto`` (the config field ``expert_impl``).

    Args:
        p: a parser or argument group (``eval`` takes it alone: a run's memory is fixed, how
            its experts are computed is not).
    """
    p.add_argument(
        "--expert-impl",
        choices=EXPERT_IMPLS,
        help="rank-r experts: ragged (tokens sorted by bucket, jax.lax.ragged_dot, N d memory) "
        "or gather (each token's weights, N d r; fast on CPU); default auto: ragged on GPU/TPU "
        "and in plan (--hardware), gather on CPU; the same numbers",
    )


def add_memory_flags(p: argparse.ArgumentParser) -> None:
    """Add the memory and lookup flags (an "external-memory options" help group).

    One flag per :data:`MEMORY_FIELDS` entry.

    Args:
        p: a model command's parser.
    """
    g = p.add_argument_group("external-memory options (see below)")
    g.add_argument("--memory", choices=MEMORY_METHODS, help="wide-embedding method (none)")
    g.add_argument(
        "--blocks",
        dest="K",
        type=int,
        metavar="K",
        help="K blocks of width d (2; with --memory; formerly --K)",
    )
    g.add_argument(
        "--extra",
        type=int,
        metavar="E",
        help="extra embedding width (default (K-1) d); other values divide-and-project "
        "(with --memory)",
    )
    g.add_argument(
        "--cross",
        choices=COLLAPSES,
        help="decoder cross-attention reads the K-block encoder output wide (Table 3) or "
        "summed (default wide; with --memory sameup|altup)",
    )
    g.add_argument(
        "--output",
        choices=COLLAPSES,
        help="logits from a K d x vocab table (wide, Table 3) or from the summed blocks "
        "(default wide; with --memory sameup|altup)",
    )
    g.add_argument(
        "--lookup",
        choices=LOOKUPS,
        help="partial experts' lookup (none): "
        + "; ".join(f"{name}: {lookup.help}" for name, lookup in LOOKUP_REGISTRY.items()),
    )
    g.add_argument("--rank", type=int, metavar="R", help="expert rank (0; with --lookup)")
    add_expert_impl_flag(g)
    g.add_argument(
        "-n",
        "--buckets",
        type=int,
        metavar="N",
        help="table size per layer (tokenid: the vocabulary; productkey: a square s^2; "
        "ngram, engram: each head's prime is >= N; default 64; with --lookup)",
    )
    g.add_argument(
        "--lsh-family", choices=LSH_FAMILIES, help="LSH lookup family (simhash; with --lookup lsh)"
    )
    g.add_argument(
        "--lookup-seed",
        type=int,
        metavar="S",
        help="seed of the LSH projections or of Engram's hash (0; with --lookup lsh|engram)",
    )
    g.add_argument(
        "--router-jitter",
        type=float,
        metavar="EPS",
        help="softmax jitter (0.01; with --lookup softmax)",
    )
    g.add_argument(
        "--router-balance-loss",
        type=float,
        metavar="C",
        help="load-balance loss weight (0; with --lookup softmax)",
    )
    g.add_argument(
        "--router-z-loss",
        type=float,
        metavar="C",
        help="router z-loss weight (0; with --lookup softmax)",
    )
    g.add_argument(
        "--topk", type=int, metavar="k", help="slots read per token (1; with --lookup productkey)"
    )
    g.add_argument(
        "--heads",
        type=int,
        metavar="H",
        help="product-key heads or n-gram hash heads (engram: per order) (1; with --lookup "
        "productkey|ngram|engram)",
    )
    g.add_argument(
        "--ngram",
        type=int,
        metavar="N",
        help="tokens per hashed n-gram (2; with --lookup ngram); engram: orders 2..N",
    )
    g.add_argument(
        "--engram-tokenizer",
        metavar="PATH",
        help="SentencePiece .model whose vocabulary builds Engram's compressing map "
        "(none: ids hashed uncompressed; with --lookup engram)",
    )
    g.add_argument(
        "--scan-layers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run each stack's layers as one scan over stacked parameters (MaxText's "
        "scan_layers; the default): compiles in seconds at any depth, the same initial "
        "parameters, function and updates as --no-scan-layers (unrolled layers_{i})"
        + "".join(f"; --lookup {name} always runs unrolled" for name in _unscannable()),
    )
    install_aliases(p, "memory")


def _unscannable() -> list[str]:
    """The lookups whose layers cannot be stacked (:attr:`~lshsim.t5.lookups.Lookup.scannable`)."""
    return [name for name, lookup in LOOKUP_REGISTRY.items() if not lookup.scannable]


def config_from_args(args: argparse.Namespace) -> T5Config:
    """The named config with the memory flags (and ``--dtype``, where given) applied.

    Args:
        args: parsed arguments with ``config`` and the :func:`add_memory_flags` flags.

    Returns:
        The config.

    Raises:
        ValueError: a flag's value is out of range, or the flag has no effect on this model
            (the message names it).
    """
    from lshsim.cli.checks import MEMORY_RANGES, check_effective, check_ranges, routed_experts
    from lshsim.t5.configs import get_config

    cfg = get_config(args.config)
    check_ranges(args, MEMORY_RANGES)
    check_effective(args, args.memory or cfg.memory, args.lookup or cfg.lookup)
    changes = {
        field: getattr(args, flag)
        for flag, field in MEMORY_FIELDS.items()
        if getattr(args, flag, None) is not None
    }
    if getattr(args, "dtype", None):
        changes["dtype"] = args.dtype
    cfg = cfg.replace(**changes) if changes else cfg
    if getattr(args, "expert_impl", None) is not None and not routed_experts(cfg):
        raise ValueError(
            f"--expert-impl has no effect: config '{cfg.name}' has no rank-r experts (lookup "
            f"{cfg.lookup}, rank {cfg.expert_rank}); it sets how --lookup ... --rank r runs them"
        )
    if getattr(args, "scan_layers", None) and not cfg.scanned:
        raise ValueError(
            f"--scan-layers: lookup {cfg.lookup} has tables of another size in each layer, so "
            "its layers always run unrolled; leave the flag out"
        )
    return cfg


def add_mesh_flag(p: argparse.ArgumentParser) -> None:
    """Add ``--mesh data=A,model=B`` (see :mod:`lshsim.t5.sharding`)."""
    p.add_argument(
        "--mesh",
        metavar="data=A,model=B",
        help="device mesh of A x B devices (all of them): the batch split over data, the "
        "parameters over model (embedding and output tables by vocabulary, dense kernels by "
        "d_ff and heads, expert tables by bucket; read without gathering a table). Default: "
        "data = all devices, model = 1",
    )
