"""Derived numbers and tables of the probe, results and theory pages (``docs/render_numbers.py``).

Each derived number is a function of a :class:`docs.number_sources.Sources` (and an optional
text argument) that reads the result files through ``sources.get``; each table returns
Markdown. Names are unique across the ``docs/numbers_*.py`` modules.

Rows are located through the parsed files (``sources.doc``, as a ``KEY=VALUE`` pointer segment
does), so only the numbers shown are recorded as read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

TRAINED = "routing_trained.json"
INIT = "routing_init.json"
HF = "routing_hf.json"
COLLISION = "collision_vs_n.json"
BEYOND = "collision_beyond.json"
FREQUENCY = "frequency_collisions.json"
WIDTH = "theorem2_width.json"
RESULTS = "results.json"

#: How the probe table names each trained lookup.
LOOKUP_LABELS = {"softmax": "softmax", "lsh": "LSH", "productkey": "product keys"}
#: How the results table names each family's input (vector families at a cosine).
TOKEN_INPUTS = ("minhash", "tokenid")


def _args(arg: str, count: int, name: str) -> list[str]:
    """A derived number's comma-separated argument, checked for its number of parts.

    Raises:
        ValueError: another number of parts.
    """
    parts = arg.split(",")
    if len(parts) != count:
        raise ValueError(f"={name}:{arg}: expected {count} comma-separated parts")
    return parts


def _index(values: list, want: Any, where: str) -> int:
    """The one index of ``values`` equal to ``want`` (numbers compared as floats).

    Raises:
        ValueError: no such element, or more than one.
    """

    def same(v: Any) -> bool:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return float(v) == float(want)
        return v == want

    hits = [i for i, v in enumerate(values) if same(v)]
    if len(hits) != 1:
        raise ValueError(f"{where}: {len(hits)} elements equal {want!r}, not one")
    return hits[0]


def _probe_base(study: str, lookup: str, phase: str) -> tuple[str, str]:
    """The file and pointer of one probe (``init`` or ``trained`` with ``before``/``after``)."""
    if study == "init":
        return INIT, f"/data/lookups/{lookup}"
    if study == "trained" and phase in ("before", "after"):
        return TRAINED, f"/data/lookups/{lookup}/{phase}"
    raise ValueError(f"no probe {study!r} {phase!r}: use init,- or trained,before|after")


def _node(sources: Any, file: str, pointer: str) -> Any:
    """The parsed node at a pointer, not recorded as read (:meth:`Sources.peek`)."""
    return sources.peek(file, pointer)


def _key(value: str) -> str:
    """A ``KEY=VALUE`` selector's value as a pointer segment (``/`` escaped as ``~1``)."""
    return value.replace("~", "~0").replace("/", "~1")


def probe_row(sources: Any, arg: str) -> Any:
    """One field of one probe row: ``STUDY,LOOKUP,PHASE,LAYER,OVERLAP,FIELD``.

    Args:
        sources: the result files.
        arg: e.g. ``trained,softmax,after,decoder/1,0.1,measured`` or
            ``init,softmax,-,encoder/1,0.9,measured``.

    Returns:
        The field of the row of that layer and overlap.
    """
    study, lookup, phase, layer, overlap, field = _args(arg, 6, "probe_row")
    file, base = _probe_base(study, lookup, phase)
    rows = _node(sources, file, f"{base}/rows")
    hits = [i for i, r in enumerate(rows) if r["layer"] == layer and r["overlap"] == float(overlap)]
    if len(hits) != 1:
        raise ValueError(f"figures/{file}#{base}/rows: {len(hits)} rows at {layer}, f = {overlap}")
    return sources.get(file, f"{base}/rows/{hits[0]}/{field}")


def probe_summary(sources: Any, arg: str) -> Any:
    """One field of a probe's per-layer summary: ``STUDY,LOOKUP,PHASE,LAYER,FIELD``.

    Args:
        sources: the result files.
        arg: e.g. ``trained,softmax,after,encoder/1,effective_buckets``.

    Returns:
        The field of that layer's summary.
    """
    study, lookup, phase, layer, field = _args(arg, 5, "probe_summary")
    file, base = _probe_base(study, lookup, phase)
    return sources.get(file, f"{base}/summary/layer={_key(layer)}/{field}")


