"""``lshsim probe``: per-layer routing collisions of a model against the theory.

JAX is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from lshsim.cli.checks import STEP_RANGES, check_ranges, check_run_dir
from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.model_flags import (
    CONFIG_HELP,
    MEMORY_FIELDS,
    add_memory_flags,
    add_mesh_flag,
    config_from_args,
)
from lshsim.cli.plan import parse_mesh
from lshsim.cli.probe_tap import probe_tap_command
from lshsim.cli.vocabulary import JSON_HELP, float_list, install_aliases
from lshsim.cli.work import start_work
from lshsim.t5.budget import check_params_fit
from lshsim.t5.data.corpus import check_corpus_paths
from lshsim.t5.lookups import LOOKUPS

_EPILOG = """\
the columns:
  measured   fraction of aligned positions whose two tokens went to one bucket
  95% CI     measured +- 1.96 sqrt(v_pairs + v_router): sentence pairs are clusters, and
             v_router is the spread of --router-draws fresh random lookups on the same inputs
             (what a random router could have given); pairs-only bounds are in --json
  predicted  the theory given the measured cosines: mean over positions of
             voronoi(n, cos) (softmax), simhash/cross-polytope(n, cos) (lsh), token
             equality (tokenid), voronoi(s, a1) voronoi(s, a2) at the query half-cosines
             (productkey, top-1; s = sqrt(n)), the top-k overlap under re-drawn sub-keys
             (productkey --topk k > 1), or n-gram equality + (1 - equality)/m (ngram)
  at f       the theory at cosine f, the paper's idealisation (tokens replaced by their mean)
  z          (measured - predicted) / sd: near N(0, 1) for a random router, large when a
             trained router departs from the random-router theory
  effective buckets  exp(entropy) of the buckets the layer used: a collapsed router uses few
  slots used, gini   the fraction of the table selected at least once and the standard
             Gini coefficient of the selection counts; gini xlm is XLM's (standard - 1/n);
             --json adds KL to uniform, the score-weighted (_w) Gini and KL, and XLM's
             top50/top90/top99 slot counts (lshsim.t5.usage), as memory-layer papers report
             usage
  productkey rows measure head 0 (top-1 slot, or its top-k overlap |A & B|/k) and the
  cosine of its queries; ngram rows measure head 0's bucket, and realised is the n-gram
  sharing q (see lshsim.t5.lookups.probe_theory)

examples:
  lshsim probe --config tiny --lookup softmax                 # at initialisation
  lshsim probe --config tiny --lookup lsh --lsh-family crosspolytope --buckets 64
  lshsim probe --config tiny --lookup productkey --buckets 256 --topk 2
  lshsim probe --config tiny --lookup ngram --ngram 2 --heads 4 --buckets 1000
  lshsim train --config tiny --lookup softmax --steps 400 --batch 16 --input-length 64 --out r
  lshsim probe --run r --json
  lshsim probe --hf models/mixtral --figure mixtral.png     # a Hugging Face MoE folder
  lshsim probe --tap mypackage.routers:make_tap              # any router (a RouterTap)

