"""Derived numbers and tables of the other guide pages and proofs/ (``docs/render_numbers.py``).

Each derived number is a function of a :class:`docs.number_sources.Sources` (and an optional
text argument) that reads the result files through ``sources.get``; each table returns
Markdown. Names are unique across the ``docs/numbers_*.py`` modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

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


def _times(value: float) -> str:
    """A ratio as the table shows it, with ``x``."""
    return _digits(value) + "x"


#: How a speed.md cell shows a row: its value and its goal, from the row's fields.
_UNITS: dict[str, tuple[Callable[[Callable[[str], Any]], str], Callable[..., str]]] = {
    "x": (lambda f: _times(f("ratio")), lambda f: f"{f('goal_op')} {f('goal_value'):g}x"),
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


CALIBRATION = "calibration.json"
#: Short names of calibration.json's rows that proofs/intervals.md quotes.
CALIBRATION_ROWS = {
    "ngram4": "ngram ngram=4 n=1048576 f=0.5 full windows pairs=200",
    "ngram4-50": "ngram ngram=4 n=1048576 f=0.5 full windows pairs=50",
    "ngram3": "ngram ngram=3 n=1048576 f=0.25 full windows pairs=200",
    "ngram2": "ngram ngram=2 n=13 f=0.5 full windows pairs=50",
    "engram": "engram n=1000 f=0.5 full windows pairs=100",
    "tokenid1024": "tokenid n=1024 f=0.5 full positions pairs=200",
    "tokenid64": "tokenid n=64 f=0.25 full positions pairs=50",
    "crosspolytope-f": "crosspolytope n=16 f=0.5 full top-1 pairs=100",
}


def _calibration_row(sources: Any, key: str) -> int:
    """The index in calibration.json of a row named in :data:`CALIBRATION_ROWS`."""
    labels = sources.get(CALIBRATION, "/rows/*/row/label")
    label = CALIBRATION_ROWS[key]
    if label not in labels:
        raise ValueError(f"figures/{CALIBRATION}: no row {label!r}")
    return labels.index(label)


def proof_coverage(sources: Any, arg: str) -> float:
    """A calibration row's coverage under a rule: ``KEY,RULE`` (``pairs``, ``wilson``, ...).

    Args:
        sources: the result files.
        arg: a key of :data:`CALIBRATION_ROWS` and the interval rule (``wilson`` on trials is
            the old rule of the windows and positions rows), comma-separated.

    Returns:
        The share of seeds whose 95% interval held the truth.
    """
    key, rule = arg.split(",")
    return sources.get(CALIBRATION, f"/rows/{_calibration_row(sources, key)}/coverage/{rule}")


def proof_coverage_topk(sources: Any) -> str:
    """The range of the interval on pairs' coverage over the top-k rows (k > 1), ``.3f``."""
    statistics = sources.get(CALIBRATION, "/rows/*/row/statistic")
    rows = [i for i, s in enumerate(statistics) if s.startswith("top-") and s != "top-1"]
    values = [sources.get(CALIBRATION, f"/rows/{i}/coverage/pairs") for i in rows]
    return f"{min(values):.3f}-{max(values):.3f}"


def proof_wilson_exact(sources: Any, key: str) -> float:
    """The exact coverage of the Wilson interval at a row's pairs and truth (``Wilson exact``)."""
    from lshsim.estimation.calibrate import wilson_coverage

    i = _calibration_row(sources, key)
    truth = sources.get(CALIBRATION, f"/rows/{i}/truth")
    return wilson_coverage(sources.get(CALIBRATION, f"/rows/{i}/row/pairs"), truth)


def proof_truth(sources: Any, key: str) -> float:
    """The truth a calibration row's intervals are scored against."""
    return sources.get(CALIBRATION, f"/rows/{_calibration_row(sources, key)}/truth")


WIDTH = "theorem2_width.json"


