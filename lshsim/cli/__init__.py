"""The ``lshsim`` command line.

Usage errors (bad values, impossible combinations) print one line ``lshsim: error: ...`` on
stderr and exit with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap

from tqdm import tqdm

from lshsim import __version__, theory
from lshsim.cli import probe as cli_probe
from lshsim.cli import t5 as cli_t5
from lshsim.estimate import MODES, estimate_collision
from lshsim.hashing import FAMILIES
from lshsim.t5 import NonFiniteLossError
from lshsim.theory import COSINE_FAMILIES, SENTENCE_COSINES, QuadratureError

_FAMILY_HELP = {
    "simhash": "sign bits of k = log2(n) Gaussian projections (n a power of two)",
    "pstable": "Datar et al. equispaced hyperplanes, k directions of width w, radix map (n = r^k)",
    "voronoi": "argmax of n Gaussian centres = softmax top-1 with a random router",
    "crosspolytope": "closest of ±e_j after a rotation, n = 2m (gaussian or hadamard rotation)",
    "minhash": "min-hash of the token set, exact mod 2^61-1; k concatenated min-hashes",
    "tokenid": "token id mod n (per-token routing; one trial per aligned position)",
}

_DESCRIPTION = """\
lshsim: how often does a lookup function route two similar inputs to the same bucket?

Simulate the lookup families of "The Power of External Memory in Increasing Predictive Model
Capacity" (Theorem 1) on sentence pairs that share a fraction f of their tokens, or on unit
vectors at an exact cosine, and get a collision-probability estimate with a Wilson 95% CI.
Compute the exact probabilities, check Theorem 1's claims, and reproduce every figure. With
the jax extra: count, train and evaluate T5 v1.1 models (params, train, eval).
"""

_SIMULATE_EPILOG = (
    """\
families:
"""
    + "\n".join(f"  {k:14s} {v}" for k, v in _FAMILY_HELP.items())
    + """

examples:
  lshsim simulate --family voronoi --buckets 1024 --overlap 0.5
  lshsim simulate --family simhash --buckets 65536 --cosine 0.9 --mode reduced --json
  lshsim simulate --family crosspolytope --rotation hadamard --buckets 256 --cosine 0.8
  lshsim simulate --family minhash --buckets 1048576 --overlap 0.3 --k 2
"""
)


#: Optional top-level modules and the extra that installs them.
_OPTIONAL = {m: "jax" for m in ("jax", "jaxlib", "flax", "optax", "orbax", "sentencepiece")} | {
    m: "hf" for m in ("torch", "transformers", "safetensors")
}


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line (``lshsim: error: ...``) and exit 2."""

    def error(self, message):
        self.exit(2, f"lshsim: error: {message}\n")


