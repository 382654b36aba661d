"""The paper's memory studies: pretrain T5 variants with several seeds, compare held-out accuracy.

Usage::

    python experiments/memory_studies.py --study all --variant smoke          # run (resumes)
    python experiments/memory_studies.py --study lookups --variant real --dry-run
    python experiments/memory_studies.py --plot                               # figures only

Studies (:data:`STUDIES`; each has a ``smoke`` size that runs on 2 CPU cores and the paper's
``real`` size):

``table1``  Tables 1 and 7: baseline vs Sum vs SameUp vs AltUp, K=2 (a second embedding table
            looked up by token id, consumed three ways).
``lookups`` Tables 4 and 6: baseline vs Token-ID vs Softmax vs LSH (SimHash) partial experts
            with ``max(2 rank, 1) * buckets`` within a factor sqrt(2) of Token-ID's rank-0
            budget (the vocabulary size): the paper's grid of ranks {0, 2, 4, ..., 256} and
            buckets 2^3..2^15 in ``real``, two points per method in ``smoke``.
``softmax_sweep``  Figure 2: softmax lookup, rank x buckets.
``table5``  Tables 5 and 8: baseline vs AltUp K=2 vs AltUp K=4.

Every run is keyed by a hash of its full config, its training options and its seed; the JSON
(``--json``) holds one row per key, so runs that several studies share (the baseline is in
all four) are trained once, and a rerun skips finished runs (a killed run's directory is
resumed from its last checkpoint). The JSON is rewritten atomically after every run; its
reading and writing, the summaries and the figures are in ``memory_report.py`` (same folder).

Metrics: train's own final evaluation (4 held-out batches, ``final_eval``) and a larger one
of the same held-out split after training (``heldout``: ``eval_examples`` examples, by
``lshsim.t5.loop.evaluate_run``, i.e. ``lshsim eval --examples``; its first ``4 * batch``
examples are exactly train's), which the figures and summaries use. The held-out
split, the tokenizer and the initialisation all depend on the seed, so comparisons are paired
by seed (``diff_vs_baseline`` in the summary).

Sizes: ``real`` is T5 "small" (the paper's S), batch 256, input length 512, warmup 10k,
100k steps for the lookup studies (the paper reports their 100k-step accuracy) and 500k for
the AltUp tables; it needs accelerators and a real corpus (``--corpus``). ``smoke`` is "tiny"
with batch 16, input length 64, :data:`SMOKE_STEPS` steps and warmup
:data:`SMOKE_WARMUP` (all four studies, 3 seeds: 13 distinct configs, 39 runs of 20-80 s,
about 22 min on 2 quiet CPU cores, 30 min measured on a busy shared machine). At that size
the models have learnt the span structure (sentinels and EOS, about 4 of the 14 target
tokens, nearly all right) and little else, so span accuracy barely moves; the held-out loss
and the span-content accuracy (``heldout.content_accuracy``) show the differences.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_report import finite, format_summary, load_doc, save_doc, write_figures

from lshsim.t5.configs import T5Config, get_config

REPO = Path(__file__).resolve().parents[1]
#: Where results go unless ``--json`` says otherwise.
DEFAULT_JSON = REPO / "figures" / "memory_studies.json"
#: Steps and warmup of every smoke run (calibrated: ~25 min for all four studies x 3 seeds).
SMOKE_STEPS = 200
SMOKE_WARMUP = 100


# ------------------------------------------------------------------------------------ definitions


@dataclasses.dataclass(frozen=True)
class Setup:
    """Training size shared by the runs of a study variant.

    Attributes:
        config: name of the base config (``tiny``, ``small``, ...).
        steps: training steps.
        batch_size: examples per step.
        input_length: encoder tokens per example.
        warmup_steps: constant-rate steps of the rsqrt schedule.
        checkpoint_every: checkpoint interval (a killed run resumes from the last one).
        eval_examples: held-out examples of the evaluation after training.
        eval_batch: batch size of that evaluation.
        overrides: ``(field, value)`` pairs applied to the base config (tests shrink it).
        corpus: corpus files (None: the embedded corpus).
    """

    config: str
    steps: int
    batch_size: int
    input_length: int
    warmup_steps: int
    checkpoint_every: int
    eval_examples: int
    eval_batch: int
    overrides: tuple[tuple[str, Any], ...] = ()
    corpus: tuple[str, ...] | None = None

    def base_config(self) -> T5Config:
        """The base config with the overrides applied (memory and lookup off)."""
        return get_config(self.config).replace(**dict(self.overrides))

    def options(self) -> dict[str, Any]:
        """Training and evaluation options recorded with (and hashed into) every run."""
        return {
            "steps": self.steps,
            "batch_size": self.batch_size,
            "input_length": self.input_length,
            "warmup_steps": self.warmup_steps,
            "eval_examples": self.eval_examples,
            "corpus": list(self.corpus) if self.corpus else None,
        }


@dataclasses.dataclass(frozen=True)
class Variant:
    """One model of a study: config changes relative to the base config.

    Attributes:
        label: the name in tables and figures.
        changes: ``(field, value)`` pairs of :class:`T5Config` (empty: the baseline).
        series: the family the variant belongs to (lookup method, bucket count), for colours.
    """

    label: str
    changes: tuple[tuple[str, Any], ...] = ()
    series: str = ""

    def config(self, base: T5Config) -> T5Config:
        """The variant's config (validated by :class:`T5Config`)."""
        return base.replace(**dict(self.changes))

    @property
    def is_baseline(self) -> bool:
        """Whether this is the model without memory or lookup."""
        return not self.changes