def _t2_loss(value: float) -> str:
    """A held-out loss as proofs/theorem2.md shows it: two significant digits (``3.2e-4``)."""
    if value >= 1e-3:
        return f"{value:#.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _t2_rows(sources: Any, arch: str, d: int, width_over_d: float) -> list[float]:
    """The held-out losses (one per seed, in seed order) of one student of the width sweep."""
    archs = sources.get(WIDTH, "/data/rows/*/arch")
    dims = sources.get(WIDTH, "/data/rows/*/d")
    ratios = sources.get(WIDTH, "/data/rows/*/width_over_d")
    rows = [
        i
        for i, key in enumerate(zip(archs, dims, ratios, strict=True))
        if key == (arch, d, width_over_d)
    ]
    if not rows:
        raise ValueError(f"figures/{WIDTH}: no rows of {arch} at d = {d}, width {width_over_d} d")
    return [sources.get(WIDTH, f"/data/rows/{i}/heldout_nmse") for i in rows]


def _median(values: list[float]) -> float:
    """The median (the mean of the middle two for an even count)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def proof_t2_losses(sources: Any) -> str:
    """proofs/theorem2.md's table: the median held-out loss per student, ``d`` and width.

    Args:
        sources: the result files.

    Returns:
        Markdown: one row per (d, architecture), one column per width ratio; the cell at the
        median minimal width in bold.
    """
    losses = sources.get(WIDTH, "/data/rows/*/heldout_nmse")
    keys = zip(
        sources.get(WIDTH, "/data/rows/*/d"),
        sources.get(WIDTH, "/data/rows/*/arch"),
        sources.get(WIDTH, "/data/rows/*/width_over_d"),
        strict=True,
    )
    cells: dict[tuple[int, str], dict[float, list[float]]] = {}
    for (d, arch, ratio), loss in zip(keys, losses, strict=True):
        cells.setdefault((d, arch), {}).setdefault(ratio, []).append(loss)
    ratios = sorted({r for row in cells.values() for r in row})
    lines = [
        "| w / d | " + " | ".join(f"{r:g}" for r in ratios) + " |",
        "|---|" + "---|" * len(ratios),
    ]
    for (d, arch), row in sorted(cells.items()):
        best = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/median_over_d")
        shown = [_t2_loss(_median(row[r])) if r in row else "-" for r in ratios]
        shown = [f"**{c}**" if r == best else c for c, r in zip(shown, ratios, strict=True)]
        lines.append(f"| d = {d}, {arch} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _t2_width(value: float | None, d: int | None = None) -> str:
    """A minimal width (``none`` if never reached), or a multiple of ``d``."""
    if value is None:
        return "none"
    return f"{value:g}" if d is None else f"{value / d:g} d"


def proof_t2_minimal(sources: Any) -> str:
    """proofs/theorem2.md's table of the minimal widths at the target, per seed and median.

    Args:
        sources: the result files.

    Returns:
        Markdown: one row per ``d``.
    """
    lines = [
        "| d | A per seed | A median | B per seed | B median | ratio A / B |",
        "|---|---|---|---|---|---|",
    ]
    for d in sources.get(WIDTH, "/data/minimal"):
        cells = [str(d)]
        for arch in ("A", "B"):
            seeds = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/per_seed")
            median = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/median")
            cells.append(", ".join(_t2_width(s) for s in seeds))
            cells.append(f"{_t2_width(median)} = **{_t2_width(median, int(d))}**")
        ratio = sources.get(WIDTH, f"/data/ratio/{d}")
        cells.append("none" if ratio is None else f"**{ratio:.1f}**")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def proof_t2_median(sources: Any, arg: str) -> str:
    """A student's median held-out loss, formatted as the table: ``ARCH,D,WIDTH_OVER_D``."""
    arch, d, ratio = arg.split(",")
    return _t2_loss(_median(_t2_rows(sources, arch, int(d), float(ratio))))


def proof_t2_seed_loss(sources: Any, arg: str) -> str:
    """One seed's held-out loss: ``ARCH,D,WIDTH_OVER_D,SEED`` (seeds counted from 0)."""
    arch, d, ratio, seed = arg.split(",")
    return _t2_loss(_t2_rows(sources, arch, int(d), float(ratio))[int(seed)])


