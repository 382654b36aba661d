"""Every hot path of lshsim against what a user would otherwise run, timed in the same run.

Usage::

    python experiments/bench_peers.py                  # all cases, full repeats (~10 min)
    python experiments/bench_peers.py --quick --json   # fewer repeats (a few minutes)
    python experiments/bench_peers.py --only simhash minhash
    python experiments/bench_peers.py --markdown figures/BENCHMARKS.md --out bench.json

The cases (``--list``) and their goals (issue 8):

======================  ========================================================  =========
case                    compared with                                             goal
======================  ========================================================  =========
simhash                 FAISS ``IndexLSH``; the SGEMM bound (NumPy ``X @ G.T``)   >= 1.0x;
                                                                                  >= 60%
voronoi                 NumPy ``(X @ W.T).argmax(1)``, with O(m) extra memory     >= 1.0x
minhash                 datasketch ``MinHash.bulk`` (exact arithmetic on our      >= 50x
                        side)
crosspolytope_hadamard  dense Gaussian rotation; ``ffht`` per Hadamard round      >= 10x;
                                                                                  <= 2x
voronoi_reduced         vectorised NumPy sampler of the same statistics,          >= 5x
                        n = 4096
voronoi_exact           our quadrature at a tight tolerance, n = 2^20             <= 50 ms
productkey_topk         XLM's ``HashingMemoryProductFast._get_indices`` (torch,   >= 1.5x
                        2 threads), n = s^2, s in {128, 512, 1024}, k in {8, 32}
engram_hash             NumPy port of Engram's ``_get_ngram_hashes``              >= 2x
tune                    datasketch ``_optimal_param`` (threshold form, same       >= 20x
                        inputs; exact, normalised rates)
altup                   the baseline T5 step                                      <= 1.10x
t5                      transformers T5 on torch (CPU), tiny and small            >= 1.5x
scan_compile            ``lshsim plan`` of base per paper variant, unrolled       <= 30 s
                        (``--no-scan-layers``); CPU seconds scanned
======================  ========================================================  =========

Every comparison is interleaved (:func:`lshsim.bench.timing.interleaved`) so machine noise
hits both sides alike, each timed call right after an untimed call of the same contender (so
that a pool that busy-waits after its call, as torch's OpenMP threads do for ~5 ms, slows
only its own contender), and reports a ratio of medians (the script runs with
``OPENBLAS_THREAD_TIMEOUT=4`` unless set, so that OpenBLAS's spinning idle threads do not slow
the contender after a BLAS call); every row also checks that both sides compute the same
thing (``checks``), so a fast wrong kernel cannot meet a goal. ``--json`` prints
``{"machine": ..., "results": [{"name", "ratio", "goal", "meets", ...}]}`` on stdout (the
table goes to stderr). ``--markdown FILE`` rewrites the block between ``<!-- results -->``
and ``<!-- /results -->`` in FILE (creating it if needed) with the machine and the table,
keeping the prose around it. The peers come with ``pip install -e ".[bench]"`` (see the
README for ``ffht-unofficial``, which needs numpy and pybind11 before it builds).

Exit status: 0 when every case ran (met or not; the table says which), 1 when a case
failed (a missing peer, an error), 2 on bad options.
"""

from __future__ import annotations

import argparse
import importlib
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic
from lshsim.bench.machine import loadavg, machine_info
from lshsim.bench.report import emit, log

#: Case modules, in report order.
MODULES = (
    "lshsim.bench.hashing",
    "lshsim.bench.spherical",
    "lshsim.bench.topk_peers",
    "lshsim.bench.topk_cases",
    "lshsim.bench.ngram_peers",
    "lshsim.bench.t5",
    "lshsim.bench.goals",
    "lshsim.bench.tune_peers",
)
BEGIN, END = "<!-- results -->", "<!-- /results -->"


def load_cases() -> dict[str, Callable[[bool], list[dict[str, Any]]]]:
    """Case name -> ``fn(quick) -> rows``, from every case module, in report order.

    Returns:
        The cases of :data:`MODULES`' ``CASES`` dicts (importing them: numba, not the peers).
    """
    cases: dict[str, Callable] = {}
    for mod in MODULES:
        for name, fn in importlib.import_module(mod).CASES.items():
            if name in cases:
                raise RuntimeError(f"case {name!r} defined twice")
            cases[name] = fn
    return cases


