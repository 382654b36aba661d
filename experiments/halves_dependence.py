"""How much the dependence of a sentence pair's two half-cosines moves product keys' rate.

Product keys on the sentence model collide at ``E[P_vor(s, A1) P_vor(s, A2)]`` over the exact
joint law of the half-cosines ``(A1, A2)`` (:func:`lshsim.sentence_halves.half_cosines`,
``s = sqrt n``). For each setting of :data:`SETTINGS` this draws ``2^16`` pairs ``(A1, A2)``
(seeded) and records the joint average with its standard error (what ``lshsim theory --family
productkey --overlap f`` reports), the product of the two marginal averages
``E[P_vor(s, A1)] E[P_vor(s, A2)]`` (what independent halves would give), their relative
difference and the correlation of ``A1`` and ``A2``. The numbers are those of
``proofs/lookups_beyond.md`` (product keys, sentence model), rendered from
``figures/halves_dependence.json``, which

    python experiments/halves_dependence.py --out figures/halves_dependence.json

writes (a few seconds). Without ``--out`` it prints them.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from lshsim.bench.report import command_line, write_record
from lshsim.laws import spherical as spherical_laws
from lshsim.laws.tables import log_p_table
from lshsim.sentence_halves import half_cosines
from lshsim.theory.sentence import SENTENCE_COSINES

#: (n, d, l, f): buckets, dimension, sentence length and overlap.
SETTINGS = [(64, 16, 8, 0.5), (1024, 64, 32, 0.5)]


def dependence(n: int, dim: int, length: int, overlap: float, draws: int, seed: int) -> dict:
    """The joint and the independent-halves averages at one setting.

    Args:
        n: buckets (a square: ``s = sqrt n`` sub-keys per half).
        dim: the dimension ``d`` (even, >= 4).
        length: the sentence length ``l``.
        overlap: the overlap ``f``.
        draws: pairs ``(A1, A2)`` drawn.
        seed: the draws' seed (``SeedSequence(seed)``, as ``ProductKey.overlap_law``).

    Returns:
        The inputs and ``joint``, ``joint_se``, ``marginals`` (the two averages),
        ``independent`` (their product), ``relative_difference`` (``independent / joint - 1``),
        ``difference_in_se`` and ``correlation`` (of ``A1`` and ``A2``).
    """
    s = math.isqrt(n)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    cos = half_cosines(draws, overlap, length=length, dim=dim, rng=rng)

    def direct(a: float) -> float:
        return spherical_laws.voronoi_log_probability(s, a)

    p = np.exp(log_p_table(direct, cos.reshape(-1), f"voronoi at n={s}")).reshape(-1, 2)
    both = p[:, 0] * p[:, 1]
    joint, se = float(both.mean()), float(both.std(ddof=1) / math.sqrt(draws))
    marginals = [float(p[:, 0].mean()), float(p[:, 1].mean())]
    independent = marginals[0] * marginals[1]
    return {
        "n": n,
        "d": dim,
        "l": length,
        "f": overlap,
        "draws": draws,
        "seed": seed,
        "joint": joint,
        "joint_se": se,
        "marginals": marginals,
        "independent": independent,
        "relative_difference": independent / joint - 1.0,
        "difference_in_se": (independent - joint) / se,
        "correlation": float(np.corrcoef(cos[:, 0], cos[:, 1])[0, 1]),
    }


def main() -> None:
    """Print the settings' numbers, or write the JSON (``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=SENTENCE_COSINES, help="pairs drawn (2^16)")
    ap.add_argument("--seed", type=int, default=0, help="seed (0)")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of printing")
    args = ap.parse_args()
    rows = [dependence(*setting, args.draws, args.seed) for setting in SETTINGS]
    if args.out is None:
        for r in rows:
            print(
                f"n={r['n']} d={r['d']} l={r['l']} f={r['f']}: joint {r['joint']:.6g} "
                f"+- {r['joint_se']:.2g}, independent {r['independent']:.6g} "
                f"({100 * r['relative_difference']:+.2f}%), corr {r['correlation']:+.4f}"
            )
        return
    doc = {
        "command": command_line("experiments/halves_dependence.py"),
        "settings": {"settings": SETTINGS, "draws": args.draws, "seed": args.seed},
        "rows": rows,
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