def proof_t2_loss_range(sources: Any, arg: str) -> str:
    """The range over seeds of a student's held-out loss: ``ARCH,D,WIDTH_OVER_D``."""
    arch, d, ratio = arg.split(",")
    losses = _t2_rows(sources, arch, int(d), float(ratio))
    return f"{_t2_loss(min(losses))}-{_t2_loss(max(losses))}"


def proof_t2_strict_width(sources: Any, arg: str) -> str:
    """The smallest width from which every wider width reaches the target: ``ARCH,D,SEED``."""
    arch, d, seed = arg.split(",")
    target = sources.get(WIDTH, "/data/config/target_loss")
    ratios = sources.get(WIDTH, "/data/config/width_ratios")
    reached = [_t2_rows(sources, arch, int(d), r)[int(seed)] <= target for r in ratios]
    widths = [round(r * int(d)) for r in ratios]
    for i in range(len(ratios)):
        if all(reached[i:]):
            return f"{widths[i]}"
    return "none"


def proof_t2_target_ratios(sources: Any) -> str:
    """The median ratios A / B at the other targets, as ``0.2: 2.0 (d=4), 1.5 (d=8); ...``."""
    main = sources.get(WIDTH, "/data/config/target_loss")
    dims = sources.get(WIDTH, "/data/config/dims")
    parts = []
    for target in sources.get(WIDTH, "/data/by_target"):
        if float(target) == main:
            continue
        ratios = [sources.get(WIDTH, f"/data/by_target/{target}/ratio/{d}") for d in dims]
        shown = ["none" if r is None else f"{r:.1f}" for r in ratios]
        if not parts:
            shown = [f"{s} (d={d})" for s, d in zip(shown, dims, strict=True)]
        parts.append(f"{target}: " + ", ".join(shown))
    return "; ".join(parts)


def proof_t2_seeds_reached(sources: Any, arg: str) -> int:
    """How many seeds of a student reach a target at some width: ``TARGET,ARCH,D``."""
    target, arch, d = arg.split(",")
    seeds = sources.get(WIDTH, f"/data/by_target/{target}/minimal/{d}/{arch}/per_seed")
    return sum(s is not None for s in seeds)


def proof_t2_construction(sources: Any, arg: str) -> str:
    """The largest error of the exact constructions: ``DTYPE,ARCHS,DIGITS`` (``float32,AB,1``).

    Args:
        sources: the result files.
        arg: ``float64`` or ``float32``, the constructions (``A``, ``B`` or ``AB``) and the
            digits after the point.

    Returns:
        E.g. ``2.0e-6``: the largest absolute error on the held-out sets over every ``d``.
    """
    dtype, archs, digits = arg.split(",")
    errors = [
        sources.get(WIDTH, f"/data/constructions/{d}/{arch}/max_abs_error_{dtype}")
        for d in sources.get(WIDTH, "/data/config/dims")
        for arch in archs
    ]
    mantissa, exponent = f"{max(errors):.{int(digits)}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def proof_t2_params(sources: Any, arg: str) -> int:
    """A student's parameters at its measured median minimal width: ``ARCH,D,KIND``.

    Args:
        sources: the result files.
        arg: ``A`` or ``B``, ``d``, and ``non_table`` or ``table``.

    Returns:
        :func:`lshsim.theorems.theorem2.bounds.param_counts` at that width.
    """
    from lshsim.theorems.theorem2.bounds import param_counts

    arch, d, kind = arg.split(",")
    width = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/median")
    depth = sources.get(WIDTH, "/data/config/student_depth")
    categories = sources.get(WIDTH, "/data/config/n_categories")
    return param_counts(arch, int(d), int(width), depth, categories)[kind]


def proof_t2_param_ratio(sources: Any, d: str) -> float:
    """A's non-table parameters over B's at the construction widths (``2d`` and ``d``)."""
    a = sources.get(WIDTH, f"/data/params/{d}/A/non_table")
    return a / sources.get(WIDTH, f"/data/params/{d}/B/non_table")


RESULTS = "results.json"