def probe_inside(sources: Any, arg: str) -> str:
    """How many rows of a probe have the prediction inside the 95% interval, of how many.

    Args:
        sources: the result files.
        arg: ``STUDY,LOOKUP,PHASE``; ``LOOKUP`` may be ``*`` (every lookup of the probe).

    Returns:
        E.g. ``19 of 20``.
    """
    study, lookup, phase = _args(arg, 3, "probe_inside")
    lookups = list(_node(sources, INIT if study == "init" else TRAINED, "/data/lookups"))
    inside = rows = 0
    for name in lookups if lookup == "*" else [lookup]:
        file, base = _probe_base(study, name, phase)
        inside += sum(sources.get(file, f"{base}/summary/*/inside"))
        rows += sum(sources.get(file, f"{base}/summary/*/rows"))
    return f"{inside} of {rows}"


def probe_more(sources: Any, lookup: str) -> str:
    """How many rows of a trained lookup collide more than the random-router theory predicts.

    Args:
        sources: the result files.
        lookup: a trained lookup (``softmax``, ``lsh``, ``productkey``).

    Returns:
        E.g. ``20 of 20``.
    """
    base = f"/data/lookups/{lookup}/after/rows"
    measured = sources.get(TRAINED, f"{base}/*/measured")
    predicted = sources.get(TRAINED, f"{base}/*/predicted")
    more = sum(m > p for m, p in zip(measured, predicted, strict=True))
    return f"{more} of {len(measured)}"


def _cell(read: Callable[[str], Any], trained: bool) -> str:
    """One probe table cell: rms z, rows inside the 95% CI, effective buckets (departure).

    Args:
        read: a summary field's value, by name.
        trained: add the mean departure (the trained columns).
    """
    rms, eff = read("rms_z"), read("effective_buckets")
    text = f"{rms:.2f}" if rms < 10 else f"{rms:.1f}"
    text += f", {read('inside')}/{read('rows')}, "
    text += f"{eff:.0f}" if eff >= 10 else f"{eff:.1f}"
    return text + (f" ({read('mean_departure'):+.3f})" if trained else "")


def probe_trained_table(sources: Any) -> str:
    """The probe page's table: each trained lookup per layer at its step 0 and after training.

    Args:
        sources: the result files.

    Returns:
        Markdown: one row per layer, two columns (init, trained) per lookup.
    """
    lookups = list(_node(sources, TRAINED, "/data/lookups"))
    heads = ["layer"]
    for name in lookups:
        label = LOOKUP_LABELS.get(name, name)
        heads += [f"{label} init", f"{label} trained"]
    layers = [
        s["layer"] for s in _node(sources, TRAINED, f"/data/lookups/{lookups[0]}/before/summary")
    ]
    lines = ["| " + " | ".join(heads) + " |", "|" + " --- |" * len(heads)]
    for i, layer in enumerate(layers):
        cells = [layer]
        for name in lookups:
            for phase in ("before", "after"):
                base = f"/data/lookups/{name}/{phase}/summary/{i}"
                cells.append(
                    _cell(lambda k, b=base: sources.get(TRAINED, f"{b}/{k}"), phase == "after")
                )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def hf_departure(sources: Any, arg: str) -> Any:
    """A routing_hf layer's mean departure (measured - predicted): ``PHASE,LAYER``.

    Args:
        sources: the result files.
        arg: e.g. ``after,layers/1``.

    Returns:
        The departure averaged over the layer's overlaps.
    """
    phase, layer = _args(arg, 2, "hf_departure")
    return sources.get(HF, f"/data/{phase}/departures/layer={_key(layer)}/departure")


def freq_share(sources: Any, arg: str) -> Any:
    """A frequency_collisions share of a table at one size: ``TABLE,HEADS,STAT,M``.

    Args:
        sources: the result files.
        arg: ``TABLE`` as in the file with ``_`` for a space (``ngram_N=2``, ``productkey``),
            ``HEADS`` likewise (``head_0``, ``all``, ``any``), ``STAT`` (``measured``, ``mean``,
            ``sd``), ``M`` a table size, or ``D`` for the number of distinct 2-grams.

    Returns:
        The share (a fraction).
    """
    table, heads, stat, m = _args(arg, 4, "freq_share")
    table, heads = table.replace("_", " "), heads.replace("_", " ")
    size = _node(sources, FREQUENCY, "/data/distinct_bigrams") if m == "D" else int(m)
    sizes = _node(sources, FREQUENCY, "/data/tables")[table]["m"]
    i = _index(sizes, size, f"figures/{FREQUENCY}#/data/tables/{table}/m")
    return sources.get(FREQUENCY, f"/data/tables/{table}/{heads}/{stat}/{i}")