BASELINE = Variant("Baseline", (), "Baseline")


@dataclasses.dataclass(frozen=True)
class Study:
    """A named study: what the paper reports, its sizes and its variants.

    Attributes:
        name: registry key.
        title: figure title.
        paper: the paper's tables or figure and the ordering it reports.
        setups: ``{"smoke": Setup, "real": Setup}``.
        variants: ``(variant name, base config) -> variants`` (the baseline first).
        layout: ``groups`` (one column per variant) or ``sweep`` (Figure 2).
    """

    name: str
    title: str
    paper: str
    setups: dict[str, Setup]
    variants: Callable[[str, T5Config], tuple[Variant, ...]]
    layout: str = "groups"


SMOKE = Setup(
    "tiny",
    steps=SMOKE_STEPS,
    batch_size=16,
    input_length=64,
    warmup_steps=SMOKE_WARMUP,
    checkpoint_every=SMOKE_STEPS,
    eval_examples=1024,
    eval_batch=64,
)
REAL_100K = Setup(
    "small",
    steps=100_000,
    batch_size=256,
    input_length=512,
    warmup_steps=10_000,
    checkpoint_every=10_000,
    eval_examples=4096,
    eval_batch=256,
)
REAL_500K = dataclasses.replace(REAL_100K, steps=500_000)


def memory_variant(method: str, k: int) -> Variant:
    """Wide-embedding memory consumed by ``method`` (sum, sameup, altup) with ``K = k``."""
    names = {"sum": "Sum", "sameup": "SameUp", "altup": "AltUp"}
    return Variant(f"{names[method]} K={k}", (("memory", method), ("memory_k", k)), names[method])


def lookup_variant(lookup: str, rank: int, buckets: int, label: str | None = None) -> Variant:
    """Partial experts of ``lookup`` (tokenid: ``buckets`` must be the vocabulary)."""
    names = {"tokenid": "Token-ID", "softmax": "Softmax", "lsh": "LSH"}
    changes: tuple[tuple[str, Any], ...] = (("lookup", lookup), ("expert_rank", rank))
    if lookup != "tokenid":
        changes += (("buckets", buckets),)
    text = label or f"{names[lookup]} r{rank} b{buckets}"
    return Variant(text, changes, names[lookup])