--hf reads Mixtral, OLMoE, Qwen2-MoE and SwitchTransformers folders locally (never
downloading); rows add departure = measured - predicted with its interval over sentence
pairs, and realised (Token-ID's rate at this f); see docs/guide/probe_your_model.md
"""


def add_parser(sub) -> None:
    """Add ``probe`` to the CLI's subparsers."""
    p = sub.add_parser(
        "probe",
        help="measure a model's per-layer routing collisions on sentence pairs of overlap f "
        "against the theory",
        description=wrap(
            "Make sentence pairs from held-out text that share a fraction f of their aligned "
            "tokens (the other positions get random ordinary pieces), run both sentences "
            "through the model (lshsim's T5 at initialisation with --config or a trained "
            "--run; a Hugging Face MoE folder with --hf; any router with --tap), "
            "and at every layer and position record the bucket each lookup picks and the "
            "cosine of the two layer inputs. Report the collision rate per layer and f next "
            "to the theory's prediction given those cosines: Voronoi for a softmax router "
            "(exact for a random router), SimHash or cross-polytope for LSH, token equality "
            "for Token-ID, the product of two Voronoi probabilities at the query half-cosines for "
            "product keys, n-gram equality plus the hash term for hashed n-grams."
        ),
        epilog=_EPILOG,
        formatter_class=Formatter,
    )
    model = p.add_argument_group("the model")
    src = model.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--run", metavar="DIR", help="a `lshsim train` run folder (formerly --checkpoint)"
    )
    src.add_argument("--config", metavar="C", help=CONFIG_HELP + "; probed at initialisation")
    src.add_argument(
        "--hf",
        metavar="DIR",
        help="a Hugging Face MoE model folder (Mixtral, OLMoE, Qwen2-MoE, SwitchTransformers; "
        "config.json and weights, read locally, never downloaded)",
    )
    src.add_argument(
        "--tap",
        metavar="MODULE:FACTORY",
        help="a router of your own: MODULE.FACTORY() returns a lshsim.probe.RouterTap",
    )
    model.add_argument(
        "--bf16",
        action="store_true",
        help="with --hf: load the weights in bfloat16 (the gates are recomputed in float32)",
    )
    model.add_argument("--step", type=int, metavar="N", help="checkpoint step (default latest)")
    add_memory_flags(p)
    add_mesh_flag(model)
    pairs = p.add_argument_group("the sentence pairs")
    pairs.add_argument(
        "--samples", type=int, default=128, metavar="S", help="sentence pairs per overlap (128)"
    )
    pairs.add_argument(
        "--overlap",
        default="0.1,0.3,0.5,0.7,0.9",
        metavar="f,f,...",
        help="overlaps f to probe, a comma list (0.1,0.3,0.5,0.7,0.9; formerly --overlaps)",
    )
    pairs.add_argument(
        "--length", type=int, default=64, metavar="L", help="tokens per sentence (64)"
    )
    pairs.add_argument(
        "--router-draws",
        type=int,
        default=32,
        metavar="R",
        help="fresh random lookups per row for the interval (32; 0: pairs only)",
    )
    pairs.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="s",
        help="seeds the pairs, the re-drawn lookups and (with --config) the parameters (0)",
    )
    pairs.add_argument(
        "--corpus", nargs="+", metavar="PATH", help="text for --config (default: embedded)"
    )
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    out.add_argument(
        "--figure",
        metavar="FILE",
        help="with --hf or --tap: draw collisions against the cosine per layer beside the "
        "random-router law (.png, .svg or .pdf)",
    )
    p.set_defaults(func=run_probe)
    install_aliases(p, "probe")


def _overlaps(text: str) -> list[float]:
    try:
        values = float_list(text)
    except ValueError:
        raise ValueError(f"--overlap: expected comma-separated overlaps, got {text!r}") from None
    if not values or not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"--overlap: overlaps must each be in [0, 1], got {text!r}")
    return values


#: An optimistic rate for refusing a probe that cannot finish in a day: 1e13 FLOP/s, a fast
#: accelerator's dense matmul rate in float32.
PROBE_FLOPS = 1e13


def check_probe_size(config, args: argparse.Namespace) -> None:
    """Refuse a probe of ``config`` this machine cannot hold, or no machine can run in a day.

    The probe runs ``2 x samples x overlaps`` sentences of ``length`` tokens through the model
    (about 2 FLOPs per parameter and token), keeps every routing layer's inputs
    (``d_model`` float32 per token and layer) and scores them with ``router_draws`` Gaussian
    routers (``2 d n`` FLOPs per token, layer and draw).

    Raises:
        ValueError: one line naming ``--length``, ``--samples`` or ``--router-draws``.
    """
    from lshsim._memory import check_duration, check_fits
    from lshsim.t5.budget import check_lengths, param_count

    check_lengths(args.length, None)
    overlaps = len(_overlaps(args.overlap))
    tokens = 2 * args.samples * overlaps * args.length
    layers = config.num_encoder_layers + config.num_decoder_layers
    subject = f"{args.samples} pairs x {overlaps} overlaps x {args.length} tokens"
    check_fits("--samples", subject, 4.0 * tokens * config.d_model * layers, "the router inputs")
    model = 2.0 * param_count(config)["total"] * tokens
    check_duration("--samples", subject, model / PROBE_FLOPS, "the model's forward passes")
    routers = 2.0 * args.router_draws * tokens * layers * config.d_model * config.num_buckets
    check_duration(
        "--router-draws", f"{args.router_draws} draws", routers / PROBE_FLOPS, "the routers"
    )


