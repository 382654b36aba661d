"""Planning and running the memory studies: run keys, plans, training with resume, re-evaluation.

Every run is keyed by a hash of its full config, its training options and its seed
(:func:`run_key`); the results document holds one row per key, so runs that several studies
share are trained once. :func:`train_one` trains a run in ``OUT/<key>`` (resuming what a killed
run left there); :mod:`lshsim.studies.memory.jobs` hands the runs to a launcher and writes the
document (:func:`lshsim.studies.memory.document.save_doc`) as they finish.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lshsim._io import json_field
from lshsim.studies.memory.document import finite, save_doc
from lshsim.studies.memory.variants import STUDIES, Setup, Variant, budget_units
from lshsim.t5.configs import T5Config


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


def train_one(
    spec: RunSpec,
    out: Path,
    progress: bool = False,
    train_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train one run in ``out/<key>`` (resuming what a killed run left there); return its row.

    Args:
        spec: the run.
        out: the run directories' parent.
        progress: a progress bar.
        train_kwargs: more keywords of :func:`lshsim.t5.loop.train` (``--train-args``: how
            the run executes, never what it computes); recorded in the row when given.

    Returns:
        The run's row of the results document.
    """
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
        **(train_kwargs or {}),
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
    if train_kwargs:
        row["train_kwargs"] = dict(train_kwargs)
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


def reeval(
    doc: dict[str, Any], keys: Sequence[str], json_path: Path, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Recompute ``heldout`` of finished runs from their checkpoints (after an eval change).

    Raises:
        ValueError: a row lacks what the evaluation needs (``run_dir``, ``options`` with
            ``eval_examples`` and ``batch_size``), naming the file and the row, before any run
            is evaluated.
    """
    keys = [k for k in dict.fromkeys(keys) if k in doc["runs"]]
    plans = {}
    for key in keys:
        row, where = doc["runs"][key], f"json: {json_path}: runs[{key!r:.40}]"
        run_dir = json_field(row, "run_dir", "string", where)
        opts = json_field(row, "options", "object", where)
        examples = json_field(opts, "eval_examples", "integer", f"{where}: options")
        batch = json_field(row, "eval_batch", "integer", where, optional=True) or json_field(
            opts, "batch_size", "integer", f"{where}: options"
        )  # rows before eval_batch was kept
        plans[key] = (Path(run_dir), examples, batch)
    for i, key in enumerate(keys, 1):
        row = doc["runs"][key]
        row["heldout"] = finite(heldout_eval(*plans[key]))
        save_doc(json_path, doc, STUDIES)
        log(f"[{i}/{len(keys)}] re-evaluated {key}: {row['heldout']}")
    return doc