def evidence(sources: Any, claim: str, *keys: str | int) -> Any:
    """A claim's evidence in results.json (``lshsim check``), or a part of it.

    Args:
        sources: the result files.
        claim: the claim's id (``T1.a2``).
        keys: the keys (and list indices) below ``evidence``, each as stored.

    Returns:
        The value.
    """
    path = "".join("/" + quote(str(k).replace("~", "~0").replace("/", "~1")) for k in keys)
    return sources.get(RESULTS, f"/claims/id={claim}/evidence{path}")


def _signed(text: str) -> str:
    """A number's text with a typographic minus, as the proofs print negative numbers."""
    return "\u2212" + text[1:] if text.startswith("-") else text


def _power_of_two(n: float) -> str:
    """``n`` as the proofs write it: ``$2^{20}$`` for a power of two from 1024 on."""
    if isinstance(n, int) and n >= 1024 and n & (n - 1) == 0:
        return f"$2^{{{n.bit_length() - 1}}}$"
    return f"{n:g}"


def _points(sources: Any, claim: str) -> list[tuple[dict[str, str], str]]:
    """A claim's per-point evidence entries (``d=2,n=3,a=-0.5``): parsed labels and keys."""
    out = []
    for key, value in evidence(sources, claim).items():
        if isinstance(value, dict) and "estimate" in value and "=" in key:
            out.append((dict(part.split("=", 1) for part in key.split(",")), key))
    return out


def proof_t1_a2(sources: Any) -> str:
    """proofs/theorem1.md's table of claim T1.a2: Monte-Carlo estimates against P_vor."""
    lines = [
        "| $d$, $n$, $a$ | estimate | se | exact $P_{vor}$ | $z$-score |",
        "|---|---|---|---|---|",
    ]
    for label, key in _points(sources, "T1.a2"):
        e = evidence(sources, "T1.a2", key)
        z = _signed(format(e["z_score"], ".2f"))
        lines.append(
            f"| {label['d']}, {label['n']}, {_signed(label['a'])} | {e['estimate']:.5f} | "
            f"{e['se']:.5f} | {e['exact']:.6g} | {z} |"
        )
    return "\n".join(lines) + "\n"


def proof_t1_b1(sources: Any) -> str:
    """proofs/theorem1.md's table of claim T1.b1: min-hash estimates against J + (1 - J)/n."""
    lines = [
        "| $l$, $s$, $n$ | $J$ | estimate | se | exact $J + (1-J)/n$ | $z$-score |",
        "|---|---|---|---|---|---|",
    ]
    for label, key in _points(sources, "T1.b1"):
        e = evidence(sources, "T1.b1", key)
        z = _signed(format(e["z_score"], ".2f"))
        n = _power_of_two(int(label["n"]))
        lines.append(
            f"| {label['l']}, {label['s']}, {n} | {e['jaccard s/(2l-s)']:.5g} | "
            f"{e['estimate']:.5f} | {e['se']:.5f} | {e['exact']:.6g} | "
            f"{z} |"
        )
    return "\n".join(lines) + "\n"


def _coefficient(value: float) -> str:
    """A theta^2 coefficient of claim T1.d3 (``-0.087200``; ``$6\\times10^{-13}$`` near 0)."""
    if value == 0:
        return "0.0"
    if abs(value) < 1e-6:
        mantissa, exponent = f"{value:.0e}".split("e")
        return f"${mantissa}\\times10^{{{int(exponent)}}}$"
    return _signed(f"{value:#.5g}")


def proof_t1_d3(sources: Any) -> str:
    """proofs/theorem1.md's table of claim T1.d3: lambda_n and the theta^2 coefficient."""
    ev = evidence(sources, "T1.d3")
    keys = [k for k, v in ev.items() if k.startswith("n=") and isinstance(v, dict)]
    rows = [evidence(sources, "T1.d3", k) for k in keys]
    coefficient = "theta^2 coefficient at theta=1e-3, 1e-4"
    ns = [_power_of_two(int(k[2:])) for k in keys]
    lines = ["| $n$ | " + " | ".join(ns) + " |", "|---|" + "---|" * len(ns)]
    lines.append("| $\\lambda_n$ | " + " | ".join(f"{r['lambda_n']:.6f}" for r in rows) + " |")
    for i, theta in enumerate(("10^{-3}", "10^{-4}")):
        cells = " | ".join(_coefficient(r[coefficient][i]) for r in rows)
        lines.append(f"| $c$ at $\\theta = {theta}$ | {cells} |")
    return "\n".join(lines) + "\n"


