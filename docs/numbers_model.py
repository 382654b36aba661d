"""Derived numbers and tables of model.md and scaleout.md (``docs/render_numbers.py``).

estimation.md quotes a memory estimate through :func:`model_bytes_text` too.

Each derived number is a function of a :class:`docs.number_sources.Sources` (and an optional
text argument) that reads the result files through ``sources.get``; each table returns
Markdown. Names are unique across the ``docs/numbers_*.py`` modules.

The arguments of the derived numbers are comma-separated and ``%``-unquoted (``%20`` for a
space: a marker's source is one word).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

#: ``bench_memory*.json`` of each config, and the variants' names there.
MEMORY_BENCH = {"tiny": "bench_memory.json", "small": "bench_memory_small.json"}
ALTUP_VARIANTS = {"wide": "altup K=2", "collapsed": "altup K=2 collapsed"}
#: The rows of ``figures/plan.json`` the scale-out page shows, in its order.
PLAN_ROWS = (
    "small Baseline",
    "small Softmax r256 b128",
    "base Baseline",
    "base AltUp K=2",
    "base Token-ID r5",
    "base Softmax r256 b128",
    "base LSH r10 b1024",
    "large Baseline",
    "large AltUp K=4",
    "large Token-ID r0",
    "large LSH r10 b1024",
)
#: ``(study, label in memory_studies.json, label on the page)`` of the smoke studies' table.
STUDY_ROWS = (
    ("table1", "Sum K=2", "Sum K=2"),
    ("table1", "SameUp K=2", "SameUp K=2"),
    ("table1", "AltUp K=2", "AltUp K=2"),
    ("table5", "AltUp K=4", "AltUp K=4"),
    ("lookups", "Token-ID r0 b2176", "Token-ID, rank 0 (2176 buckets)"),
    ("lookups", "Softmax r0 b2048", "Softmax, rank 0, 2048 buckets"),
    ("lookups", "Softmax r16 b64", "Softmax, rank 16, 64 buckets"),
    ("lookups", "LSH r0 b2048", "LSH, rank 0, 2048 buckets"),
    ("lookups", "LSH r16 b64", "LSH, rank 16, 64 buckets"),
)


def _args(arg: str) -> list[str]:
    """A derived number's argument, split at commas and unquoted."""
    return [unquote(a) for a in arg.split(",")]


def _span(values: list[float], fmt: str) -> str:
    """``lo-hi`` of ``values`` in ``fmt`` (one number when both ends read the same)."""
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo}-{hi}"


def _spaced(n: int) -> str:
    """An integer with a space between groups of three digits (``557 056``)."""
    return f"{n:,d}".replace(",", " ")


# --- model.md: parameter counts ------------------------------------------------------------


def t5_params_spaced(sources, arg: str) -> str:
    """A config's parameter count from the closed form (exact, no tracing), digits spaced.

    Args:
        sources: the result files (unused: the count is a function of the config).
        arg: ``CONFIG,PART`` with PART ``embedding``, ``non_embedding`` or ``total``.

    Returns:
        E.g. ``557 056``.
    """
    from lshsim.t5.budget import param_count

    config, part = _args(arg)
    return _spaced(param_count(config)[part])


def t5_v11_small_nonembedding(sources) -> int:
    """Non-embedding parameters of `small` at T5 v1.1 small's widths (6 heads, d_ff 1024)."""
    from lshsim.t5.budget import param_count
    from lshsim.t5.configs import get_config

    return param_count(get_config("small").replace(num_heads=6, d_ff=1024))["non_embedding"]


def t5_table3_departure(sources) -> float:
    """Largest relative departure of the baselines' counts (plan.json) from Table 3's.

    Table 3's counts are the paper's constants, as ``lshsim params`` compares with them
    (:data:`lshsim.t5.configs.TABLE3`).
    """
    from lshsim.t5.configs import TABLE3

    worst = 0.0
    for config, paper in TABLE3.items():
        ours = sources.get("plan.json", f"/rows/{config} Baseline/best/params")
        for part, want in zip(("embedding", "non_embedding"), paper, strict=True):
            worst = max(worst, abs(ours[part] / want - 1))
    return worst


