"""``lshsim probe --hf DIR`` and ``lshsim probe --tap module:factory``: routers trained elsewhere.

The model is loaded (or the user's factory called), its rows made from held-out text
(:mod:`lshsim.probe.text`), and :func:`lshsim.probe.measure.probe_tap` measures every routing
layer against the random-router law at the measured cosines. torch and transformers are
imported only here.
"""

from __future__ import annotations

import argparse
import json
import sys

from lshsim.cli.checks import check_figure
from lshsim.cli.model_flags import MEMORY_FIELDS
from lshsim.cli.work import start_work
from lshsim.t5.data.corpus import check_corpus_paths

__all__ = ["probe_tap_command"]


def _refuse_model_flags(args: argparse.Namespace) -> None:
    """The T5 model's flags mean nothing for a tapped router: refused by name."""
    given = [f for f in MEMORY_FIELDS if getattr(args, f, None) is not None]
    given += [f for f in ("step", "mesh") if getattr(args, f) is not None]
    if given:
        flag = given[0].replace("_", "-")
        raise ValueError(f"{flag}: a --hf or --tap router has no --{flag} (a --run/--config flag)")
    if args.bf16 and args.hf is None:
        raise ValueError("bf16: only with --hf")


def _check_source(args: argparse.Namespace, overlaps: int) -> None:
    """``--hf``: a folder with a ``config.json``; ``--tap``: ``module:factory``; the sizes.

    Checked before the model is loaded: the corpus files exist, and the captured router inputs
    (``2 x samples x overlaps x length`` tokens, ``hidden_size`` float32 per token and layer,
    from ``config.json``; a ``--tap`` model's width is unknown, so its tokens' ids alone) fit
    this machine.

    Raises:
        ValueError: one line naming ``--hf``, ``--tap``, ``--corpus`` or ``--samples``.
    """
    from lshsim._memory import check_fits

    check_corpus_paths(args.corpus)
    tokens = 2 * args.samples * overlaps * args.length
    per_token = 16  # the ids of the pair and the k choices, at least
    if args.hf is not None:
        from lshsim.probe.hf import read_config

        config, _ = read_config(args.hf)  # the folder, its config.json and its architecture
        per_token = 4 * _width(config)
    subject = f"{args.samples} pairs x {overlaps} overlaps x {args.length} tokens"
    check_fits("--samples", subject, float(tokens) * per_token, "the router inputs")
    if args.hf is not None:
        return
    module, sep, attr = args.tap.partition(":")
    if not sep or not module.isprintable() or not attr.isidentifier():
        raise ValueError(f"--tap: expected module:factory, got {args.tap!r}")
    if not all(part.isidentifier() for part in module.split(".")):
        raise ValueError(f"--tap: {module!r} is not an absolute module name")


def _width(config: dict) -> int:
    """``hidden_size x num_hidden_layers`` of a transformers config (1 where not a number)."""
    width = config.get("hidden_size", config.get("d_model"))
    layers = config.get("num_hidden_layers", config.get("num_layers"))
    sizes = [
        v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else 1
        for v in (width, layers)
    ]
    return sizes[0] * sizes[1]


def _tap(args: argparse.Namespace):
    """The router tap the arguments name."""
    if args.hf is not None:
        import transformers

        from lshsim.probe.hf import hf_tap, load_hf_model

        # the command's own bar reports progress; errors keep their one line on stderr
        transformers.utils.logging.disable_progress_bar()
        transformers.utils.logging.set_verbosity_error()

        model, tokenizer = load_hf_model(args.hf, bf16=args.bf16)
        return hf_tap(model, tokenizer=tokenizer, name=args.hf)
    from lshsim.probe.tap import load_tap

    return load_tap(args.tap)


def probe_tap_command(args: argparse.Namespace, overlaps, samples: int, draws: int) -> int:
    """Probe a ``--hf`` or ``--tap`` router; print the rows, or JSON; draw ``--figure``.

    Returns:
        The exit status, 0.
    """
    from tqdm import tqdm

    from lshsim._validate import check_int
    from lshsim.probe.measure import describe, probe_tap
    from lshsim.probe.text import tap_rows
    from lshsim.t5.probe import summarise

    _refuse_model_flags(args)
    figure = check_figure(args.figure)
    seed = check_int("seed", args.seed, 0, 2**32 - 1)
    _check_source(args, len(overlaps))
    start_work()
    tap = _tap(args)
    rows, ids = tap_rows(tap, corpus=args.corpus, seed=seed, length=args.length)
    with tqdm(total=len(overlaps) + 1, desc="probe", disable=args.json, file=sys.stderr) as bar:
        result = probe_tap(
            tap,
            rows,
            ids,
            overlaps=overlaps,
            samples=samples,
            router_draws=draws,
            seed=seed,
            progress=lambda msg: (bar.set_postfix_str(msg), bar.update(1)),
        )
    data = describe(tap, result)
    data["summary"] = summarise(result)
    if figure is not None:
        from lshsim.plots.probe import plot_tap
        from lshsim.plots.save import save_figure

        save_figure(plot_tap(data), figure.with_suffix(""), (figure.suffix.lower().lstrip("."),))
    if args.json:
        print(json.dumps(data))
        return 0
    _print(data, samples, args.length)
    return 0


def _print(data: dict, samples: int, length: int) -> None:
    """The text table: a header, the notes, one row per (layer, overlap), a summary per layer."""
    what = "top-1 agreement" if data["top_k"] == 1 else f"top-{data['top_k']} overlap"
    print(
        f"{data['model']}: {data['experts']} experts, {what}, random-router law {data['law']}; "
        f"{samples} pairs x {length} tokens per overlap"
    )
    for note in data["notes"]:
        print(f"note: {note}")
    print(
        f"{'layer':<11s} {'f':>4s} {'cosine':>7s} {'measured':>9s} {'95% CI':>17s} "
        f"{'predicted':>9s} {'departure (95% CI)':>27s} {'z':>6s} {'tokenid':>7s}"
    )
    for r in data["rows"]:
        print(
            f"{r['layer']:<11s} {r['overlap']:4.2f} {r['cosine']:7.3f} {r['measured']:9.4f} "
            f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}] {r['predicted']:9.4f} "
            f"{r['departure']:+.4f} [{r['departure_low']:+.4f}, {r['departure_high']:+.4f}] "
            f"{r['z']:6.2f} {r['realised']:7.3f}"
        )
    print("per layer: mean (measured - predicted), rms z, predictions inside the CI, usage")
    for s in data["summary"]:
        print(
            f"{s['layer']:<11s} {s['mean_departure']:+.4f}  rms z {s['rms_z']:.2f}  "
            f"inside {s['inside']}/{s['rows']}  effective experts {s['effective_buckets']:.1f}  "
            f"used {s['slots_used']:.3f}  gini {s['gini']:.3f}"
        )