def freq_longcat(sources: Any, reducer: str) -> float:
    """The polynomial 2-gram id's collision share over the law's mean, near ``m = kV``.

    Args:
        sources: the result files.
        reducer: ``min`` or ``max`` over the offsets within 2 of ``k V``.

    Returns:
        The smallest or largest ratio.
    """
    offsets = _node(sources, FREQUENCY, "/data/longcat/offsets")
    near = [i for i, off in enumerate(offsets) if abs(off) <= 2]
    ratios = [
        sources.get(FREQUENCY, f"/data/longcat/polynomial/{i}")
        / sources.get(FREQUENCY, f"/data/longcat/mean/{i}")
        for i in near
    ]
    return {"min": min, "max": max}[reducer](ratios)


def _exact_at(sources: Any, file: str, pointer: str, n: int) -> float:
    """An exact curve's ``p`` at ``n`` (``pointer`` holds ``n`` and ``p``)."""
    ns = _node(sources, file, f"{pointer}/n")
    return sources.get(file, f"{pointer}/p/{_index(ns, n, f'figures/{file}#{pointer}/n')}")


def cvn_exact(sources: Any, arg: str) -> float:
    """collision_vs_n's exact probability: ``FAMILY,F,N``.

    Args:
        sources: the result files.
        arg: e.g. ``voronoi,0.5,1024`` (vector families at cosine ``f``, token families on
            sentence pairs sharing ``f`` of 40 tokens).

    Returns:
        The exact collision probability.
    """
    family, f, n = _args(arg, 3, "cvn_exact")
    return _exact_at(sources, COLLISION, f"/data/panels/{family}/exact/{f}", int(n))


def cvn_cover(sources: Any) -> str:
    """How many Monte-Carlo intervals of collision_vs_n cover the exact value, of how many.

    Returns:
        E.g. ``309 of 324``.
    """
    covered = total = 0
    for family, panel in _node(sources, COLLISION, "/data/panels").items():
        for f, cells in panel["mc"].items():
            base = f"/data/panels/{family}"
            low = sources.get(COLLISION, f"{base}/mc/{f}/ci_low")
            high = sources.get(COLLISION, f"{base}/mc/{f}/ci_high")
            for n, lo, hi in zip(cells["n"], low, high, strict=True):
                exact = _exact_at(sources, COLLISION, f"{base}/exact/{f}", n)
                covered += lo <= exact <= hi
                total += 1
    return f"{covered} of {total}"


