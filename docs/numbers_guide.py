"""Derived numbers and tables of the other guide pages (``docs/render_numbers.py``).

Each derived number is a function of a :class:`docs.number_sources.Sources` (and an optional
text argument) that reads the result files through ``sources.get``; each table returns
Markdown. Names are unique across the ``docs/numbers_*.py`` modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

PEERS = "bench_peers.json"
SCAN = "bench_scan.json"


def bench_field(sources: Any, file: str, name: str, key: str) -> Any:
    """One field of a benchmark row, the row found by its exact name.

    Args:
        sources: the result files.
        file: a benchmark file (``bench_peers.json``, ``bench_scan.json``).
        name: the row's ``name``.
        key: the field (``ratio``, ``ours_s``, ``meets``, ...).

    Returns:
        The field's value.

    Raises:
        ValueError: no row of that name (the benchmark renamed or dropped it).
    """
    names = sources.get(file, "/results/*/name")
    if name not in names:
        raise ValueError(f"figures/{file}: no benchmark row named {name!r}")
    return sources.get(file, f"/results/{names.index(name)}/{key}")


def _digits(value: float) -> str:
    """A measured value as the tables show it: two decimals below 10, one below 100, else none."""
    decimals = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
    return f"{value:.{decimals}f}"


#: How a speed.md cell shows a row: its value and its goal, from the row's fields.
_UNITS: dict[str, tuple[Callable[[Callable[[str], Any]], str], Callable[..., str]]] = {
    "x": (lambda f: _digits(f("ratio")) + "x", lambda f: f"{f('goal_op')} {f('goal_value'):g}x"),
    "pct": (
        lambda f: f"{100 * f('ratio'):.0f}%",
        lambda f: f"{f('goal_op')} {100 * f('goal_value'):g}%",
    ),
    "ratio": (lambda f: _digits(f("ratio")), lambda f: f"{f('goal_op')} {f('goal_value'):g}"),
    "ms": (
        lambda f: f"{_digits(1e3 * f('ours_s'))} ms",
        lambda f: f"{f('goal_op')} {1e3 * f('peer_s'):g} ms",
    ),
    "s": (lambda f: f"{_digits(f('ratio'))} s", lambda f: f"{f('goal_op')} {f('goal_value'):g} s"),
}

#: speed.md's table: (hot path, peer, parts); a part is (label, row names, unit, range?, file).
_SPEED_ROWS: list[tuple[str, str, list[tuple[str, list[str], str, bool, str]]]] = [
    (
        "simhash, 65536 x 512, k = 16 / 64",
        "FAISS `IndexLSH`; the SGEMM bound",
        [
            (
                "",
                [
                    "simhash m=65536 d=512 k=16 f32 vs FAISS IndexLSH",
                    "simhash m=65536 d=512 k=64 f32 vs FAISS IndexLSH",
                ],
                "x",
                False,
                PEERS,
            ),
            (
                "",
                [
                    "simhash m=65536 d=512 k=16 f32 vs SGEMM bound",
                    "simhash m=65536 d=512 k=64 f32 vs SGEMM bound",
                ],
                "pct",
                False,
                PEERS,
            ),
        ],
    ),
    (
        "voronoi top-1, n = 1024, d = 512",
        "NumPy `(X @ W.T).argmax(1)`",
        [("", ["voronoi top-1 n=1024 d=512 m=65536 f32 vs numpy argmax"], "x", False, PEERS)],
    ),
    (
        "minhash, 128 hashes, 10^5 sets of 20, three ways of hashing",
        "datasketch `MinHash.bulk`",
        [
            (
                "into `out=`: ",
                [
                    "minhash k=128 m=100000 sets x 20 ids vs datasketch_int_affine32"
                    " (ours into a reused buffer)",
                    "minhash k=128 m=100000 sets x 20 ids vs datasketch_int_legacy"
                    " (ours into a reused buffer)",
                    "minhash k=128 m=100000 sets x 20 ids vs datasketch_sha1_affine32"
                    " (ours into a reused buffer)",
                ],
                "x",
                True,
                PEERS,
            ),
            (
                "a fresh result: ",
                [
                    "minhash k=128 m=100000 sets x 20 ids vs datasketch_int_affine32",
                    "minhash k=128 m=100000 sets x 20 ids vs datasketch_int_legacy",
                    "minhash k=128 m=100000 sets x 20 ids vs datasketch_sha1_affine32",
                ],
                "x",
                True,
                PEERS,
            ),
        ],
    ),
    (
        "crosspolytope hadamard, d = 1024, 3 rounds",
        "dense rotation (Gaussian / NumPy matmul); ffht per round",
        [
            (
                "",
                [
                    "crosspolytope hadamard n=2048 d=1024 (D=1024, 3 rounds) m=4096 f32 vs"
                    " gaussian rotation",
                    "crosspolytope hadamard n=2048 d=1024 (D=1024, 3 rounds) m=4096 f32 vs"
                    " numpy dense matmul",
                ],
                "x",
                False,
                PEERS,
            ),
            ("", ["hadamard round D=1024 m=4096 f32 vs ffht"], "x", False, PEERS),
        ],
    ),
    (
        "voronoi / crosspolytope reduced sampler, n = 4096",
        "vectorised NumPy sampler",
        [
            (
                "",
                [
                    "voronoi reduced sampler n=4096 T=512 cos~U(0.8,0.99) vs numpy",
                    "crosspolytope reduced sampler n=4096 T=512 cos~U(0.8,0.99) vs numpy",
                ],
                "x",
                False,
                PEERS,
            )
        ],
    ),
    (
        "exact voronoi / crosspolytope probability, n = 2^20, rtol 1e-6, per value",
        "a fixed budget",
        [
            (
                "",
                [
                    "exact voronoi probability n=2^20 rtol=1e-6, cosines"
                    " (-0.5, 0.0, 0.3, 0.8, 0.99, 0.999)",
                    "exact crosspolytope probability n=2^20 rtol=1e-6, cosines"
                    " (-0.5, 0.0, 0.3, 0.8, 0.99, 0.999)",
                ],
                "ms",
                False,
                PEERS,
            )
        ],
    ),
    (
        "product-key top-k, n = 128^2 / 512^2 / 1024^2, batch 4096",
        "XLM's torch `_get_indices`",
        [
            (
                f"k = {k}: ",
                [
                    f"productkey top-k n={n}^2 k={k} batch=4096 d=512 vs XLM torch"
                    for n in (128, 512, 1024)
                ],
                "x",
                False,
                PEERS,
            )
            for k in (8, 32)
        ],
    ),
    (
        "voronoi, crosspolytope top-k, (n, k) = (1024, 8), (16384, 32)",
        "`torch.topk`; `argpartition`",
        [
            (
                "",
                [
                    f"{family} top-k n={n} k={k} m={m} d=256 f32 vs {peer}"
                    for family in ("voronoi", "crosspolytope")
                    for n, k, m in ((1024, 8, 16384), (16384, 32, 4096))
                ],
                "x",
                True,
                PEERS,
            )
            for peer in ("torch", "numpy")
        ],
    ),
    (
        "`lshsim tune`, threshold form, num_perm 128 / 256",
        "datasketch `_optimal_param`",
        [
            (
                "",
                [f"tune minhash threshold={t} num_perm={b} vs datasketch" for t in (0.5, 0.8, 0.9)],
                "x",
                True,
                PEERS,
            )
            for b in (128, 256)
        ],
    ),
    (
        "n-gram hashing, 8 heads, 256 x 512 ids",
        "Engram's NumPy `_get_ngram_hashes`",
        [
            (
                "Engram-exact N = 2 / 3: ",
                [
                    "engram N=2 H=8 256 x 512 ids: EngramHash.hash",
                    "engram N=3 H=8 (deployed) 256 x 512 ids: EngramHash.hash",
                ],
                "x",
                False,
                PEERS,
            ),
            (
                "n-gram family: ",
                ["ngram family N=2 H=8 256 x 512 ids (a different hash; speed only)"],
                "x",
                False,
                PEERS,
            ),
        ],
    ),
    (
        "reduced top-k sampler, k = 8",
        "itself at n = 2^10; full mode",
        [
            (
                "n = 2^20 / 2^10: ",
                ["voronoi reduced top-k (k=8, a=0.7) time per trial, n=2^20 / n=2^10"],
                "ratio",
                False,
                PEERS,
            ),
            (
                "",
                ["voronoi reduced top-k (k=8, a=0.7) vs full mode, n=2^10, per trial"],
                "x",
                False,
                PEERS,
            ),
        ],
    ),
    (
        "sweep, 16 cells, 2 workers",
        "1 Dask worker",
        [
            (
                "",
                ["sweep of 16 voronoi full-mode cells (n=256, d=64, 2000 pairs): 2 vs 1"],
                "x",
                False,
                PEERS,
            )
        ],
    ),
    (
        "AltUp K = 64 at `small`: `lshsim cost`; B Token-ID r5 `lshsim plan` (scanned), one mesh",
        "CPU seconds",
        [
            (
                "",
                ["AltUp K=64 small: lshsim cost (trace + lower + XLA cost analysis)"],
                "s",
                False,
                PEERS,
            ),
            (
                "",
                ["plan B Token-ID r5, one mesh (1 x 2, batch 256 in 8, bf16, H100), --scan-layers"],
                "s",
                False,
                PEERS,
            ),
        ],
    ),
    (
        "`lshsim plan` of B, every paper variant / Engram, scanned (the default)",
        "CPU seconds",
        [
            (
                "",
                [
                    f"plan base {v}, 1 x 2, batch 128, scanned"
                    for v in (
                        "baseline",
                        "Sum K=2",
                        "SameUp K=2",
                        "AltUp K=2",
                        "AltUp (Gemma 3n) K=2",
                        "Token-ID r5",
                        "Softmax 128",
                        "LSH 128",
                        "N-gram 2x1024",
                    )
                ],
                "s",
                True,
                SCAN,
            ),
            ("", ["plan base Engram N=3, 2 heads, 1 x 2, batch 128, scanned"], "s", False, SCAN),
        ],
    ),
    (
        "AltUp K = 2 train step, tiny / small",
        "baseline T5 step",
        [
            (
                f"{form}: ",
                [f"AltUp K=2 {size} train step ({note})" for size in ("tiny", "small")],
                "x",
                False,
                PEERS,
            )
            for form, note in (
                ("collapsed", "collapsed: output and cross-attention as the baseline"),
                ("wide", "wide: the paper's Table 3 model"),
            )
        ],
    ),
    (
        "T5 train step, tiny / small",
        "`transformers` (torch CPU)",
        [
            (
                "",
                [
                    "T5 tiny train step, batch 32, lengths 128/29, CPU",
                    "T5 small train step, batch 8, lengths 512/114, CPU",
                ],
                "x",
                False,
                PEERS,
            )
        ],
    ),
]


def _speed_part(sources: Any, part: tuple[str, list[str], str, bool, str]) -> tuple[str, ...]:
    """One part of a speed.md row: its goal, its measured values and its verdict.

    Args:
        sources: the result files.
        part: (label, row names, unit, shown as a range, file).

    Returns:
        ``(goal, measured, verdict)``.
    """
    label, names, unit, as_range, file = part
    show, goal = _UNITS[unit]
    fields = [lambda key, n=n: bench_field(sources, file, n, key) for n in names]
    shown = [show(f) for f in fields]
    if as_range:
        order = sorted(range(len(names)), key=lambda i: fields[i]("ratio"))
        low, high = shown[order[0]], shown[order[-1]]
        suffix = {"x": "x", "s": " s"}.get(unit, "")
        measured = f"{low.removesuffix(suffix)}-{high}"
    else:
        measured = " / ".join(shown)
    goals = sorted({goal(f) for f in fields})
    met = sum(bool(f("meets")) for f in fields)
    verdict = "met" if met == len(names) else "missed" if met == 0 else f"{met} of {len(names)} met"
    return " / ".join(goals), label + measured, verdict


def speed_peers(sources: Any) -> str:
    """speed.md's table of lshsim against the peers, from bench_peers.json and bench_scan.json.

    Args:
        sources: the result files.

    Returns:
        The Markdown table: hot path, peer, goal, measured, verdict.
    """
    lines = ["| hot path | peer | goal | measured | verdict |", "| --- | --- | --- | --- | --- |"]
    for path, peer, parts in _SPEED_ROWS:
        cells = [_speed_part(sources, part) for part in parts]
        goal, measured, verdict = (
            column[0] if len(set(column)) == 1 else "; ".join(column)
            for column in zip(*cells, strict=True)
        )
        lines.append(f"| {path} | {peer} | {goal} | {measured} | {verdict} |")
    return "\n".join(lines) + "\n"


def bench_rows_met(sources: Any, file: str = PEERS) -> str:
    """How many rows of a benchmark run met their goal, as ``37 of 52``.

    Args:
        sources: the result files.
        file: the benchmark file (default ``bench_peers.json``).

    Returns:
        The text.
    """
    meets = sources.get(file, "/results/*/meets")
    return f"{sum(bool(m) for m in meets)} of {len(meets)}"


def bench_date(sources: Any, file: str = PEERS) -> str:
    """The day a benchmark file's run started (``2026-11-28``)."""
    return str(sources.get(file, "/machine/date")).split()[0]


