"""Derived numbers and tables of README.md and ARCHITECTURE.md (``docs/render_numbers.py``).

Each derived number is a function of a :class:`docs.number_sources.Sources` (and an optional
text argument) that reads the result files through ``sources.get``; each table returns
Markdown. Names are unique across the ``docs/numbers_*.py`` modules (here: ``readme_*``).

Containers (a list of rows, a dict of runs) are read first to find the rows a number comes
from; the numbers shown are then read one by one, so each is recorded with its own kind.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote

#: name -> function(sources[, arg]) -> number or text.
DERIVED: dict[str, Callable[..., Any]] = {}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {}


def _derived(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function in :data:`DERIVED` under ``name``."""

    def put(fn: Callable[..., Any]) -> Callable[..., Any]:
        DERIVED[name] = fn
        return fn

    return put


def _span(values: Iterable[float], fmt: str, sep: str = "-", unit: str = "") -> str:
    """``lo-hi`` of ``values`` as shown (one value when both ends show the same)."""
    values = list(values)
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return f"{lo}{unit}" if lo == hi else f"{lo}{sep}{hi}{unit}"


def _and(texts: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def _key(text: str) -> str:
    """A key as one JSON-pointer segment (``/`` and spaces escaped)."""
    return quote(text, safe="=")


# -- the theory (the tour and Theorem 1) --------------------------------------------------------


def _exact_at(sources, family: str, f: str, n: int) -> float:
    """``collision_vs_n``'s exact probability of ``family`` at overlap ``f`` and ``n`` buckets."""
    base = f"/data/panels/{family}/exact/{f}"
    i = sources.get("collision_vs_n.json", f"{base}/n").index(n)
    return sources.get("collision_vs_n.json", f"{base}/p/{i}")


@_derived("readme_rho_excess")
def rho_excess(sources) -> float:
    """How far the softmax router's exponent at ``n = 2^20``, ``f = 0.5`` is above its limit.

    Returns:
        ``rho / ((1 - f) / (1 + f)) - 1``, ``rho = -ln P / ln n`` (exact).
    """
    n, f = 2**20, 0.5
    rho = -math.log(_exact_at(sources, "voronoi", "0.5", n)) / math.log(n)
    return rho / ((1 - f) / (1 + f)) - 1


def _pk_ratio(sources, cosine: str, n: int) -> float:
    """``P_vor(n, a) / P_pk(n, a)`` from ``collision_beyond`` (exact; ``n`` a power of 4)."""
    base = f"/data/panels/{cosine}/exact"
    i = sources.get("collision_beyond.json", f"{base}/productkey/n").index(n)
    j = sources.get("collision_beyond.json", f"{base}/voronoi/n").index(n)
    pk = sources.get("collision_beyond.json", f"{base}/productkey/p/{i}")
    return sources.get("collision_beyond.json", f"{base}/voronoi/p/{j}") / pk


@_derived("readme_pk_less")
def pk_less(sources) -> float:
    """How many times less often product keys collide than the full router at ``2^20``, 0.5."""
    return _pk_ratio(sources, "0.5", 2**20)


@_derived("readme_pk_range")
def pk_range(sources) -> str:
    """``P_vor / P_pk`` over ``collision_beyond``'s cosines at ``n = 2^10 ... 2^24``.

    (Claim B.pk2's own table is keyed by a name with ``/`` in it, which a JSON pointer of
    ``tests/docs/test_numbers.py`` cannot name again; the study holds the same exact laws.)
    """
    ratios = []
    for cosine in sources.get("collision_beyond.json", "/data/panels"):
        sizes = sources.get("collision_beyond.json", f"/data/panels/{cosine}/exact/productkey/n")
        ratios += [_pk_ratio(sources, cosine, n) for n in sizes if 2**10 <= n <= 2**24]
    return _span(ratios, ".1f", " to ")


@_derived("readme_sentence_cos")
def sentence_cos(sources) -> float:
    """The sentence model's mean cosine at ``d = 64``, ``l = 32``, ``f = 0.5`` (exact)."""
    rows = sources.get("sentence_cosine.json", "/data/rows")
    i = next(k for k, r in enumerate(rows) if (r["d"], r["l"], r["f"]) == (64, 32, 0.5))
    return sources.get("sentence_cosine.json", f"/data/rows/{i}/theory_mean")


@_derived("readme_ordering")
def ordering(sources) -> str:
    """Theorem 1's three lookups at ``n = 1024``, ``f = 0.5``, largest first, joined by ``>``."""
    names = {"tokenid": "Token-ID", "voronoi": "softmax router", "simhash": "SimHash"}
    found = [(_exact_at(sources, fam, "0.5", 1024), label) for fam, label in names.items()]
    found.sort(reverse=True)
    return " > ".join(f"{label} {p:.2f}" if p >= 0.1 else f"{label} {p:.3g}" for p, label in found)


@_derived("readme_mc_coverage")
def mc_coverage(sources) -> str:
    """How many Monte-Carlo points of ``collision_vs_n`` cover the exact value: ``k of m``."""
    covered = total = 0
    for family in sources.get("collision_vs_n.json", "/data/panels"):
        base = f"/data/panels/{family}"
        for f in sources.get("collision_vs_n.json", f"{base}/mc"):
            mc = f"{base}/mc/{f}"
            exact_n = sources.get("collision_vs_n.json", f"{base}/exact/{f}/n")
            for i, n in enumerate(sources.get("collision_vs_n.json", f"{mc}/n")):
                p = sources.get("collision_vs_n.json", f"{base}/exact/{f}/p/{exact_n.index(n)}")
                lo = sources.get("collision_vs_n.json", f"{mc}/ci_low/{i}")
                hi = sources.get("collision_vs_n.json", f"{mc}/ci_high/{i}")
                covered += lo <= p <= hi
                total += 1
    return f"{covered} of {total}"


# -- the routing probe ---------------------------------------------------------------------------


def _summaries(sources, file: str, where: str) -> list[tuple[str, str]]:
    """``(pointer, layer)`` of every per-layer summary under ``where`` (``lookups/*/...``)."""
    out = []
    for lookup in sources.get(file, "/data/lookups"):
        base = f"/data/lookups/{lookup}{where}/summary"
        for i, row in enumerate(sources.get(file, base)):
            out.append((f"{base}/{i}", row["layer"]))
    return out


def _inside(sources, file: str, where: str, lookups: tuple[str, ...] | None = None) -> str:
    """``k of m``: probe rows whose 95% interval holds the theory."""
    inside = rows = 0
    for pointer, _ in _summaries(sources, file, where):
        if lookups is None or pointer.split("/")[3] in lookups:
            inside += sources.get(file, f"{pointer}/inside")
            rows += sources.get(file, f"{pointer}/rows")
    return f"{inside} of {rows}"


@_derived("readme_init_inside")
def init_inside(sources) -> str:
    """Probe rows at initialisation inside their 95% interval, every lookup: ``k of m``."""
    return _inside(sources, "routing_init.json", "")


@_derived("readme_trained_inside")
def trained_inside(sources) -> str:
    """Rows of the trained LSH and product-key lookups inside their 95% interval."""
    return _inside(sources, "routing_trained.json", "/after", ("lsh", "productkey"))


def _upper(sources, field: str) -> list[float]:
    """``field`` of the trained softmax router's summaries in each stack's top layer."""
    rows = [
        (p, layer)
        for p, layer in _summaries(sources, "routing_trained.json", "/after")
        if p.split("/")[3] == "softmax"
    ]
    top = {}
    for _, layer in rows:
        stack, index = layer.split("/")
        top[stack] = max(top.get(stack, 0), int(index))
    return [
        sources.get("routing_trained.json", f"{p}/{field}")
        for p, layer in rows
        if int(layer.split("/")[1]) == top[layer.split("/")[0]]
    ]


@_derived("readme_softmax_verb")
def softmax_verb(sources) -> str:
    """Whether the trained softmax router collides more or less than a random one (top layers)."""
    d = _upper(sources, "mean_departure")
    if all(x > 0 for x in d):
        return "collides more than a random one would"
    if all(x < 0 for x in d):
        return "collides less than a random one would"
    return "departs from a random one"


@_derived("readme_softmax_departures")
def softmax_departures(sources) -> str:
    """The trained softmax router's mean departures in the top layers, e.g. ``+0.22 to +0.32``."""
    return _span(_upper(sources, "mean_departure"), "+.2f", " to ")


@_derived("readme_softmax_buckets")
def softmax_buckets(sources) -> str:
    """The trained softmax router's effective buckets in the top layers, e.g. ``1.9``."""
    return _span(_upper(sources, "effective_buckets"), ".1f", " to ")


@_derived("readme_softmax_buckets_of")
def softmax_buckets_of(sources) -> int:
    """The trained softmax lookup's bucket count."""
    return sources.get("routing_trained.json", "/data/lookups/softmax/buckets")


# -- the Hugging Face Mixtral ------------------------------------------------------------------


def _hf(sources, phase: str, part: str, field: str) -> list[float]:
    """``field`` of every layer's row of ``routing_hf``'s ``phase/part``."""
    base = f"/data/{phase}/{part}"
    rows = sources.get("routing_hf.json", base)
    return [sources.get("routing_hf.json", f"{base}/{i}/{field}") for i in range(len(rows))]


@_derived("readme_hf_rms")
def hf_rms(sources) -> str:
    """The tiny Mixtral's rms z per layer at initialisation, e.g. ``0.4 and 0.9``."""
    return _and([format(z, ".1f") for z in _hf(sources, "before", "summary", "rms_z")])


@_derived("readme_hf_after")
def hf_after(sources) -> str:
    """The trained Mixtral's top-2 overlap against the law, e.g. ``exceeds that law by +0.045``."""
    d = _hf(sources, "after", "departures", "departure")
    verb = (
        "exceeds"
        if all(x > 0 for x in d)
        else "falls below"
        if all(x < 0 for x in d)
        else "departs from"
    )
    return f"{verb} that law by {_and([format(x, '+.3f') for x in d])}"


@_derived("readme_hf_halfwidth")
def hf_halfwidth(sources) -> float:
    """The widest half-width of the trained Mixtral's 95% intervals of the departure."""
    lo = _hf(sources, "after", "departures", "low")
    hi = _hf(sources, "after", "departures", "high")
    return max((h - low) / 2 for low, h in zip(lo, hi, strict=True))


# -- Theorem 2 and the memory studies -----------------------------------------------------------


def _t2(sources, field: str) -> list[float]:
    """``theorem2_width``'s ``field`` per input dimension (``ratio`` or ``minimal/d/B/...``)."""
    dims = sources.get("theorem2_width.json", "/data/ratio")
    return [sources.get("theorem2_width.json", field.format(d=d)) for d in dims]


@_derived("readme_t2_ratio")
def t2_ratio(sources) -> str:
    """How many times wider the input-only student must be, e.g. ``2.5 to 3``."""
    return _span(_t2(sources, "/data/ratio/{d}"), "g", " to ")


@_derived("readme_t2_lookup_width")
def t2_lookup_width(sources) -> str:
    """The width at which the lookup-at-every-layer student reaches the target (``d``, ...)."""
    text = _span(_t2(sources, "/data/minimal/{d}/B/median_over_d"), "g", " to ")
    return "`d`" if text == "1" else f"{text} times `d`"


@_derived("readme_t2_bound")
def t2_bound(sources) -> str:
    """``more than`` when the input-only student needs more than ``2d`` at every ``d``."""
    widths = _t2(sources, "/data/minimal/{d}/A/median_over_d")
    return "more than" if all(w > 2 for w in widths) else "not always more than"


def _memory_rows(sources, table: str) -> list[str]:
    """Pointers of the rows of the memory study ``table`` (smoke run)."""
    base = f"/summary/smoke/{table}"
    return [f"{base}/{i}" for i in range(len(sources.get("memory_studies.json", base)))]


def _memory(sources, table: str, label: str, field: str) -> float:
    """A field of one labelled row of a memory study table."""
    return sources.get("memory_studies.json", f"/summary/smoke/{table}/label={_key(label)}/{field}")


@_derived("readme_memory_drop")
def memory_drop(sources) -> str:
    """How much SameUp and AltUp (K = 2) lower the held-out loss, e.g. ``0.35``."""
    drops = [
        -_memory(sources, "table1", v, "loss_diff_vs_baseline/mean")
        for v in ("SameUp K=2", "AltUp K=2")
    ]
    return _span(drops, ".2f", " and ")


@_derived("readme_memory_excludes")
def memory_excludes(sources) -> str:
    """Whether the intervals of SameUp's and AltUp's loss differences exclude 0."""
    his = [
        _memory(sources, "table1", v, "loss_diff_vs_baseline/hi")
        for v in ("SameUp K=2", "AltUp K=2")
    ]
    return "intervals exclude 0" if all(h < 0 for h in his) else "an interval includes 0"


@_derived("readme_memory_accuracy")
def memory_accuracy(sources) -> str:
    """How many variants of the memory studies span accuracy separates from the baseline."""
    separated = set()
    for table in sources.get("memory_studies.json", "/summary/smoke"):
        for row in _memory_rows(sources, table):
            label = sources.get("memory_studies.json", f"{row}/label")
            if label == "Baseline":
                continue
            lo = sources.get("memory_studies.json", f"{row}/accuracy_diff_vs_baseline/lo")
            hi = sources.get("memory_studies.json", f"{row}/accuracy_diff_vs_baseline/hi")
            if lo > 0 or hi < 0:
                separated.add(label)
    return "no variant" if not separated else _and(sorted(separated))


@_derived("readme_flops_extra")
def flops_extra(sources, variant: str) -> float:
    """The extra train FLOPs of AltUp K = 2 at S: ``wide`` (the paper's) or ``collapsed``."""
    name = {"wide": "altup K=2", "collapsed": "altup K=2 collapsed"}[variant]
    ratio = sources.get("bench_memory_small.json", f"/results/variant={_key(name)}/flops_ratio")
    return ratio - 1


# -- speed -----------------------------------------------------------------------------------------

#: Rows of ``bench_peers.json`` the README quotes, by the start or a piece of their names.
SPEED: dict[str, Callable[[str], bool]] = {
    "faiss": lambda n: n.startswith("simhash") and n.endswith("vs FAISS IndexLSH"),
    "minhash": lambda n: n.startswith("minhash") and "reused buffer" not in n,
    "minhash_buffer": lambda n: n.startswith("minhash") and "reused buffer" in n,
    "engram": lambda n: n.startswith("engram") and "EngramHash.hash" in n,
    "spherical": lambda n: " top-k n=" in n and n.endswith(" vs torch"),
    "pk8": lambda n: n.startswith("productkey top-k") and " k=8 " in n,
    "pk32": lambda n: n.startswith("productkey top-k") and " k=32 " in n,
    "t5_tiny": lambda n: n.startswith("T5 tiny train step"),
    "t5_small": lambda n: n.startswith("T5 small train step"),
    "t5": lambda n: n.startswith(("T5 tiny train step", "T5 small train step")),
    "exact_voronoi": lambda n: n.startswith("exact voronoi probability"),
    "plan": lambda n: n.startswith("plan B Token-ID r5"),
}
#: How each group's ratios are shown.
SPEED_FORMAT = {"minhash": ".0f", "minhash_buffer": ".0f", "engram": ".1f"}


def _bench_rows(sources, file: str, group: Callable[[str], bool]) -> list[str]:
    """Pointers of the rows of a benchmark file whose name ``group`` accepts (at least one)."""
    rows = sources.get(file, "/results")
    found = [f"/results/{i}" for i, r in enumerate(rows) if group(r["name"])]
    if not found:
        raise ValueError(f"figures/{file}: no row for this group")
    return found


@_derived("readme_speedup")
def speedup(sources, group: str) -> str:
    """The ratios of a :data:`SPEED` group of ``bench_peers.json``, e.g. ``3.61-3.75x``."""
    rows = _bench_rows(sources, "bench_peers.json", SPEED[group])
    ratios = [sources.get("bench_peers.json", f"{r}/ratio") for r in rows]
    return _span(ratios, SPEED_FORMAT.get(group, ".2f"), unit="x")


@_derived("readme_goal")
def goal(sources, group: str) -> str:
    """Whether a :data:`SPEED` group's goals were ``met``, ``missed`` or ``met in k of m``."""
    rows = _bench_rows(sources, "bench_peers.json", SPEED[group])
    met = sum(bool(sources.get("bench_peers.json", f"{r}/meets")) for r in rows)
    return "met" if met == len(rows) else "missed" if met == 0 else f"met in {met} of {len(rows)}"


@_derived("readme_goals_met")
def goals_met(sources) -> str:
    """How many of ``bench_peers.json``'s goals the run met: ``k of m``."""
    rows = sources.get("bench_peers.json", "/results")
    met = sum(
        bool(sources.get("bench_peers.json", f"/results/{i}/meets")) for i in range(len(rows))
    )
    return f"{met} of {len(rows)}"


@_derived("readme_bench_ms")
def bench_ms(sources, group: str) -> float:
    """Our time of a one-row :data:`SPEED` group in milliseconds."""
    (row,) = _bench_rows(sources, "bench_peers.json", SPEED[group])
    return 1000 * sources.get("bench_peers.json", f"{row}/ours_s")


@_derived("readme_bench_s")
def bench_s(sources, group: str) -> float:
    """Our time of a one-row :data:`SPEED` group in seconds."""
    (row,) = _bench_rows(sources, "bench_peers.json", SPEED[group])
    return sources.get("bench_peers.json", f"{row}/ours_s")


@_derived("readme_bench_goal_value")
def bench_goal_value(sources, group: str) -> float:
    """The goal of a one-row :data:`SPEED` group (a ratio, or seconds for a time goal)."""
    (row,) = _bench_rows(sources, "bench_peers.json", SPEED[group])
    return sources.get("bench_peers.json", f"{row}/goal_value")


@_derived("readme_scan")
def scan(sources, which: str) -> str:
    """``bench_scan.json``'s plan times: ``others`` or ``engram`` scanned, ``unrolled`` all."""
    rows = _bench_rows(sources, "bench_scan.json", lambda n: n.startswith("plan base"))
    is_engram = {r: "Engram" in sources.get("bench_scan.json", f"{r}/name") for r in rows}
    if which == "unrolled":
        times = [sources.get("bench_scan.json", f"{r}/peer_s") for r in rows]
    else:
        chosen = [r for r in rows if is_engram[r] == (which == "engram")]
        times = [sources.get("bench_scan.json", f"{r}/ours_s") for r in chosen]
    return _span(times, ".1f")


@_derived("readme_gpu_step_ms")
def gpu_step_ms(sources, config: str) -> float:
    """The GPU check's median baseline step of ``config`` in milliseconds."""
    rows = sources.get("gpu.json", "/rows")
    (i,) = [i for i, r in enumerate(rows) if (r["config"], r["variant"]) == (config, "baseline")]
    return 1000 * sources.get("gpu.json", f"/rows/{i}/step_s_median")


# -- the test command (figures/ci_runs.json) -----------------------------------------------------

#: The part of the notes of the runs copied from the README's text that says nothing of the run.
_COPIED = "recorded from the README's text"


def _run(sources, i: int, field: str) -> Any:
    """``field`` of run ``i`` of ``ci_runs.json`` (``-1``: the latest)."""
    if i < 0:
        i += len(sources.get("ci_runs.json", "/runs"))
    return sources.get("ci_runs.json", f"/runs/{i}/{field}")


def _note(sources, i: int) -> str:
    """What run ``i``'s note says about the run (the copied-from-README remark left out)."""
    note = _run(sources, i, "note") if "note" in sources.get("ci_runs.json", f"/runs/{i}") else ""
    return "; ".join(p for p in (note or "").split("; ") if p and not p.startswith(_COPIED))


def _run_details(sources, i: int) -> str:
    """``2,724 tests in 777 s; a note``: what run ``i`` recorded beside its time."""
    tests, pytest_s = _run(sources, i, "tests"), _run(sources, i, "pytest_seconds")
    parts = []
    if tests:
        parts.append(f"{tests:,d} tests" + (f" in {pytest_s:.0f} s" if pytest_s else ""))
    if _note(sources, i):
        parts.append(_note(sources, i))
    return "; ".join(parts)


@_derived("readme_ci_latest")
def ci_latest(sources) -> str:
    """The latest run: ``872 s at b01d4b8 (3,163 tests in 847 s; ...; before pytest 25 s;
    1,691 s of CPU)``: the set-up before pytest (the install and lint, and until ccb8bf5 the
    documentation build) and, where recorded, the command's CPU time."""
    last = len(sources.get("ci_runs.json", "/runs")) - 1
    seconds, commit = _run(sources, last, "seconds"), _run(sources, last, "commit")
    pytest_s = _run(sources, last, "pytest_seconds")
    text = f"{seconds} s at {commit}"
    details = [_run_details(sources, last)]
    if pytest_s:
        details.append(f"before pytest {seconds - pytest_s:.0f} s")
    if "cpu_seconds" in sources.get("ci_runs.json", f"/runs/{last}"):
        details.append(f"{_run(sources, last, 'cpu_seconds'):,.0f} s of CPU")
    return text + f" ({'; '.join(d for d in details if d)})"


@_derived("readme_ci_earlier")
def ci_earlier(sources) -> str:
    """The earlier runs, newest first: ``1025 s at 8419c02, ..., and 842 s at 6fe706a (...)``."""
    runs = len(sources.get("ci_runs.json", "/runs"))
    texts = []
    for i in reversed(range(runs - 1)):
        text = f"{_run(sources, i, 'seconds')} s at {_run(sources, i, 'commit')}"
        details = _run_details(sources, i)
        texts.append(text + (f" ({details})" if details else ""))
    return _and(texts)


#: A run's note that starts with this marks a change of the suite's cost by design (its
#: earlier runs measured other work, so they say nothing of today's run-to-run spread).
NEW_BASELINE = "new baseline"


def _steady(sources) -> list[int]:
    """Indices of the runs of today's suite on an otherwise idle machine (per their notes):
    from the last run noted as a new baseline on, less those noted as disturbed."""
    runs = len(sources.get("ci_runs.json", "/runs"))
    notes = [_note(sources, i) for i in range(runs)]
    start = max((i for i, n in enumerate(notes) if n.startswith(NEW_BASELINE)), default=0)
    noisy = ("other work", "before layers were scanned")
    return [i for i in range(start, runs) if not any(w in notes[i] for w in noisy)]


@_derived("readme_ci_spread")
def ci_spread(sources) -> float:
    """How much the steady runs' times vary: ``max / min - 1``."""
    times = [_run(sources, i, "seconds") for i in _steady(sources)]
    return max(times) / min(times) - 1


@_derived("readme_ci_range")
def ci_range(sources) -> str:
    """The steady runs' times, ``987-1155 s``."""
    return _span((_run(sources, i, "seconds") for i in _steady(sources)), "d", unit=" s")


@_derived("readme_ci_goal")
def ci_goal(sources, limit: str) -> str:
    """``met`` or ``not met``: the latest run against a goal of ``limit`` seconds."""
    return "met" if _run(sources, -1, "seconds") <= float(limit) else "not met"