def _f_rows(sources: Any, claim: str) -> list[tuple[str, str]]:
    """A claim's per-``f`` evidence entries (``f=0.1``): ``(f, key)``."""
    return [(k[2:], k) for k in evidence(sources, claim) if k.startswith("f=") and "," not in k]


def proof_t1_d4_ratio(sources: Any) -> str:
    """proofs/theorem1.md's table of claim T1.d4: ``(rho - (1-f)/(1+f)) ln n / ln ln n``."""
    log2n = evidence(sources, "T1.d4", "log2 n")
    lines = [
        "| $f$ | " + " | ".join(f"$2^{{{k}}}$" for k in log2n) + " |",
        "|---|" + "---|" * len(log2n),
    ]
    for f, key in _f_rows(sources, "T1.d4"):
        gaps = evidence(sources, "T1.d4", key, "gap")
        ratios = [
            g * k * math.log(2) / math.log(k * math.log(2))
            for g, k in zip(gaps, log2n, strict=True)
        ]
        lines.append(f"| {f} | " + " | ".join(f"{r:.3f}" for r in ratios) + " |")
    return "\n".join(lines) + "\n"


def proof_t1_d4_gaps(sources: Any) -> str:
    """proofs/theorem1.md's table of claim T1.d4: gaps and the Laplace form's log errors."""
    log2n = evidence(sources, "T1.d4", "log2 n")
    at = evidence(sources, "T1.d4", "laplace at log2 n")
    heads = [f"$2^{{{k}}}$" for k in at]
    lines = [
        f"| $f$ | gap {heads[0]} | "
        + " | ".join(heads[1:])
        + f" | log err {heads[0]} | "
        + " | ".join(heads[1:])
        + " |",
        "|---|" + "---|" * (2 * len(at)),
    ]
    for f, key in _f_rows(sources, "T1.d4"):
        gaps = evidence(sources, "T1.d4", key, "gap")
        errors = evidence(sources, "T1.d4", key, "laplace log error")
        by_n = dict(zip(log2n, gaps, strict=True))
        cells = [f"{by_n[k]:.4f}" if k in by_n else "-" for k in at] + [f"{e:.4f}" for e in errors]
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def proof_t1_g1(sources: Any) -> str:
    """proofs/theorem1.md's table of claim T1.g1: the cosine moments' errors against the bounds."""
    lines = [
        "| $f$, $l$, $d$ | pairs | mean error $\\times d^2$ | var error $\\times d$ | "
        "distance error $\\times d^2$ | used |",
        "|---|---|---|---|---|---|",
    ]
    ev = evidence(sources, "T1.g1")
    for key in [k for k, v in ev.items() if k.startswith("f=") and isinstance(v, dict)]:
        label = dict(part.split("=", 1) for part in key.split(","))
        f, length = label["f"], int(label["l"])
        if len(f.split(".")[-1]) > 2:  # a share stored rounded: the fraction s / l
            f = f"{round(float(f) * length)}/{length}"
        e = evidence(sources, "T1.g1", key)

        def pm(name: str, digits: int, e: dict = e) -> str:
            value, se = e[name]
            return f"{_signed(f'{value:.{digits}f}')} \u00b1 {se:.{digits}f}"

        used = max(e["(|error| + 4 se) / bound"].values())
        lines.append(
            f"| {f}, {length}, {label['d']} | {_power_of_two(e['pairs'])} | "
            f"{pm('mean error x d^2, se x d^2', 3)} | {pm('var relative error x d, se x d', 2)} | "
            f"{pm('distance relative error x d^2, se x d^2', 3)} | {used:.2f} |"
        )
    return "\n".join(lines) + "\n"


