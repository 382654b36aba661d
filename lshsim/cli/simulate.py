"""``lshsim simulate`` and ``lshsim theory``: a family's collision probability, estimated or exact.

Both commands take the same target flags (:func:`add_target_args`): the family, the number of
buckets, and either a sentence overlap f or an exact cosine.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from lshsim import theory
from lshsim._validate import check_int
from lshsim.cli import simulate_topk
from lshsim.cli.families import family_help
from lshsim.cli.output import print_rows
from lshsim.cli.vocabulary import JSON_HELP
from lshsim.cli.work import start_work
from lshsim.estimate import MODES, check_estimate, estimate_collision
from lshsim.hashing import FAMILIES, get_family
from lshsim.laws.topk_sentences import SENTENCE_TOPK_DRAWS
from lshsim.sentences import shared_tokens
from lshsim.theory import COSINE_FAMILIES, SENTENCE_COSINES, amplification

_SIMULATE_EPILOG = (
    """\
families:
"""
    + "\n".join(f"  {k:14s} {v}" for k, v in family_help().items())
    + """

examples:
  lshsim simulate --family voronoi --buckets 1024 --overlap 0.5
  lshsim simulate --family simhash --buckets 65536 --cosine 0.9 --mode reduced --json
  lshsim simulate --family crosspolytope --rotation hadamard --buckets 256 --cosine 0.8
  lshsim simulate --family crosspolytope --rotation orthogonal --buckets 64 --cosine 0.5 --dim 64
  lshsim simulate --family minhash --buckets 1048576 --overlap 0.3 --k 2
  lshsim simulate --family ngram --ngram 2 --heads 4 --buckets 7 --overlap 0.5 --length 16
  lshsim simulate --family productkey --buckets 1024 --cosine 0.8 --topk 4 --dim 16
"""
)

_THEORY_EPILOG = """two exponents (with --cosine a):
  rho      = -ln P(n, a) / ln n, the paper's: P = n^-rho
  rho_lsh  = ln(1/p1) / ln(1/p2), p1 = P(n, a), p2 = P(n, a2) at the far cosine --far a2
             (default 0): the standard LSH exponent (query time ~ N^rho_lsh over N points).
  They coincide exactly when P(n, a2) = 1/n: at a2 = 0 for simhash, voronoi and the
  gaussian-projection crosspolytope at every n; not for pstable (P(n, 0) != 1/n).
  rho_lsh is null when --far is not given and a <= 0 (no far cosine below a).

amplification (--tables L --concat k; either alone means the other is 1):
  amplified     = 1 - (1 - p1^k)^L   (a near pair meets in some table)
  amplified_far = 1 - (1 - p2^k)^L   (with --far: a far point is retrieved)
  query_cost    = L k c inner products of length d to hash one query, c per hash function:
                  simhash log2 n, pstable k, voronoi n, crosspolytope n/2 (gaussian-projection,
                  orthogonal), hadamard 3 D (log2 D + 1) / (2d), D = 2^ceil(log2 max(d, n/2))
                  (see lshsim.theory.amplification)

examples:
  lshsim theory --family voronoi --buckets 1048576 --cosine 0.5
  lshsim theory --family crosspolytope --buckets 64 --cosine 0.8 --far 0.2 --tables 20 --concat 3
  lshsim theory --family simhash --buckets 1024 --overlap 0.5 --dim 64 --length 32 --json
  lshsim theory --family ngram --ngram 3 --buckets 160651 --overlap 0.8 --heads 8 --json
  lshsim theory --family productkey --buckets 1048576 --half-cosines 0.6,0.8
  lshsim theory --family voronoi --buckets 4096 --cosine 0.8 --topk 4

hashed n-grams (--family ngram, --overlap f): the rate at an aligned full window (t >= N-1)
  q = s(s-1)...(s-N+1) / (l(l-1)...(l-N+1)), s = round(f l): all N positions shared
  probability = q + (1 - q) prod_h 1/m_h (one head: q + (1-q)/n); heads_law: P(K = k) heads
  agree = q 1{k=H} + (1-q) PoissonBinomial(1/m_h); f_power = (s/l)^N, limit_bounds on
  (s/l)^N - q (see lshsim.laws.ngram, proofs/ngram.md)
