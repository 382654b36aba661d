"""Hashed n-grams against Engram's own NumPy hashing (issue 33's row; issue 34).

The peer is a faithful NumPy port of Engram's ``_get_ngram_hashes``
(:class:`lshsim.testing.engram_reference.NgramHashMappingRef`): left-padded shifts, the int64
multiply-XOR mix, one ``mix % prime`` array per head, ``np.stack``. Every row times its
contenders interleaved (:func:`lshsim.bench.timing.interleaved`) on 256 x 512 compressed ids
and reports ``numpy time / our time`` (medians; goal >= 2):

* ``EngramHash.hash``, Engram's hash itself (one fused Numba pass, Barrett floor mod), at
  ``N = 2, H = 8`` (the issue's row) and at the deployed ``N = 3, H = 8``; checked equal to
  the port bit for bit before timing;
* the ``ngram`` family (:class:`lshsim.hashing.NGram`, ``N = 2``, 8 heads): a *different*
  hash (per-head multipliers, salt, ``fmix32``, 32-bit), compared for speed only, as the issue
  does ("3.9 ms against 2.4 ms for Engram's mix + 8 % by primes, 0.62x"); checked equal to its
  own NumPy form :func:`lshsim.hashing.ngram.ngram_hash`.

Run with ``python experiments/bench_ngram.py [--quick] [--json] [--out FILE]``; the rows also
carry the load average before and after (other jobs share the machine).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from lshsim.bench.machine import loadavg, machine_info
from lshsim.bench.report import emit, log
from lshsim.bench.timing import interleaved, speedup_row
from lshsim.hashing.engram import DEFAULT_TABLE, DEFAULT_VOCAB, EngramHash
from lshsim.hashing.ngram import NGram, ngram_hash
from lshsim.testing.engram_reference import NgramHashMappingRef

SEED = 20261126
SHAPE = (256, 512)
HEADS = 8
LAYER = 1


def _ids(vocab: int = DEFAULT_VOCAB) -> np.ndarray:
    return np.random.default_rng(SEED).integers(0, vocab, size=SHAPE, dtype=np.int64)


def _engram_pair(order: int) -> tuple[EngramHash, NgramHashMappingRef]:
    h = EngramHash(
        DEFAULT_VOCAB, table_sizes=DEFAULT_TABLE, max_ngram_size=order, heads=HEADS,
        layer_ids=(LAYER, 15), pad_id=2, seed=0,
    )  # fmt: skip
    ref = NgramHashMappingRef(
        list(h.table_sizes), order, HEADS, [LAYER, 15], h.pad, 0, DEFAULT_VOCAB
    )
    return h, ref


def engram_case(quick: bool) -> list[dict[str, Any]]:
    """EngramHash and the ngram family against the NumPy port of ``_get_ngram_hashes``."""
    rounds = 15 if quick else 60
    x = _ids()
    rows = []
    load0 = loadavg()
    h2, ref2 = _engram_pair(2)
    fam = NGram(DEFAULT_TABLE, 1, SEED, ngram=2, heads=HEADS)
    same2 = bool(np.array_equal(h2.hash(x, LAYER), ref2.get_ngram_hashes(x, LAYER)))
    fam_same = bool(
        np.array_equal(fam.hash(x), ngram_hash(x, fam.multipliers, fam.salts, fam.moduli))
    )
    t = interleaved(
        {
            "engram_hash": lambda: h2.hash(x, LAYER),
            "ngram_family": lambda: fam.hash(x),
            "numpy_port": lambda: ref2.get_ngram_hashes(x, LAYER),
        },
        rounds=rounds,
        warmup=2,
    )
    size = f"{SHAPE[0]} x {SHAPE[1]} ids"
    peer = "NumPy port of Engram's _get_ngram_hashes (int64 mix, mix % p per head, np.stack)"
    rows.append(
        speedup_row(
            f"engram N=2 H=8 {size}: EngramHash.hash",
            t, "engram_hash", "numpy_port", goal=2.0, peer=peer,
            ours="EngramHash.hash: one Numba pass, Barrett floor mod (bit-identical)",
            checks={"bit-identical to the port": same2},
            loadavg_before=load0, loadavg_after=loadavg(),
        )
    )  # fmt: skip
    rows.append(
        speedup_row(
            f"ngram family N=2 H=8 {size} (a different hash; speed only)",
            t, "ngram_family", "numpy_port", goal=2.0, peer=peer,
            ours="NGram(ngram=2, heads=8).hash: per-head multiply-XOR + fmix32, uint32 % m_h",
            checks={"equal to its NumPy form ngram_hash": fam_same},
            loadavg_before=load0, loadavg_after=loadavg(),
        )
    )  # fmt: skip
    load1 = loadavg()
    h3, ref3 = _engram_pair(3)
    same3 = bool(np.array_equal(h3.hash(x, LAYER), ref3.get_ngram_hashes(x, LAYER)))
    t3 = interleaved(
        {
            "engram_hash": lambda: h3.hash(x, LAYER),
            "numpy_port": lambda: ref3.get_ngram_hashes(x, LAYER),
        },
        rounds=rounds,
        warmup=2,
    )
    rows.append(
        speedup_row(
            f"engram N=3 H=8 (deployed) {size}: EngramHash.hash",
            t3, "engram_hash", "numpy_port", goal=2.0, peer=peer,
            ours="EngramHash.hash: one Numba pass, orders 2 and 3, 16 heads (bit-identical)",
            checks={"bit-identical to the port": same3},
            loadavg_before=load1, loadavg_after=loadavg(),
        )
    )  # fmt: skip
    return rows


#: Case name -> ``fn(quick) -> rows`` (the shape of :mod:`lshsim.bench.peers`' case modules).
CASES: dict[str, Callable[[bool], list[dict[str, Any]]]] = {"engram_hash": engram_case}


def format_rows(rows: list[dict[str, Any]]) -> str:
    """One line per row: ratio, goal, verdict, both medians (ms) and the load averages."""
    lines = []
    for r in rows:
        verdict = "met" if r["meets"] else "MISSED"
        lines.append(
            f"{r['name']}: {r['ratio']:.2f}x ({r['goal']}, {verdict}); ours "
            f"{r['ours_s'] * 1e3:.2f} ms, numpy {r['peer_s'] * 1e3:.2f} ms; load "
            f"{r['loadavg_before']} -> {r['loadavg_after']}; checks {r['checks']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the case; print the rows (or JSON). Returns 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--quick", action="store_true", help="15 rounds instead of 60")
    p.add_argument("--json", action="store_true", help="print JSON on stdout (rows on stderr)")
    p.add_argument("--out", help="also write the JSON to this file")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    log(f"engram bench: pid {os.getpid()}, load {loadavg()}")
    rows = engram_case(args.quick)
    payload = {
        "machine": machine_info(),
        "settings": {"quick": args.quick, "shape": list(SHAPE), "heads": HEADS},
        "seconds": round(time.perf_counter() - t0, 1),
        "loadavg_at_end": loadavg(),
        "results": rows,
    }
    emit(payload, format_rows(rows), as_json=args.json, out=args.out)
    return 0