def budget_units(rank: int, buckets: int) -> int:
    """The paper's extra-parameter measure per layer and per ``d``: ``max(2 rank, 1) * buckets``."""
    return max(2 * rank, 1) * buckets


def within_budget(rank: int, buckets: int, budget: int) -> bool:
    """Whether ``budget_units(rank, buckets)`` is within a factor sqrt(2) of ``budget``.

    With power-of-two ranks and bucket counts this keeps exactly one bucket count per rank,
    the one closest to Token-ID's rank-0 table (``budget`` = the vocabulary size).
    """
    units = budget_units(rank, buckets)
    return budget / math.sqrt(2) <= units <= budget * math.sqrt(2)


#: Real grid of the lookup comparison (the paper: ranks {0, 2, 4, ..., 128, 256}, buckets
#: 2^3..2^15, read as powers of two).
REAL_RANKS = (0, 2, 4, 8, 16, 32, 64, 128, 256)
REAL_BUCKETS = tuple(2**j for j in range(3, 16))
#: Smoke points of the lookup comparison: (rank, buckets), each meeting the tiny budget (2176).
SMOKE_POINTS = ((0, 2048), (16, 64))


def budget_grid(budget: int) -> list[tuple[int, int]]:
    """(rank, buckets) of the real grid that meet ``budget`` (see :func:`within_budget`)."""
    return [(r, b) for r in REAL_RANKS for b in REAL_BUCKETS if within_budget(r, b, budget)]


def _table1(variant: str, base: T5Config) -> tuple[Variant, ...]:
    return (BASELINE, *(memory_variant(m, 2) for m in ("sum", "sameup", "altup")))


def _table5(variant: str, base: T5Config) -> tuple[Variant, ...]:
    return (BASELINE, memory_variant("altup", 2), memory_variant("altup", 4))


def _lookups(variant: str, base: T5Config) -> tuple[Variant, ...]:
    budget = base.vocab_size
    points = budget_grid(budget) if variant == "real" else list(SMOKE_POINTS)
    out = [BASELINE, lookup_variant("tokenid", 0, budget)]
    for lookup in ("softmax", "lsh"):
        out += [lookup_variant(lookup, r, b) for r, b in points]
    return tuple(out)


SWEEP_RANKS = {"real": (0, 4, 16, 64, 128), "smoke": (0, 16)}
SWEEP_BUCKETS = {"real": (8, 32, 64, 128, 512), "smoke": (8, 64)}


def _softmax_sweep(variant: str, base: T5Config) -> tuple[Variant, ...]:
    cells = [
        lookup_variant("softmax", r, b)
        for b in SWEEP_BUCKETS[variant]
        for r in SWEEP_RANKS[variant]
    ]
    return (BASELINE, *[dataclasses.replace(v, series=v.label.split()[-1]) for v in cells])


STUDIES: dict[str, Study] = {
    "table1": Study(
        "table1",
        "Memory consumption (Tables 1, 7): token-ID wide embedding, K=2",
        "B: baseline 66.42 < Sum 66.82 = SameUp 66.82 < AltUp 66.96 (S: SameUp 61.91 best, "
        "AltUp 61.86, Sum 61.67, baseline 61.21), 500k steps",
        {"smoke": SMOKE, "real": REAL_500K},
        _table1,
    ),
    "lookups": Study(
        "lookups",
        "Lookup functions at Token-ID's parameter budget (Tables 4, 6)",
        "S: Token-ID 59.44 > Softmax 59.35 > LSH 59.12 > baseline 59.10 (best point of each), "
        "100k steps",
        {"smoke": SMOKE, "real": REAL_100K},
        _lookups,
    ),
    "softmax_sweep": Study(
        "softmax_sweep",
        "Softmax lookup: rank x buckets (Figure 2)",
        "S, baseline 59.1: higher rank helps; accuracy rises with buckets up to 64, then falls; "
        "best rank 128 x 64 buckets, 100k steps",
        {"smoke": SMOKE, "real": REAL_100K},
        _softmax_sweep,
        layout="sweep",
    ),
    "table5": Study(
        "table5",
        "Memory size (Tables 5, 8): AltUp K=2 vs K=4",
        "B: baseline 66.42 < K=2 66.96 < K=4 67.18 (S: 61.21 < 61.86 < 62.00), 500k steps",
        {"smoke": SMOKE, "real": REAL_500K},
        _table5,
    ),
}