def run_cases(names: list[str], quick: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """Run the named cases; returns (rows, failures). A failing case becomes an error row."""
    cases = load_cases()
    rows, failures = [], []
    for name in names:
        log(f"== {name} ({'quick' if quick else 'full'})")
        t0 = time.perf_counter()
        try:
            got = cases[name](quick)
        except Exception as exc:  # report and go on: one broken peer must not hide the rest
            msg = f"{type(exc).__name__}: {exc}".splitlines()[0]
            log(f"   FAILED: {msg}")
            if not isinstance(exc, ModuleNotFoundError):
                log(traceback.format_exc())
            failures.append(name)
            got = [{"name": name, "case": name, "error": msg, "meets": False, "ratio": None}]
        elapsed = time.perf_counter() - t0
        for r in got:
            r.setdefault("case", name)
            r["case_seconds"] = round(elapsed, 1)
            if "error" not in r:
                log(f"   {r['name']}: {r['ratio']:.3g} ({r['goal']}) {_verdict(r)}")
        rows.extend(got)
    return rows, failures


def _verdict(r: dict[str, Any]) -> str:
    if "error" in r:
        return "ERROR"
    if r["meets"]:
        return "met"
    failed = [k for k, ok in r.get("checks", {}).items() if not ok]
    return "MISSED" + (f" (check failed: {', '.join(failed)})" if failed else "")


def _seconds(s: float | None) -> str:
    if s is None:
        return ""
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def format_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of the rows: hot path, ratio, goal, verdict, times, peer."""
    lines = [
        "| hot path | ratio | goal | verdict | ours | peer | compared with |",
        "| --- | ---: | :---: | --- | ---: | ---: | --- |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | | | ERROR: {r['error']} | | | |")
            continue
        lines.append(
            f"| {r['name']} | {r['ratio']:.3g} | {r['goal']} | {_verdict(r)} | "
            f"{_seconds(r['ours_s'])} | {_seconds(r['peer_s'])} | {r['peer']} |"
        )
    return "\n".join(lines)


def format_notes(rows: list[dict[str, Any]]) -> str:
    """One bullet per row that carries a measured note (what limits it, the bound)."""
    notes = [f"- **{r['name']}**: {r['note']}" for r in rows if r.get("note")]
    return "\n".join(notes)


def markdown_block(payload: dict[str, Any]) -> str:
    """The generated block of ``BENCHMARKS.md``: machine, table, measured notes."""
    m = payload["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
    mode = "quick" if payload["settings"]["quick"] else "full"
    parts = [
        BEGIN,
        f"Run: `python experiments/bench_peers.py{' --quick' if mode == 'quick' else ''}` "
        f"({mode}), {m['date']}, commit {m['commit']}, {payload['seconds']:.0f} s.",
        "",
        f"Machine: {m['cpu']}, {m['cores_available']} of {m['cores']} cores, "
        f"{m['memory_gib']} GiB, SIMD {'/'.join(m['simd']) or 'none'}; load average "
        f"{m['loadavg_at_start']} at start, {payload['loadavg_at_end']} at the end. "
        f"Python {m['python']}; {versions}. Environment: "
        + (", ".join(f"`{k}={v}`" for k, v in m.get("env", {}).items()) or "none set")
        + ".",
        "",
        format_table(payload["results"]),
        "",
        "Ratio = as in each row's goal: a speed-up (peer time / our time) for `>=` goals, "
        "a time ratio for `<=` goals; medians of interleaved rounds, each timed call right "
        "after an untimed one of the same contender (sweeps and datasketch: calls of seconds, "
        "not paired).",
        "",
        format_notes(payload["results"]),
        END,
    ]
    return "\n".join(parts)


def write_markdown(path: Path, payload: dict[str, Any]) -> None:
    """Replace the results block of ``path`` (prose kept); create the file if missing."""
    block = markdown_block(payload)
    text = path.read_text() if path.exists() else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        raise ValueError(f"{path}: no {BEGIN} ... {END} block to replace")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    write_atomic(path, head + block + tail)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (argparse exits 2 with a one-line message on bad input)."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0],
        epilog="See the module docstring (or figures/BENCHMARKS.md) for the goals.",
    )
    p.add_argument("--quick", action="store_true", help="fewer repeats (a few minutes in all)")
    p.add_argument("--json", action="store_true", help="print JSON on stdout (table on stderr)")
    p.add_argument("--only", nargs="+", metavar="CASE", help="run only these cases (--list)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--out", type=Path, help="also write the JSON to this file")
    p.add_argument("--markdown", type=Path, help="rewrite this file's results block")
    args = p.parse_args(argv)
    names = list(load_cases())
    if args.only:
        unknown = [c for c in args.only if c not in names]
        if unknown:
            p.error(f"--only: unknown case(s) {', '.join(unknown)}; choose from {', '.join(names)}")
        args.cases = [c for c in names if c in args.only]
    else:
        args.cases = names
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table or the JSON. Returns the exit status."""
    args = parse_args(argv)
    if args.list:
        print("\n".join(load_cases()))
        return 0
    machine = machine_info()
    t0 = time.perf_counter()
    rows, failures = run_cases(args.cases, args.quick)
    payload = {
        "machine": machine,
        "settings": {"quick": args.quick, "cases": args.cases},
        "seconds": round(time.perf_counter() - t0, 1),
        "loadavg_at_end": loadavg(),
        "results": rows,
        "failed_cases": failures,
    }
    emit(payload, format_table(rows), as_json=args.json, out=args.out)
    if args.markdown:
        write_markdown(args.markdown, payload)
    return 1 if failures else 0
