"""``lshsim reproduce``: run the theory-vs-experiment studies, check the claims, draw the figures.

Each study returns plain data (the schemas of :mod:`lshsim.plots`), written to
``<out>/<name>.json`` with its config and seed; the figures are drawn from those files, the
claims of Theorem 1 are evaluated (:mod:`lshsim.theorems.claims`), and ``REPORT.md`` plus
``results.json`` summarise the run. Every file is written to a temporary name and renamed, so
an interrupted run never leaves a complete-looking file behind. Same seed, same numbers.

The vector families are run in the idealised model of the paper's proof, at cosine ``a = f``
(the sentence model's cosine concentrates there; ``sentence_cosine`` shows how closely);
min-hash and Token-ID run on sentence pairs sharing ``round(f l)`` tokens.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lshsim import __version__, theory
from lshsim._io import write_atomic
from lshsim.estimate import estimate_collision
from lshsim.sentences import cosine_moments, sentence_cosines

VECTOR = ("simhash", "pstable", "voronoi", "crosspolytope")
#: 40 tokens: every overlap on the studies' grids (multiples of 1/40) is a whole token count,
#: so the realised s/l equals the plotted f
LENGTH = 40
VOCAB = 32128


@dataclass(frozen=True)
class Config:
    """Sizes of one run; :data:`DEFAULT` is the committed run, :data:`QUICK` the smoke run."""

    overlaps: tuple[float, ...]
    mc_log2n: tuple[int, ...]
    mc_samples: int
    exact_log2n: tuple[int, ...]
    rho_n: int
    rho_f: int
    map_f: int
    map_log2n: tuple[int, ...]
    cos_dims: tuple[int, ...]
    cos_lengths: tuple[int, ...]
    cos_f: tuple[float, ...]
    cos_samples: int
    token_f: tuple[float, ...]
    token_pairs: int
    probe_overlaps: tuple[float, ...]
    probe_samples: int
    probe_draws: int
    probe_steps: int
    width_sweep: str


DEFAULT = Config(
    overlaps=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    mc_log2n=(2, 4, 6, 8, 10, 12),
    mc_samples=10000,
    exact_log2n=tuple(range(1, 21)),
    rho_n=2**16,
    rho_f=39,
    map_f=30,
    map_log2n=tuple(range(1, 21)),
    cos_dims=(16, 64, 256),
    cos_lengths=(8, 32),
    cos_f=tuple(i / 10 for i in range(11)),
    cos_samples=20000,
    token_f=tuple(round(0.05 * i, 2) for i in range(1, 20)),
    token_pairs=2000,
    probe_overlaps=(0.1, 0.3, 0.5, 0.7, 0.9),
    probe_samples=128,
    probe_draws=32,
    probe_steps=400,
    width_sweep="default",
)
QUICK = Config(
    overlaps=(0.1, 0.5, 0.9),
    mc_log2n=(2, 6, 10),
    mc_samples=1000,
    exact_log2n=(1, 4, 8, 12, 16, 20),
    rho_n=2**16,
    rho_f=10,
    map_f=8,
    map_log2n=(1, 4, 8, 12, 16, 20),
    cos_dims=(16, 64),
    cos_lengths=(8,),
    cos_f=(0.0, 0.25, 0.5, 0.75, 1.0),
    cos_samples=4000,
    token_f=(0.1, 0.3, 0.5, 0.7, 0.9),
    token_pairs=300,
    probe_overlaps=(0.2, 0.5, 0.8),
    probe_samples=24,
    probe_draws=8,
    probe_steps=30,
    width_sweep="quick",
)


def _seeds(seed: int, count: int) -> list[int]:
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(count, dtype=np.uint32)]


def _exact(family: str, n: int, f: float) -> float:
    if family in VECTOR:
        return theory.probability(family, n, f)
    s = round(f * LENGTH)
    if family == "minhash":
        return theory.minhash_probability(n, s, LENGTH)
    return theory.tokenid_probability(s, LENGTH, n=n, vocab=VOCAB)


def _append_estimate(rows: dict, e) -> None:
    """Append an :class:`~lshsim.estimate.Estimate`'s value and 95% CI to column lists."""
    for name in ("estimate", "ci_low", "ci_high"):
        rows.setdefault(name, []).append(getattr(e, name))