# ------------------------------------------------------------------------------------ planning


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One training run: a config, a setup and a seed, identified by :func:`run_key`."""

    study: str
    variant: Variant
    config: T5Config
    setup: Setup
    seed: int

    @property
    def key(self) -> str:
        """The run's key (see :func:`run_key`)."""
        return run_key(self.config, self.setup, self.seed)


def run_key(config: T5Config, setup: Setup, seed: int) -> str:
    """First 16 hex digits of the SHA-256 of the config, the options and the seed."""
    doc = {"config": config.to_dict(), "options": setup.options(), "seed": seed}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def plan(
    study: str, variant: str = "smoke", seeds: int = 3, setup: Setup | None = None
) -> list[RunSpec]:
    """The runs of one study: every variant with seeds ``0 .. seeds-1``.

    Args:
        study: a key of :data:`STUDIES`.
        variant: ``smoke`` or ``real``.
        seeds: seeds per variant.
        setup: replaces the study's setup for ``variant`` (tests shrink it).

    Raises:
        ValueError: for an unknown study or variant, or a config the variant makes invalid.
    """
    if study not in STUDIES:
        raise ValueError(f"study: unknown {study!r}; choose one of {', '.join(STUDIES)}, all")
    s = STUDIES[study]
    if variant not in s.setups:
        raise ValueError(f"variant: unknown {variant!r}; choose one of {', '.join(s.setups)}")
    setup = setup or s.setups[variant]
    base = setup.base_config()
    return [
        RunSpec(study, v, v.config(base), setup, seed)
        for v in s.variants(variant, base)
        for seed in range(seeds)
    ]


def unique_runs(specs: Sequence[RunSpec]) -> list[RunSpec]:
    """``specs`` without repeated keys (first occurrence kept)."""
    seen: dict[str, RunSpec] = {}
    for spec in specs:
        seen.setdefault(spec.key, spec)
    return list(seen.values())


# ------------------------------------------------------------------------------------ running


def heldout_eval(run_dir: Path, examples: int, batch_size: int) -> dict[str, Any]:
    """A row's ``heldout``: :func:`lshsim.t5.loop.evaluate_run` on ``examples`` examples.

    Its first ``4 * batch`` examples are train's ``final_eval``; besides ``loss`` and
    ``accuracy`` it has the span-content ``content_loss`` and ``content_accuracy`` (sentinels
    and EOS left out), token counts, ``examples`` and ``held_out_chunks``.
    """
    from lshsim.t5.loop import evaluate_run

    ev = evaluate_run(run_dir, examples=examples, batch_size=batch_size)
    return {k: v for k, v in ev.items() if k not in ("config", "step")}


def param_counts(config: T5Config) -> dict[str, Any]:
    """``count_params`` of the config, and what it adds to the same model without memory."""
    from lshsim.t5.params import count_params

    counts = count_params(config)
    base = count_params(config.replace(memory="none", lookup="none"))
    return {"params": counts, "extra_params": {k: counts[k] - base[k] for k in counts}}


