"""The ``simulate``/``theory`` options of top-k routing and product keys (``--topk``, halves).

``lshsim theory --topk k`` prints the exact Voronoi top-k overlap, product keys' PKM top-k
overlap as a numerical law with its ``error_bound`` (``k <= 32``), and at ``k = 1`` every
top-k family's collision probability; ``--half-cosines a1,a2`` the product-key law at two
half-cosines; ``--family productkey --cosine a`` both halves at ``a``. ``lshsim simulate
--topk k`` estimates the overlap (:func:`lshsim.estimate_topk.estimate_topk_overlap`). The JSON
key ``overlap`` is the top-k overlap fraction and ``probability`` the same number.
"""

from __future__ import annotations

import argparse
import json
import math

from lshsim import theory
from lshsim._validate import check_float, check_int
from lshsim.cli.output import print_rows
from lshsim.cli.work import start_work
from lshsim.estimate_topk import check_topk_estimate, estimate_topk_overlap
from lshsim.hashing import TOPK_FAMILIES, family_names, get_family
from lshsim.laws.topk import check_topk

__all__ = ["print_out", "run_simulate_topk", "theory_topk"]


def print_out(out: dict, as_json: bool) -> int:
    """Print ``out`` as one JSON object or as rows; return 0."""
    if as_json:
        print(json.dumps(out))
    else:
        print_rows([(k, f"{v:.10g}" if isinstance(v, float) else v) for k, v in out.items()])
    return 0


def parse_half_cosines(text: str) -> tuple[float, float]:
    """``"a1,a2"`` -> two floats in ``[-1, 1]``; ``ValueError`` naming ``--half-cosines``."""
    parts = text.split(",")
    try:
        a1, a2 = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"--half-cosines must be two numbers a1,a2, got {text!r}") from None
    for a in (a1, a2):
        if not -1.0 <= a <= 1.0:  # also rejects NaN
            raise ValueError(f"--half-cosines must be in [-1, 1], got {text!r}")
    return a1, a2


def _no_lsh_flags(args, why: str) -> None:
    for flag in ("far", "tables", "concat"):
        if getattr(args, flag) is not None:
            raise ValueError(f"--{flag} applies to the cosine families' top-1, not {why}")


def _halves(args, a1: float, a2: float) -> dict:
    """The law of a family that reads its input in halves, at half-cosines ``a1``, ``a2``."""
    cls = get_family(args.family)
    cls.check_law("log_probability_halves", args.buckets)
    return {"family": args.family, "n": args.buckets, **cls.halves_law(args.buckets, a1, a2)}


def _topk_on_sentences(args, cls, n: int, k: int, params: dict, sentence: dict) -> dict:
    """``theory --topk k --overlap f``: the family's top-k law averaged over the sentence model."""
    from lshsim.laws.topk_sentences import SENTENCE_TOPK_DRAWS
    from lshsim.theory.sentence import SENTENCE_DEFAULTS

    if "vocab" in sentence:
        raise ValueError("--vocab has no effect with --topk (the top-k laws draw the cosines only)")
    if not cls.has_law("topk_overlap_law"):
        raise cls.no_law("topk_overlap_law", "estimate it with `lshsim simulate --topk --overlap`")
    opts = {**SENTENCE_DEFAULTS, "cosines": SENTENCE_TOPK_DRAWS, **sentence}
    f = check_float("overlap (f)", args.overlap, 0.0, 1.0)
    draws = check_int("--cosines", opts["cosines"], 2, 2**24)
    mean, se = cls.topk_overlap_law(
        n, k, f, dim=opts["dim"], length=opts["length"], draws=draws, seed=opts["seed"], **params
    )
    return {
        "family": args.family,
        "n": n,
        "topk": k,
        "overlap": mean,
        "probability": mean,
        "std_error": se,
        "sentence_overlap": f,
        "cosines": draws,
        "dim": opts["dim"],
        "length": opts["length"],
        "seed": opts["seed"],
        "params": params,
    }


def _topk(args, params: dict, sentence: dict) -> dict:
    fam, n, k = args.family, args.buckets, args.topk
    cls = get_family(fam)
    if not cls.has_topk:
        raise ValueError(f"--topk applies to {', '.join(TOPK_FAMILIES)}, not '{fam}'")
    n = cls.check_params(n, **params)["n"]
    k = check_topk(k, cls.max_topk(n))
    if args.cosine is None:
        return _topk_on_sentences(args, cls, n, k, params, sentence)
    bound = None
    if hasattr(cls, "topk_law"):  # a numerical law (product keys' PKM top-k) and its bound
        a = check_float("cosine", args.cosine, -1.0, 1.0)
        value, bound = cls.topk_law(n, k, a, a, **params)
    elif cls.has_law("topk_overlap"):
        value = theory.topk_overlap(fam, n, k, args.cosine, **params)
    elif k == 1:
        p = cls.check_law("log_probability", n, **params)
        a = check_float("cosine", args.cosine, -1.0, 1.0)
        value = math.exp(cls.log_probability(p.pop("n"), a, **p))
    else:
        raise cls.no_law("topk_overlap", "estimate the top-k overlap with `lshsim simulate --topk`")
    return {
        "family": fam,
        "n": n,
        "topk": k,
        "cosine": args.cosine,
        "overlap": value,
        "probability": value,
        **({} if bound is None else {"error_bound": bound}),
        "params": params,
    }


def theory_topk(args: argparse.Namespace, params: dict, sentence: dict) -> dict | None:
    """The ``theory`` output for ``--topk``, ``--half-cosines`` or product keys at a cosine.

    ``sentence``: the sentence-model options given (``--topk`` with ``--overlap``).

    Returns:
        The output dict, or None when the ordinary ``theory`` path applies.
    """
    if args.half_cosines is not None:
        halves = family_names(lambda c: c.halves)
        if args.family not in halves:
            raise ValueError(f"--half-cosines applies to {', '.join(halves)}, not '{args.family}'")
        if args.topk not in (None, 1):
            raise ValueError(f"--topk > 1 has no exact law for {args.family}; use simulate --topk")
        _no_lsh_flags(args, "--half-cosines")
        return _halves(args, *parse_half_cosines(args.half_cosines))
    if args.topk is not None:
        _no_lsh_flags(args, "--topk")
        return _topk(args, params, sentence)
    if get_family(args.family).halves and args.cosine is not None:
        _no_lsh_flags(args, args.family)
        return _halves(args, args.cosine, args.cosine)
    return None


def run_simulate_topk(args: argparse.Namespace, sentence: dict, params: dict) -> int:
    """``lshsim simulate --topk k``: the Monte-Carlo top-k overlap; return 0."""
    if args.threads is not None:
        raise ValueError("--threads has no effect with --topk (its blocks run in order)")
    kw = {
        "overlap": args.overlap,
        "cosine": args.cosine,
        **sentence,
        "samples": args.samples,
        "seed": args.seed,
        "mode": args.mode,
        **params,
    }
    check_topk_estimate(args.family, args.buckets, args.topk, **kw)
    start_work()
    est = estimate_topk_overlap(args.family, args.buckets, args.topk, **kw)
    return print_out(est.to_dict(), args.json)
