"""Print the README's results table: every family's estimate next to its exact value.

Usage: python experiments/foundation_table.py [--samples S] [--seed s] [--json]
"""

from __future__ import annotations

import argparse
import json

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.sentences import shared_tokens

N = 1024
COS = 0.9
F = 0.5
L = 32


def rows(samples: int, seed: int) -> list[dict]:
    """Run every family in both modes where defined, next to its exact value.

    Exact values: ``lshsim.theory`` at the cosine; at an overlap, the sentence-model average
    ``theory.collision_probability`` (its standard error is kept as ``exact_se``). The Hadamard
    cross-polytope has no exact form (``None``).
    """
    s = shared_tokens(F, L)

    def sentence(family):
        return theory.collision_probability(family, N, overlap=F, length=L)

    cases = [
        ("simhash", {}, {"cosine": COS}, theory.probability("simhash", N, COS)),
        ("pstable", {}, {"cosine": COS}, theory.probability("pstable", N, COS)),
        ("voronoi", {}, {"cosine": COS}, theory.probability("voronoi", N, COS)),
        ("crosspolytope", {}, {"cosine": COS}, theory.probability("crosspolytope", N, COS)),
        ("crosspolytope", {"rotation": "hadamard"}, {"cosine": COS}, None),
        ("simhash", {}, {"overlap": F}, sentence("simhash")),
        ("voronoi", {}, {"overlap": F}, sentence("voronoi")),
        ("minhash", {}, {"overlap": F}, theory.minhash_probability(2**40, s, L)),
        ("tokenid", {}, {"overlap": F}, theory.tokenid_probability(s, L, n=40_000, vocab=32128)),
    ]
    out = []
    for family, params, what, exact in cases:
        modes = ["full"]
        if family not in ("minhash", "tokenid") and params.get("rotation") != "hadamard":
            modes.append("reduced")
        n = 2**40 if family == "minhash" else (40_000 if family == "tokenid" else N)
        se = 0.0
        if isinstance(exact, theory.SentenceProbability):
            exact, se = exact.probability, exact.std_error
        for mode in modes:
            e = estimate_collision(
                family, n, samples=samples, seed=seed, mode=mode, length=L, **what, **params
            )
            out.append({**e.to_dict(), "exact": exact, "exact_se": se})
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
        if r["exact"] is None:
            exact = "none"
        elif r["exact_se"]:
            exact = f"{r['exact']:.4f} ± {r['exact_se']:.4f}"
        else:
            exact = f"{r['exact']:.4f}"
        n = f"2^{r['n'].bit_length() - 1}" if r["n"] & (r["n"] - 1) == 0 else str(r["n"])
        print(
            f"| {fam} | {n} | {inp} | {r['mode']} | {r['estimate']:.4f} "
            f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}] | {exact} | {r['seconds']:.2f} |"
        )


if __name__ == "__main__":
    main()
