"""Engram's hash against its law: the Monte-Carlo numbers of ``proofs/ngram.md`` (Engram, E.2/E.3).

Two runs of the real kernel on the sentence model, as ``tests/hashing/test_engram.py`` makes
them (same points, pairs and seeds), recorded with the law they are compared with:

* ``heads_law``: ``Engram.head_hits`` (a fresh multiplier set per pair, small primes) at the
  points of :data:`HEADS_POINTS`; per point the all-heads frequency and law, and the largest
  ``|z|`` over the bins of the head-count law and the mean per-head rate's ``z``, each ``z``
  with one trial per pair (``sqrt(p (1 - p) / pairs)`` at the law's ``p``: conservative);
* ``small_primes``: Engram's layer output on a coarse compression map (``V_0 = 48`` ids in
  classes 16, 12, 8, 6, 4, 2) at primes 3 and 5, where the uniform-mix model fails for the
  one-token window at ``t = 0``: order 2's head 0 measured against the law on compressed ids.

``figures/engram_checks.json`` is written by

    python experiments/engram_checks.py --out figures/engram_checks.json

(a few seconds). Without ``--out`` it prints the JSON.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from lshsim.bench.report import command_line, write_record
from lshsim.hashing.engram import Engram, EngramHash
from lshsim.laws.engram import engram_heads_law, engram_probability
from lshsim.sentences import sentence_pairs

#: (N, n, H, f, l, V) of the head-count law's check (``test_law_against_monte_carlo``).
HEADS_POINTS = [(2, 3, 3, 0.5, 12, 1000), (3, 2, 4, 0.8, 10, 129280), (2, 5, 2, 0.25, 8, 40)]
HEADS_PAIRS, HEADS_SEED = 12_000, 2026
#: The compressed-ids check (``test_compressed_law_against_monte_carlo``) at primes 3 and 5.
SMALL = {"pairs": 6_000, "seed": 34, "length": 8, "overlap": 0.5, "table_sizes": [3, 5]}
CLASSES = [16, 12, 8, 6, 4, 2]


def _z(freq: float, law: float, pairs: int) -> float:
    """``(freq - law) / sqrt(law (1 - law) / pairs)``: one trial per pair."""
    return (freq - law) / math.sqrt(law * (1 - law) / pairs)


def heads_law() -> list[dict]:
    """The head-count law's check, one dict per point of :data:`HEADS_POINTS`."""
    out = []
    for order, n, heads, overlap, length, vocab in HEADS_POINTS:
        rng = np.random.default_rng(HEADS_SEED)
        sp = sentence_pairs(HEADS_PAIRS, overlap, length=length, vocab=vocab, rng=rng, embed=False)
        kw = {"ngram": order, "heads": heads, "compressed_vocab": vocab}
        hits = Engram.head_hits(n, sp.tokens1, sp.tokens2, rng, **kw)
        primes = Engram.moduli(n, heads)
        law = engram_heads_law(order, primes, overlap, length, vocab=vocab)
        freqs = [float((hits == k).mean()) for k in range(heads + 1)]
        per_head = sum(
            engram_probability(order, primes, overlap, length, vocab=vocab, head=j)
            for j in range(heads)
        )
        per_head_freq = float(hits.mean() / heads)
        out.append(
            {
                "point (N, n, H, f, l, V)": [order, n, heads, overlap, length, vocab],
                "primes": list(primes),
                "frequencies": freqs,
                "law": [float(x) for x in law],
                "all heads": {"frequency": freqs[-1], "law": float(law[-1])},
                "max |z| over the bins": max(
                    abs(_z(f, p, HEADS_PAIRS)) for f, p in zip(freqs, law, strict=True)
                ),
                "per-head rate z": _z(per_head_freq, per_head / heads, HEADS_PAIRS),
            }
        )
    return out


def small_primes() -> dict:
    """Order 2's head 0 at ``t = 0`` on the coarse map at primes 3 and 5: measured and law."""
    s = SMALL
    rng = np.random.default_rng(s["seed"])
    compress = np.repeat(np.arange(len(CLASSES)), CLASSES)
    h = EngramHash(lookup=compress, table_sizes=s["table_sizes"], heads=2, layer_ids=[0], pad_id=5)
    sp = sentence_pairs(
        s["pairs"], s["overlap"], length=s["length"], vocab=len(compress), rng=rng, embed=False
    )
    hits = h.pair_hits(sp.tokens1, sp.tokens2, rng, 0)
    primes = h.primes(0)[2]
    law = engram_probability(
        2, primes, s["overlap"], s["length"], head=0, vocab=len(CLASSES), position=0,
        compress=compress,
    )  # fmt: skip
    return {**s, "primes (order 2)": list(primes), "measured": float(hits[:, 0, 0].mean()),
            "law": float(law)}  # fmt: skip


def main() -> None:
    """Print the JSON, or write it (``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the JSON here instead of printing it")
    args = ap.parse_args()
    points = heads_law()
    doc = {
        "command": command_line("experiments/engram_checks.py"),
        "heads_law": {"pairs": HEADS_PAIRS, "seed": HEADS_SEED, "points": points},
        "heads_law max |z|": {
            "bins": max(p["max |z| over the bins"] for p in points),
            "per-head rate": max(abs(p["per-head rate z"]) for p in points),
        },
        "small_primes": small_primes(),
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