def spaced(sources, source: str) -> str:
    """An integer at a source (``FILE#/POINTER``) with its digits spaced (``4 976``)."""
    return _spaced(sources.value(source))


def model_bytes_text(sources, arg: str) -> str:
    """``train``'s memory estimate of a step, as its refusal prints it (``87.2 GB``).

    Args:
        sources: the result files (unused: the estimate is a closed form of its inputs).
        arg: ``CONFIG,BATCH,INPUT_LENGTH,TARGET_LENGTH``.

    Returns:
        :func:`lshsim._memory.format_bytes` of :func:`lshsim.t5.budget.model_bytes`.
    """
    from lshsim._memory import format_bytes
    from lshsim.t5.budget import model_bytes

    config, *sizes = _args(arg)
    return format_bytes(model_bytes(config, *(int(n) for n in sizes)))


def activation_bytes_text(sources, config: str) -> str:
    """``train``'s estimate of a config's step activations at its defaults (``221 MB``).

    Args:
        sources: the result files (unused: the estimate is a closed form of the config).
        config: a config name.

    Returns:
        :func:`lshsim._memory.format_bytes` of :func:`lshsim.t5.budget.activation_bytes` at the
        config's batch and input length and the targets span corruption gives it.
    """
    from lshsim._memory import format_bytes
    from lshsim.t5.budget import activation_bytes
    from lshsim.t5.configs import get_config
    from lshsim.t5.data.spans import compute_input_and_target_lengths

    cfg = get_config(config)
    target = compute_input_and_target_lengths(cfg.input_length)[1]
    return format_bytes(activation_bytes(cfg, cfg.batch_size, cfg.input_length, target))


# --- model.md: against Hugging Face, GPU ------------------------------------------------------


def t5_torch_faster_pct(sources) -> str:
    """How much faster transformers' step was than lshsim's in bench_t5.json, in %, as a range."""
    ratios = sources.get("bench_t5.json", "/results/*/ratio")
    return _span([100 * (1 - r) for r in ratios], ".0f")


def t5_ratio_range(sources) -> str:
    """The range of bench_t5.json's torch / lshsim step-time ratios (``0.87-0.95``)."""
    return _span(sources.get("bench_t5.json", "/results/*/ratio"), ".2f")


def _peers_row(sources, prefix: str) -> str:
    """The pointer of the one bench_peers.json row whose name starts with ``prefix``."""
    names = sources.get("bench_peers.json", "/results/*/name")
    hits = [i for i, n in enumerate(names) if n.startswith(prefix)]
    if len(hits) != 1:
        raise ValueError(f"bench_peers.json: {len(hits)} rows start with {prefix!r}, not one")
    return f"/results/{hits[0]}"


def peers_t5_ratio(sources, config: str) -> float:
    """torch / lshsim step time of ``config``'s T5 train step in bench_peers.json."""
    return sources.get("bench_peers.json", _peers_row(sources, f"T5 {config} ") + "/ratio")


def peers_t5_speed(sources, config: str) -> str:
    """lshsim's step against transformers' in bench_peers.json, in words (``8% slower``)."""
    ratio = peers_t5_ratio(sources, config)
    return f"{abs(100 * (ratio - 1)):.0f}% {'faster' if ratio >= 1 else 'slower'}"


def peers_sgemm_share(sources) -> str:
    """Both frameworks' T5 FLOP rates as % of the machine's SGEMM rate (bench_peers.json)."""
    shares = []
    for config in ("tiny", "small"):
        row = _peers_row(sources, f"T5 {config} ")
        sgemm = sources.get("bench_peers.json", f"{row}/sgemm_gflops")
        for side in ("jax", "torch"):
            shares.append(100 * sources.get("bench_peers.json", f"{row}/{side}_gflops") / sgemm)
    return _span(shares, ".0f")


