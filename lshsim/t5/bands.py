"""Held-out loss by target-token frequency band: do collisions hurt rare or frequent tokens?

The token types are ranked by their count in the run's **training** split (the text the
model learnt from, tokenized by the run's tokenizer) and cut into bands by
:func:`lshsim.laws.frequency.frequency_bands`: the top 1% of the types seen, the next 9%, the
rest (types never seen in training fall in the rest). Every span-content target token of the
run's held-out batches (sentinels and EOS left out, as ``content_loss``: they are not text,
and early in training they are most of what a model gets right) is assigned the band of its
type, and the band's loss is the mean cross-entropy of its targets. The tokens' weights sum to
``content_tokens``, and the bands' losses, weighted by their token counts, average to
``content_loss``: the split adds no new number, it only says where the loss sits.

References:
    :mod:`lshsim.laws.frequency` (the bands; the collision shares they are read against);
    X. Cheng et al. (DeepSeek) 2026, Engram (collisions of frequent n-grams as a regulariser).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lshsim.laws.frequency import BAND_EDGES, BAND_NAMES, frequency_bands


def token_counts(rows: Sequence[Sequence[int]], vocab: int) -> np.ndarray:
    """``int64 [vocab]``: how often each id occurs in the token ``rows``."""
    flat = np.concatenate([np.asarray(r, np.int64) for r in rows if len(r)] or [np.zeros(0, int)])
    if flat.size and (flat.min() < 0 or flat.max() >= vocab):
        raise ValueError(f"rows: token ids must lie in [0, {vocab})")
    return np.bincount(flat, minlength=vocab)


def band_table(counts, special: Sequence[int] = (), edges=BAND_EDGES) -> np.ndarray:
    """``int [vocab]``: each id's band by its training count; ``-1`` for the ``special`` ids."""
    band = frequency_bands(counts, edges)
    band[np.asarray(list(special), dtype=np.int64)] = -1
    return band


def band_sums(ce, targets, weights, band_of: np.ndarray, bands: int) -> np.ndarray:
    """``float64 [bands, 2]``: per band, the summed cross-entropy and the summed weight.

    Args:
        ce: ``[B, T]`` per-token cross-entropy.
        targets: ``[B, T]`` target ids.
        weights: ``[B, T]`` loss weights (0 on padding).
        band_of: ``[vocab]`` band per id (``-1``: left out).
        bands: the number of bands.
    """
    b = band_of[np.asarray(targets, np.int64)].ravel()
    w = np.asarray(weights, np.float64).ravel()
    keep = (b >= 0) & (w > 0)
    loss = np.bincount(b[keep], weights=(np.asarray(ce, np.float64).ravel() * w)[keep],
                       minlength=bands)  # fmt: skip
    weight = np.bincount(b[keep], weights=w[keep], minlength=bands)
    return np.stack([loss, weight], axis=1)


@functools.lru_cache(maxsize=4)
def token_loss(config):
    """A jit-compiled ``(params, batch) -> ce [B, T]`` (float32 logits, no dropout).

    Args:
        config: the model config (its ``dtype`` is the compute dtype).

    Returns:
        The per-token cross-entropy function (traced on its first call, so under the caller's
        ``jax.default_matmul_precision``).
    """
    import jax
    import jax.numpy as jnp

    from lshsim.t5.model import T5

    model = T5(config)

    @jax.jit
    def run(params, batch):
        logits = model.apply(
            {"params": params},
            batch["encoder_input_tokens"],
            batch["decoder_input_tokens"],
            batch["decoder_target_tokens"],
        ).astype(jnp.float32)
        target = batch["decoder_target_tokens"][..., None]
        lse = jax.nn.logsumexp(logits, axis=-1)
        return lse - jnp.take_along_axis(logits, target, axis=-1)[..., 0]

    return run


def loss_by_band(config, params, batches: Sequence[dict], band_of: np.ndarray) -> list[dict]:
    """Per band: ``band`` (name), ``types`` (ids in it), ``tokens`` and mean ``loss``.

    Args:
        config: the model config.
        params: its parameters.
        batches: held-out batches (``decoder_target_tokens``, ``decoder_loss_weights``, ...).
        band_of: :func:`band_table`'s ``[vocab]`` bands.

    Returns:
        One dict per band of :data:`~lshsim.laws.frequency.BAND_NAMES` (loss ``None`` for a
        band with no target token).
    """
    run = token_loss(config)
    bands = len(BAND_NAMES)
    sums = np.zeros((bands, 2))
    for batch in batches:
        ce = np.asarray(run(params, batch))
        sums += band_sums(
            ce, batch["decoder_target_tokens"], batch["decoder_loss_weights"], band_of, bands
        )
    return [
        {
            "band": name,
            "types": int(np.count_nonzero(band_of == i)),
            "tokens": int(sums[i, 1]),
            "loss": float(sums[i, 0] / sums[i, 1]) if sums[i, 1] > 0 else None,
        }
        for i, name in enumerate(BAND_NAMES)
    ]


def evaluate_bands(
    run: str | Path, *, step: int | None = None, examples: int | None = None
) -> dict[str, Any]:
    """A run checkpoint's held-out span-content loss by target-token frequency band.

    Args:
        run: a ``lshsim train`` run folder.
        step: the checkpoint step (default: the latest good one).
        examples: held-out examples (default: the run's own evaluation, ``eval_batches``
            batches of its batch size, as ``lshsim eval``).

    Returns:
        ``step``, ``bands`` (:func:`loss_by_band`), ``train_tokens`` (the tokens counted)
        and ``edges`` (the bands' type fractions).

    Raises:
        ValueError: not a run folder, a fine-tuning run (its held-out data is its pretrained
            run's), no usable checkpoint, or ``examples < 1``.
    """
    from lshsim._validate import check_int
    from lshsim.t5 import checkpoint as ckpt
    from lshsim.t5 import loop
    from lshsim.t5.data.corpus import load_corpus, split_documents
    from lshsim.t5.options import TrainOptions

    if examples is not None:
        examples = check_int("examples", examples, 1)
    ckpt.read_pretraining_run(Path(run), "eval --bands")  # a fine-tuning run: one line
    config, recorded, state = loop.restore_run(run, step)
    opts = TrainOptions.from_dict(recorded)
    tok, ds = loop.held_out_dataset(config, opts, Path(run))
    corpus = None if opts.corpus is None else list(opts.corpus)
    train_docs, _ = split_documents(load_corpus(corpus), opts.eval_fraction, seed=opts.seed)
    counts = token_counts(tok.encode_batch(list(train_docs)), config.vocab_size)
    band_of = band_table(counts, special=(*tok.sentinel_ids, tok.eos_id, tok.pad_id))
    if examples is None:
        examples = opts.eval_batches * opts.batch_size
    batch = min(opts.batch_size, examples)
    batches = ds.eval_batches(batch, -(-examples // batch))
    return {
        "step": int(state["step"]),
        "bands": loss_by_band(config, state["params"], batches, band_of),
        "train_tokens": int(counts.sum()),
        "edges": list(BAND_EDGES),
    }