def train_one(spec: RunSpec, out: Path, progress: bool = False) -> dict[str, Any]:
    """Train one run (resuming its directory if a killed run left one) and return its row."""
    from lshsim.t5 import checkpoint as ckpt
    from lshsim.t5.loop import train

    run_dir = out / spec.key
    setup = spec.setup
    t0 = time.perf_counter()
    res = train(
        spec.config,
        run_dir,
        steps=setup.steps,
        resume=(run_dir / ckpt.RUN_FILE).is_file(),
        corpus=list(setup.corpus) if setup.corpus else None,
        batch_size=setup.batch_size,
        input_length=setup.input_length,
        seed=spec.seed,
        warmup_steps=setup.warmup_steps,
        eval_every=setup.steps,
        checkpoint_every=setup.checkpoint_every,
        progress=progress,
    )
    train_s = time.perf_counter() - t0
    heldout = heldout_eval(run_dir, setup.eval_examples, setup.eval_batch)
    cfg = spec.config
    row = {
        "key": spec.key,
        "config": cfg.to_dict(),
        "changes": dict(spec.variant.changes),
        "options": setup.options(),
        "seed": spec.seed,
        "step": res["step"],
        "heldout": heldout,
        "eval_batch": setup.eval_batch,
        "final_eval": res["final_eval"],
        "initial_eval": res["initial_eval"],
        "train_loss": res["train_loss"],
        "examples_per_second": res["examples_per_second"],
        "train_seconds": train_s,
        "wall_seconds": time.perf_counter() - t0,
        "budget_units": budget_units(cfg.expert_rank, cfg.num_buckets)
        if cfg.lookup != "none"
        else 0,
        **param_counts(cfg),
        "run_dir": str(run_dir),
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    return finite(row)


def study_entry(study: str, variant: str, specs: Sequence[RunSpec]) -> dict[str, Any]:
    """What the JSON records about a study: its setup and each variant's run keys."""
    s = STUDIES[study]
    variants: dict[str, dict[str, Any]] = {}
    for spec in specs:
        v = variants.setdefault(
            spec.variant.label,
            {
                "label": spec.variant.label,
                "series": spec.variant.series,
                "changes": dict(spec.variant.changes),
                "keys": [],
            },
        )
        v["keys"].append(spec.key)
    setup = specs[0].setup if specs else s.setups[variant]
    return {
        "title": s.title,
        "paper": s.paper,
        "layout": s.layout,
        "setup": dataclasses.asdict(setup),
        "variants": list(variants.values()),
    }


def execute(
    specs_by_study: dict[str, list[RunSpec]],
    variant: str,
    out: Path,
    json_path: Path,
    *,
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train every run not yet in the JSON, writing the JSON after each; return the document."""
    doc = load_doc(json_path)
    studies = doc["studies"].setdefault(variant, {})
    for name, specs in specs_by_study.items():
        studies[name] = study_entry(name, variant, specs)
    todo = unique_runs([s for v in specs_by_study.values() for s in v])
    # Seed-major order: a run cut short leaves every variant with the same seeds done.
    pending = sorted((s for s in todo if s.key not in doc["runs"]), key=lambda s: s.seed)
    log(f"{len(todo)} distinct runs, {len(todo) - len(pending)} already done, {len(pending)} to do")
    save_doc(json_path, doc, STUDIES)
    for i, spec in enumerate(pending, 1):
        t0 = time.perf_counter()
        row = train_one(spec, out, progress=progress)
        doc["runs"][spec.key] = row
        save_doc(json_path, doc, STUDIES)
        h = row["heldout"]
        log(
            f"[{i}/{len(pending)}] {spec.study}: {spec.variant.label} seed {spec.seed} "
            f"({spec.key}): acc {h['accuracy']:.4f} loss {h['loss']:.4f} "
            f"{row['examples_per_second'] or math.nan:.0f} ex/s {time.perf_counter() - t0:.0f} s"
        )
    return doc


def reeval(
    doc: dict[str, Any], keys: Sequence[str], json_path: Path, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Recompute ``heldout`` of finished runs from their checkpoints (after an eval change)."""
    keys = [k for k in dict.fromkeys(keys) if k in doc["runs"]]
    for i, key in enumerate(keys, 1):
        row = doc["runs"][key]
        opts = row["options"]
        batch = row.get("eval_batch") or opts["batch_size"]  # rows before eval_batch was kept
        row["heldout"] = finite(heldout_eval(Path(row["run_dir"]), opts["eval_examples"], batch))
        save_doc(json_path, doc, STUDIES)
        log(f"[{i}/{len(keys)}] re-evaluated {key}: {row['heldout']}")
    return doc


# ------------------------------------------------------------------------------------ CLI


def default_out() -> Path:
    """Run directories: ``$LSHSIM_CACHE/memory_studies`` (outside the repository)."""
    from lshsim.t5.data.tokenizer import default_cache_dir

    return default_cache_dir() / "memory_studies"


def dry_run(specs_by_study: dict[str, list[RunSpec]], doc: dict[str, Any]) -> list[RunSpec]:
    """Print the runs each study needs; return the distinct ones."""
    for name, specs in specs_by_study.items():
        s = specs[0].setup
        print(
            f"## {name}: {len(specs)} runs ({s.config}, {s.steps} steps, batch {s.batch_size}, "
            f"input {s.input_length}, warmup {s.warmup_steps})"
        )
        for spec in specs:
            done = "done" if spec.key in doc["runs"] else "todo"
            changes = " ".join(f"{k}={v}" for k, v in spec.variant.changes) or "-"
            print(f"  {spec.key} {done} seed {spec.seed} {spec.variant.label}: {changes}")
    todo = unique_runs([s for v in specs_by_study.values() for s in v])
    left = sum(spec.key not in doc["runs"] for spec in todo)
    total = sum(len(v) for v in specs_by_study.values())
    print(f"total: {total} runs in the studies, {len(todo)} distinct, {left} not yet done")
    return todo


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Entry point; returns the results document (or the dry run's plan)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--study", default="all", choices=[*STUDIES, "all"])
    ap.add_argument("--variant", default="smoke", choices=["smoke", "real"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="run directories (default: cache)")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ap.add_argument("--corpus", nargs="+", default=None, help="corpus files (real variant)")
    ap.add_argument("--dry-run", action="store_true", help="list the runs, train nothing")
    ap.add_argument("--plot", action="store_true", help="write the figures from the JSON")
    ap.add_argument(
        "--reeval",
        action="store_true",
        help="recompute the held-out evaluation of the finished runs from their checkpoints",
    )
    ap.add_argument("--progress", action="store_true", help="progress bar per run")
    ap.add_argument(
        "--steps",
        type=int,
        default=None,
        help="train this many steps instead of the variant's (runs are keyed by it; give a "
        "separate --json, whose folder also gets the figures)",
    )
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds: must be >= 1, got {args.seeds}")
    if args.steps is not None and args.steps < 1:
        ap.error(f"--steps: must be >= 1, got {args.steps}")
    names = list(STUDIES) if args.study == "all" else [args.study]
    specs = {}
    for name in names:
        setup = STUDIES[name].setups[args.variant]
        if args.corpus:
            setup = dataclasses.replace(setup, corpus=tuple(args.corpus))
        if args.steps:
            every = min(setup.checkpoint_every, args.steps)
            setup = dataclasses.replace(setup, steps=args.steps, checkpoint_every=every)
        specs[name] = plan(name, args.variant, args.seeds, setup)
    doc = load_doc(args.json)
    if args.dry_run:
        return {"runs": dry_run(specs, doc)}
    if args.reeval:
        doc = reeval(doc, [s.key for v in specs.values() for s in v], args.json)
    elif not args.plot:
        out = (args.out or default_out()) / args.variant
        resolved = out.resolve()
        if resolved == REPO or REPO in resolved.parents:
            ap.error(f"--out: {out} is inside the repository; choose a directory outside it")
        doc = execute(specs, args.variant, out, args.json, progress=args.progress)
    else:
        for path in write_figures(doc, args.variant, args.json.parent):
            print(f"wrote {path}")
    print(format_summary(doc, args.variant, STUDIES))
    return doc


if __name__ == "__main__":
    try:
        main()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