def collision_vs_n(cfg: Config, seed: int) -> dict:
    """Collision probability against ``n``: exact curves, Monte Carlo with CIs, rate lines."""
    families = (*VECTOR, "minhash", "tokenid")
    seeds = iter(_seeds(seed, len(families) * len(cfg.overlaps) * len(cfg.mc_log2n)))
    panels = {}
    for family in families:
        exact, mc, rate = {}, {}, {}
        for f in cfg.overlaps:
            key = str(f)
            ns = [2**k for k in cfg.exact_log2n]
            exact[key] = {"n": ns, "p": [_exact(family, n, f) for n in ns]}
            if family in ("voronoi", "crosspolytope"):
                r = theory.limit_rho(family, f)
                rate[key] = {"n": ns, "p": [n**-r for n in ns]}
            rows = {"n": [2**k for k in cfg.mc_log2n]}
            what = {"cosine": f} if family in VECTOR else {"overlap": f, "length": LENGTH}
            mode = "reduced" if family in VECTOR else "full"
            samples = cfg.mc_samples if family != "tokenid" else cfg.mc_samples // LENGTH
            for n in rows["n"]:
                e = estimate_collision(
                    family, n, samples=max(samples, 50), seed=next(seeds), mode=mode, **what
                )
                _append_estimate(rows, e)
            mc[key] = rows
        panels[family] = {"exact": exact, "mc": mc, **({"rate": rate} if rate else {})}
    return {"overlaps": list(cfg.overlaps), "panels": panels}


def rho_vs_f(cfg: Config, seed: int) -> dict:
    """``rho(f)`` at one ``n`` for every family, with the paper's rate forms fitted."""
    n = cfg.rho_n
    step = 39 // (cfg.rho_f - 1)
    fs = [k / LENGTH for k in range(1, LENGTH, step)][: cfg.rho_f]
    rho = {}
    for family in VECTOR:
        rho[family] = [theory.rho(family, n, f) for f in fs]
    for family in ("minhash", "tokenid"):
        rho[family] = [-math.log(_exact(family, n, f)) / math.log(n) for f in fs]
    fits = {}
    for family, form in (
        ("simhash", "sqrt(1-f)"),
        ("pstable", "sqrt(1-f)"),
        ("voronoi", "1-f"),
        ("crosspolytope", "1-f"),
    ):
        g = np.sqrt(1 - np.array(fs)) if form == "sqrt(1-f)" else 1 - np.array(fs)
        y = np.array(rho[family])
        fits[family] = {"form": form, "c": float(g @ y / (g @ g))}
    return {"n": n, "f": fs, "rho": rho, "fits": fits}


def ordering_map(cfg: Config, seed: int) -> dict:
    """Which of Token-ID, Softmax (Voronoi), SimHash collides most, over ``(f, n)``."""
    from lshsim.theorems.claims import TIE_CONSTANT, crossover

    fs = [float(x) for x in np.linspace(0.02, 0.98, cfg.map_f)]
    winner = []
    for k in cfg.map_log2n:
        n = 2**k
        row = []
        for f in fs:
            p = [f, theory.probability("voronoi", n, f), theory.probability("simhash", n, f)]
            row.append(int(np.argmax(p)))
        winner.append(row)
    cross = [crossover(f) for f in fs]
    return {
        "f": fs,
        "log2n": list(cfg.map_log2n),
        "labels": ["Token-ID", "Softmax", "SimHash"],
        "winner": winner,
        "crossover": {"f": fs, "n": cross},
        "claimed": {
            "f": fs,
            "n_lo": [1 / f for f in fs],
            "n_hi": [1 + TIE_CONSTANT / f for f in fs],
        },
    }