def peers_altup_ratio(sources, arg: str) -> float:
    """AltUp K=2 step time / baseline's in bench_peers.json; ``arg``: ``CONFIG,wide|collapsed``."""
    config, form = _args(arg)
    return sources.get(
        "bench_peers.json", _peers_row(sources, f"AltUp K=2 {config} train step ({form}") + "/ratio"
    )


def _gpu_row(sources, arg: str) -> str:
    """The pointer of gpu.json's row ``CONFIG,VARIANT``."""
    config, variant = _args(arg)
    rows = sources.get("gpu.json", "/rows/*/config"), sources.get("gpu.json", "/rows/*/variant")
    hits = [i for i, cv in enumerate(zip(*rows, strict=True)) if cv == (config, variant)]
    if len(hits) != 1:
        raise ValueError(f"gpu.json: {len(hits)} rows of {config} {variant}, not one")
    return f"/rows/{hits[0]}"


def gpu_step_ms(sources, arg: str) -> float:
    """Median train-step time in ms of gpu.json's row ``CONFIG,VARIANT``."""
    return 1000 * sources.get("gpu.json", _gpu_row(sources, arg) + "/step_s_median")


def gpu_mfu(sources, arg: str) -> float:
    """MFU (a fraction) of gpu.json's row ``CONFIG,VARIANT``."""
    return sources.get("gpu.json", _gpu_row(sources, arg) + "/mfu")


# --- model.md: memory variants' step time and the small-scale studies --------------------------


def altup_extra_time_pct(sources, arg: str) -> float:
    """% more time per step of AltUp K=2 than the baseline; ``arg``: ``CONFIG,wide|collapsed``."""
    config, form = _args(arg)
    variant = ALTUP_VARIANTS[form]
    return 100 * (sources.get(MEMORY_BENCH[config], f"/results/variant={variant}/ratio") - 1)


def studies_heldout_tokens(sources) -> str:
    """Target tokens of the held-out evaluation, the same for every smoke run (digits spaced)."""
    tokens = set(sources.get("memory_studies.json", "/runs/*/heldout/tokens"))
    if len(tokens) != 1:
        raise ValueError(f"memory_studies.json: the runs were evaluated on {sorted(tokens)} tokens")
    return _spaced(tokens.pop())


def studies_wide_loss_diff(sources) -> str:
    """Paired loss differences from the baseline of SameUp, AltUp K=2 and K=4 (a range)."""
    rows = [("table1", "SameUp K=2"), ("table1", "AltUp K=2"), ("table5", "AltUp K=4")]
    diffs = [
        sources.get(
            "memory_studies.json", f"/summary/smoke/{s}/label={label}/loss_diff_vs_baseline/mean"
        )
        for s, label in rows
    ]
    lo, hi = format(min(diffs), ".2f"), format(max(diffs), ".2f")
    return lo if lo == hi else f"{lo} to {hi}"


# --- model.md: the routing probe of product keys and n-grams ----------------------------------


def _summary(lookup: str, when: str) -> str:
    """The pointer of a routing study's per-layer summary (``when``: ``before``/``after``/empty)."""
    return f"/data/lookups/{lookup}" + (f"/{when}" if when else "") + "/summary"


def routing_inside(sources, arg: str) -> str:
    """Rows whose prediction is inside the 95% interval, ``inside/rows``.

    Args:
        sources: the result files.
        arg: ``STUDY,LOOKUP[,WHEN]`` (``routing_init,productkey`` or
            ``routing_trained,productkey,after``).

    Returns:
        E.g. ``19/20``.
    """
    study, lookup, *when = _args(arg)
    base = _summary(lookup, when[0] if when else "")
    inside = sources.get(f"{study}.json", f"{base}/*/inside")
    rows = sources.get(f"{study}.json", f"{base}/*/rows")
    return f"{sum(inside)}/{sum(rows)}"


def _layer_values(sources, arg: str) -> tuple[list[str], list[float]]:
    """Layers and one summary field of ``STUDY,LOOKUP,WHEN,FIELD``."""
    study, lookup, when, field = _args(arg)
    base = _summary(lookup, when)
    layers = sources.get(f"{study}.json", f"{base}/*/layer")
    return layers, sources.get(f"{study}.json", f"{base}/*/{field}")