#: Evidence numbers the proofs write in powers: name -> (claim, key or keys, ``sciN`` or ``pow2``).
TEX = {
    "c1_spread": ("T1.c1", "max relative spread over n", "sci1"),
    "c2_spread": ("T1.c2", "max relative spread over n", "sci1"),
    "d1_min": ("T1.d1", "min rho - (1-f)/(1+f)", "sci1"),
    "d2_argmin_n": ("T1.d2", ("argmin (n, f)", 0), "pow2"),
    "d2_argmax_n": ("T1.d2", ("argmax (n, f)", 0), "pow2"),
    "e1_gap": ("T1.e1", "n < V: max relative gap, theory vs exact count of congruent ids", "sci1"),
    "f1_h": ("T1.f1", "P(2^20, 1.001/2^20) - 1.001/2^20 (< 0: n f_n < 1.001)", "sci1"),
    "h2_log": ("T1.h2", "max |ln P(n, 0) + ln n| (simhash, voronoi, crosspolytope)", "sci1"),
    "h2_ratio": ("T1.h2", "max |rho_lsh / rho - 1| (same)", "sci1"),
    "h1_recall": ("T1.h1", ("best recall range", 0), "sci1"),
    "ng2_gap": ("B.ng2", "max |P(N=1) - q - (1 - s/l)/m|", "sci1"),
    "ng3_ratio": ("B.ng3", "max |ratio - 1|", "sci1"),
    "ng4_law": ("B.ng4", "max |law - enumeration|", "sci1"),
    "ng4_sum": ("B.ng4", "max |P(K=H) - probability|, |sum - 1|", "sci1"),
}


#: Digits and minus as superscripts (``10⁻¹⁶``).
_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def proof_tex(sources: Any, name: str) -> str:
    """An evidence number of :data:`TEX` as text outside math: ``-2.2 × 10⁻¹⁶``, ``2²⁴``."""
    claim, path, how = TEX[name]
    value = evidence(sources, claim, *(path if isinstance(path, tuple) else (path,)))
    if how == "pow2":
        if value & (value - 1):
            return f"{value}"
        return "2" + str(int(value).bit_length() - 1).translate(_SUPERSCRIPT)
    mantissa, exponent = f"{value:.{int(how[3:])}e}".split("e")
    return f"{_signed(mantissa)} \u00d7 10" + str(int(exponent)).translate(_SUPERSCRIPT)


def proof_max_abs_z(sources: Any, claim: str) -> float:
    """The largest ``|z|`` over a claim's Monte-Carlo points."""
    return max(abs(evidence(sources, claim, key, "z_score")) for _, key in _points(sources, claim))


def proof_t1_d4_max_error(sources: Any) -> float:
    """Claim T1.d4: the largest Laplace log error at the largest ``n`` checked."""
    return max(
        evidence(sources, "T1.d4", key, "laplace log error")[-1]
        for _, key in _f_rows(sources, "T1.d4")
    )


def proof_t1_f2_n2(sources: Any) -> float:
    """Claim T1.f2: the largest ``|ln P_vor - ln P_sh|`` at ``n = 2`` over its cosines."""
    return max(
        abs(v) for v in evidence(sources, "T1.f2", "n = 2: log P_vor - log P_sh at a").values()
    )


def proof_cosine_sd(sources: Any, arg: str) -> float:
    """The sentence model's measured cosine spread (``sentence_cosine``): ``F,L,D``."""
    f, length, d = arg.split(",")
    rows = sources.get("sentence_cosine.json", "/data/rows")
    for i, row in enumerate(rows):
        if (row["f"], row["l"], row["d"]) == (float(f), int(length), int(d)):
            return sources.get("sentence_cosine.json", f"/data/rows/{i}/mc_sd")
    raise ValueError(f"figures/sentence_cosine.json: no row f={f}, l={length}, d={d}")


AMPLIFICATION = "amplification.json"


