"""How much more the n-gram windows' collision rate varies than a binomial count of windows.

The ``l - N + 1`` windows of a sentence pair share the pair's draw of shared positions and its
hash function, so their successes are positively correlated. This script estimates the design
effect (Kish): the cluster-robust variance of the rate over pairs divided by the binomial
variance of as many independent windows, ``deff = trials v / (R (1 - R))``, from one large
seeded estimate (``lshsim.estimate.estimate_collision``; its ``effective_trials`` is
``R (1 - R) / v`` times ``(z / t_{K-1})^2``, undone here). The number is the one of
``proofs/intervals.md`` (n-gram windows), rendered from ``figures/window_design_effect.json``:

    python experiments/window_design_effect.py --out figures/window_design_effect.json

(well under a second). Without ``--out`` it prints it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from scipy.special import ndtr, stdtrit

from lshsim.bench.report import command_line, write_record
from lshsim.estimate import estimate_collision
from lshsim.estimation.intervals import Z95

#: The n-gram row of the calibration (N = 4, n = 2^20 buckets, f = 0.5, l = 32), many pairs.
SETTING = {"family": "ngram", "n": 2**20, "overlap": 0.5, "ngram": 4, "length": 32}


def design_effect(pairs: int, seed: int) -> dict:
    """The estimate and its design effect at :data:`SETTING`.

    Args:
        pairs: sentence pairs (a fresh function each).
        seed: the estimate's seed.

    Returns:
        The setting, ``pairs``, ``seed``, ``trials`` (windows), ``estimate`` and
        ``design_effect``.
    """
    s = SETTING
    e = estimate_collision(
        s["family"], s["n"], overlap=s["overlap"], length=s["length"], samples=pairs,
        seed=seed, ngram=s["ngram"],
    )  # fmt: skip
    t = float(stdtrit(e.pairs - 1, ndtr(Z95)))
    independent = e.effective_trials * (t / Z95) ** 2  # R (1 - R) / v
    return {
        **s,
        "pairs": e.pairs,
        "seed": seed,
        "trials": e.samples,
        "estimate": e.estimate,
        "design_effect": e.samples / independent,
    }


def main() -> None:
    """Print the design effect, or write the JSON (``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20_000, help="sentence pairs (20000)")
    ap.add_argument("--seed", type=int, default=0, help="seed (0)")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of printing")
    args = ap.parse_args()
    row = design_effect(args.pairs, args.seed)
    if args.out is None:
        print(f"{row['trials']} windows of {row['pairs']} pairs: rate {row['estimate']:.5f}, "
              f"design effect {row['design_effect']:.3f}")  # fmt: skip
        return
    doc = {
        "command": command_line("experiments/window_design_effect.py"),
        **row,
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
