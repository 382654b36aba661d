"""Derived numbers and tables of the proofs (proofs/*.md; ``docs/render_numbers.py``).

The claims' evidence (``results.json``), the calibration of the intervals, Theorem 2's width
study and the benchmark rows the proofs quote. Each derived number is a function of a
:class:`docs.number_sources.Sources` (and an optional text argument) that reads the result
files through ``sources.get``; each table returns Markdown. Names are unique across the
``docs/numbers_*.py`` modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from docs import numbers_lsh
from docs.numbers_guide import PEERS, bench_field
from docs.numbers_lsh import signed as _signed

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


def _powers(value: float, how: str) -> str:
    """``value`` in powers outside math: ``sciN`` (``-2.2 × 10⁻¹⁶``) or ``pow2`` (``2²⁴``)."""
    if how == "pow2":
        if value & (value - 1):
            return f"{value}"
        return "2" + str(int(value).bit_length() - 1).translate(_SUPERSCRIPT)
    mantissa, exponent = f"{value:.{int(how[3:])}e}".split("e")
    return f"{_signed(mantissa)} \u00d7 10" + str(int(exponent)).translate(_SUPERSCRIPT)


def proof_tex(sources: Any, name: str) -> str:
    """An evidence number of :data:`TEX` as text outside math: ``-2.2 × 10⁻¹⁶``, ``2²⁴``."""
    claim, path, how = TEX[name]
    return _powers(evidence(sources, claim, *(path if isinstance(path, tuple) else (path,))), how)


def proof_power(sources: Any, arg: str) -> str:
    """Any number in powers outside math: ``FILE#/POINTER,sciN`` (``−1.67 × 10⁴``) or ``,pow2``."""
    source, how = arg.rsplit(",", 1)
    return _powers(sources.value(source), how)


def proof_signed(sources: Any, arg: str) -> str:
    """A number with a typographic minus: ``FILE#/POINTER,SPEC`` (``SPEC`` as ``format``'s)."""
    source, spec = arg.rsplit(",", 1)
    return _signed(format(sources.value(source), spec))


def proof_max_abs_z(sources: Any, claim: str) -> float:
    """The largest ``|z|`` over a claim's Monte-Carlo points."""
    return max(abs(evidence(sources, claim, key, "z_score")) for _, key in _points(sources, claim))


def proof_ng_max_z(sources: Any) -> float:
    """The largest ``|z|`` of the hashed n-gram claims' Monte Carlo (B.ng1, B.ng2, B.ng4)."""
    return max(
        abs(evidence(sources, "B.ng1", "max z")),
        abs(evidence(sources, "B.ng2", "ngram kernel N = 1, m = 7", "z")),
        abs(evidence(sources, "B.ng4", "max z")),
    )


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


def proof_t1_d4_at(sources: Any, arg: str) -> list[float]:
    """Claim T1.d4 over its ``f``: ``gap,K`` (the gaps at ``n = 2^K``) or ``ratio,K`` (the gap
    times ``ln n / ln ln n``), a list for the reducers (``min``, ``max``)."""
    what, k = arg.split(",")
    i = evidence(sources, "T1.d4", "log2 n").index(int(k))
    gaps = [evidence(sources, "T1.d4", key, "gap", i) for _, key in _f_rows(sources, "T1.d4")]
    if what == "gap":
        return gaps
    ln = int(k) * math.log(2)
    return [g * ln / math.log(ln) for g in gaps]


def proof_t1_g1_errors(sources: Any, arg: str) -> list[float]:
    """Claim T1.g1's scaled errors at ``f`` in ``[FMIN, FMAX]``: ``mean|var,FMIN,FMAX[,/d]``.

    Args:
        sources: the result files.
        arg: ``mean`` (error times ``d^2``) or ``var`` (relative error times ``d``), the range
            of ``f``, and ``/d`` to divide the scaled variance error by ``d`` again (``e_v``).

    Returns:
        The values, in evidence order (a list for the reducers ``min``, ``max``).
    """
    what, low, high, *per_d = arg.split(",")
    name = {"mean": "mean error x d^2, se x d^2", "var": "var relative error x d, se x d"}[what]
    out = []
    for key, value in evidence(sources, "T1.g1").items():
        if not (isinstance(value, dict) and key.startswith("f=")):
            continue
        label = dict(part.split("=", 1) for part in key.split(","))
        if float(low) <= float(label["f"]) <= float(high):
            scaled = evidence(sources, "T1.g1", key, name, 0)
            out.append(scaled / int(label["d"]) if per_d else scaled)
    return out


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


