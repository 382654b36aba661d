"""The ``simulate``/``theory`` options of top-k routing and product keys (``--topk``, halves).

``lshsim theory --topk k`` prints the exact Voronoi top-k overlap (and, at ``k = 1``, every
top-k family's collision probability); ``--half-cosines a1,a2`` the product-key law at two
half-cosines; ``--family productkey --cosine a`` both halves at ``a``. ``lshsim simulate
--topk k`` estimates the overlap (:func:`lshsim.estimate_topk.estimate_topk_overlap`). The JSON
key ``overlap`` is the top-k overlap fraction and ``probability`` the same number.
"""

from __future__ import annotations

import argparse
import json
import math

from lshsim import theory
from lshsim.cli.output import print_rows
from lshsim.estimate_topk import estimate_topk_overlap
from lshsim.hashing.productkey import check_square
from lshsim.hashing import TOPK_FAMILIES
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


def _productkey(args, a1: float, a2: float) -> dict:
    log_p = theory.productkey_log_probability(args.buckets, a1, a2)
    s = check_square(args.buckets)
    return {
        "family": "productkey",
        "n": args.buckets,
        "subkeys": s,
        "half_cosines": [a1, a2],
        "probability": math.exp(log_p),
        "log_probability": log_p,
        "rho": -log_p / math.log(args.buckets),
        "voronoi_sqrt_n": [
            theory.voronoi_probability(s, a1),
            theory.voronoi_probability(s, a2),
        ],
    }


def _topk(args, params: dict) -> dict:
    fam, n, k = args.family, args.buckets, args.topk
    if fam not in TOPK_FAMILIES:
        raise ValueError(f"--topk applies to {', '.join(TOPK_FAMILIES)}, not '{fam}'")
    k = check_topk(k, math.isqrt(check_square(n)) if fam == "productkey" else n)
    if args.cosine is None:
        raise ValueError("--topk needs --cosine in theory (use `lshsim simulate --topk`)")
    if fam == "voronoi":
        value = theory.voronoi_topk_overlap(n, k, args.cosine)
    elif k == 1:
        value = (
            theory.productkey_probability(n, args.cosine)
            if fam == "productkey"
            else theory.probability(fam, n, args.cosine, **params)
        )
    else:
        raise ValueError(
            f"--topk > 1 has no exact law for family '{fam}'; estimate it with "
            "`lshsim simulate --topk`"
        )
    return {
        "family": fam,
        "n": n,
        "topk": k,
        "cosine": args.cosine,
        "overlap": value,
        "probability": value,
        "params": params,
    }


def theory_topk(args: argparse.Namespace, params: dict) -> dict | None:
    """The ``theory`` output for ``--topk``, ``--half-cosines`` or product keys at a cosine.

    Returns:
        The output dict, or None when the ordinary ``theory`` path applies.
    """
    if args.half_cosines is not None:
        if args.family != "productkey":
            raise ValueError(f"--half-cosines applies to productkey, not '{args.family}'")
        if args.topk not in (None, 1):
            raise ValueError("--topk > 1 has no exact law for productkey; use simulate --topk")
        _no_lsh_flags(args, "--half-cosines")
        return _productkey(args, *parse_half_cosines(args.half_cosines))
    if args.topk is not None:
        _no_lsh_flags(args, "--topk")
        return _topk(args, params)
    if args.family == "productkey" and args.cosine is not None:
        _no_lsh_flags(args, "productkey")
        return _productkey(args, args.cosine, args.cosine)
    return None


def run_simulate_topk(args: argparse.Namespace, sentence: dict, params: dict) -> int:
    """``lshsim simulate --topk k``: the Monte-Carlo top-k overlap; return 0."""
    if args.mode != "full":
        raise ValueError("--topk is estimated in --mode full only")
    if args.threads is not None:
        raise ValueError("--threads has no effect with --topk (its blocks run in order)")
    est = estimate_topk_overlap(
        args.family,
        args.buckets,
        args.topk,
        overlap=args.overlap,
        cosine=args.cosine,
        **sentence,
        samples=args.samples,
        seed=args.seed,
        **params,
    )
    return print_out(est.to_dict(), args.json)