def routing_layer(sources, arg: str) -> float:
    """One layer's summary field; ``arg``: ``STUDY,LOOKUP,WHEN,LAYER,FIELD`` (WHEN may be empty)."""
    study, lookup, when, layer, field = _args(arg)
    layers, values = _layer_values(sources, f"{study},{lookup},{when},{field}")
    return values[layers.index(layer)]


def routing_span(sources, arg: str) -> str:
    """The range over layers of a summary field; ``arg``: ``STUDY,LOOKUP,WHEN,FIELD,FORMAT``."""
    *rest, fmt = _args(arg)
    return _span(_layer_values(sources, ",".join(rest))[1], fmt)


def routing_bottom_departure(sources, arg: str) -> float:
    """Largest |mean departure| of the bottom layers (``*/0``); ``arg``: ``STUDY,LOOKUP,WHEN``."""
    layers, values = _layer_values(sources, f"{arg},mean_departure")
    return max(abs(v) for layer, v in zip(layers, values, strict=True) if layer.endswith("/0"))


# --- scaleout.md: the planner ----------------------------------------------------------------


def plan_gb(sources, arg: str) -> float:
    """GB (1e9 bytes) per device of a plan.json row; ``arg``: ``ROW,best|unrolled|replicated``."""
    row, which = _args(arg)
    return sources.get("plan.json", f"/rows/{row}/{which}/per_device_bytes") / 1e9


def plan_multi_device(sources) -> str:
    """The plan.json rows that need more than one device, with their parameters and devices."""
    names = [n for n in sources.get("plan.json", "/rows") if n]
    out = []
    for name in names:
        best = f"/rows/{name}/best"
        devices = sources.get("plan.json", f"{best}/devices")
        if devices > 1:
            size, label = name.split(" ", 1)
            params = sources.get("plan.json", f"{best}/params/total")
            count = f"{params:.2e}".replace("e+0", "e").replace("e+", "e")
            out.append(f"`{size}` {label} ({count} parameters), which needs {devices}")
    return ", ".join(out) if out else "none"


def plan_cpu_seconds(sources, layout: str) -> float:
    """CPU seconds of bench_peers.json's `base` Token-ID r5 plan, ``scanned`` or ``unrolled``."""
    row = _peers_row(sources, "plan B Token-ID r5")
    return sources.get("bench_peers.json", f"{row}/{'ours_s' if layout == 'scanned' else 'peer_s'}")


def plan_layout_gb(sources, name: str) -> float:
    """GB (1e9 bytes) per device of a variation in plan_layouts.json (``gather``, ...)."""
    return sources.get("plan_layouts.json", f"/plans/{name}/per_device_bytes") / 1e9


# --- model.md: XLA's FLOPs per token (cost_small.json) ------------------------------------------

COST = "cost_small.json"


def cost_flops_extra(sources, name: str) -> float:
    """A variant's extra forward FLOPs per token over the baseline in cost_small.json."""
    return sources.get(COST, f"/rows/name={name}/ratio") - 1


def cost_train_agreement(sources) -> float:
    """The largest difference between a variant's forward and training FLOPs ratios."""
    forward, train = (sources.get(COST, f"/rows/*/{k}") for k in ("ratio", "train_ratio"))
    return max(abs(f - t) for f, t in zip(forward, train, strict=True))


# --- tables ----------------------------------------------------------------------------------


def _sig3(x: float) -> int:
    """Decimals that show ``x`` to three significant digits."""
    return max(0, 2 - math.floor(math.log10(abs(x))))