def sentence_cosine(cfg: Config, seed: int) -> dict:
    """The sentence model's cosine against ``f``: exact sampler against the moment formulas."""
    rows = []
    seeds = iter(_seeds(seed, len(cfg.cos_dims) * len(cfg.cos_lengths) * len(cfg.cos_f)))
    for d in cfg.cos_dims:
        for length in cfg.cos_lengths:
            for f in cfg.cos_f:
                rng = np.random.default_rng(next(seeds))
                cos = sentence_cosines(cfg.cos_samples, f, length=length, dim=d, rng=rng)
                mean, var = cosine_moments(f, length, d)
                rows.append(
                    {
                        "d": d,
                        "l": length,
                        "f": f,
                        "mc_mean": float(cos.mean()),
                        "mc_sd": float(cos.std()),
                        "theory_mean": mean,
                        "theory_sd": math.sqrt(var),
                    }
                )
    return {"rows": rows}


def tokenid_vs_minhash(cfg: Config, seed: int) -> dict:
    """Per-token Token-ID rate ``f`` against min-hash's Jaccard ``f/(2-f)``."""
    out = {"f": list(cfg.token_f)}
    seeds = iter(_seeds(seed, 2 * len(cfg.token_f)))
    for family, n in (("tokenid", 2**20), ("minhash", 2**40)):
        rows = {}
        for f in cfg.token_f:
            e = estimate_collision(
                family, n, overlap=f, length=LENGTH, samples=cfg.token_pairs, seed=next(seeds)
            )
            _append_estimate(rows, e)
        out[family] = rows
    curve = [float(x) for x in np.linspace(0, 1, 101)]
    out["curve_f"] = curve
    out["jaccard"] = [f / (2 - f) for f in curve]
    return out


#: the model the routing studies probe, and how its trained version is trained (2 CPU cores)
PROBE_CONFIG = "tiny"
PROBE_BUCKETS = 64
PROBE_TRAIN = {"batch_size": 16, "input_length": 64}


def _probe_config(lookup: str):
    from lshsim.t5.configs import get_config

    return get_config(PROBE_CONFIG).replace(
        lookup=lookup, buckets=0 if lookup == "tokenid" else PROBE_BUCKETS
    )


def _probe_rows(cfg: Config, config, params, rows, ids, seed: int) -> list[dict]:
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


def routing_init(cfg: Config, seed: int) -> dict:
    """The routing probe at initialisation: softmax (random router), SimHash LSH, Token-ID."""
    from lshsim.t5 import probe

    out = {"config": PROBE_CONFIG, "lookups": {}}
    # the sentences depend on the corpus, seed and tokenizer size only: shared by the lookups
    rows, ids = probe.sentence_source(_probe_config("tokenid"), seed=seed)
    for lookup in ("softmax", "lsh", "tokenid"):
        config = _probe_config(lookup)
        result = _probe_rows(cfg, config, probe.initial_params(config, seed), rows, ids, seed)
        out["lookups"][lookup] = {
            "buckets": config.num_buckets,
            "rows": result,
            "summary": probe.summarise(result),
        }
    return out


#: lookups trained by ``routing_trained``: the learned router, and LSH as the control whose
#: hash functions stay fixed (only the layer inputs can adapt to them)
TRAINED_LOOKUPS = ("softmax", "lsh")


def _trained_probe(cfg: Config, lookup: str, seed: int) -> dict:
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


def routing_trained(cfg: Config, seed: int) -> dict:
    """The probe before and after a short training run, per lookup of :data:`TRAINED_LOOKUPS`."""
    return {
        "config": PROBE_CONFIG,
        "train": {**PROBE_TRAIN, "steps": cfg.probe_steps},
        "lookups": {lookup: _trained_probe(cfg, lookup, seed) for lookup in TRAINED_LOOKUPS},
    }