def exact_p(sources: Any, family: str, n: int, cosine: float = 0.5) -> float:
    """A family's exact collision probability at cosine ``a = f`` (``collision_vs_n``)."""
    panel = f"/data/panels/{family}/exact/{cosine:g}"
    ns = sources.get("collision_vs_n.json", f"{panel}/n")
    if n not in ns:
        raise ValueError(f"figures/collision_vs_n.json: no n = {n} in {panel}")
    return sources.get("collision_vs_n.json", f"{panel}/p/{ns.index(n)}")


def proof_exact_p(sources: Any, arg: str) -> float:
    """``=proof_exact_p:FAMILY,N``: the exact probability at cosine 0.5 (``collision_vs_n``)."""
    family, n = arg.split(",")
    return exact_p(sources, family, int(n))


def proof_p1_gap(sources: Any) -> float:
    """How far (in %) the cross-polytope's ``p1`` lies below Voronoi's at n = 8 and 64, a = 0.5."""
    return max(
        100 * (1 - exact_p(sources, "crosspolytope", n) / exact_p(sources, "voronoi", n))
        for n in (8, 64)
    )


def proof_h1_scheme(sources: Any, arg: str) -> str:
    """Claim T1.h1's example: a family's best scheme at a = 0.5 and a budget of 2^12.

    Args:
        sources: the result files (the scheme from ``amplification``, ``p1`` from
            ``collision_vs_n``).
        arg: ``FAMILY,PART`` with PART ``n``, ``k``, ``L``, ``recall``, ``hashing`` (inner
            products to hash a query) or ``candidates`` (expected far candidates).

    Returns:
        The part, as text.
    """
    from lshsim.theory import amplified, hash_cost

    family, part = arg.split(",")
    i = sources.get(AMPLIFICATION, "/data/cosines").index(0.5)
    j = sources.get(AMPLIFICATION, "/data/budgets").index(2.0**12)
    n, k, tables = sources.get(AMPLIFICATION, f"/data/schemes/{family}/{i}/{j}")
    if part == "recall":
        return f"{amplified(exact_p(sources, family, n), k, tables):.3f}"
    if part == "hashing":
        return f"{tables * k * hash_cost(family, n):g}"
    if part == "candidates":  # p2 = P(n, 0) = 1/n for these families (claim T1.h2)
        return f"{tables * sources.get(AMPLIFICATION, '/data/points') / n**k:g}"
    return str({"n": n, "k": k, "L": tables}[part])


def proof_h1_margins(sources: Any) -> str:
    """Claim T1.h1's margins in ``ln(miss)`` as a percent range (``3 to 13%``)."""
    ratios = [
        evidence(sources, "T1.h1", "min ln-miss ratio cross-polytope / simhash where claimed best"),
        evidence(sources, "T1.h1", "min ln-miss ratio cross-polytope / voronoi"),
    ]
    low, high = (round(100 * (r - 1)) for r in sorted(ratios))
    return f"{low} to {high}%"


def proof_pstable_far(sources: Any) -> float:
    """p-stable's ``P(n, 0)`` at n = 2^10 (exact theory; ``1/n`` for the other families)."""
    from lshsim.theory import probability

    return probability("pstable", 2**10, 0.0)


#: Rows of bench_peers.json that the proofs quote, by short name.
BENCH_ROWS = {
    "engram2": "engram N=2 H=8 256 x 512 ids: EngramHash.hash",
    "engram3": "engram N=3 H=8 (deployed) 256 x 512 ids: EngramHash.hash",
    "ngram2": "ngram family N=2 H=8 256 x 512 ids (a different hash; speed only)",
}


def proof_bench(sources: Any, arg: str) -> float:
    """A field of a :data:`BENCH_ROWS` row: ``NAME,FIELD`` (``ratio``, ``ours_ms``, ``peer_ms``)."""
    name, field = arg.split(",")
    if field.endswith("_ms"):
        return 1e3 * bench_field(sources, PEERS, BENCH_ROWS[name], field[: -len("_ms")] + "_s")
    return bench_field(sources, PEERS, BENCH_ROWS[name], field)


PK2_RATIO = "P_vor(n, a) / P_pk(n, a) (rows: cosine, columns: log2 n)"
PK2_GAP = "rho_pk - rho_vor at n (same)"


