"""Print the README's results table: every family's estimate next to its closed form.

Usage: python experiments/foundation_table.py [--samples S] [--seed s] [--json]
"""

from __future__ import annotations

import argparse
import json
import math

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.sentences import shared_tokens

N = 1024
COS = 0.9
F = 0.5
L = 32


def rows(samples: int, seed: int) -> list[dict]:
    """Run every family in both modes where defined; attach the closed form where one exists."""
    dist = math.sqrt(2 - 2 * COS)
    s = shared_tokens(F, L)
    cases = [
        ("simhash", {}, {"cosine": COS}, theory.simhash_probability(N, COS)),
        ("pstable", {}, {"cosine": COS}, theory.pstable_probability(N, dist)),
        ("voronoi", {}, {"cosine": COS}, None),
        ("crosspolytope", {}, {"cosine": COS}, None),
        ("crosspolytope", {"rotation": "hadamard"}, {"cosine": COS}, None),
        ("simhash", {}, {"overlap": F}, None),
        ("voronoi", {}, {"overlap": F}, None),
        ("minhash", {}, {"overlap": F}, theory.jaccard(s, L)),
        ("tokenid", {}, {"overlap": F}, theory.tokenid_probability(s, L)),
    ]
    out = []
    for family, params, what, exact in cases:
        modes = ["full"]
        if family not in ("minhash", "tokenid") and params.get("rotation") != "hadamard":
            modes.append("reduced")
        n = 2**40 if family == "minhash" else (40_000 if family == "tokenid" else N)
        for mode in modes:
            e = estimate_collision(
                family, n, samples=samples, seed=seed, mode=mode, length=L, **what, **params
            )
            out.append({**e.to_dict(), "exact": exact})
    return out


def main() -> None:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    table = rows(args.samples, args.seed)
    if args.json:
        print(json.dumps(table))
        return
    print("| family | n | input | mode | estimate [95% CI] | exact | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in table:
        fam = r["family"] + "".join(f" {k}={v}" for k, v in r["params"].items())
        inp = f"cosine {r['cosine']}" if r["cosine"] is not None else f"overlap {r['overlap']}"
        exact = f"{r['exact']:.4f}" if r["exact"] is not None else "pending"
        n = f"2^{r['n'].bit_length() - 1}" if r["n"] & (r["n"] - 1) == 0 else str(r["n"])
        print(
            f"| {fam} | {n} | {inp} | {r['mode']} | {r['estimate']:.4f} "
            f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}] | {exact} | {r['seconds']:.2f} |"
        )


if __name__ == "__main__":
    main()
