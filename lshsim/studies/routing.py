"""The routing-probe studies: does a T5 lookup route sentence pairs like a random lookup?

``routing_init`` probes the tiny T5 at initialisation (softmax router, SimHash LSH, Token-ID,
and beyond the paper product keys and hashed 2-grams); ``routing_trained`` trains it briefly
and probes it before and after. JAX is imported only when
a study runs. Each writes a section of ``REPORT.md`` (:func:`init_section`,
:func:`trained_section`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lshsim.plots.probe import plot_routing_init, plot_routing_trained
from lshsim.studies.base import Study
from lshsim.t5.lookups import LOOKUPS

#: the model the routing studies probe, and how its trained version is trained (2 CPU cores)
PROBE_CONFIG = "tiny"
PROBE_BUCKETS = 64
PROBE_TRAIN = {"batch_size": 16, "input_length": 64}
#: lookups trained by ``routing_trained``: the learned router, LSH as the control whose
#: hash functions stay fixed (only the layer inputs can adapt to them), and product keys
#: (learned sub-keys, like the router)
TRAINED_LOOKUPS = ("softmax", "lsh", "productkey")
#: the lookups probed at initialisation: every lookup of the registry that joins the study
#: (``Lookup.in_routing_study``), the paper's router and LSH first (the figure's order), then
#: the others in the registry's order
INIT_LOOKUPS = (
    "softmax",
    "lsh",
    *(n for n, lk in LOOKUPS.items() if lk.in_routing_study and n not in ("softmax", "lsh")),
)


@dataclass(frozen=True)
class ProbeConfig:
    """Sizes of both routing studies.

    Overlaps, pairs, router draws, training steps, and the lookups trained (a subset of
    :data:`TRAINED_LOOKUPS`; each costs a training run).
    """

    probe_overlaps: tuple[float, ...]
    probe_samples: int
    probe_draws: int
    probe_steps: int
    trained_lookups: tuple[str, ...] = TRAINED_LOOKUPS


def _probe_config(lookup: str):
    from lshsim.t5.configs import get_config

    return get_config(PROBE_CONFIG).replace(
        lookup=lookup, buckets=0 if LOOKUPS[lookup].fixed_table else PROBE_BUCKETS
    )


def _probe_rows(cfg: ProbeConfig, config, params, rows, ids, seed: int) -> list[dict]:
    from lshsim.t5 import probe

    return probe.probe(
        config,
        params,
        rows,
        ids,
        overlaps=cfg.probe_overlaps,
        samples=cfg.probe_samples,
        router_draws=cfg.probe_draws,
        seed=seed,
    )


def routing_init(cfg: ProbeConfig, seed: int) -> dict:
    """The routing probe at initialisation, per lookup of :data:`INIT_LOOKUPS`."""
    from lshsim.t5 import probe

    out = {"config": PROBE_CONFIG, "lookups": {}}
    # the sentences depend on the corpus, seed and tokenizer size only: shared by the lookups
    rows, ids = probe.sentence_source(_probe_config("tokenid"), seed=seed)
    for lookup in INIT_LOOKUPS:
        config = _probe_config(lookup)
        result = _probe_rows(cfg, config, probe.initial_params(config, seed), rows, ids, seed)
        out["lookups"][lookup] = {
            "buckets": config.num_buckets,
            "rows": result,
            "summary": probe.summarise(result),
        }
    return out


def _trained_probe(cfg: ProbeConfig, lookup: str, seed: int) -> dict:
    """Train a ``lookup`` model briefly; probe it at its step 0 and after."""
    import tempfile

    from lshsim.t5 import probe
    from lshsim.t5.loop import train

    config = _probe_config(lookup)
    with tempfile.TemporaryDirectory(prefix="lshsim-probe-") as tmp:
        run_dir = Path(tmp) / "run"
        summary = train(
            config,
            run_dir,
            steps=cfg.probe_steps,
            seed=seed,
            progress=False,
            checkpoint_every=cfg.probe_steps,
            eval_every=cfg.probe_steps,
            **PROBE_TRAIN,
        )
        rows, ids = probe.sentence_source(config, run=run_dir)
        _, trained, step = probe.checkpoint_params(run_dir)
    before = _probe_rows(cfg, config, probe.initial_params(config, seed), rows, ids, seed)
    after = _probe_rows(cfg, config, trained, rows, ids, seed)
    return {
        "buckets": config.num_buckets,
        "steps": step,
        "loss_before": summary["initial_eval"]["loss"],
        "loss_after": summary["final_eval"]["loss"],
        "before": {"rows": before, "summary": probe.summarise(before)},
        "after": {"rows": after, "summary": probe.summarise(after)},
    }


def routing_trained(cfg: ProbeConfig, seed: int) -> dict:
    """The probe before and after a short training run, per lookup of ``cfg.trained_lookups``."""
    return {
        "config": PROBE_CONFIG,
        "train": {**PROBE_TRAIN, "steps": cfg.probe_steps},
        "lookups": {lookup: _trained_probe(cfg, lookup, seed) for lookup in cfg.trained_lookups},
    }


def _summary_table(summaries: dict[str, list[dict]]) -> list[str]:
    """One row per layer; per labelled summary: mean departure, rms z, inside, buckets used."""
    labels = list(summaries)
    cols = ("mean(measured - predicted)", "rms z", "inside CI", "effective buckets", "used, Gini")
    head = "| layer | " + " | ".join(f"{lab}: {c}" for lab in labels for c in cols) + " |"
    lines = [head, "| --- " * (1 + len(cols) * len(labels)) + "|"]
    for i, row in enumerate(summaries[labels[0]]):
        cells = [row["layer"]]
        for lab in labels:
            s = summaries[lab][i]
            cells += [
                f"{s['mean_departure']:+.4f}",
                f"{s['rms_z']:.2f}",
                f"{s['inside']}/{s['rows']}",
                f"{s['effective_buckets']:.1f}",
                f"{s['slots_used']:.2f}, {s['gini']:.2f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def init_section(init: dict) -> list[str]:
    """REPORT.md's section on the probe at initialisation: per lookup, the summary table."""
    lines = [
        "",
        "## Routing probe at initialisation (`lshsim probe`)",
        "",
        f"Config `{init['config']}`; per layer, over the overlaps: the mean of measured - "
        "predicted (theory at the measured cosines), the rms of z = (measured - predicted) "
        "/ sd, and how many predictions lie inside the 95% intervals. A random router "
        "(and LSH) should give rms z near 1 and nearly all inside.",
        "",
    ]
    return lines + _summary_table({k: v["summary"] for k, v in init["lookups"].items()})