def cvn_table(sources: Any) -> str:
    """The results page's table: every family's Monte Carlo next to its exact value at n = 1024.

    Args:
        sources: the result files.

    Returns:
        Markdown: one row per family and overlap (0.5 and 0.9).
    """
    n = 1024
    lines = [
        "| family | f | input | mode | estimate [95% CI] | exact | covered |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for family, panel in _node(sources, COLLISION, "/data/panels").items():
        for f in ("0.5", "0.9"):
            base = f"/data/panels/{family}/mc/{f}"
            i = _index(panel["mc"][f]["n"], n, f"figures/{COLLISION}#{base}/n")
            est, lo, hi = (
                sources.get(COLLISION, f"{base}/{k}/{i}") for k in ("estimate", "ci_low", "ci_high")
            )
            exact = cvn_exact(sources, f"{family},{f},{n}")
            tokens = family in TOKEN_INPUTS
            what = f"sentence pairs, overlap {f}" if tokens else f"cosine {f}"
            mode = "full" if tokens else "reduced"
            cells = [family, f, what, mode, f"{est:.4f} [{lo:.4f}, {hi:.4f}]", f"{exact:.4f}"]
            cells.append("yes" if lo <= exact <= hi else "no")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def beyond_exact(sources: Any, arg: str) -> float:
    """collision_beyond's exact probability: ``COSINE,FAMILY,N``.

    Args:
        sources: the result files.
        arg: e.g. ``0.5,productkey,1048576``.

    Returns:
        The exact collision probability at that cosine and number of buckets.
    """
    cosine, family, n = _args(arg, 3, "beyond_exact")
    return _exact_at(sources, BEYOND, f"/data/panels/{cosine}/exact/{family}", int(n))


def beyond_rho(sources: Any, arg: str) -> float:
    """The exponent ``rho = -ln P / ln n`` of a collision_beyond exact value (``beyond_exact``)."""
    n = int(arg.split(",")[-1])
    return -math.log(beyond_exact(sources, arg)) / math.log(n)


#: Evidence fields of results.json's claims the theory page quotes: alias -> (claim, key).
CLAIM_FIELDS = {
    "a1_rows": ("T1.a1", "rows compared"),
    "a1_below": ("T1.a1", "rows where the Voronoi bucket's probability is below the top"),
    "a2_z": ("T1.a2", "z"),
    "b1_z": ("T1.b1", "z"),
    "b2_gap": ("T1.b2", "max (rate - J) at l=1000"),
    "b2_at": ("T1.b2", "at s/l"),
    "c2_limit": ("T1.c2", "limit f->1"),
    "d2_observed": ("T1.d2", "observed"),
    "d2_n": ("T1.d2", "n"),
    "d3_ratio": ("T1.d3", "rho/(1-f)"),
    "f1_sup": ("T1.f1", "3 f_3 (sup n f_n)"),
    "pk2_ratio": ("B.pk2", "P_vor(n, a) / P_pk(n, a) (rows: cosine, columns: log2 n)"),
}


def _claim_evidence(sources: Any, claim: str) -> tuple[str, dict]:
    """The pointer and parsed evidence of one claim of results.json."""
    pointer = f"/claims/id={_key(claim)}/evidence"
    return pointer, _node(sources, RESULTS, pointer)


def _key(key: str) -> str:
    """A JSON key as a pointer segment: ``~`` and ``/`` as RFC 6901's ``~0`` and ``~1``."""
    return key.replace("%", "%25").replace("~", "~0").replace("/", "~1")


def claim(sources: Any, alias: str) -> Any:
    """One evidence field of a claim (:data:`CLAIM_FIELDS`).

    Args:
        sources: the result files.
        alias: a key of :data:`CLAIM_FIELDS`.

    Returns:
        The field's value.
    """
    claim_id, key = CLAIM_FIELDS[alias]
    pointer, _ = _claim_evidence(sources, claim_id)
    return sources.get(RESULTS, f"{pointer}/{_key(key)}")


def claim_points(sources: Any, claim_id: str) -> str:
    """A claim's Monte-Carlo points and the pairs of each: ``8 points of 100,000 pairs``.

    Args:
        sources: the result files.
        claim_id: a claim whose evidence holds points with ``trials``.

    Returns:
        The count of points and their number of pairs (a range where they differ).
    """
    pointer, evidence = _claim_evidence(sources, claim_id)
    keys = [k for k, v in evidence.items() if isinstance(v, dict) and "trials" in v]
    trials = [sources.get(RESULTS, f"{pointer}/{_key(k)}/trials") for k in keys]
    low, high = min(trials), max(trials)
    pairs = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    return f"{len(keys)} points of {pairs} pairs"


def claim_list(sources: Any, arg: str) -> Any:
    """One end of a claim's evidence list (nested lists flattened): ``ALIAS,REDUCER``.

    Args:
        sources: the result files.
        arg: an alias of :data:`CLAIM_FIELDS` and ``min``, ``max``, ``first``, ``last`` or
            ``len``, e.g. ``d2_observed,min``.

    Returns:
        The smallest, largest, first or last number, or the count.
    """
    alias, reducer = _args(arg, 2, "claim_list")
    values = claim(sources, alias)
    flat = [v for row in values for v in row] if values and isinstance(values[0], list) else values
    pick = {"min": min, "max": max, "first": lambda v: v[0], "last": lambda v: v[-1], "len": len}
    return pick[reducer](flat)


def claim_d4_gap(sources: Any, arg: str) -> float:
    """T1.d4's gap ``rho_vor - (1-f)/(1+f)`` at ``F,LOG2N``.

    Args:
        sources: the result files.
        arg: e.g. ``0.1,24``.

    Returns:
        The gap.
    """
    f, log2n = _args(arg, 2, "claim_d4_gap")
    pointer, evidence = _claim_evidence(sources, "T1.d4")
    i = _index(evidence["log2 n"], int(log2n), f"figures/{RESULTS}#{pointer}/log2 n")
    return sources.get(RESULTS, f"{pointer}/f={f}/gap/{i}")


def _width_cell(read: Callable[[str], Any]) -> str:
    """A Theorem 2 table cell: the minimal width per seed, and the median in units of ``d``."""
    seeds = ", ".join("not reached" if w is None else str(w) for w in read("per_seed"))
    median = read("median_over_d")
    return f"{seeds} ({'not reached' if median is None else f'{median:g} d'})"


def t2_table(sources: Any) -> str:
    """The theory page's Theorem 2 table: minimal widths of A and B per ``d`` and their ratio.

    Args:
        sources: the result files.

    Returns:
        Markdown: one row per ``d`` at the study's target.
    """
    lines = [
        "| d | A: minimal width per seed (median) | B: minimal width per seed (median) | A / B |",
        "| --- | --- | --- | --- |",
    ]
    minimal = _node(sources, WIDTH, "/data/minimal")
    for d in minimal:
        cells = [d]
        for arch in ("A", "B"):
            base = f"/data/minimal/{d}/{arch}"
            cells.append(_width_cell(lambda k, b=base: sources.get(WIDTH, f"{b}/{k}")))
        ratio = sources.get(WIDTH, f"/data/ratio/{d}")
        cells.append("-" if ratio is None else f"{ratio:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _medians(sources: Any, arch: str, d: int, ratio: float) -> float:
    """The median held-out loss over seeds of one architecture, ``d`` and width ratio."""
    rows = _node(sources, WIDTH, "/data/rows")
    picked = [
        sources.get(WIDTH, f"/data/rows/{i}/heldout_nmse")
        for i, r in enumerate(rows)
        if r["arch"] == arch and r["d"] == d and r["width_over_d"] == ratio
    ]
    if not picked:
        raise ValueError(f"figures/{WIDTH}: no rows of {arch} at d = {d}, width {ratio} d")
    picked.sort()
    mid = len(picked) // 2
    return picked[mid] if len(picked) % 2 else (picked[mid - 1] + picked[mid]) / 2


def t2_median(sources: Any, arg: str) -> float:
    """The median over seeds of the held-out ``1 - R^2``: ``ARCH,D,WIDTH_OVER_D``.

    Args:
        sources: the result files.
        arg: e.g. ``A,4,2.0``.

    Returns:
        The median loss.
    """
    arch, d, ratio = _args(arg, 3, "t2_median")
    return _medians(sources, arch, int(d), float(ratio))


def t2_drop(sources: Any, arg: str) -> str:
    """By how much B's median loss falls between two widths, over every ``d``: ``LOW,HIGH``.

    Args:
        sources: the result files.
        arg: the two width ratios, e.g. ``0.75,1.25``.

    Returns:
        E.g. ``190 to 240`` (three significant digits at most), smallest first.
    """
    low, high = (float(v) for v in _args(arg, 2, "t2_drop"))
    drops = [
        _medians(sources, "B", int(d), low) / _medians(sources, "B", int(d), high)
        for d in _node(sources, WIDTH, "/data/minimal")
    ]
    return f"{min(drops):.3g} to {max(drops):.3g}"


def t2_params(sources: Any, d: str) -> float:
    """How many times more non-table parameters A has than B at their exact widths."""
    a = sources.get(WIDTH, f"/data/params/{d}/A/non_table")
    return a / sources.get(WIDTH, f"/data/params/{d}/B/non_table")


def t2_construction_error(sources: Any) -> float:
    """The largest float64 error of the exact constructions over every ``d`` and student."""
    return max(
        sources.get(WIDTH, f"/data/constructions/{d}/{arch}/max_abs_error_float64")
        for d in _node(sources, WIDTH, "/data/constructions")
        for arch in ("A", "B")
    )


#: name -> function(sources[, arg]) -> number or text.
DERIVED: dict[str, Callable[..., Any]] = {
    "probe_row": probe_row,
    "probe_summary": probe_summary,
    "probe_inside": probe_inside,
    "probe_more": probe_more,
    "hf_departure": hf_departure,
    "freq_share": freq_share,
    "freq_longcat": freq_longcat,
    "cvn_exact": cvn_exact,
    "cvn_cover": cvn_cover,
    "beyond_exact": beyond_exact,
    "beyond_rho": beyond_rho,
    "claim": claim,
    "claim_points": claim_points,
    "claim_list": claim_list,
    "claim_d4_gap": claim_d4_gap,
    "t2_median": t2_median,
    "t2_drop": t2_drop,
    "t2_params": t2_params,
    "t2_construction_error": t2_construction_error,
}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {
    "probe_trained": probe_trained_table,
    "collision_at_1024": cvn_table,
    "theorem2_minimal": t2_table,
}