def _add_target_args(p: argparse.ArgumentParser) -> None:
    """The arguments that say what to compute: family, buckets, cosine or sentence model."""
    p.add_argument(
        "--family",
        required=True,
        choices=list(FAMILIES),
        metavar="F",
        help="lookup family: " + ", ".join(FAMILIES),
    )
    p.add_argument(
        "--buckets",
        required=True,
        type=int,
        metavar="N",
        help="number of buckets n (>= 2; a power of two for simhash and default "
        "pstable, even for crosspolytope)",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--overlap",
        type=float,
        metavar="f",
        help="fraction f in [0, 1] of shared tokens (sentence model)",
    )
    what.add_argument(
        "--cosine",
        type=float,
        metavar="a",
        help="exact cosine a in [-1, 1] of two unit vectors (vector families)",
    )
    p.add_argument(
        "--dim",
        type=int,
        default=64,
        metavar="d",
        help="embedding dimension d (default 64; >= 2 with --overlap)",
    )
    p.add_argument(
        "--length",
        type=int,
        default=32,
        metavar="l",
        help="sentence length l in tokens (default 32)",
    )
    p.add_argument(
        "--vocab",
        type=int,
        default=32128,
        metavar="V",
        help="vocabulary size V (default 32128, T5's; needs V >= 2l - round(fl))",
    )
    p.add_argument(
        "--rotation",
        choices=("gaussian", "hadamard"),
        help="crosspolytope rotation (default gaussian)",
    )
    p.add_argument(
        "--k",
        type=int,
        metavar="K",
        help="pstable: directions (default log2 n); minhash: concatenated min-hashes (default 1)",
    )
    p.add_argument(
        "--width", type=float, metavar="W", help="pstable cell width w in [1e-9, 1e9] (default 4.0)"
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``lshsim`` argument parser (exposed for documentation and tests)."""
    parser = _Parser(
        prog="lshsim", description=_DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"lshsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    sim = sub.add_parser(
        "simulate",
        help="estimate a family's collision probability with a 95%% CI",
        description="Estimate P[h(x) = h(y)] over a fresh hash function per trial, with a "
        "Wilson 95% confidence interval.",
        epilog=_SIMULATE_EPILOG,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    _add_target_args(sim)
    sim.add_argument(
        "--samples",
        type=int,
        default=10_000,
        metavar="S",
        help="number of sentence/vector pairs (default 10000)",
    )
    sim.add_argument(
        "--seed", type=int, default=0, metavar="s", help="seed (default 0); same seed, same numbers"
    )
    sim.add_argument(
        "--mode",
        choices=MODES,
        default="full",
        help="full: hash real d-dim vectors; reduced: sample only the sufficient "
        "statistics (exact; simhash, pstable, voronoi, gaussian crosspolytope)",
    )
    sim.add_argument(
        "--threads",
        type=int,
        metavar="T",
        help="worker threads (default NUMBA_NUM_THREADS where threads pay: reduced mode, "
        "full voronoi and gaussian crosspolytope; else 1); the numbers do not depend on it",
    )
    sim.add_argument("--json", action="store_true", help="print one JSON object (no progress bar)")
    sim.set_defaults(func=_simulate)

    th = sub.add_parser(
        "theory",
        help="exact collision probability and rho = -log P / log n",
        description="Exact collision probability of a family at n buckets: closed forms "
        "(simhash, pstable, minhash, tokenid) or 2-D quadrature (voronoi, gaussian "
        "crosspolytope; relative error <= 1e-9). With --overlap, the exact P(a) is averaged "
        "over the sentence model's cosine law (the target of `lshsim simulate --overlap`).",
        epilog="""examples:
  lshsim theory --family voronoi --buckets 1048576 --cosine 0.5
  lshsim theory --family simhash --buckets 1024 --overlap 0.5 --dim 64 --length 32 --json
""",
        formatter_class=argparse.RawTextHelpFormatter,
    )
    _add_target_args(th)
    th.add_argument(
        "--cosines",
        type=int,
        default=SENTENCE_COSINES,
        metavar="C",
        help=f"with --overlap: cosines sampled for the average (default {SENTENCE_COSINES})",
    )
    th.add_argument(
        "--seed", type=int, default=0, metavar="s", help="with --overlap: seed of the cosines"
    )
    th.add_argument("--json", action="store_true", help="print one JSON object")
    th.set_defaults(func=_theory)

    chk = sub.add_parser(
        "check",
        help="evaluate every claim of Theorem 1 (exit 0 iff all hold)",
        description="Evaluate the precise claims of the paper's Theorem 1 (lshsim.theorems.claims; "
        "proofs/theorem1.md) and print id, verdict, statement and evidence. Exit status 0 "
        "when every claim holds, 1 otherwise.",
    )
    chk.add_argument("--claim", action="append", metavar="ID", help="only this claim (repeatable)")
    chk.add_argument("--json", action="store_true", help='print {"claims": [...]} as JSON')
    chk.set_defaults(func=_check)

    rep = sub.add_parser(
        "reproduce",
        help="run every study, check the claims, write figures/ and REPORT.md",
        description="The toolkit's main job: run the theory-vs-experiment studies on the "
        "embedded defaults (Theorem 1's collision studies, the routing probe of a tiny T5 at "
        "initialisation and after training, Theorem 2's width sweep; the model studies need "
        "the jax extra), evaluate Theorem 1's claims, and write PNG and SVG figures, "
        "REPORT.md and results.json (plus one JSON per study, with its config and seed) into "
        "--out. Same seed, same numbers. Exit status 0 when every claim holds, 1 otherwise.",
    )
    rep.add_argument(
        "--out", default="figures", metavar="DIR", help="output directory (default figures/)"
    )
    rep.add_argument("--seed", type=int, default=0, metavar="s", help="seed (default 0)")
    rep.add_argument(
        "--quick", action="store_true", help="small versions of every study (about 2 minutes)"
    )
    rep.set_defaults(func=_reproduce)

    fam = sub.add_parser("families", help="list the hash families, their inputs and parameters")
    fam.add_argument("--json", action="store_true", help="print JSON")
    fam.set_defaults(func=_families)
    cli_t5.add_parsers(sub)
    cli_probe.add_parser(sub)
    return parser


def _family_params(args) -> dict:
    params = {}
    allowed = {"rotation": ("crosspolytope",), "k": ("pstable", "minhash"), "width": ("pstable",)}
    for flag, fams in allowed.items():
        value = getattr(args, flag)
        if value is None:
            continue
        if args.family not in fams:
            raise ValueError(f"--{flag} applies to {' and '.join(fams)}, not '{args.family}'")
        params["w" if flag == "width" else flag] = value
    return params


def _print_rows(rows) -> None:
    """Print ``(name, value)`` rows as an aligned two-column table."""
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


class _StepBar:
    """A progress bar (stderr, terminals only) for callbacks that announce each step.

    ``progress(name)`` is called as a step starts; a step counts as done when the next one
    starts, or when the ``with`` block ends.
    """

    def __init__(self, total: int, desc: str, show: bool):
        self.bar = tqdm(
            total=total,
            desc=desc,
            disable=not (show and sys.stderr.isatty()),
            file=sys.stderr,
            leave=False,
        )
        self.started = False

    def __enter__(self):
        return self

    def __call__(self, step: str) -> None:
        if self.started:
            self.bar.update()
        self.started = True
        self.bar.set_postfix_str(step)

    def __exit__(self, *exc) -> None:
        if self.started:
            self.bar.update()
        self.bar.close()


def _simulate(args) -> int:
    params = _family_params(args)
    progress = not args.json and sys.stderr.isatty()
    est = estimate_collision(
        args.family,
        args.buckets,
        overlap=args.overlap,
        cosine=args.cosine,
        dim=args.dim,
        length=args.length,
        vocab=args.vocab,
        samples=args.samples,
        seed=args.seed,
        mode=args.mode,
        progress=progress,
        threads=args.threads,
        **params,
    )
    if args.json:
        print(json.dumps(est.to_dict()))
        return 0
    d = est.to_dict()
    rows = [
        ("family", est.family + "".join(f" {k}={v}" for k, v in est.params.items())),
        ("buckets", est.n),
    ]
    if est.overlap is not None:
        rows += [("overlap f", est.overlap), ("length l", est.length), ("vocab V", est.vocab)]
    else:
        rows += [("cosine a", est.cosine)]
    rows += [
        ("dim d", est.dim),
        ("mode", est.mode),
        ("seed", est.seed),
        ("estimate", f"{d['estimate']:.6g}"),
        ("95% CI", f"[{d['ci_low']:.6g}, {d['ci_high']:.6g}]"),
        (
            "samples",
            f"{est.successes} / {est.samples}"
            + (
                f" ({est.pairs} pairs x {est.length} positions)"
                if est.samples != est.pairs
                else " pairs"
            ),
        ),
        ("seconds", f"{est.seconds:.3f}"),
    ]
    _print_rows(rows)
    return 0


def _theory(args) -> int:
    params = _family_params(args)
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
            "limit_rho": theory.limit_rho(args.family, args.cosine, n=args.buckets, **params),
            "params": params,
        }
    else:
        res = theory.collision_probability(
            args.family,
            args.buckets,
            overlap=args.overlap,
            dim=args.dim,
            length=args.length,
            vocab=args.vocab,
            cosines=args.cosines,
            seed=args.seed,
            **params,
        )
        out = res.to_dict()
    if args.json:
        print(json.dumps(out))
        return 0
    _print_rows([(k, f"{v:.10g}" if isinstance(v, float) else v) for k, v in out.items()])
    return 0


def _check(args) -> int:
    from lshsim.theorems import claims  # imports the estimators; keep `lshsim --help` light

    ids = args.claim or list(claims.CLAIMS)
    with _StepBar(len(ids), "claims", show=not args.json) as progress:
        verdicts = claims.check(ids, progress=progress)
    ok = all(v.holds for v in verdicts)
    if args.json:
        print(json.dumps({"holds": ok, "claims": [v.to_dict() for v in verdicts]}))
    else:
        for v in verdicts:
            print(f"{v.id}  {'HOLDS' if v.holds else 'FAILS'}  ({v.seconds:.1f} s)  {v.test}")
            print(textwrap.fill(v.statement, 96, initial_indent="    ", subsequent_indent="    "))
            print(
                textwrap.fill(
                    "evidence: " + json.dumps(v.evidence, default=float),
                    96,
                    initial_indent="    ",
                    subsequent_indent="      ",
                )
            )
        held = sum(v.holds for v in verdicts)
        print(f"{held}/{len(verdicts)} claims hold")
    return 0 if ok else 1


def _reproduce(args) -> int:
    from lshsim._validate import check_int
    from lshsim.studies import reproduce

    seed = check_int("seed", args.seed, 0)
    steps = 2 * len(reproduce.STUDIES) + 1  # each study, each figure, the claims
    with _StepBar(steps, "reproduce", show=True) as progress:
        results = reproduce.run(args.out, quick=args.quick, seed=seed, progress=progress)
    held = sum(c["holds"] for c in results["claims"])
    print(
        f"{held}/{len(results['claims'])} claims hold; wrote {args.out}/REPORT.md, "
        f"{args.out}/results.json and {len(reproduce.STUDIES)} figures (png, svg)"
    )
    return 0 if results["holds"] else 1


def _families(args) -> int:
    rows = [
        {
            "name": name,
            "input": cls.input_kind,
            "reduced": cls.reduced,
            "description": _FAMILY_HELP[name],
        }
        for name, cls in FAMILIES.items()
    ]
    if args.json:
        print(json.dumps({"families": rows}))
    else:
        for r in rows:
            print(f"{r['name']:<14s} {r['input']:<11s} {r['description']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lshsim`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"lshsim: error: {exc}", file=sys.stderr)
        return 2
    except QuadratureError as exc:
        print(f"lshsim: quadrature failed: {exc}", file=sys.stderr)
        return 1
    except NonFiniteLossError as exc:
        print(f"lshsim: training stopped: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in _OPTIONAL:
            extra = _OPTIONAL[exc.name.split(".")[0]]
            print(
                f'lshsim: error: this command needs {exc.name}; pip install "lshsim[{extra}]"',
                file=sys.stderr,
            )
            return 2
        raise
    except (MemoryError, OverflowError) as exc:  # a last resort: the checks should come first
        print(f"lshsim: error: input too large for this machine ({exc})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lshsim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
