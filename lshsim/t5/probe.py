"""The routing probe: how a model's lookups route sentence pairs of known overlap.

Theorem 1 of the paper predicts how often two sentences that share a fraction ``f`` of their
tokens send a token to the same expert: ``n^-O(sqrt(1-f))`` for hyperplane LSH,
``n^-O(1-f)`` for a softmax router (Voronoi LSH when the router is random), ``f`` for
Token-ID. The probe measures it in a real model, layer by layer:

1. **Pairs.** Rows of ``length`` tokens from the held-out part of the corpus; each pair is a
   row and a copy in which ``round((1-f) length)`` positions, chosen at random, hold a
   random ordinary piece different from the original (so exactly ``round(f length)`` aligned
   tokens are shared).
2. **Run.** Both rows go through the model (encoder input = the row, decoder input = the row
   shifted right, as teacher forcing would), and every layer's partial expert reports the
   bucket it picked and its input (the ``intermediates`` the layers sow).
3. **Measure.** At every layer and position: whether the two buckets are equal, and the
   cosine of the two layer inputs.
4. **Predict.** The theory's collision probability *given the measured cosine*, averaged over
   the positions: Voronoi for a softmax router, SimHash or cross-polytope (Gaussian rotation)
   for LSH, and for Token-ID the indicator that the two tokens are equal (collision is
   certain for equal tokens and, with one bucket per token, impossible otherwise).

Why the prediction is exact at initialisation: a layer's router (``N(0, 0.02^2)``) or LSH
matrix is drawn independently of everything below it, so *conditionally on the layer
inputs*, the scores of bucket ``i`` for the two inputs are i.i.d. bivariate normal pairs with
correlation = their cosine, and ``E[collision | inputs] = P_family(n, cosine)``: the mean of
the per-position predictions is the expected measured rate. What remains random is the
router itself (all positions share it) and the choice of sentences. The probe therefore
re-draws the lookup ``router_draws`` times from its family (:mod:`lshsim.hashing`) on the
*same recorded inputs*: the spread of those rates is the router part of the uncertainty, and
their mean re-checks the prediction. Each row's interval is

    ``measured +- 1.96 sqrt(v_pairs + v_router)``

with ``v_pairs`` the cluster-robust variance over sentence pairs (a pair is a cluster) and
``v_router`` the variance over re-drawn lookups; ``z = (measured - predicted) / sqrt(v_router
+ v_pairs)``; ``pairs_low``/``pairs_high`` are the measurement's own interval over sentence
pairs (``v_pairs`` only), the one to quote for a trained model's rate. After training, a
learned router is no longer a random draw: ``z`` then says how far it departs from the
random-router theory, in units of that spread. LSH's matrices are fixed, so LSH keeps
agreeing after training (only the cosines move).

References:
    The paper, Theorem 1 and its proof in the supplement; Andoni et al. 2015 (Voronoi and
    cross-polytope LSH); Charikar 2002 (SimHash).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lshsim._validate import check_float, check_int
from lshsim.estimation.intervals import Z95 as Z95
from lshsim.estimation.intervals import normal_interval
from lshsim.t5.configs import T5Config
from lshsim.t5.lookups import Lookup, lookup_of
from lshsim.t5.lookups.router_probe import redrawn_rates as redrawn_rates  # re-exported
from lshsim.t5.scan import unstack_layers
from lshsim.t5.usage import USAGE_KEYS

#: overlaps probed by default
OVERLAPS = (0.1, 0.3, 0.5, 0.7, 0.9)
#: sentence pairs per overlap by default
SAMPLES = 128
#: tokens per sentence by default
LENGTH = 64
#: fresh lookups drawn per (layer, overlap) for the router part of the interval
ROUTER_DRAWS = 32

#: the usage columns of a row (:func:`lshsim.t5.usage.usage_metrics`; ``used`` as ``slots_used``)
USAGE_COLUMNS = {
    "slots_used": "used",
    **{k: k for k in USAGE_KEYS if k not in ("used", "effective")},
}

ROW_KEYS = (
    "layer",
    "stack",
    "index",
    "overlap",
    "realised",
    "cosine",
    "measured",
    "ci_low",
    "ci_high",
    "pairs_low",
    "pairs_high",
    "predicted",
    "predicted_at_f",
    "redrawn",
    "sd_router",
    "sd_pairs",
    "z",
    "effective_buckets",
    *USAGE_COLUMNS,
    "pairs",
    "positions",
)


def theory_family(config: T5Config) -> tuple[str | None, dict]:
    """The hash family whose theory predicts ``config``'s lookup: ``(name, params)``.

    ``softmax`` -> ``voronoi`` (a random router), ``lsh`` -> ``simhash`` or
    ``crosspolytope`` (Gaussian rotation), ``tokenid`` -> ``(None, {})`` (exact equality);
    product keys and n-grams -> their own name (:mod:`lshsim.t5.lookups.probe_theory`). Each
    lookup says (:meth:`lshsim.t5.lookups.Lookup.probe_family`).
    """
    return _lookup(config).probe_family(config)


def _lookup(config: T5Config) -> Lookup:
    """The config's lookup; a model without one is refused."""
    lookup = lookup_of(config)
    if lookup is None:
        raise ValueError(f"lookup: the model has no lookup to probe (lookup {config.lookup!r})")
    return lookup