def proof_pk2(sources: Any) -> str:
    """proofs/lookups_beyond.md's table of claim B.pk2: ``P_vor / P_pk`` per cosine and n."""
    ratios = evidence(sources, "B.pk2", PK2_RATIO)
    log2n = evidence(sources, "B.pk2", "log2 n")
    cosines = evidence(sources, "B.pk2", "cosines")
    lines = [
        "| a \\ log2 n | " + " | ".join(f"{k}" for k in log2n) + " |",
        "| --- |" + " --- |" * len(log2n),
    ]
    for a, row in zip(cosines, ratios, strict=True):
        lines.append(f"| {a:g} | " + " | ".join(f"{r:.3f}" for r in row) + " |")
    return "\n".join(lines) + "\n"


def proof_pk2_gap(sources: Any, which: str) -> str:
    """Claim B.pk2: the ``min`` or ``max`` of ``rho_pk - rho_vor`` with where (``0.026 (...)``)."""
    gaps = evidence(sources, "B.pk2", PK2_GAP)
    cells = [(g, i, j) for i, row in enumerate(gaps) for j, g in enumerate(row)]
    gap, i, j = (min if which == "min" else max)(cells)
    a = evidence(sources, "B.pk2", "cosines", i)
    k = evidence(sources, "B.pk2", "log2 n", j)
    return f"{gap:.3f} (a = {a:g}, n = 2^{k})"


def proof_topk_reduced(sources: Any, arg: str) -> float:
    """The peers' reduced top-k rows: ``us2^20``, ``us2^10`` (microseconds per trial), ``full``."""
    flat = "voronoi reduced top-k (k=8, a=0.7) time per trial, n=2^20 / n=2^10"
    full = "voronoi reduced top-k (k=8, a=0.7) vs full mode, n=2^10, per trial"
    if arg == "full":
        return bench_field(sources, PEERS, full, "ratio")
    return 1e6 * bench_field(sources, PEERS, flat, "ours_s" if arg == "us2^20" else "peer_s")


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
    "proof_coverage": proof_coverage,
    "proof_coverage_topk": proof_coverage_topk,
    "proof_wilson_exact": proof_wilson_exact,
    "proof_truth": proof_truth,
    "proof_t2_median": proof_t2_median,
    "proof_t2_seed_loss": proof_t2_seed_loss,
    "proof_t2_loss_range": proof_t2_loss_range,
    "proof_t2_strict_width": proof_t2_strict_width,
    "proof_t2_target_ratios": proof_t2_target_ratios,
    "proof_t2_seeds_reached": proof_t2_seeds_reached,
    "proof_t2_construction": proof_t2_construction,
    "proof_t2_params": proof_t2_params,
    "proof_t2_param_ratio": proof_t2_param_ratio,
    "proof_tex": proof_tex,
    "proof_max_abs_z": proof_max_abs_z,
    "proof_t1_d4_max_error": proof_t1_d4_max_error,
    "proof_t1_f2_n2": proof_t1_f2_n2,
    "proof_cosine_sd": proof_cosine_sd,
    "proof_exact_p": proof_exact_p,
    "proof_p1_gap": proof_p1_gap,
    "proof_h1_scheme": proof_h1_scheme,
    "proof_h1_margins": proof_h1_margins,
    "proof_pstable_far": proof_pstable_far,
    "proof_bench": proof_bench,
    "proof_pk2_gap": proof_pk2_gap,
    "proof_topk_reduced": proof_topk_reduced,
}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {
    "speed_peers": speed_peers,
    "tune_datasketch": tune_datasketch,
    "proof_t2_losses": proof_t2_losses,
    "proof_t2_minimal": proof_t2_minimal,
    "proof_t1_a2": proof_t1_a2,
    "proof_t1_b1": proof_t1_b1,
    "proof_t1_d3": proof_t1_d3,
    "proof_t1_d4_ratio": proof_t1_d4_ratio,
    "proof_t1_d4_gaps": proof_t1_d4_gaps,
    "proof_t1_g1": proof_t1_g1,
    "proof_pk2": proof_pk2,
}
