"""The Theorem 2 width study: input-only (A) against upper-layer (B) lookups.

The sweep itself is :func:`lshsim.theorems.theorem2.run_sweep` (JAX, imported when the study
runs); this module records it as a study, with its ``REPORT.md`` table (:func:`width_section`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lshsim.plots.theorem2 import width_figure
from lshsim.studies.base import Study


@dataclass(frozen=True)
class WidthConfig:
    """The sweep of :mod:`lshsim.theorems.theorem2` to run: ``default`` or ``quick``.

    ``default`` is ``DEFAULT``; ``quick`` is ``SMOKE`` (d = 4, widths d and 2d, N = 16, 3000
    steps), the sweep's pipeline check in seconds (``lshsim theorem2 --quick`` keeps the
    larger ``QUICK``).
    """

    width_sweep: str


def theorem2_width(cfg: WidthConfig, seed: int) -> dict:
    """Theorem 2's width sweep (:mod:`lshsim.theorems.theorem2`): input-only vs upper lookups."""
    from lshsim.theorems import theorem2

    sweep = theorem2.DEFAULT if cfg.width_sweep == "default" else theorem2.SMOKE
    data = theorem2.run_sweep(sweep, seed)
    data.pop("elapsed_s", None)  # timings stay out of the numbers
    return data


def _width_text(w) -> str:
    return "not reached" if w is None else f"{w:g}"


def width_section(data: dict) -> list[str]:
    """REPORT.md's Theorem 2 table: minimal width per architecture, per d and target."""
    c = data["config"]
    lines = [
        "",
        "## Theorem 2: minimal width, input-only (A) vs upper-layer (B) lookups",
        "",
        f"Statement and proofs: `proofs/theorem2.md`. Task `<Psi(u), Phi(q)>`, teacher depth "
        f"{c['teacher_depth']}, N = {c['n_categories']} categories, students of depth "
        f"{c['student_depth']}, {c['steps']} steps, {c['seeds']} seeds; minimal swept width "
        "whose held-out normalised MSE reaches the target (median over seeds). Theory: d for "
        "B, 2d for A.",
        "",
        "| d | target | A: minimal width (per seed) | B: minimal width (per seed) | A / B |",
        "| --- | --- | --- | --- | --- |",
    ]
    targets = {str(c["target_loss"]): data}
    targets.update(data.get("by_target", {}))
    for tgt in sorted(targets, key=float):
        block = targets[tgt]
        for d, per in block["minimal"].items():
            cells = [d, tgt]
            for arch in ("A", "B"):
                m = per[arch]
                seeds = ", ".join(_width_text(w) for w in m["per_seed"])
                cells.append(f"{_width_text(m['median'])} ({seeds})")
            ratio = block["ratio"].get(d)
            cells.append("-" if ratio is None else f"{ratio:.2f}")
            lines.append("| " + " | ".join(cells) + " |")
    return lines


STUDIES = (
    Study(
        "theorem2_width",
        theorem2_width,
        width_figure,
        "Theorem 2: held-out loss against width / d for the input-only lookup "
        "(A) and the lookup fed to the upper layers too (B), with the target loss and each "
        "architecture's minimal width.",
        {"default": WidthConfig(width_sweep="default"), "quick": WidthConfig(width_sweep="quick")},
        section=width_section,
        kinds={"": "platform", "config": "exact", "seed": "exact", "params": "exact"},
    ),
)
