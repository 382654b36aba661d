"""The ``routing_hf`` study: a router trained in Hugging Face ``transformers``, on the curve.

A tiny Mixtral (:mod:`lshsim.probe.tiny_mixtral`) is trained as a causal language model on the
embedded corpus (lshsim's tokenizer of the ``tiny`` config), and probed through its gates'
forward hooks (:func:`lshsim.probe.hf.hf_tap`) at initialisation and after training: per
layer, the top-k overlap of sentence pairs against the random router's exact law at the
measured cosines, and the learned-minus-random departure with its interval over the
independent sentence pairs (:func:`lshsim.probe.measure.departures`). torch and transformers
are imported only when the study runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lshsim.plots.probe import plot_hf_router
from lshsim.studies.base import Study

#: lshsim's own model config whose tokenizer and corpus split the study uses
TOKENIZER_CONFIG = "tiny"


@dataclass(frozen=True)
class HFRouterConfig:
    """The tiny Mixtral, its training, and the probe's sizes."""

    hf_hidden: int
    hf_layers: int
    hf_experts: int
    hf_top_k: int
    hf_length: int
    hf_steps: int
    hf_batch: int
    hf_lr: float
    hf_overlaps: tuple[float, ...]
    hf_samples: int
    hf_draws: int


def corpus_rows(length: int, seed: int):
    """``(train rows, held-out rows, replace ids, vocabulary)`` of the embedded corpus.

    In the tokenizer of lshsim's :data:`TOKENIZER_CONFIG` and its train/held-out split, rows
    of ``length`` tokens (int64).
    """
    from lshsim.t5.configs import get_config
    from lshsim.t5.data.corpus import load_corpus, split_documents
    from lshsim.t5.data.spans import pack_tokens
    from lshsim.t5.loop import held_out_tokenizer
    from lshsim.t5.options import TrainOptions
    from lshsim.t5.probe import held_out_rows, ordinary_ids

    config = get_config(TOKENIZER_CONFIG)
    opts = TrainOptions.from_config(config, seed=seed)
    tok, eval_docs = held_out_tokenizer(config, opts, None)
    train_docs, _ = split_documents(load_corpus(None), opts.eval_fraction, seed=opts.seed)
    train = pack_tokens(tok.encode_batch(train_docs), length).astype("int64")
    held = held_out_rows(eval_docs, tok, length).astype("int64")
    return train, held, ordinary_ids(tok), tok.num_pieces


def _probe(cfg: HFRouterConfig, model, held, ids, seed: int) -> dict:
    """The probe's rows, summary, departures and law curve of the model as it is now."""
    from lshsim.probe.hf import hf_tap
    from lshsim.probe.measure import departures, describe, probe_tap
    from lshsim.t5.probe import summarise

    tap = dataclasses.replace(hf_tap(model, name="tiny Mixtral"), notes=())
    rows = probe_tap(
        tap,
        held,
        ids,
        overlaps=cfg.hf_overlaps,
        samples=cfg.hf_samples,
        router_draws=cfg.hf_draws,
        seed=seed,
    )
    return {**describe(tap, rows), "summary": summarise(rows), "departures": departures(rows)}


def routing_hf(cfg: HFRouterConfig, seed: int) -> dict:
    """Train the tiny Mixtral; probe it at initialisation and after."""
    import torch

    from lshsim.probe.tiny_mixtral import mean_loss, tiny_mixtral, train_lm

    train, held, ids, vocab = corpus_rows(cfg.hf_length, seed)
    shape = {"hidden": cfg.hf_hidden, "layers": cfg.hf_layers, "experts": cfg.hf_experts,
             "top_k": cfg.hf_top_k}  # fmt: skip
    model = tiny_mixtral(vocab, **shape, seed=seed)
    with torch.random.fork_rng():
        before = _probe(cfg, model, held, ids, seed)
        loss_before = mean_loss(model, held)
        losses = train_lm(
            model, train, steps=cfg.hf_steps, batch=cfg.hf_batch, lr=cfg.hf_lr, seed=seed
        )
        after = _probe(cfg, model, held, ids, seed)
        loss_after = mean_loss(model, held)
    return {
        "model": {**shape, "vocab": vocab, "length": cfg.hf_length},
        "train": {
            "steps": cfg.hf_steps,
            "batch": cfg.hf_batch,
            "lr": cfg.hf_lr,
            "last_loss": losses[-1],
        },
        "loss_before": loss_before,
        "loss_after": loss_after,
        "before": before,
        "after": after,
    }


def section(data: dict) -> list[str]:
    """REPORT.md's section: per layer, the departure at initialisation and after training."""
    m, tr = data["model"], data["train"]
    lines = [
        "",
        "## A Hugging Face Mixtral router against the random router (`lshsim probe --hf`)",
        "",
        f"A tiny Mixtral ({m['layers']} layers, d = {m['hidden']}, {m['experts']} experts, "
        f"top-{m['top_k']}) trained {tr['steps']} steps with `transformers` on CPU; held-out "
        f"loss {data['loss_before']:.2f} -> {data['loss_after']:.2f}. Departure = measured "
        "top-k overlap minus the random router's exact law at the measured cosines, mean over "
        "the overlaps, 95% interval over independent sentence pairs:",
        "",
        "| layer | at init | trained | effective experts (init, trained) |",
        "| --- | --- | --- | --- |",
    ]
    for b, a, sb, sa in zip(
        data["before"]["departures"],
        data["after"]["departures"],
        data["before"]["summary"],
        data["after"]["summary"],
        strict=True,
    ):
        lines.append(
            f"| {b['layer']} | {b['departure']:+.4f} [{b['low']:+.4f}, {b['high']:+.4f}] | "
            f"{a['departure']:+.4f} [{a['low']:+.4f}, {a['high']:+.4f}] | "
            f"{sb['effective_buckets']:.1f}, {sa['effective_buckets']:.1f} |"
        )
    return lines


_MODEL = {"hf_hidden": 64, "hf_layers": 2, "hf_experts": 8, "hf_top_k": 2, "hf_length": 64,
          "hf_batch": 16, "hf_lr": 3e-3}  # fmt: skip
_CONFIGS = {
    "default": HFRouterConfig(
        **_MODEL,
        hf_steps=300,
        hf_overlaps=(0.1, 0.3, 0.5, 0.7, 0.9),
        hf_samples=128,
        hf_draws=32,
    ),
    "quick": HFRouterConfig(
        **_MODEL, hf_steps=30, hf_overlaps=(0.2, 0.8), hf_samples=16, hf_draws=4
    ),
}

#: torch's numbers may move across platforms and thread counts; the sizes are exact
_KINDS = {"": "platform", "model": "exact", "train/steps": "exact", "train/batch": "exact",
          "train/lr": "exact", "before/experts": "exact", "after/experts": "exact",
          "before/top_k": "exact", "after/top_k": "exact"}  # fmt: skip

STUDIES = (
    Study(
        "routing_hf",
        routing_hf,
        plot_hf_router,
        "A tiny Mixtral built and trained with Hugging Face transformers, probed through its "
        "gates' forward hooks: per layer, the top-2 overlap of sentence pairs against the "
        "cosine of the gate inputs (95% CI), the random router's exact law at the measured "
        "cosines (crosses) and at the mean cosine (dashed), at initialisation and after "
        "training.",
        _CONFIGS,
        section=section,
        kinds=_KINDS,
    ),
)