def _source(args):
    """``(config, params, rows, replace_ids, description)`` of the probed model."""
    from lshsim._validate import check_int
    from lshsim.t5 import probe
    from lshsim.t5.checkpoint import read_run

    seed = check_int("seed", args.seed, 0, 2**32 - 1)
    if args.run is not None:
        free = ("lookup", "expert_impl")  # checked below; how experts are computed, not what
        given = [f for f in MEMORY_FIELDS if f not in free and getattr(args, f) is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise ValueError(f"{flag[2:]}: a checkpoint's memory is fixed; {flag} needs --config")
        if args.corpus:
            raise ValueError("corpus: a checkpoint is probed on its own held-out split")
        run = check_run_dir(args.run, "--run")
        saved = read_run(run)[0]
        probe.theory_family(saved)  # refused before the restore
        if args.lookup is not None and args.lookup != saved.lookup:
            raise ValueError(
                f"lookup: the checkpoint's lookup is {saved.lookup!r}, not {args.lookup!r}"
            )
        check_probe_size(saved, args)
        start_work()
        config, params, step = probe.checkpoint_params(run, args.step)
        if args.expert_impl is not None:
            config = config.replace(expert_impl=args.expert_impl)
        rows, ids = probe.sentence_source(config, length=args.length, run=run)
        return config, params, rows, ids, f"{run} step {step}"
    if args.step is not None:
        raise ValueError("step: only with --run")
    if args.lookup is None:
        raise ValueError(f"lookup: --config needs --lookup {'|'.join(LOOKUPS)}")
    config = config_from_args(args)
    probe.theory_family(config)  # a model without a lookup is refused before any work
    check_corpus_paths(args.corpus)
    check_params_fit(config)
    check_probe_size(config, args)
    start_work()
    rows, ids = probe.sentence_source(config, corpus=args.corpus, seed=seed, length=args.length)
    return config, probe.initial_params(config, seed), rows, ids, f"{config.name} at init"


def run_probe(args: argparse.Namespace) -> int:
    """Probe the model's routing collisions and print them, per layer and overlap, by the theory.

    Args:
        args: the parsed ``probe`` arguments.

    Returns:
        The exit status, 0.
    """
    from tqdm import tqdm

    from lshsim._validate import check_int
    from lshsim.t5 import probe

    overlaps = _overlaps(args.overlap)
    samples = check_int("samples", args.samples, 2)
    draws = check_int("router_draws", args.router_draws, 0)
    check_int("length", args.length, 2)
    check_ranges(args, STEP_RANGES)
    if args.mesh is not None:  # its form, before JAX counts the devices
        parse_mesh(args.mesh)
    if args.hf is not None or args.tap is not None:
        return probe_tap_command(args, overlaps, samples, draws)
    if args.bf16 or args.figure:
        raise ValueError(f"{'bf16' if args.bf16 else 'figure'}: only with --hf or --tap")
    config, params, rows, ids, what = _source(args)
    params, mesh = probe.place_params(config, params, args.mesh)
    with (
        probe.mesh_context(mesh),
        tqdm(total=len(overlaps) + 1, desc="probe", disable=args.json, file=sys.stderr) as bar,
    ):
        result = probe.probe(
            config,
            params,
            rows,
            ids,
            overlaps=overlaps,
            samples=samples,
            router_draws=draws,
            seed=args.seed,
            progress=lambda msg: (bar.set_postfix_str(msg), bar.update(1)),
        )
    summary = probe.summarise(result)
    family, _ = probe.theory_family(config)
    if args.json:
        print(
            json.dumps(
                {
                    "model": what,
                    "config": config.name,
                    "lookup": config.lookup,
                    "theory": family or "token equality",
                    "buckets": config.num_buckets,
                    "rows": result,
                    "summary": summary,
                }
            )
        )
        return 0
    print(
        f"{what}: lookup {config.lookup} ({config.num_buckets} buckets), theory "
        f"{family or 'token equality'}; {samples} pairs x {args.length} tokens per overlap"
    )
    _print_table(result, summary)
    return 0


def _print_table(result: list[dict], summary: list[dict]) -> None:
    """Print the probe's rows (one per layer and overlap) and its per-layer summary."""
    print(
        f"{'layer':<10s} {'f':>4s} {'cosine':>7s} {'measured':>9s} {'95% CI':>17s} "
        f"{'predicted':>9s} {'at f':>7s} {'z':>6s}"
    )
    for r in result:
        print(
            f"{r['layer']:<10s} {r['overlap']:4.2f} {r['cosine']:7.3f} {r['measured']:9.4f} "
            f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}] {r['predicted']:9.4f} "
            f"{r['predicted_at_f']:7.4f} {r['z']:6.2f}"
        )
    print("per layer: mean (measured - predicted), rms z, predictions inside the CI, slot usage")
    for s in summary:
        print(
            f"{s['layer']:<10s} {s['mean_departure']:+.4f}  rms z {s['rms_z']:.2f}  "
            f"inside {s['inside']}/{s['rows']}  effective buckets {s['effective_buckets']:.1f}  "
            f"used {s['slots_used']:.3f}  gini {s['gini']:.3f} (xlm {s['gini_xlm']:.3f})"
        )