def trained_section(trained: dict) -> list[str]:
    """REPORT.md's sections on the trained lookups: before and after, per lookup."""
    lines: list[str] = []
    tr = trained["train"]
    for lookup, entry in trained["lookups"].items():
        lines += [
            "",
            f"## The {lookup} lookup after {entry['steps']} training steps",
            "",
            f"`{trained['config']}` with {entry['buckets']} buckets, batch "
            f"{tr['batch_size']}, {tr['input_length']} input tokens; held-out loss "
            f"{entry['loss_before']:.3f} -> {entry['loss_after']:.3f}. Departure from the "
            "random-lookup theory per layer, at the run's step 0 and after training:",
            "",
        ]
        lines += _summary_table(
            {"init": entry["before"]["summary"], "trained": entry["after"]["summary"]}
        )
    return lines


#: both studies probe with the same sizes (``probe_steps`` is used by ``routing_trained``)
_CONFIGS = {
    "default": ProbeConfig(
        probe_overlaps=(0.1, 0.3, 0.5, 0.7, 0.9), probe_samples=128, probe_draws=32, probe_steps=400
    ),
    # quick: one training run, the softmax router's (each further lookup adds about 8 s)
    "quick": ProbeConfig(
        probe_overlaps=(0.2, 0.5, 0.8),
        probe_samples=24,
        probe_draws=8,
        probe_steps=30,
        trained_lookups=("softmax",),
    ),
}

#: the probe's numbers come through the JAX model (platform); its sizes are exact
_KINDS = {"": "platform", "config": "exact", "lookups/*/buckets": "exact"}
_KINDS_TRAINED = {**_KINDS, "train": "exact", "lookups/*/steps": "exact"}

STUDIES = (
    Study(
        "routing_init",
        routing_init,
        plot_routing_init,
        "The routing probe on the tiny T5 at initialisation (the paper's three lookups, "
        "product keys and hashed 2-grams): per layer, the "
        "measured rate at which the two sentences of a pair send an aligned token to one bucket "
        "(95% CI: sentence pairs and re-drawn random lookups), the theory given the measured "
        "cosines (solid), and the theory at cosine f (dashed).",
        _CONFIGS,
        section=init_section,
        kinds=_KINDS,
    ),
    Study(
        "routing_trained",
        routing_trained,
        plot_routing_trained,
        "The softmax router, the LSH lookup and product keys before and after training: "
        "measured against predicted (the random-lookup theory at the measured cosines); points "
        "off the diagonal route unlike a random lookup.",
        _CONFIGS,
        section=trained_section,
        kinds=_KINDS_TRAINED,
    ),
)