SWEEP_ROW = "sweep of 16 voronoi full-mode cells (n=256, d=64, 2000 pairs): 2 vs 1"


def guide_sweep_seconds(sources: Any, workers: str) -> float:
    """The peers' sweep case: the median seconds of the sweep on ``workers`` (1 or 2) workers."""
    key = "1 worker" if workers == "1" else f"{workers} workers"
    times = sorted(bench_field(sources, PEERS, SWEEP_ROW, "times_s")[key])
    return times[len(times) // 2]


def guide_sweep_speedup(sources: Any) -> float:
    """The peers' sweep case: 1 worker's median time over 2 workers'."""
    return guide_sweep_seconds(sources, "1") / guide_sweep_seconds(sources, "2")


def guide_sweep_load(sources: Any) -> str:
    """The peers' sweep case: the one-minute load average before and after it (``2.19-2.1``)."""
    before = bench_field(sources, PEERS, SWEEP_ROW, "loadavg_before")[0]
    after = bench_field(sources, PEERS, SWEEP_ROW, "loadavg_after")[0]
    return f"{min(before, after):g}-{max(before, after):g}"


TUNE = "tune_datasketch.json"


def _tune_rows(sources: Any) -> list[tuple[int, float, int]]:
    """The settings of tune_datasketch.json: ``(index, threshold, num_perm)`` per row."""
    thresholds = sources.get(TUNE, "/*/threshold")
    budgets = sources.get(TUNE, "/*/num_perm")
    return [(i, t, b) for i, (t, b) in enumerate(zip(thresholds, budgets, strict=True))]


def tune_datasketch(sources: Any) -> str:
    """tune.md's table: datasketch's MinHashLSH choices beside lshsim tune's (as figures/TUNE.md).

    Args:
        sources: the result files.

    Returns:
        The Markdown table, one row per (threshold, num_perm).
    """
    lines = [
        "| threshold | num_perm | datasketch (b, r) | its FP, FN (areas) | their true FP, FN "
        "| lshsim (b, r) | lshsim FP, FN | objective: datasketch's choice / lshsim's |",
        "| ---: | ---: | :---: | :---: | :---: | :---: | :---: | :---: |",
    ]
    for i, t, b in _tune_rows(sources):

        def d(key: str, i: int = i) -> Any:
            return sources.get(TUNE, f"/{i}/datasketch/{key}")

        def o(key: str, i: int = i) -> Any:
            return sources.get(TUNE, f"/{i}/lshsim/{key}")

        lines.append(
            f"| {t:g} | {b} | ({d('b')}, {d('r')}) | {d('fp_area'):.4f}, {d('fn_area'):.4f} | "
            f"{d('false_positive'):.4f}, {d('false_negative'):.4f} | ({o('b')}, {o('r')}) | "
            f"{o('false_positive'):.4f}, {o('false_negative'):.4f} | "
            f"{d('objective'):.4f} / {o('objective'):.4f} |"
        )
    return "\n".join(lines) + "\n"


def _tune_split(sources: Any) -> tuple[list[int], list[int]]:
    """The rows of tune_datasketch.json where both pick the same scheme, and the others."""
    same, differ = [], []
    for i, _, _ in _tune_rows(sources):
        ours = (sources.get(TUNE, f"/{i}/lshsim/b"), sources.get(TUNE, f"/{i}/lshsim/r"))
        theirs = (sources.get(TUNE, f"/{i}/datasketch/b"), sources.get(TUNE, f"/{i}/datasketch/r"))
        (same if ours == theirs else differ).append(i)
    return same, differ


def _thresholds(sources: Any, rows: list[int]) -> str:
    """The thresholds of some rows of tune_datasketch.json as text (``0.8 and 0.9``)."""
    ts = sorted({sources.get(TUNE, f"/{i}/threshold") for i in rows})
    words = [f"{t:g}" for t in ts]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def guide_tune_same(sources: Any) -> str:
    """The thresholds at which datasketch and lshsim pick the same scheme at every num_perm."""
    same, differ = _tune_split(sources)
    shared = {sources.get(TUNE, f"/{i}/threshold") for i in same}
    shared -= {sources.get(TUNE, f"/{i}/threshold") for i in differ}
    return _thresholds(sources, [i for i in same if sources.get(TUNE, f"/{i}/threshold") in shared])


def guide_tune_differ(sources: Any) -> str:
    """The thresholds at which datasketch's scheme is not lshsim's."""
    return _thresholds(sources, _tune_split(sources)[1])


def _percent_range(values: list[float]) -> str:
    """Fractions as a rounded percent range (``12-25%``)."""
    low, high = (round(100 * v) for v in (min(values), max(values)))
    return f"{low}%" if low == high else f"{low}-{high}%"


def guide_tune_missed(sources: Any) -> str:
    """The true false-negative rates of datasketch's choices where they are not lshsim's."""
    rows = _tune_split(sources)[1]
    return _percent_range([sources.get(TUNE, f"/{i}/datasketch/false_negative") for i in rows])


def guide_tune_gain(sources: Any) -> str:
    """How much lower lshsim's objective is than datasketch's choice's, where they differ."""
    gains = [
        1
        - sources.get(TUNE, f"/{i}/lshsim/objective")
        / sources.get(TUNE, f"/{i}/datasketch/objective")
        for i in _tune_split(sources)[1]
    ]
    return _percent_range(gains)


def _tune_bench(sources: Any, key: str) -> list[float]:
    """A field of the peers' ``tune`` rows (lshsim tune's threshold form against datasketch).

    Args:
        sources: the result files.
        key: the field.

    Returns:
        Its values, largest first: the rows are read in that order, so the first number read
        is one that a range shows (a changed first number then changes the text).
    """
    names = [n for n in sources.get(PEERS, "/results/*/name") if n.startswith("tune minhash ")]
    rows = {r["name"]: r[key] for r in sources.doc(PEERS)["results"] if r["name"] in names}
    return [bench_field(sources, PEERS, n, key) for n in sorted(names, key=lambda n: -rows[n])]


def guide_tune_ms(sources: Any) -> str:
    """The range of lshsim tune's time per threshold-form search in the peers' run, in ms."""
    seconds = _tune_bench(sources, "ours_s")
    return f"{1e3 * min(seconds):.2f}-{1e3 * max(seconds):.2f}"


def guide_tune_speedup(sources: Any) -> str:
    """The range of lshsim tune's speed-up over datasketch's ``_optimal_param`` (``22-46``)."""
    ratios = _tune_bench(sources, "ratio")
    return f"{min(ratios):.0f}-{max(ratios):.0f}"


def guide_voronoi_excess(sources: Any) -> float:
    """How far (in %) Voronoi's exponent at n = 2^20, cosine 0.5, lies above its limit.

    Args:
        sources: the result files (the exact Voronoi law of ``collision_vs_n``).

    Returns:
        ``100 (rho / ((1 - a) / (1 + a)) - 1)`` with ``rho = -ln P / ln n``.
    """
    from lshsim.theory import limit_rho

    exact = "/data/panels/voronoi/exact/0.5"
    n = 2**20
    i = sources.get("collision_vs_n.json", f"{exact}/n").index(n)
    rho = -math.log(sources.get("collision_vs_n.json", f"{exact}/p/{i}")) / math.log(n)
    return 100 * (rho / limit_rho("voronoi", 0.5) - 1)


def guide_rho_at_half(sources: Any, family: str) -> float:
    """A family's exponent ``rho`` at cosine 0.5, from ``rho_vs_f`` (n = 2^16).

    SimHash's and p-stable's exponents are the same at every ``n = 2^k``.
    """
    i = sources.get("rho_vs_f.json", "/data/f").index(0.5)
    return sources.get("rho_vs_f.json", f"/data/rho/{family}/{i}")


def guide_pstable_rho_lsh(sources: Any) -> float:
    """p-stable's LSH exponent ``ln(1/p1)/ln(1/p2)`` at cosine 0.5 against 0 (exact theory).

    No result file holds it; it is the same at every ``n = 2^k`` (computed at ``2^10``).
    """
    from lshsim.theory import rho_lsh

    return rho_lsh("pstable", 2**10, 0.5)


def guide_pstable_lsh_ratio(sources: Any) -> float:
    """p-stable's ``rho_lsh / rho`` at cosine 0.5 (2.100 at every n and cosine)."""
    return guide_pstable_rho_lsh(sources) / guide_rho_at_half(sources, "pstable")


def guide_cli_default(sources: Any, name: str) -> float:
    """``sweep_timeout``, ``sweep_part_rows`` (``lshsim sweep``) or ``launch_timeout`` (the
    studies' ``--launcher dask``): the constant that the option's help shows as its default."""
    from lshsim.launch.launchers import TIMEOUT as LAUNCH
    from lshsim.sweep.execute import BATCH, TIMEOUT

    return {"sweep_timeout": TIMEOUT, "sweep_part_rows": BATCH, "launch_timeout": LAUNCH}[name]


#: name -> function(sources[, arg]) -> number or text.
DERIVED: dict[str, Callable[..., Any]] = {
    "bench_rows_met": bench_rows_met,
    "bench_date": bench_date,
    "guide_sweep_seconds": guide_sweep_seconds,
    "guide_sweep_speedup": guide_sweep_speedup,
    "guide_sweep_load": guide_sweep_load,
    "guide_tune_same": guide_tune_same,
    "guide_tune_differ": guide_tune_differ,
    "guide_tune_missed": guide_tune_missed,
    "guide_tune_gain": guide_tune_gain,
    "guide_tune_ms": guide_tune_ms,
    "guide_tune_speedup": guide_tune_speedup,
    "guide_voronoi_excess": guide_voronoi_excess,
    "guide_rho_at_half": guide_rho_at_half,
    "guide_pstable_rho_lsh": guide_pstable_rho_lsh,
    "guide_pstable_lsh_ratio": guide_pstable_lsh_ratio,
    "guide_cli_default": guide_cli_default,
}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {
    "speed_peers": speed_peers,
    "tune_datasketch": tune_datasketch,
}