def make_pairs(
    rows: np.ndarray,
    overlap: float,
    samples: int,
    replace_ids: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Sentence pairs sharing exactly ``round(overlap * length)`` aligned tokens.

    Args:
        rows: ``int[R, length]`` token rows to draw the first sentences from (with
            replacement when ``samples > R``).
        overlap: the fraction ``f`` of positions kept.
        samples: number of pairs.
        replace_ids: the ids a replaced position may take (ordinary pieces, at least 2).
        rng: the generator.

    Returns:
        ``(first, second)``, both ``int32[samples, length]``; ``second`` differs from
        ``first`` at exactly ``length - round(overlap * length)`` positions per row.
    """
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.shape[0] < 1 or rows.shape[1] < 1:
        raise ValueError(f"rows: need a non-empty [R, length] array, got shape {rows.shape}")
    replace_ids = np.unique(np.asarray(replace_ids, dtype=np.int64))
    if replace_ids.size < 2:
        raise ValueError("replace_ids: need at least 2 distinct ids")
    length = rows.shape[1]
    change = length - round(overlap * length)
    pick = rng.choice(rows.shape[0], samples, replace=samples > rows.shape[0])
    first = rows[pick].astype(np.int32)
    second = first.copy()
    if change:
        where = np.argsort(rng.random((samples, length)), axis=1)[:, :change]
        old = np.take_along_axis(first, where, axis=1).astype(np.int64)
        # uniform over replace_ids minus the original token (when it is one of them)
        k = replace_ids.size
        at = np.minimum(np.searchsorted(replace_ids, old), k - 1)
        listed = replace_ids[at] == old
        r = rng.integers(0, k - listed.astype(np.int64))
        r = r + (listed & (r >= at))
        np.put_along_axis(second, where, replace_ids[r].astype(np.int32), axis=1)
    return first, second


def _shift_right(tokens: np.ndarray) -> np.ndarray:
    out = np.zeros_like(tokens)
    out[:, 1:] = tokens[:, :-1]
    return out


def _layer_name(stack: str, index: int) -> str:
    return f"{stack}/{index}"


def _layer_names(config: T5Config) -> list[str]:
    """The lookup layers' names in layer order, encoder first: ``"encoder/0"``, ..."""
    stacks = (("encoder", config.num_encoder_layers), ("decoder", config.num_decoder_layers))
    return [_layer_name(stack, i) for stack, count in stacks for i in range(count)]


@functools.lru_cache(maxsize=8)
def _recorder(config: T5Config):
    """A jit-compiled forward pass returning every lookup layer's record (one per config).

    The record is :meth:`~lshsim.t5.lookups.Lookup.probe_record`'s ``(ids, vectors)`` and
    :meth:`~lshsim.t5.lookups.Lookup.probe_weights`' weights per layer, a list in the order
    of :func:`_layer_names` (a pytree dict's keys would come back sorted); a scanned model's
    sows are split into layers first. The split and the
    selections are exact indexing, done in the compiled program: done eagerly on its result
    they would each compile a small XLA program of their own.
    """
    import jax

    from lshsim.t5.model import T5

    model = T5(config)
    lookup = _lookup(config)

    @jax.jit
    def run(p, enc, dec):
        _, state = model.apply({"params": p}, enc, dec, mutable=["intermediates"])
        inter = state["intermediates"]
        if config.scanned:  # each layer's sows, as the unrolled model names them
            inter = unstack_layers(inter)
        out = []
        for name in _layer_names(config):
            stack, i = name.split("/")
            e = inter[stack][f"layers_{i}"]["expert"]
            out.append((*lookup.probe_record(config, e), lookup.probe_weights(config, e)))
        return out

    return run


def record_layers(config: T5Config, params, tokens: np.ndarray, batch: int = 32) -> dict:
    """Run token rows through the model; every lookup layer's buckets and inputs.

    Args:
        config: the model config (with a lookup).
        params: its parameters.
        tokens: ``int[S, length]`` encoder inputs (the decoder reads them shifted right).
        batch: rows per forward pass.

    Returns:
        ``{"encoder/0": (bucket int64[S, length], input float32[S, length, d], weights), ...}``
        in layer order, encoder first; ``weights`` (float32, the shape of the ids) are the
        selections' weights (:meth:`~lshsim.t5.lookups.Lookup.probe_weights`), ``None`` for
        a lookup whose selections all weigh 1.
    """
    run = _recorder(config)
    parts: dict[str, list] = {name: [] for name in _layer_names(config)}
    for start in range(0, tokens.shape[0], batch):
        enc = np.asarray(tokens[start : start + batch], np.int32)
        records = run(params, enc, _shift_right(enc))
        for name, (ids, vec, w) in zip(parts, records, strict=True):
            parts[name].append(
                (
                    np.asarray(ids),
                    np.asarray(vec, np.float32),
                    None if w is None else np.asarray(w, np.float32),
                )
            )
    return {
        name: (
            np.concatenate([b for b, _, _ in chunks]).astype(np.int64),
            np.concatenate([x for _, x, _ in chunks]),
            None if chunks[0][2] is None else np.concatenate([w for _, _, w in chunks]),
        )
        for name, chunks in parts.items()
    }


def layer_stats(
    name: str,
    overlap: float,
    config: T5Config,
    rec_a: tuple[np.ndarray, np.ndarray],
    rec_b: tuple[np.ndarray, np.ndarray],
    tok_a: np.ndarray,
    tok_b: np.ndarray,
    *,
    router_draws: int,
    seed,
) -> dict[str, Any]:
    """What one (layer, overlap) row needs, before the theory: collisions, cosines, re-draws.

    Args:
        name: ``"encoder/i"`` or ``"decoder/i"``.
        overlap: the nominal ``f``.
        config: the model config.
        rec_a: ``(bucket [S, L], input [S, L, d], weights or None)`` of the first sentences
            at this layer (:func:`record_layers`).
        rec_b: the same for the second sentences.
        tok_a: the tokens the layer's positions carry in the first sentences (``[S, L]``).
        tok_b: the same for the second sentences.
        router_draws: fresh lookups for the router part of the interval (< 2: none).
        seed: seeds those draws.

    Returns:
        ``name``, ``overlap``, ``collide`` (bool ``[S, L]``), ``cos`` (``[S, L]``), ``same``
        (token equality ``[S, L]``), ``effective_buckets`` (``exp`` of the entropy of the
        buckets used: a collapsed router uses few), ``redrawn`` (mean rate of the re-drawn
        lookups, NaN without) and ``v_router`` (their variance).
    """
    return _lookup(config).probe_stats(
        name, overlap, config, rec_a, rec_b, tok_a, tok_b, router_draws=router_draws, seed=seed
    )


def finish_rows(config: T5Config, stats: Sequence[dict]) -> list[dict[str, Any]]:
    """The probe's rows from :func:`layer_stats` results, with the theory's predictions.

    All rows' cosines go through one theory call (the lookup's
    :meth:`~lshsim.t5.lookups.Lookup.probe_predictions`; for a hash family one checked
    Chebyshev table of ``log P``), so the quadrature is paid once per probe.
    """
    lookup = _lookup(config)
    per_position = lookup.probe_predictions(config, stats)
    rows = []
    for st, pp in zip(stats, per_position, strict=True):
        f = st["overlap"]
        pairs, length = st["collide"].shape
        per_pair = st["collide"].mean(axis=1)
        measured = float(per_pair.mean())
        # a pair is the independent unit: the variance of the mean of per-pair rates (equal
        # positions per pair: the ratio estimator's cluster-robust variance)
        v_pairs = float(per_pair.var(ddof=1) / pairs) if pairs > 1 else 0.0
        ci = normal_interval(measured, v_pairs + st["v_router"], Z95)
        on_pairs = normal_interval(measured, v_pairs, Z95)
        predicted = float(pp.mean())
        at_f = lookup.probe_at_overlap(config, f, length)
        sd = math.sqrt(v_pairs + st["v_router"])
        diff = measured - predicted
        if sd > 0:
            z = diff / sd
        else:
            z = 0.0 if abs(diff) < 1e-12 else math.copysign(math.inf, diff)
        stack, index = st["name"].split("/")
        rows.append(
            {
                "layer": st["name"],
                "stack": stack,
                "index": int(index),
                "overlap": f,
                "realised": float(st["same"].mean()),
                "cosine": float(st["cos"].mean()),
                "measured": measured,
                "ci_low": ci[0],
                "ci_high": ci[1],
                "pairs_low": on_pairs[0],
                "pairs_high": on_pairs[1],
                "predicted": predicted,
                "predicted_at_f": at_f,
                "redrawn": st["redrawn"],
                "sd_router": math.sqrt(st["v_router"]),
                "sd_pairs": math.sqrt(v_pairs),
                "z": z,
                "effective_buckets": st["effective_buckets"],
                **{col: st["usage"][key] for col, key in USAGE_COLUMNS.items()},
                "pairs": int(pairs),
                "positions": int(pairs * length),
            }
        )
    return rows


def probe(
    config: T5Config,
    params,
    rows: np.ndarray,
    replace_ids: np.ndarray,
    *,
    overlaps: Sequence[float] = OVERLAPS,
    samples: int = SAMPLES,
    router_draws: int = ROUTER_DRAWS,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Probe a model: one row per (layer, overlap), layers in order, encoder first.

    Args:
        config: the model config; its ``lookup`` is what is probed.
        params: the model parameters (at initialisation or trained).
        rows: ``int[R, length]`` token rows (held-out text) the pairs are made from.
        replace_ids: ids a replaced position may take.
        overlaps: the ``f`` grid, each in ``[0, 1]``.
        samples: sentence pairs per overlap (>= 2).
        router_draws: fresh lookups per row for the router part of the interval (0 or 1:
            none; the interval then covers only the sampling of pairs).
        seed: seeds the pairs and the re-drawn lookups.
        progress: called with a short message per overlap.

    Returns:
        The rows (keys :data:`ROW_KEYS`).
    """
    lookup = _lookup(config)  # refuses a model without a lookup
    samples = check_int("samples", samples, 2)
    router_draws = check_int("router_draws", router_draws, 0)
    lookup.check_probe(config, router_draws)
    overlaps = [check_float("overlap", f, 0.0, 1.0) for f in overlaps]
    if not overlaps:
        raise ValueError("overlaps: need at least one overlap")
    stats = []
    for j, f in enumerate(overlaps):
        if progress:
            progress(f"overlap {f:g}")
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0, j]))
        a, b = make_pairs(rows, f, samples, replace_ids, rng)
        rec_a = record_layers(config, params, a)
        rec_b = record_layers(config, params, b)
        for li, name in enumerate(rec_a):
            toks = (a, b) if name.startswith("encoder") else (_shift_right(a), _shift_right(b))
            stats.append(
                layer_stats(
                    name,
                    f,
                    config,
                    rec_a[name],
                    rec_b[name],
                    *toks,
                    router_draws=router_draws,
                    seed=np.random.SeedSequence([seed, 1, j, li]),
                )
            )
    if progress:
        progress("theory")
    out = finish_rows(config, stats)
    order = {name: i for i, name in enumerate(dict.fromkeys(r["layer"] for r in out))}
    out.sort(key=lambda r: (order[r["layer"]], r["overlap"]))
    return out


def summarise(rows: Sequence[dict]) -> list[dict[str, Any]]:
    """Per layer: how far the measured rates sit from the theory.

    Returns:
        One dict per layer: ``layer``, ``mean_departure`` (mean of measured - predicted over
        the overlaps), ``max_abs_z``, ``rms_z``, ``inside`` (rows whose interval contains
        the prediction) out of ``rows``, and the mean over the overlaps of
        ``effective_buckets`` and every usage column (:data:`USAGE_COLUMNS`:
        ``slots_used``, the standard ``gini`` and XLM's ``gini_xlm``, the score-weighted
        ``_w`` ones, the top-50/90/99 counts; :mod:`lshsim.t5.usage`).
    """
    layers: dict[str, list] = {}
    for r in rows:
        layers.setdefault(r["layer"], []).append(r)
    out = []
    for name, rs in layers.items():
        z = np.array([r["z"] for r in rs], dtype=np.float64)
        out.append(
            {
                "layer": name,
                "mean_departure": float(np.mean([r["measured"] - r["predicted"] for r in rs])),
                "max_abs_z": float(np.max(np.abs(z))),
                "rms_z": float(np.sqrt(np.mean(z**2))),
                "inside": sum(r["ci_low"] <= r["predicted"] <= r["ci_high"] for r in rs),
                "effective_buckets": float(np.mean([r["effective_buckets"] for r in rs])),
                **{c: float(np.mean([r[c] for r in rs])) for c in USAGE_COLUMNS},
                "rows": len(rs),
            }
        )
    return out


# -- where the sentences and parameters come from ---------------------------------------------


def ordinary_ids(tok) -> np.ndarray:
    """The ordinary piece ids of a tokenizer: not pad, EOS, unknown or a sentinel."""
    special = {tok.pad_id, tok.eos_id, tok.unk_id, *tok.sentinel_ids}
    return np.array([i for i in range(tok.num_pieces) if i not in special], dtype=np.int64)


def held_out_rows(docs: Sequence[str], tok, length: int) -> np.ndarray:
    """Held-out documents, tokenized, concatenated and cut into rows of ``length`` tokens."""
    from lshsim.t5.data.spans import pack_tokens

    rows = pack_tokens(tok.encode_batch(list(docs)), length)
    if rows.shape[0] == 0:
        raise ValueError(f"corpus: the held-out text has fewer than {length} tokens")
    return rows


def sentence_source(
    config: T5Config, *, corpus=None, seed: int = 0, length: int = LENGTH, run: Path | None = None
):
    """``(rows, replace_ids)`` from a run's held-out split, or for a config at initialisation.

    Args:
        config: the model config.
        corpus: corpus paths (``None``: the embedded corpus); ignored for a run, which uses
            its recorded corpus.
        seed: the split and tokenizer seed (a run uses its own).
        length: tokens per sentence.
        run: a run directory (its tokenizer and held-out split), or ``None``.
    """
    from lshsim.t5 import checkpoint as ckpt
    from lshsim.t5.loop import held_out_tokenizer
    from lshsim.t5.options import TrainOptions

    length = check_int("length", length, 2)
    if run is not None:
        opts = TrainOptions.from_dict(ckpt.read_run(run)[1])
    else:
        opts = TrainOptions.from_config(config, corpus=corpus, seed=seed)
    tok, eval_docs = held_out_tokenizer(config, opts, run)
    return held_out_rows(eval_docs, tok, length), ordinary_ids(tok)


def checkpoint_params(run: str | Path, step: int | None = None) -> tuple[T5Config, Any, int]:
    """``(config, params, step)`` of a run's checkpoint (default: the latest)."""
    from lshsim.t5.loop import restore_run

    config, _, state = restore_run(run, step)
    return config, state["params"], int(state["step"])


def initial_params(config: T5Config, seed: int = 0):
    """The parameters ``lshsim train --seed seed`` starts from.

    :func:`lshsim.t5.model.init_params`'s values; a scanned model's layers are stacked in
    NumPy (exact, as its own stacking is), not by one small XLA program per stacked leaf.

    Args:
        config: the model config.
        seed: the parameters' seed.

    Returns:
        The parameters, on the default device.
    """
    import jax

    from lshsim.t5 import scan
    from lshsim.t5.model import init_params

    if not config.scanned:
        return init_params(config, jax.random.key(seed))
    unrolled = jax.device_get(init_params(config.replace(scan_layers=False), jax.random.key(seed)))
    return jax.device_put(scan.stack_layers(unrolled, scan.ragged_paths(config)))


def place_params(config: T5Config, params, mesh: str | None = None):
    """``(params, mesh)``: the parameters placed on ``--mesh data=A,model=B`` (or as they are).

    Raises:
        ValueError: a bad mesh (see :func:`lshsim.t5.sharding.parse_mesh`).
    """
    if mesh is None:
        return params, None
    import jax

    from lshsim.t5 import sharding
    from lshsim.t5.model import param_specs

    the_mesh = sharding.mesh_from_options(mesh)
    return jax.device_put(
        params, sharding.param_shardings(params, param_specs(config), the_mesh)
    ), the_mesh


def mesh_context(mesh):
    """The context the probe runs in: the mesh's (its sharded lookups need it) or none."""
    import contextlib

    if mesh is None:
        return contextlib.nullcontext()
    from lshsim.t5 import sharding

    return sharding.mesh_context(mesh)