def theorem2_width(cfg: Config, seed: int) -> dict:
    """Theorem 2's width sweep (:mod:`lshsim.theorems.theorem2`): input-only vs upper lookups."""
    from lshsim.theorems import theorem2

    sweep = theorem2.DEFAULT if cfg.width_sweep == "default" else theorem2.QUICK
    data = theorem2.run_sweep(sweep, seed)
    data.pop("elapsed_s", None)  # timings stay out of the numbers
    return data


STUDIES: dict[str, Callable[[Config, int], dict]] = {
    "collision_vs_n": collision_vs_n,
    "rho_vs_f": rho_vs_f,
    "ordering_map": ordering_map,
    "sentence_cosine": sentence_cosine,
    "tokenid_vs_minhash": tokenid_vs_minhash,
    "routing_init": routing_init,
    "routing_trained": routing_trained,
    "theorem2_width": theorem2_width,
}

CAPTIONS = {
    "collision_vs_n": "Collision probability against buckets n, one panel per family: exact "
    "(lines), Monte Carlo with 95% CIs (points), asymptotic rate (dashed).",
    "rho_vs_f": "The exponent rho = -log P / log n against overlap f, with the paper's forms "
    "c sqrt(1-f) (hyperplane) and c (1-f) (spherical) fitted; Voronoi and cross-polytope "
    "coincide within the line width at this n.",
    "ordering_map": "Which lookup collides most over (f, n), with the crossover n*(f) where "
    "Token-ID overtakes Softmax and the claimed band 1/f <= n*(f) < 1 + 1.71/f.",
    "sentence_cosine": "The sentence model's cosine against f: exact sampler (mean ± sd) "
    "against the delta-method moments, across d and l (the steps at l = 8 are s = round(f l)).",
    "tokenid_vs_minhash": "Token-ID's per-token rate f against min-hash's Jaccard f/(2-f).",
    "routing_init": "The routing probe on the tiny T5 at initialisation: per layer, the "
    "measured rate at which the two sentences of a pair send an aligned token to one bucket "
    "(95% CI: sentence pairs and re-drawn random lookups), the theory given the measured "
    "cosines (solid), and the theory at cosine f (dashed).",
    "routing_trained": "The softmax router and the LSH lookup before and after training: "
    "measured against predicted (the random-lookup theory at the measured cosines); points "
    "off the diagonal route unlike a random lookup.",
    "theorem2_width": "Theorem 2: held-out loss against width / d for the input-only lookup "
    "(A) and the lookup fed to the upper layers too (B), with the target loss and each "
    "architecture's minimal width.",
}


def figure_function(name: str) -> Callable[[dict], Any]:
    """The figure function of a study (the model studies' live in their own modules)."""
    if name in ("routing_init", "routing_trained"):
        from lshsim.plots import probe as probe_plots

        return getattr(probe_plots, f"plot_{name}")
    if name == "theorem2_width":
        from lshsim.plots.theorem2 import width_figure

        return width_figure
    from lshsim import plots

    return plots.FIGURES[name]


def _summary_table(summaries: dict[str, list[dict]]) -> list[str]:
    """One row per layer; per labelled summary: mean departure, rms z, inside, buckets used."""
    labels = list(summaries)
    cols = ("mean(measured - predicted)", "rms z", "inside CI", "effective buckets")
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
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _model_sections(studies: dict) -> list[str]:
    """REPORT.md's sections on the routing probe (and Theorem 2), from the studies' data."""
    lines: list[str] = []
    init = studies.get("routing_init")
    if init:
        lines += [
            "",
            "## Routing probe at initialisation (`lshsim probe`)",
            "",
            f"Config `{init['config']}`; per layer, over the overlaps: the mean of measured - "
            "predicted (theory at the measured cosines), the rms of z = (measured - predicted) "
            "/ sd, and how many predictions lie inside the 95% intervals. A random router "
            "(and LSH) should give rms z near 1 and nearly all inside.",
            "",
        ]
        lines += _summary_table({k: v["summary"] for k, v in init["lookups"].items()})
    trained = studies.get("routing_trained")
    if trained:
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
    width = studies.get("theorem2_width")
    if width:
        lines += _theorem2_section(width)
    return lines