def proof_sci(sources: Any, arg: str) -> str:
    """A number as the proofs write it in prose, ``1.3e-7``: ``FILE#/POINTER,REDUCER,DIGITS``.

    Args:
        sources: the result files.
        arg: the source, ``min``, ``max`` or ``one`` (a list's smallest, largest, or a single
            number) and the digits after the point.

    Returns:
        The text, the exponent without padding (``1.3e-7``, not ``1.3e-07``).
    """
    source, reducer, digits = arg.split(",")
    value = sources.value(source)
    value = {"min": min, "max": max, "one": lambda v: v}[reducer](value)
    mantissa, exponent = f"{value:.{int(digits)}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


FREQUENCY = "frequency_collisions.json"


def proof_freq_law(sources: Any, arg: str) -> float:
    """The ideal-hash law's mean share of a frequency study table at ``m = K D``: ``TABLE,HEADS,K``.

    Args:
        sources: the result files.
        arg: the table (``tokenid``, ``ngram_N=2``; ``_`` for a space), the event (``head_0``,
            ``all``, ``any``) and ``K``; ``D`` is the table's distinct keys (tokens for Token-ID
            and 1-grams, 2-grams for ``ngram N=2``).

    Returns:
        The law's mean share (a fraction) at the grid's size nearest ``K D`` (the grid holds
        ``K D`` rounded).
    """
    table, heads, k = arg.split(",")
    table, heads = table.replace("_", " "), heads.replace("_", " ")
    keys = "distinct_bigrams" if table.endswith("N=2") else "distinct_tokens"
    size = float(k) * sources.get(FREQUENCY, f"/data/{keys}")
    sizes = sources.get(FREQUENCY, f"/data/tables/{quote(table)}/m")
    i = min(range(len(sizes)), key=lambda j: abs(sizes[j] - size))  # the grid's K D, rounded
    return sources.get(FREQUENCY, f"/data/tables/{quote(table)}/{heads}/mean/{i}")


def proof_rows_per_key(sources: Any, share: str) -> float:
    """Rows per distinct key for one head's mean share ``s`` as ``D`` grows: ``-1/ln(1 - s)``."""
    return -1.0 / math.log1p(-float(share))


#: name -> function(sources[, arg]) -> number or text (with proofs/lsh_exponent.md's).
DERIVED: dict[str, Callable[..., Any]] = {
    **numbers_lsh.DERIVED,
    "proof_coverage": proof_coverage,
    "proof_coverage_topk": proof_coverage_topk,
    "proof_wilson_exact": proof_wilson_exact,
    "proof_truth": proof_truth,
    "proof_tex": proof_tex,
    "proof_power": proof_power,
    "proof_signed": proof_signed,
    "proof_t1_d4_at": proof_t1_d4_at,
    "proof_t1_g1_errors": proof_t1_g1_errors,
    "proof_max_abs_z": proof_max_abs_z,
    "proof_ng_max_z": proof_ng_max_z,
    "proof_t1_d4_max_error": proof_t1_d4_max_error,
    "proof_t1_f2_n2": proof_t1_f2_n2,
    "proof_cosine_sd": proof_cosine_sd,
    "proof_bench": proof_bench,
    "proof_pk2_gap": proof_pk2_gap,
    "proof_topk_reduced": proof_topk_reduced,
    "proof_sci": proof_sci,
    "proof_freq_law": proof_freq_law,
    "proof_rows_per_key": proof_rows_per_key,
}
#: name -> function(sources) -> Markdown table (with proofs/lsh_exponent.md's).
TABLES: dict[str, Callable[..., str]] = {
    **numbers_lsh.TABLES,
    "proof_t1_a2": proof_t1_a2,
    "proof_t1_b1": proof_t1_b1,
    "proof_t1_d3": proof_t1_d3,
    "proof_t1_d4_ratio": proof_t1_d4_ratio,
    "proof_t1_d4_gaps": proof_t1_d4_gaps,
    "proof_t1_g1": proof_t1_g1,
    "proof_pk2": proof_pk2,
}