def t5_vs_transformers_table(sources) -> str:
    """bench_t5.json: lshsim's and transformers' train step per config."""
    lines = [
        "| config | batch | input / target | lshsim s/step (IQR) | transformers s/step (IQR) "
        "| ratio (torch / lshsim) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for i, config in enumerate(sources.get("bench_t5.json", "/results/*/config")):
        row = f"/results/{i}"

        def cell(side: str, row: str = row) -> str:
            v = sources.get("bench_t5.json", f"{row}/{side}_s_per_step")
            iqr = sources.get("bench_t5.json", f"{row}/{side}_iqr_s")
            d = _sig3(v)
            return f"{v:.{d}f} ({iqr:.{d}f})"

        jax_cell, torch_cell = cell("jax"), cell("torch")
        ratio = sources.get("bench_t5.json", f"{row}/ratio")
        batch = sources.get("bench_t5.json", f"{row}/batch")
        lengths = [sources.get("bench_t5.json", f"{row}/{k}_length") for k in ("input", "target")]
        lines.append(
            f"| `{config}` | {batch} | {lengths[0]} / {lengths[1]} | {jax_cell} | {torch_cell} "
            f"| {ratio:.2f} |"
        )
    return "\n".join(lines)


#: bench_memory.json's variant names -> the page's labels.
MEMORY_LABELS = {
    "baseline": "baseline",
    "altup K=2": "AltUp K=2 (wide)",
    "altup K=2 collapsed": "AltUp K=2, collapsed",
    "altup K=4": "AltUp K=4 (wide)",
    "sameup K=2": "SameUp K=2 (wide)",
    "sum K=2": "Sum K=2",
    "tokenid rank 0": "Token-ID, rank 0",
    "softmax rank 16, 64 buckets": "Softmax, rank 16, 64 buckets",
    "lsh rank 16, 64 buckets": "LSH, rank 16, 64 buckets",
}


def memory_step_time_table(sources) -> str:
    """bench_memory.json: the tiny train step of every memory variant against the baseline."""
    lines = [
        "| variant | s/step | time vs baseline | FLOPs vs baseline |",
        "| --- | ---: | ---: | ---: |",
    ]
    for i, variant in enumerate(sources.get("bench_memory.json", "/results/*/variant")):
        row = f"/results/{i}"
        s = sources.get("bench_memory.json", f"{row}/s_per_step")
        ratio = sources.get("bench_memory.json", f"{row}/ratio")
        flops = sources.get("bench_memory.json", f"{row}/flops_ratio")
        time = f"**{ratio:.3f}**" if variant == "altup K=2 collapsed" else f"{ratio:.3f}"
        label = MEMORY_LABELS.get(variant, variant)
        lines.append(f"| {label} | {s:.3f} | {time} | {flops:.3f} |")
    return "\n".join(lines)


def _study(sources, study: str, label: str) -> Callable[[str], Any]:
    """A reader of one smoke-study row's fields (``FIELD/mean`` and so on)."""
    base = f"/summary/smoke/{study}/label={label}"
    return lambda field: sources.get("memory_studies.json", f"{base}/{field}")


def _fmt(x: float, spec: str) -> str:
    """``format(x, spec)`` without a negative zero (``-0.0`` reads as ``0.0``)."""
    text = format(x, spec)
    return format(0.0, spec) if float(text) == 0 else text


def _pct_ci(get: Callable[[str], Any], field: str, sign: str = "") -> str:
    """``mean [lo, hi]`` of a fraction in % (one decimal)."""
    mean, lo, hi = (100 * get(f"{field}/{k}") for k in ("mean", "lo", "hi"))
    return f"{_fmt(mean, sign + '.1f')} [{_fmt(lo, '.1f')}, {_fmt(hi, '.1f')}]"


def memory_studies_table(sources) -> str:
    """memory_studies.json: the smoke studies' accuracies and losses, per variant."""
    lines = [
        "| variant | span acc. % | content acc. % (Δ pp) | held-out loss (Δ) |",
        "| --- | --- | --- | --- |",
    ]
    base = _study(sources, "table1", "Baseline")
    lines.append(
        f"| baseline | {_pct_ci(base, 'accuracy')} | {100 * base('content_accuracy/mean'):.1f} "
        f"| {base('loss/mean'):.3f} |"
    )
    for study, label, shown in STUDY_ROWS:
        get = _study(sources, study, label)
        d = [get(f"loss_diff_vs_baseline/{k}") for k in ("mean", "lo", "hi")]
        lines.append(
            f"| {shown} | {_pct_ci(get, 'accuracy')} "
            f"| {100 * get('content_accuracy/mean'):.1f} "
            f"({_pct_ci(get, 'content_accuracy_diff_vs_baseline', '+')}) "
            f"| {get('loss/mean'):.3f} ({d[0]:+.2f} [{d[1]:.2f}, {d[2]:.2f}]) |"
        )
    r0, r16 = (_study(sources, "softmax_sweep", f"Softmax r{r} b8") for r in (0, 16))
    lines.append(
        f"| Softmax, rank 0 / 16, 8 buckets | {100 * r0('accuracy/mean'):.1f} / "
        f"{100 * r16('accuracy/mean'):.1f} | {100 * r0('content_accuracy/mean'):.1f} / "
        f"{100 * r16('content_accuracy/mean'):.1f} "
        f"({_pct_ci(r16, 'content_accuracy_diff_vs_baseline', '+')} at 16) "
        f"| {r0('loss/mean'):.3f} / {r16('loss/mean'):.3f} |"
    )
    b64 = _study(sources, "softmax_sweep", "Softmax r0 b64")
    lines.append(
        f"| Softmax, rank 0, 64 buckets | {_pct_ci(b64, 'accuracy')} "
        f"| {100 * b64('content_accuracy/mean'):.1f} | {b64('loss/mean'):.3f} |"
    )
    return "\n".join(lines)


def _replicated(sources, row: str) -> str:
    """The replicated (model = 1) plan's GB per device, or why there is none."""
    entry = sources.get("plan.json", f"/rows/{row}/replicated")
    if entry is None:
        return "n/a"
    if "per_device_bytes" in entry:
        return f"{sources.get('plan.json', f'/rows/{row}/replicated/per_device_bytes') / 1e9:.1f}"
    skipped = entry.get("skipped", "")
    return f"> {skipped.split()[-3]} (state)" if skipped.startswith("state") else "n/a"


def plan_rows_table(sources) -> str:
    """plan.json: a few of the paper's configurations, scanned and unrolled."""
    lines = [
        "| model | variant | H100s | mesh (data x model) | GB per device | model = 1 on as many "
        "| unrolled: H100s, GB per device |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in PLAN_ROWS:
        best = f"/rows/{row}/best"
        devices = sources.get("plan.json", f"{best}/devices")
        mesh = [sources.get("plan.json", f"{best}/mesh/{axis}") for axis in ("data", "model")]
        gb = sources.get("plan.json", f"{best}/per_device_bytes") / 1e9
        unrolled = sources.get("plan.json", f"/rows/{row}")
        if "unrolled" in unrolled:
            old = sources.get("plan.json", f"/rows/{row}/unrolled/devices")
            old_gb = sources.get("plan.json", f"/rows/{row}/unrolled/per_device_bytes") / 1e9
            then = f"{old}, {old_gb:.1f}"
        else:
            then = "n/a"
        size, label = row.split(" ", 1)
        lines.append(
            f"| {size[0].upper()} | {label} | {devices} | {mesh[0]} x {mesh[1]} | {gb:.1f} "
            f"| {_replicated(sources, row)} | {then} |"
        )
    return "\n".join(lines)


#: cost_small.json's variant names -> the page's labels.
COST_LABELS = {
    "altup K=2": "AltUp K=2 (wide: Table 3's model)",
    "altup K=4": "AltUp K=4 (wide)",
    "altup K=2 (collapsed)": "AltUp K=2, `--cross sum --output sum`",
    "sameup K=2": "SameUp K=2 (wide)",
    "sum K=2": "Sum K=2",
    "tokenid rank 0": "Token-ID, rank 0",
    "softmax rank 128, 64 buckets": "Softmax, rank 128, 64 buckets",
    "lsh rank 128, 128 buckets": "LSH, rank 128, 128 buckets",
    "productkey 1024 slots, top-2": "product keys, 1024 slots, top-2",
    "ngram N=2, 2 heads x 1024 rows": "n-grams, N=2, 2 heads x 1024 rows",
    "engram N=3, 2 heads x 1024 rows": "Engram, N=3, 2 heads x 1024 rows",
    "plain width 2d": "plain transformer, width 2d",
    "plain width 4d": "plain transformer, width 4d",
}


def cost_compare_table(sources) -> str:
    """cost_small.json: XLA's forward FLOPs per token of every variant, against the baseline."""
    lines = ["| variant | FLOPs/token | vs baseline |", "| --- | ---: | ---: |"]
    for i, name in enumerate(sources.get(COST, "/rows/*/name")):
        flops = sources.get(COST, f"/rows/{i}/flops_per_token")
        ratio = sources.get(COST, f"/rows/{i}/ratio")
        lines.append(f"| {COST_LABELS.get(name, name)} | {flops:.3E} | {ratio:.3f} |")
    return "\n".join(lines)


def long_span_halfwidth(sources, which: str) -> float:
    """The five-times-longer studies' span-accuracy interval half-widths, in points: min or max.

    Args:
        sources: the result files.
        which: ``min`` or ``max``.

    Returns:
        ``50 (hi - lo)`` of the accuracy interval, the smallest or largest over the rows.
    """
    rows = sources.get("memory_long/memory_studies.json", "/summary/smoke/*/*/accuracy")
    widths = [50 * (a["hi"] - a["lo"]) for table in rows for a in table]
    return {"min": min, "max": max}[which](widths)


def long_loss_diff(sources, which: str) -> float:
    """The five-times-longer studies' paired loss differences against the baseline: min or max.

    Args:
        sources: the result files.
        which: ``min`` or ``max``.

    Returns:
        The smallest or largest mean paired difference over the memory variants of both studies.
    """
    rows = sources.get("memory_long/memory_studies.json", "/summary/smoke")
    diffs = [
        sources.get(
            "memory_long/memory_studies.json",
            f"/summary/smoke/{study}/{i}/loss_diff_vs_baseline/mean",
        )
        for study, table in rows.items()
        for i, row in enumerate(table)
        if "loss_diff_vs_baseline" in row
    ]
    return {"min": min, "max": max}[which](diffs)


#: name -> function(sources[, arg]) -> number or text.
DERIVED: dict[str, Callable[..., Any]] = {
    "long_loss_diff": long_loss_diff,
    "long_span_halfwidth": long_span_halfwidth,
    "t5_params_spaced": t5_params_spaced,
    "t5_v11_small_nonembedding": t5_v11_small_nonembedding,
    "t5_table3_departure": t5_table3_departure,
    "t5_torch_faster_pct": t5_torch_faster_pct,
    "t5_ratio_range": t5_ratio_range,
    "peers_t5_ratio": peers_t5_ratio,
    "peers_t5_speed": peers_t5_speed,
    "peers_sgemm_share": peers_sgemm_share,
    "peers_altup_ratio": peers_altup_ratio,
    "gpu_step_ms": gpu_step_ms,
    "gpu_mfu": gpu_mfu,
    "altup_extra_time_pct": altup_extra_time_pct,
    "studies_heldout_tokens": studies_heldout_tokens,
    "studies_wide_loss_diff": studies_wide_loss_diff,
    "routing_inside": routing_inside,
    "routing_layer": routing_layer,
    "routing_span": routing_span,
    "routing_bottom_departure": routing_bottom_departure,
    "plan_gb": plan_gb,
    "plan_multi_device": plan_multi_device,
    "plan_cpu_seconds": plan_cpu_seconds,
    "plan_layout_gb": plan_layout_gb,
    "spaced": spaced,
    "model_bytes_text": model_bytes_text,
    "activation_bytes_text": activation_bytes_text,
    "cost_flops_extra": cost_flops_extra,
    "cost_train_agreement": cost_train_agreement,
}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {
    "t5_vs_transformers": t5_vs_transformers_table,
    "memory_step_time": memory_step_time_table,
    "memory_studies_smoke": memory_studies_table,
    "plan_rows": plan_rows_table,
    "cost_compare": cost_compare_table,
}