def _width_text(w) -> str:
    return "not reached" if w is None else f"{w:g}"


def _theorem2_section(data: dict) -> list[str]:
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


def _report(
    verdicts, figures: list[str], cfg_name: str, seed: int, seconds: float, studies: dict
) -> str:
    lines = [
        "# lshsim reproduce: report",
        "",
        f"Run: `lshsim reproduce{' --quick' if cfg_name == 'quick' else ''} --seed {seed}` "
        f"(lshsim {__version__}), {sum(v.holds for v in verdicts)}/{len(verdicts)} claims hold.",
        "",
        "## Claims of Theorem 1",
        "",
        "Statements and proofs: `proofs/theorem1.md`; each claim's property test is named.",
        "",
        "| id | verdict | statement | evidence |",
        "| --- | --- | --- | --- |",
    ]
    for v in verdicts:
        ev = json.dumps(v.evidence, default=float)
        ev = ev if len(ev) <= 300 else ev[:297] + "..."
        stmt = v.statement.replace("|", "\\|")
        lines.append(
            f"| {v.id} | {'holds' if v.holds else 'FAILS'} | {stmt} | `{ev.replace('|', '/')}` |"
        )
    lines += _model_sections(studies)
    lines += ["", "## Figures", ""]
    for name in figures:
        lines += [f"### {name}", "", CAPTIONS[name], "", f"![{name}]({name}.png)", ""]
    lines += [f"Wall time: {seconds:.0f} s on {platform.machine()} ({os.cpu_count()} cores).", ""]
    return "\n".join(lines)


def run(
    out: Path | str = "figures",
    *,
    quick: bool = False,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    figures: bool = True,
) -> dict:
    """Run every study, draw the figures, check the claims; return the results dict."""
    from lshsim.theorems import claims

    out = Path(out)
    cfg = QUICK if quick else DEFAULT
    start = time.perf_counter()
    results = {
        "lshsim": __version__,
        "config": {"name": "quick" if quick else "default", **asdict(cfg)},
        "seed": seed,
        "studies": {},
    }
    timing = {}
    for name, study in STUDIES.items():
        if progress:
            progress(name)
        t0 = time.perf_counter()
        data = study(cfg, seed)
        timing[name] = time.perf_counter() - t0
        results["studies"][name] = data
        write_atomic(
            out / f"{name}.json",
            json.dumps({"config": results["config"], "seed": seed, "data": data}),
        )
    drawn = []
    if figures:
        from lshsim import plots

        for name in STUDIES:
            if progress:
                progress(f"figure {name}")
            data = json.loads((out / f"{name}.json").read_text())["data"]
            fig = figure_function(name)(data)
            plots.save_figure(fig, out / name)
            drawn.append(name)
    if progress:
        progress("claims")
    t0 = time.perf_counter()
    verdicts = claims.check()
    timing["claims"] = time.perf_counter() - t0
    results["claims"] = [v.to_dict() for v in verdicts]
    for c in results["claims"]:
        c.pop("seconds", None)  # timings stay out of the numbers
    results["holds"] = all(v.holds for v in verdicts)
    seconds = time.perf_counter() - start
    write_atomic(out / "results.json", json.dumps(results, indent=1))
    write_atomic(
        out / "REPORT.md",
        _report(verdicts, drawn, results["config"]["name"], seed, seconds, results["studies"]),
    )
    results["timing"] = timing
    return results
