"""The memory studies' summaries (Markdown tables) and figures, from the results document."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Metrics of the summaries and figures (keys of a row's ``heldout``).
METRICS = ("accuracy", "content_accuracy", "loss")


def _metric(row: dict[str, Any], key: str) -> float:
    ev = row.get("heldout") or row["final_eval"]
    v = ev.get(key)
    return math.nan if v is None else float(v)


def summarize(
    doc: dict[str, Any], variant: str, order: Sequence[str] = ()
) -> dict[str, list[dict[str, Any]]]:
    """Per study and variant: seeds, mean and 95% t-interval of held-out accuracy and loss.

    Also the per-seed (paired) difference from the baseline, over the finished runs. Studies
    come in ``order`` (those not in it last).
    """
    from lshsim.plots.memory import t_interval

    out: dict[str, list[dict[str, Any]]] = {}
    studies = doc["studies"].get(variant, {})
    order = list(order)
    for name in sorted(studies, key=lambda n: order.index(n) if n in order else len(order)):
        entry = studies[name]
        rows = []
        base = next((v for v in entry["variants"] if not v["changes"]), None)
        base_by_seed = {}
        if base is not None:
            for k in base["keys"]:
                if k in doc["runs"]:
                    base_by_seed[doc["runs"][k]["seed"]] = doc["runs"][k]
        for v in entry["variants"]:
            runs = [doc["runs"][k] for k in v["keys"] if k in doc["runs"]]
            item: dict[str, Any] = {"label": v["label"], "series": v["series"], "n": len(runs)}
            for metric in METRICS:
                m, lo, hi = t_interval([_metric(r, metric) for r in runs])
                item[metric] = {"mean": m, "lo": lo, "hi": hi}
                diffs = [
                    _metric(r, metric) - _metric(base_by_seed[r["seed"]], metric)
                    for r in runs
                    if r["seed"] in base_by_seed
                ]
                if v is not base and diffs:
                    dm, dlo, dhi = t_interval(diffs)
                    item[f"{metric}_diff_vs_baseline"] = {"mean": dm, "lo": dlo, "hi": dhi}
            if runs:
                item["examples_per_second"] = sum(
                    r.get("examples_per_second") or math.nan for r in runs
                ) / len(runs)
                item["extra_params"] = runs[0]["extra_params"]["total"]
                item["budget_units"] = runs[0].get("budget_units")
            rows.append(item)
        out[name] = rows
    return out


def _ci(d: dict[str, float], scale: float = 100.0, digits: int = 2) -> str:
    if d["mean"] is None or not math.isfinite(d["mean"]):
        return "-"
    m = f"{scale * d['mean']:.{digits}f}"
    if d["lo"] is None or not math.isfinite(d["lo"]):
        return m
    return f"{m} [{scale * d['lo']:.{digits}f}, {scale * d['hi']:.{digits}f}]"


def _score(mean: float | None, sign: int) -> float:
    """``sign * mean``, with a missing mean ranked last."""
    return -math.inf if mean is None or not math.isfinite(mean) else sign * mean


def _best_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """For series with several variants (lookup methods): the best one by each metric."""
    by_series: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["n"]:
            by_series.setdefault(r["series"], []).append(r)
    if all(len(v) < 2 for v in by_series.values()):
        return []
    lines = []
    for metric, sign, fmt in (("accuracy", 1, "{:.2f}%"), ("loss", -1, "{:.3f}")):
        scale = 100.0 if metric == "accuracy" else 1.0
        picks = []
        for series, items in by_series.items():
            best = max(items, key=lambda r: _score(r[metric]["mean"], sign))
            picks.append(f"{series}: {best['label']} {fmt.format(scale * best[metric]['mean'])}")
        lines.append(f"Best per series by mean {metric}: " + "; ".join(picks))
    return [*lines, ""]


def format_summary(doc: dict[str, Any], variant: str, order: Sequence[str] = ()) -> str:
    """Markdown tables of :func:`summarize` (accuracies in %, 95% t-intervals in brackets).

    "diff" columns are means of the per-seed differences from the baseline (paired by seed).
    """
    lines = []
    for name, rows in summarize(doc, variant, order).items():
        entry = doc["studies"][variant][name]
        lines += [f"### {name}: {entry['title']}", f"Paper: {entry['paper']}", ""]
        lines.append(
            "| variant | seeds | accuracy % | diff (pp) | content acc % | diff (pp) | loss "
            "| diff | extra params | ex/s |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            cells = []
            for metric, scale, digits in (
                ("accuracy", 100.0, 2),
                ("content_accuracy", 100.0, 2),
                ("loss", 1.0, 3),
            ):
                diff = r.get(f"{metric}_diff_vs_baseline")
                cells.append(_ci(r[metric], scale, digits))
                cells.append(_ci(diff, scale, digits) if diff else "")
            eps = r.get("examples_per_second")
            eps_text = "-" if eps is None or not math.isfinite(eps) else f"{eps:.0f}"
            lines.append(
                f"| {r['label']} | {r['n']} | {' | '.join(cells)} | "
                f"{r.get('extra_params', '-')} | {eps_text} |"
            )
        lines.append("")
        lines += _best_lines(rows)
    return "\n".join(lines)


def figure_data(doc: dict[str, Any], variant: str, study: str) -> dict[str, Any]:
    """Per-variant per-seed accuracy and loss of a study, as the plot functions take them."""
    entry = doc["studies"][variant][study]
    groups = []
    for v in entry["variants"]:
        runs = sorted(
            (doc["runs"][k] for k in v["keys"] if k in doc["runs"]), key=lambda r: r["seed"]
        )
        groups.append(
            {
                "label": v["label"],
                "series": v["series"],
                "changes": v["changes"],
                **{m: [_metric(r, m) for r in runs] for m in METRICS},
            }
        )
    return {"title": entry["title"], "layout": entry["layout"], "groups": groups}


def make_figure(data: dict[str, Any]):
    """The study's figure (:mod:`lshsim.plots.memory`) from :func:`figure_data`."""
    from lshsim.plots import memory as memory_plots

    acc, loss = memory_plots.METRICS
    groups = [g for g in data["groups"] if g["accuracy"]]
    content = all(math.isfinite(v) for g in groups for v in g["content_accuracy"])
    metrics = (acc, memory_plots.CONTENT_ACCURACY, loss) if content else (acc, loss)
    if data["layout"] == "sweep":
        base = next((g for g in groups if not g["changes"]), None)
        cells = [
            {**g, "rank": g["changes"]["expert_rank"], "buckets": g["changes"]["buckets"]}
            for g in groups
            if g["changes"]
        ]
        return memory_plots.plot_sweep(cells, baseline=base, title=data["title"], metrics=metrics)
    return memory_plots.plot_groups(groups, title=data["title"], metrics=metrics)


def write_figures(doc: dict[str, Any], variant: str, fig_dir: Path) -> list[Path]:
    """Write ``memory_<study>.png``/``.svg`` (``_real`` suffix for the real variant)."""
    from lshsim.plots import save_figure

    written = []
    for study in doc["studies"].get(variant, {}):
        data = figure_data(doc, variant, study)
        if not any(g["accuracy"] for g in data["groups"]):
            continue
        suffix = "" if variant == "smoke" else f"_{variant}"
        written += save_figure(make_figure(data), fig_dir / f"memory_{study}{suffix}")
    return written
