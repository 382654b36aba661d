"""``lshsim tune``: exact ``(k, L)`` amplification parameters for a recall target.

Thin: the options are checked and handed to :func:`lshsim.tune.tune`; the result is printed
as text or one JSON object, and drawn with ``--figure``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from lshsim.cli.checks import check_figure
from lshsim.cli.simulate import add_family_option, add_family_param_args, family_params
from lshsim.cli.vocabulary import JSON_HELP
from lshsim.cli.work import start_work
from lshsim.hashing import FAMILIES, SIMILARITIES, get_family
from lshsim.tune import FORM_OPTIONS, datasketch_line, foreign_options, make_amplifier, tune

#: Front rows the text prints (``--json`` has them all).
FRONT_ROWS = 10

_EPILOG = """\
two forms:
  sensitivity  --near s1 --far s2 --recall R --false-positive P: recall = P_kL(s1) >= R and
               false_positive = P_kL(s2) <= P, the cheapest such scheme: cost = L k c (hashing,
               c one function's cost: inner products; a min-hash value costs 1) + L N E[p2^k]
               (far candidates, N = --points); --minimise tables for the fewest tables
  threshold    --threshold t [--weights w_fp,w_fn] [--budget num_perm]: datasketch's form,
               minimise w_fp FP + w_fn FN over k L <= num_perm, FP = P(candidate | s < t) and
               FN = P(missed | s >= t): probabilities (datasketch integrates unnormalised
               areas), under a uniform law on [0, t] and [t, 1] or --similarities FILE
  P_kL(s) = 1 - (1 - p(s)^k)^L exactly, p the family's law (per atom given the pair)

similarities, as each family speaks (from the registry):
{similarities}
  cosine: --buckets n; jaccard (min-hash): a band of k values collides w.p. J^k, exactly as
  datasketch's MinHashLSH bands a signature, no --buckets; overlap f on the sentence model:
  amplification changes nothing for a fixed hash (Token-ID) and removes only the spurious
  collisions of hashed n-grams. Not tuned: LSH Forest, LSH Ensemble, multi-probe (no exact
  law here).

examples:
  lshsim tune --family minhash --threshold 0.8 --budget 128
  lshsim tune --family minhash --near 0.8 --far 0.4 --recall 0.95 --false-positive 0.01
  lshsim tune --family simhash --buckets 2 --near 0.9 --far 0.5 --recall 0.9 \\
      --false-positive 0.001 --json
  lshsim tune --family crosspolytope --buckets 64 --threshold 0.7 --budget 64 --figure s.png
"""


def _similarities() -> str:
    """One line per similarity: the families tuned in it, and those without the law."""
    lines = []
    for name in SIMILARITIES:
        tuned = [
            f
            for f, c in FAMILIES.items()
            if c.similarity == name and c.has_law("amplification_law")
        ]
        if tuned:
            lines.append(f"  {name:8s} {', '.join(tuned)}")
    lawless = [f for f, c in FAMILIES.items() if not c.has_law("amplification_law")]
    if lawless:
        lines.append(f"  (no amplification law: {', '.join(lawless)})")
    return "\n".join(lines)


def add_parser(sub) -> None:
    """Add ``tune`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    p = sub.add_parser(
        "tune",
        help="exact (k, L) amplification parameters for a recall target",
        description="Choose k functions per table and L tables (datasketch: r rows per band, "
        "b bands) from the family's exact collision law: the sensitivity form or "
        "datasketch's threshold form; prints the optimum and the Pareto front.",
        epilog=_EPILOG.format(similarities=_similarities()),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    what = p.add_argument_group("what to tune")
    add_family_option(what)
    what.add_argument(
        "-n",
        "--buckets",
        type=int,
        metavar="N",
        help="buckets n of one function (required but for minhash)",
    )
    sens = p.add_argument_group("sensitivity form")
    sens.add_argument("--near", type=float, metavar="s1", help="the near pairs' similarity")
    sens.add_argument("--far", type=float, metavar="s2", help="the far pairs' similarity (< s1)")
    sens.add_argument("--recall", type=float, metavar="R", help="recall target at s1, in (0, 1]")
    sens.add_argument(
        "--false-positive",
        type=float,
        metavar="P",
        help="the most candidate probability at s2, in [0, 1)",
    )
    sens.add_argument(
        "--points",
        type=int,
        metavar="N",
        help="far points per query, for the cost (default 1000000)",
    )
    sens.add_argument(
        "--minimise", choices=("cost", "tables"), help="what the optimum minimises (default cost)"
    )
    thr = p.add_argument_group("threshold form (datasketch's)")
    thr.add_argument("--threshold", type=float, metavar="t", help="the similarity threshold t")
    thr.add_argument(
        "--weights", metavar="w_fp,w_fn", help="weights of FP and FN (default 0.5,0.5)"
    )
    thr.add_argument(
        "--similarities",
        metavar="FILE",
        help="pair similarities: one per line, or 'value count' lines (default: "
        "uniform on [0, t] and [t, 1])",
    )
    both = p.add_argument_group("either form")
    both.add_argument(
        "--budget",
        type=int,
        metavar="B",
        help="at most B functions k L (threshold form: num_perm, default 128)",
    )
    both.add_argument(
        "--probes",
        type=int,
        metavar="T",
        help="buckets probed per table (default 1; multi-probe has no exact law here)",
    )
    sentence = p.add_argument_group("sentence model (tokenid, ngram)")
    sentence.add_argument(
        "--length", type=int, metavar="l", help="sentence length l in tokens (default 32)"
    )
    sentence.add_argument(
        "--vocab", type=int, metavar="V", help="vocabulary size V (default 32128)"
    )
    what.add_argument(
        "--dim",
        type=int,
        metavar="d",
        help="input dimension d, for the hadamard cross-polytope's cost",
    )
    add_family_param_args(p)
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    out.add_argument(
        "--figure", metavar="FILE", help="draw the S-curve with the thresholds (.png, .svg or .pdf)"
    )
    p.set_defaults(func=run_tune)


def _weights(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.split(",")
    try:
        values = tuple(float(x) for x in parts)
    except ValueError:
        values = ()
    if len(values) != 2:
        raise ValueError(f"--weights must be two numbers w_fp,w_fn, got {text!r}")
    return values


def run_tune(args: argparse.Namespace) -> int:
    """Tune, then print the optimum and the front (or one JSON object); draw with --figure.

    Args:
        args: the parsed ``tune`` arguments.

    Returns:
        The exit status, 0.
    """
    if args.probes not in (None, 1):
        raise ValueError(
            f"--probes: multi-probe has no exact law in lshsim (the joint law of the probed "
            f"buckets is not derived), so only 1 is taken, got {args.probes}"
        )
    figure = check_figure(args.figure)
    sentence = {k: v for k in ("length", "vocab") if (v := getattr(args, k)) is not None}
    if sentence and get_family(args.family).similarity != "overlap":
        raise ValueError(f"--{next(iter(sentence))} applies to the sentence-model families only")
    options = {
        "near": args.near,
        "far": args.far,
        "recall": args.recall,
        "false_positive": args.false_positive,
        "threshold": args.threshold,
        "budget": args.budget,
        "buckets": args.buckets,
        "dim": args.dim,
    }
    given = {name: getattr(args, name) for names in FORM_OPTIONS.values() for name in names}
    form, foreign = foreign_options(args.threshold, **given)
    if foreign:  # the library's check, in the command's option names
        flags = "--near/--far" if form == "sensitivity" else "--threshold"
        raise ValueError(f"--{foreign[0]} is not an option of the {form} form ({flags})")
    options.update(points=args.points, minimise=args.minimise)
    result = tune(
        args.family,
        weights=_weights(args.weights),
        similarities=args.similarities,
        **options,
        **sentence,
        **family_params(args),
    )
    start_work()  # tune's checks are the library's, made as it searches (a second or less)
    data = result.to_dict()
    if figure is not None:
        _draw(result, data, figure, {**sentence, "dim": args.dim})
    if args.json:
        print(json.dumps(data))
    else:
        _print_text(result, data)
    return 0


def _draw(result, data: dict, figure: Path, options: dict) -> None:
    from lshsim.plots.save import save_figure
    from lshsim.plots.tune import plot_tuning

    amp = make_amplifier(result.family, buckets=result.n, **options, **result.params)
    lo, hi = amp.bounds
    asked = [v for k in ("near", "far", "threshold") if (v := result.inputs.get(k)) is not None]
    left = max(lo, min(0.0, *asked))  # negative cosines only where asked
    grid = amp.grid()
    s = grid if grid is not None else np.linspace(left, hi, 201)
    curve = amp.curve(s, result.best.k, result.best.L)
    single = amp.curve(s, 1, 1)
    save_figure(
        plot_tuning(s, curve, single, data),
        figure.with_suffix(""),
        (figure.suffix.lower().lstrip("."),),
    )


def _print_text(result, data: dict) -> None:
    best, inputs = data["best"], result.inputs
    n = "" if result.n is None else f", n = {result.n}"
    print(f"family {result.family}{n}, {result.form} form, similarity = {result.similarity}")
    bands = f" (b = {best['L']} bands, r = {best['k']} rows)" if result.n is None else ""
    print(f"optimum: k = {best['k']} per table, L = {best['L']} tables{bands}")
    print(
        f"  recall {best['recall']:.6g}, false_positive {best['false_positive']:.6g}, "
        f"false_negative {best['false_negative']:.6g}"
    )
    if result.form == "threshold":
        unit = result.cost_unit
        cost = "" if unit == "functions" else f", cost {best['hashing']:.6g} {unit}"
        print(
            f"  {best['hash_functions']} functions{cost}; {inputs['unused']} of the budget's "
            f"{inputs['budget']} unused"
        )
        print(f"  similarities: {inputs['similarities']}")
    else:
        print(
            f"  cost {best['cost']:.6g} {result.cost_unit} per query: hashing "
            f"{best['hashing']:.6g} ({best['hash_functions']} functions), far candidates "
            f"{best['candidates']:.6g} (counted per table) of {inputs['points']}"
        )
    if result.similarity == "jaccard":
        print(f"datasketch: {datasketch_line(result)}")
        if result.form == "sensitivity":
            per = best["false_positive"] * inputs["points"]
            print(f"distinct far candidates per query at --points {inputs['points']}: {per:.6g}")
    for note in result.notes:
        print(f"note: {note}")
    front = data["front"]
    print(f"Pareto front ({len(front)} schemes; cost, recall, false positives):")
    print(f"  {'k':>5} {'L':>8} {'cost':>12} {'recall':>10} {'false_pos':>10}")
    for row in front[:FRONT_ROWS]:
        print(
            f"  {row['k']:>5} {row['L']:>8} {row['cost']:>12.6g} {row['recall']:>10.6g} "
            f"{row['false_positive']:>10.6g}"
        )
    if len(front) > FRONT_ROWS:
        print(f"  ... {len(front) - FRONT_ROWS} more (--json)")