"""


def add_target_args(p: argparse.ArgumentParser):
    """Add the arguments that say what to compute, in help groups by what they configure.

    "what to compute" (family, buckets, overlap or cosine, top-k), "sentence model" (the
    options of ``--overlap``), then one group per family's own parameters (from the registry).

    Args:
        p: the ``simulate`` or ``theory`` parser.

    Returns:
        ``(what, sentence)``: the required group of ``--overlap`` and ``--cosine`` (``theory``
        adds one more) and the sentence-model group (``theory`` adds its options).
    """
    target = p.add_argument_group("what to compute")
    add_family_option(target)
    target.add_argument(
        "-n",
        "--buckets",
        required=True,
        type=int,
        metavar="N",
        help="number of buckets n (>= 2; a power of two for simhash and default "
        "pstable, even for crosspolytope)",
    )
    what = target.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--overlap",
        type=float,
        metavar="f",
        help="fraction f in [0, 1] of shared tokens (sentence model)",
    )
    halves = ", ".join(name for name, cls in FAMILIES.items() if cls.halves)
    what.add_argument(
        "--cosine",
        type=float,
        metavar="a",
        help=f"exact cosine a in [-1, 1] of two unit vectors (vector families; {halves}: both "
        "halves at a)",
    )
    target.add_argument(
        "--topk",
        type=int,
        metavar="k",
        help="top-k overlap E|T_k(x) ∩ T_k(y)|/k instead of the top-1 collision (voronoi, "
        "crosspolytope, productkey: PKM's top-k per half, then top-k of the k^2 sums); "
        "theory: exact for voronoi at a --cosine (k <= 16), numerical for productkey "
        "(k <= 32, with its error bound); with --overlap their sentence-model average",
    )
    target.add_argument(
        "--dim",
        type=int,
        metavar="d",
        help="embedding dimension d (default 64; >= 2 with --overlap; no effect in --mode "
        "reduced at a --cosine)",
    )
    sentence = p.add_argument_group("sentence model (with --overlap)")
    sentence.add_argument(
        "--length",
        type=int,
        metavar="l",
        help="sentence length l in tokens (default 32)",
    )
    sentence.add_argument(
        "--vocab",
        type=int,
        metavar="V",
        help="vocabulary size V (default 32128, T5's; needs V >= 2l - round(fl))",
    )
    add_family_param_args(p)
    return what, sentence


def add_family_option(group) -> None:
    """Add the required ``--family`` (the registry's names) to a parser or help group."""
    group.add_argument(
        "--family",
        required=True,
        choices=list(FAMILIES),
        metavar="F",
        help="lookup family: " + ", ".join(FAMILIES),
    )


def family_options() -> dict[str, list]:
    """Every family parameter by CLI option: ``{option: [(family, Param), ...]}``.

    Derived from the registry: a family registered from outside the package brings its
    options with it.
    """
    out: dict[str, list] = {}
    for name, cls in FAMILIES.items():
        for param in cls.parameters:
            out.setdefault(param.option, []).append((name, param))
    return out


def add_family_param_args(p: argparse.ArgumentParser) -> None:
    """Add one option per family parameter (``--rotation``, ``--k``, ``--width``, ...).

    Each goes to the help group of the families that have it ("family pstable, minhash"),
    derived from the family objects' ``parameters``.
    """
    groups: dict[tuple[str, ...], argparse._ArgumentGroup] = {}
    for option, owners in family_options().items():
        first = owners[0][1]
        kwargs: dict = {"metavar": first.metavar or option.upper()}
        if first.choices:
            kwargs["choices"] = first.choices
        else:
            kwargs["type"] = first.type
        helps = dict.fromkeys(param.help for _, param in owners)
        names = tuple(name for name, _ in owners)
        if names not in groups:
            groups[names] = p.add_argument_group("family " + ", ".join(names))
        groups[names].add_argument(f"--{option}", dest=first.dest, help="; ".join(helps), **kwargs)


def add_parsers(sub) -> None:
    """Add ``simulate`` and ``theory`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    _add_simulate_parser(sub)
    _add_theory_parser(sub)


def _add_simulate_parser(sub) -> None:
    sim = sub.add_parser(
        "simulate",
        help="estimate a family's collision probability with a 95%% CI",
        description="Estimate P[h(x) = h(y)] over a fresh hash function per trial, with a "
        "Wilson 95% confidence interval.",
        epilog=_SIMULATE_EPILOG,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    add_target_args(sim)
    est = sim.add_argument_group("estimation")
    est.add_argument(
        "--samples",
        type=int,
        default=10_000,
        metavar="S",
        help="number of sentence/vector pairs (default 10000)",
    )
    est.add_argument(
        "--seed", type=int, default=0, metavar="s", help="seed (default 0); same seed, same numbers"
    )
    est.add_argument(
        "--mode",
        choices=MODES,
        default="auto",
        help="full: hash real d-dim vectors; reduced: sample only the sufficient "
        "statistics (exact; "
        + ", ".join(name for name, cls in FAMILIES.items() if cls.reduced)
        + "; crosspolytope only with the gaussian-projection rotation); auto (default): "
        "reduced where it exists, else full (full with --dim at a --cosine); the output "
        "says which ran",
    )
    est.add_argument(
        "--threads",
        type=int,
        metavar="T",
        help="worker threads (default NUMBA_NUM_THREADS where threads pay: reduced mode, "
        "full voronoi and dense-rotation crosspolytope; else 1); the numbers do not depend on it",
    )
    out = sim.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    sim.set_defaults(func=run_simulate)


def _add_theory_parser(sub) -> None:
    th = sub.add_parser(
        "theory",
        help="exact collision probability, rho = -log P / log n, rho_lsh, amplification",
        description="Exact collision probability of a family at n buckets: closed forms "
        "(simhash, pstable, minhash, tokenid, ngram) or 2-D quadrature (voronoi, gaussian "
        "crosspolytope; relative error <= 1e-9). With --overlap, the exact P(a) is averaged "
        "over the sentence model's cosine law (the target of `lshsim simulate --overlap`).",
        epilog=_THEORY_EPILOG,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    what, sentence = add_target_args(th)
    what.add_argument(
        "--half-cosines",
        metavar="a1,a2",
        help="productkey: the cosines of the two halves (--cosine a is both at a)",
    )
    sentence.add_argument(
        "--cosines",
        type=int,
        metavar="C",
        help=f"cosines sampled for the average (default {SENTENCE_COSINES}; with --topk "
        f"{SENTENCE_TOPK_DRAWS})",
    )
    sentence.add_argument(
        "--seed", type=int, metavar="s", help="seed of the sampled cosines (default 0)"
    )
    amp = th.add_argument_group("LSH exponent and amplification (with --cosine)")
    amp.add_argument(
        "--far",
        type=float,
        metavar="a2",
        help="with --cosine: the far cosine a2 in [-1, a) of rho_lsh and amplified_far (default 0)",
    )
    amp.add_argument(
        "--tables", type=int, metavar="L", help="with --cosine: L independent tables (>= 1)"
    )
    amp.add_argument(
        "--concat", type=int, metavar="k", help="with --cosine: k hashes concatenated per table"
    )
    out = th.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    th.set_defaults(func=run_theory)


def family_params(args) -> dict:
    """The family keywords given by the family options (``--rotation``, ``--k``, ...), checked.

    Raises:
        ValueError: an option of another family.
    """
    params = {}
    for option, owners in family_options().items():
        value = getattr(args, owners[0][1].dest, None)
        if value is None:
            continue
        names = {name: param for name, param in owners}
        if args.family not in names:
            raise ValueError(f"--{option} applies to {' and '.join(names)}, not '{args.family}'")
        params[names[args.family].name] = value
    return params


def _sentence_options(args, dests: tuple[str, ...]) -> dict:
    """The given ``dests`` (omitted ones take the library's defaults); with ``--cosine`` none.

    Raises:
        ValueError: one of ``dests`` is given with ``--cosine``, where it has no effect.
    """
    given = {d: getattr(args, d) for d in dests if getattr(args, d) is not None}
    if args.cosine is not None and given:
        name = "--" + next(iter(given))
        raise ValueError(f"{name} has no effect with --cosine; it is a sentence-model option")
    return given


def realised_overlap(overlap: float, length: int) -> dict:
    """``shared`` tokens ``s = round_half_up(f l)`` and the ``realised_overlap`` ``s / l``.

    The sentence model shares whole tokens, so ``f = 0.5`` at ``l = 1`` computes ``s = 1``,
    ``f = 1``: both outputs say so next to the ``overlap`` asked for.
    """
    s = shared_tokens(overlap, length)
    return {"shared": s, "realised_overlap": s / length}


def run_simulate(args: argparse.Namespace) -> int:
    """Estimate the collision probability and print it as a table or one JSON object.

    Args:
        args: the parsed ``simulate`` arguments.

    Returns:
        The exit status, 0.
    """
    params = family_params(args)
    sentence = _sentence_options(args, ("length", "vocab"))
    mode = args.mode
    if args.dim is not None:
        if args.cosine is not None and mode == "reduced":
            raise ValueError(
                "--dim has no effect with --mode reduced at a --cosine (the sufficient "
                "statistics do not depend on d); drop it or use --mode full"
            )
        if args.cosine is not None and mode == "auto":  # d-dim vectors asked for
            mode = "full"
        sentence["dim"] = args.dim
    if args.topk is not None:
        return simulate_topk.run_simulate_topk(args, sentence, params)
    kw = {
        "overlap": args.overlap,
        "cosine": args.cosine,
        **sentence,
        "samples": args.samples,
        "seed": args.seed,
        "mode": mode,
        **params,
    }
    check_estimate(args.family, args.buckets, **kw)
    start_work()
    progress = not args.json and sys.stderr.isatty()
    est = estimate_collision(
        args.family, args.buckets, progress=progress, threads=args.threads, **kw
    )
    if args.json:
        extra = {} if est.overlap is None else realised_overlap(est.overlap, est.length)
        print(json.dumps({**est.to_dict(), **extra}))
        return 0
    print_rows(_estimate_rows(est))
    return 0


def _estimate_rows(est) -> list[tuple[str, object]]:
    """The ``simulate`` table's ``(name, value)`` rows for an estimate.

    Each row is named as ``--json`` names the quantity (``n``, ``overlap``, ``cosine``, ...);
    ``95% CI`` shows ``ci_low`` and ``ci_high``, ``samples`` the successes among them.
    """
    d = est.to_dict()
    rows = [
        ("family", est.family + "".join(f" {k}={v}" for k, v in est.params.items())),
        ("n", est.n),
    ]
    if est.overlap is not None:
        rows += [("overlap", est.overlap), *realised_overlap(est.overlap, est.length).items()]
        rows += [("length", est.length), ("vocab", est.vocab)]
    else:
        rows += [("cosine", est.cosine)]
    if est.samples != est.pairs:
        counted = f" ({est.pairs} pairs x {est.samples // est.pairs} positions)"
    else:
        counted = " pairs"
    rows += [
        ("dim", est.dim),
        ("mode", est.mode),
        ("seed", est.seed),
        ("estimate", f"{d['estimate']:.6g}"),
        ("95% CI", f"[{d['ci_low']:.6g}, {d['ci_high']:.6g}]"),
        ("samples", f"{est.successes} / {est.samples}" + counted),
        ("seconds", f"{est.seconds:.3f}"),
    ]
    return rows


def _lsh_view(args: argparse.Namespace, params: dict, log_p: float) -> dict:
    """``rho_lsh`` at the far cosine and, with ``--tables``/``--concat``, the amplification.

    Without ``--far``, ``rho_lsh`` is None where the cosine is not above the default 0.
    """
    fam, n, a = args.family, args.buckets, args.cosine
    far = 0.0 if args.far is None else args.far
    out: dict = {"far": far}
    if args.far is None and a <= far:
        out["rho_lsh"] = None
    else:
        out["rho_lsh"] = theory.rho_lsh(fam, n, a, far=far, **params)
    out["far_probability"] = theory.probability(fam, n, far, **params)
    if args.tables is None and args.concat is None:
        return out
    tables = 1 if args.tables is None else args.tables
    concat = 1 if args.concat is None else args.concat
    out.update(tables=tables, concat=concat)
    out["amplified"] = amplification.amplified(math.exp(log_p), concat, tables)
    if args.far is not None:
        out["amplified_far"] = amplification.amplified(out["far_probability"], concat, tables)
    out["hash_cost"] = theory.law_or_none(amplification.hash_cost, fam, n, **params)
    if out["hash_cost"] is None:  # no cost in inner products: no query cost
        out["query_cost"] = None
    else:
        out["query_cost"] = amplification.query_cost(fam, n, concat, tables, **params)
    return out


def run_theory(args: argparse.Namespace) -> int:
    """Print the exact collision probability and rho as a table or one JSON object.

    A quantity the family has no law for (``limit_rho``; with ``--tables``/``--concat``,
    ``hash_cost`` and ``query_cost``) is null in ``--json`` and "not available" in the table,
    and everything else is printed: a family needs only its law at a cosine (or at an overlap).

    Args:
        args: the parsed ``theory`` arguments.

    Returns:
        The exit status, 0.
    """
    params = family_params(args)
    sentence = _sentence_options(args, ("dim", "length", "vocab", "cosines", "seed"))
    out = simulate_topk.theory_topk(args, params, sentence)
    if out is not None:
        start_work()
        return simulate_topk.print_out(out, args.json)
    for flag, name in (("tables", "tables (L)"), ("concat", "concat (k)")):
        if getattr(args, flag) is not None:  # before any quadrature
            check_int(name, getattr(args, flag), 1, 2**40 if flag == "tables" else 2**20)
    if args.cosine is not None:
        if args.family not in COSINE_FAMILIES:
            raise ValueError(f"cosine is not defined for family '{args.family}'; use --overlap (f)")
        log_p = theory.log_probability(args.family, args.buckets, args.cosine, **params)
        out = {
            "family": args.family,
            "n": args.buckets,
            "cosine": args.cosine,
            "probability": math.exp(log_p),
            "log_probability": log_p,
            "rho": -log_p / math.log(args.buckets),
            "limit_rho": theory.law_or_none(
                theory.limit_rho, args.family, args.cosine, n=args.buckets, **params
            ),
            **_lsh_view(args, params, log_p),
            "params": params,
        }
    else:
        for flag in ("far", "tables", "concat"):
            if getattr(args, flag) is not None:
                raise ValueError(f"--{flag} needs --cosine: it is about a pair at an exact cosine")
        res = theory.collision_probability(
            args.family,
            args.buckets,
            overlap=args.overlap,
            **sentence,
            **params,
        )
        out = {}
        for key, value in res.to_dict().items():  # the realised overlap next to the asked one
            out[key] = value
            if key == "overlap":
                out.update(realised_overlap(res.overlap, res.length))
        out.update(
            get_family(args.family).overlap_details(res.n, res.overlap, res.length, **params)
        )
    start_work()  # theory's checks are the laws' own, made as they integrate (milliseconds)
    if args.json:
        print(json.dumps(out))
        return 0
    rows = [(k, f"{v:.10g}" if isinstance(v, float) else v) for k, v in out.items()]
    print_rows([(k, "not available" if v is None else v) for k, v in rows])
    return 0
