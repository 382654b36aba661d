"""The probe of a :class:`~lshsim.probe.tap.RouterTap`: collisions against the random-router law.

For sentence pairs sharing a fraction ``f`` of their aligned tokens
(:func:`lshsim.t5.probe.make_pairs`), both sentences go through the tap, and at every layer and
aligned position the probe records whether the two tokens went to the same expert (top-k
routers: the overlap ``|A ∩ B| / k`` of the two selections) and the cosine of the two router
inputs. A router drawn at random (``W`` i.i.d. Gaussian, independent of its inputs) collides,
*given the inputs*, with the probability of the family's exact law at their cosine, so
``predicted`` is the mean over aligned positions of that law at each position's cosine:

* softmax routers (law ``voronoi``): ``P_vor(n, a)`` at top-1, the exact top-k overlap
  (:func:`lshsim.laws.topk.voronoi_topk_overlap`) at top-k; both through one checked
  Chebyshev table in the angle (:func:`lshsim.laws.tables.log_p_table`) per probe, the law
  evaluated to a relative ``1e-8`` (far below any interval here);
* product keys: ``P_vor(s, a1) P_vor(s, a2)`` at the two query half-cosines (top-1), or the
  mean overlap under redrawn Gaussian sub-keys (top-k, ``router_draws >= 2``);
* hashes of token ids: ``same + (1 - same)/m`` with ``same`` the equality of the n-gram windows
  (the expectation over random functions of the windows; a fixed arithmetic hash with a small
  table and vocabulary can depart from it, which the probe then shows).

Intervals, as :mod:`lshsim.t5.probe`: ``v_pairs`` over sentence pairs (a pair is a cluster)
plus ``v_router``, the spread of ``router_draws`` redrawn Gaussian routers on the same inputs;
``z = (measured - predicted) / sqrt(v_pairs + v_router)``. ``departure`` is ``measured -
predicted`` with its interval over the independent pairs alone (``departure_low`` /
``departure_high``): how far a trained router is from a random one at the same cosines.
``realised`` is the share of equal aligned tokens: Token-ID's collision rate at this ``f``
(for a hash of token ids: the share of equal n-gram windows, on the mapping's compressed ids,
as the T5 probe's n-gram rows report it).

References:
    The paper, Theorem 1; Andoni et al. 2015 (Voronoi LSH); Lample et al. 2019 (product
    keys); Muennighoff et al. 2024 (OLMoE's top-k agreement between checkpoints).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lshsim import theory
from lshsim._validate import check_float, check_int
from lshsim.estimation.intervals import Z95, normal_interval
from lshsim.hashing import NGram, ProductKey
from lshsim.laws import spherical
from lshsim.laws.tables import TABLE_NODES, checked_table, log_p_table
from lshsim.laws.topk import voronoi_topk_overlap
from lshsim.probe.tap import Capture, RouterTap, top_experts
from lshsim.t5.lookups.probe_theory import overlap_fraction, redrawn_productkey, same_windows
from lshsim.t5.lookups.router_probe import cosines
from lshsim.t5.probe import USAGE_COLUMNS, make_pairs
from lshsim.t5.usage import usage_metrics

__all__ = [
    "LAW_RTOL",
    "capture_rows",
    "departures",
    "describe",
    "finish_rows",
    "law_at_cosines",
    "layer_stats",
    "probe_tap",
    "redrawn_hash",
    "redrawn_router",
]

#: relative accuracy of the law at the table's nodes (sampling error is ~1e-2)
LAW_RTOL = 1e-8
#: cosines within this of 1 are 1 (identical inputs give 1 - 2e-16 in float64, where the law
#: is 1 - 3e-9, and with no variance at f = 1 any difference would be infinitely many sd)
SNAP = 1e-12
#: with no variance at all, |measured - predicted| below this is agreement (z = 0)
ZERO_SD_TOL = 1e-6


def _checked(tap: RouterTap, name: str, cap: Capture, ids: np.ndarray) -> Capture:
    """One batch's capture of one layer, its shapes and values checked against the tap.

    Raises:
        ValueError: a choice not ``[B, T, top_k]`` or outside the experts (hash taps: any
            buckets, head 0 read), inputs not ``[B, T, d]`` or not finite, tokens not ``[B, T]``.
    """
    where = f"tap {tap.name}: layer {name}"
    choice = np.asarray(cap.choice)
    if choice.ndim == 2:
        choice = choice[..., None]
    want = (*ids.shape, tap.top_k)
    if choice.shape != want or not np.issubdtype(choice.dtype, np.integer):
        raise ValueError(
            f"{where}: choice must be integer {want}, got {choice.dtype} {choice.shape}"
        )
    if tap.law != NGram.name and (choice.min() < 0 or choice.max() >= tap.experts):
        raise ValueError(f"{where}: choice outside the {tap.experts} experts")
    inputs = None
    if cap.inputs is not None:
        inputs = np.asarray(cap.inputs, np.float32)
        if inputs.ndim != 3 or inputs.shape[:2] != ids.shape:
            raise ValueError(f"{where}: inputs must be [B, T, d] for ids {ids.shape}, got "
                             f"{inputs.shape}")  # fmt: skip
        if not np.isfinite(inputs).all():
            raise ValueError(f"{where}: router inputs are not finite (NaN or inf)")
    tokens = ids if cap.tokens is None else np.asarray(cap.tokens, np.int64)
    if tokens.shape != ids.shape:
        raise ValueError(f"{where}: tokens must be {ids.shape}, got {tokens.shape}")
    return Capture(choice=choice.astype(np.int64), inputs=inputs, tokens=tokens)


def capture_rows(tap: RouterTap, tokens: np.ndarray, batch: int = 16) -> dict[str, Capture]:
    """Run token rows through the tap in batches; each layer's captures concatenated.

    Raises:
        ValueError: the tap returned no layer, other layers in another batch, or captures
            that :func:`_checked` refuses.
    """
    parts: dict[str, list[Capture]] = {}
    for start in range(0, tokens.shape[0], batch):
        ids = np.asarray(tokens[start : start + batch], np.int64)
        got = tap.capture(ids, np.ones(ids.shape, bool))
        if not got:
            raise ValueError(f"tap {tap.name}: captured no routing layer")
        if parts and list(got) != list(parts):
            raise ValueError(
                f"tap {tap.name}: layers {list(got)} in one batch, {list(parts)} in another"
            )
        for name, cap in got.items():
            parts.setdefault(name, []).append(_checked(tap, name, cap, ids))
    return {
        name: Capture(
            choice=np.concatenate([c.choice for c in caps]),
            inputs=None if caps[0].inputs is None else np.concatenate([c.inputs for c in caps]),
            tokens=np.concatenate([c.tokens for c in caps]),
        )
        for name, caps in parts.items()
    }


def redrawn_router(xa: np.ndarray, xb: np.ndarray, n: int, k: int, draws: int, seed) -> np.ndarray:
    """Mean top-k overlaps ``[draws]`` of fresh Gaussian routers ``W ~ N(0, 1)^{d x n}``.

    Args:
        xa: ``[P, d]`` router inputs of the first sentences.
        xb: ``[P, d]`` the paired inputs of the second.
        n: experts.
        k: experts picked per token.
        draws: routers drawn.
        seed: a ``SeedSequence`` or int.
    """
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    out = []
    for child in seq.spawn(draws):
        w = np.random.default_rng(child).standard_normal((xa.shape[1], n)).astype(np.float32)
        out.append(float(np.mean(overlap_fraction(top_experts(xa @ w, k), top_experts(xb @ w, k)))))
    return np.array(out)


def redrawn_hash(ta: np.ndarray, tb: np.ndarray, n: int, m: int, draws: int, seed) -> np.ndarray:
    """Collision rates ``[draws]`` of random functions from ``n``-token windows to ``m`` buckets.

    Every distinct window (out-of-range positions padded alike) gets an independent uniform
    bucket per draw: the random hash whose expectation is ``same + (1 - same)/m``.
    """
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    pad = np.full((ta.shape[0], n - 1), -1, np.int64)

    def windows(t):
        p = np.concatenate([pad, np.asarray(t, np.int64)], axis=1)
        return np.stack([p[:, i : i + t.shape[1]] for i in range(n)], axis=-1).reshape(-1, n)

    _, inv = np.unique(np.concatenate([windows(ta), windows(tb)]), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    ia, ib = inv[: inv.size // 2], inv[inv.size // 2 :]
    out = []
    for child in seq.spawn(draws):
        buckets = np.random.default_rng(child).integers(0, m, size=int(inv.max()) + 1)
        out.append(float(np.mean(buckets[ia] == buckets[ib])))
    return np.array(out)


#: the angle range of the cached law tables: cosines >= -0.9 (the others are few: evaluated
#: one by one, or through their own table when there are more than a table's nodes); the
#: table passes its check there for n = 8 .. 128 and k = 1 .. 4 (measured)
THETA_MAX = math.acos(-0.9)


@functools.lru_cache(maxsize=16)
def _law_table(n: int, k: int):
    """The checked Chebyshev table of ``log`` law on ``[0, THETA_MAX]`` (None: it missed)."""
    return checked_table(lambda t: _log_law(n, k, math.cos(t)), 0.0, THETA_MAX)


def _log_law(n: int, k: int, a: float) -> float:
    """``log`` of the random router's law at one cosine, at :data:`LAW_RTOL`."""
    if k == 1:
        return spherical.voronoi_log_probability(n, a, LAW_RTOL)
    p = voronoi_topk_overlap(n, k, a, rtol=LAW_RTOL)
    return math.log(p) if p > 0 else -math.inf


def law_at_cosines(n: int, k: int, cos) -> np.ndarray:
    """The random softmax router's law at every cosine: ``P_vor(n, a)`` or its top-k overlap.

    One checked Chebyshev table in the angle per ``(n, k)`` and process on cosines ``>= -0.9``
    (:func:`lshsim.laws.tables.checked_table`, the law at :data:`LAW_RTOL`). Cosines below
    (or all, where that table misses its check) are evaluated directly when they are at most
    :data:`~lshsim.laws.tables.TABLE_NODES`, else through
    :func:`lshsim.laws.tables.log_p_table` on their own range.
    """
    cos = np.asarray(cos, np.float64).reshape(-1)
    if not np.isfinite(cos).all():
        raise ValueError("cosines must be finite")
    cos = np.clip(cos, -1.0, 1.0)
    theta = np.arccos(cos)
    out = np.empty(cos.shape)
    table = _law_table(n, k)
    inside = theta <= THETA_MAX if table is not None else np.zeros(cos.shape, bool)
    if inside.any():
        out[inside] = table(theta[inside])
    rest = cos[~inside]
    if rest.size > TABLE_NODES:
        out[~inside] = log_p_table(lambda a: _log_law(n, k, a), rest, f"top-{k} of {n}")
    elif rest.size:
        out[~inside] = [_log_law(n, k, float(a)) for a in rest]
    out[cos >= 1.0] = 0.0  # identical inputs always collide (the table is 1 - 2e-14 there)
    return np.exp(out)


def layer_stats(
    tap: RouterTap, name: str, overlap: float, cap_a: Capture, cap_b: Capture, draws: int, seed
) -> dict[str, Any]:
    """One (layer, overlap)'s collisions, cosines and redrawn routers, before the law.

    Args:
        tap: the router.
        name: the layer.
        overlap: the nominal ``f``.
        cap_a: the layer's capture of the first sentences (position ``t`` aligned with
            ``cap_b``'s ``t``).
        cap_b: the same for the second sentences.
        draws: redrawn Gaussian routers for the interval (< 2: none).
        seed: seeds those draws.

    Returns:
        The stats :func:`finish_rows` reads.
    """
    k = tap.top_k
    out: dict[str, Any] = {"name": name, "overlap": overlap, "same": cap_a.tokens == cap_b.tokens}
    out["collide"] = overlap_fraction(cap_a.choice, cap_b.choice)
    out["top1"] = cap_a.choice[..., 0] == cap_b.choice[..., 0]
    redrawn, v_router = math.nan, 0.0
    if tap.law == NGram.name:
        if name not in tap.moduli:
            raise ValueError(f"tap {tap.name}: no modulus for layer {name} (moduli: "
                             f"{', '.join(tap.moduli)})")  # fmt: skip
        m = int(tap.moduli[name])
        same = same_windows(cap_a.tokens, cap_b.tokens, tap.ngram)
        out.update(cos=np.full(same.shape, np.nan), per_position=same + (1 - same) / m, n=m)
        out["same"] = same
        if draws > 1:
            rates = redrawn_hash(cap_a.tokens, cap_b.tokens, tap.ngram, m, draws, seed)
            redrawn, v_router = float(rates.mean()), float(rates.var(ddof=1))
    else:
        xa, xb = cap_a.inputs, cap_b.inputs
        if xa is None or xb is None:
            raise ValueError(f"tap {tap.name}: layer {name} captured no router inputs")
        cos = cosines(xa, xb)
        out["cos"] = np.where(cos > 1 - SNAP, 1.0, cos)  # identical inputs: exactly 1
        d = xa.shape[-1]
        if tap.law == ProductKey.name:
            s = math.isqrt(tap.experts)
            half = d // 2
            out["half_cos"] = np.stack(
                [cosines(xa[..., :half], xb[..., :half]), cosines(xa[..., half:], xb[..., half:])],
                axis=-1,
            )
            if k > 1 and draws < 2:
                raise ValueError("router_draws: the top-k product-key prediction needs >= 2")
            if draws > 1:
                per = redrawn_productkey(s, k, xa.reshape(-1, d), xb.reshape(-1, d), draws, seed)
                rates = per.mean(axis=1)
                redrawn, v_router = float(rates.mean()), float(rates.var(ddof=1))
                if k > 1:
                    out["per_position"] = per.mean(axis=0).reshape(out["cos"].shape)
        elif draws > 1:
            rates = redrawn_router(
                xa.reshape(-1, d), xb.reshape(-1, d), tap.experts, k, draws, seed
            )
            redrawn, v_router = float(rates.mean()), float(rates.var(ddof=1))
        out["n"] = tap.experts
    usage = usage_metrics(np.concatenate([cap_a.choice.ravel(), cap_b.choice.ravel()]), out["n"])
    out.update(redrawn=redrawn, v_router=v_router, usage=usage)
    return out


def _predictions(tap: RouterTap, k: int, stats: Sequence[dict]) -> None:
    """Fill each stat's ``per_position`` (and ``top1_law`` for top-k softmax) in one table."""
    todo = [st for st in stats if "per_position" not in st]
    if not todo:
        return
    if tap.law == ProductKey.name:
        s = math.isqrt(tap.experts)
        flat = law_at_cosines(s, 1, np.concatenate([st["half_cos"].ravel() for st in todo]))
        for st, part in zip(todo, _split(flat, [st["half_cos"] for st in todo]), strict=True):
            st["per_position"] = part.prod(axis=-1)
        return
    flat = np.concatenate([st["cos"].ravel() for st in todo])
    for key, kk in (("per_position", k), ("top1_law", 1)) if k > 1 else (("per_position", 1),):
        law = law_at_cosines(tap.experts, kk, flat)
        for st, part in zip(todo, _split(law, [st["cos"] for st in todo]), strict=True):
            st[key] = part


def _split(flat: np.ndarray, like: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``flat`` cut into arrays shaped as ``like``."""
    ends = np.cumsum([a.size for a in like])[:-1]
    return [p.reshape(a.shape) for p, a in zip(np.split(flat, ends), like, strict=True)]


def _at_f(tap: RouterTap, k: int, f: float, length: int, m: int) -> float:
    """The law at cosine ``f`` (n-grams: at the hypergeometric window sharing of ``f``)."""
    if tap.law == NGram.name:
        n = tap.ngram
        q = theory.ngram_shared_probability(n, round(f * length), length) if n <= length else 0.0
        return q + (1 - q) / m
    if tap.law == ProductKey.name:
        return (
            float(law_at_cosines(math.isqrt(tap.experts), 1, [f])[0] ** 2) if k == 1 else math.nan
        )
    return float(law_at_cosines(tap.experts, k, [f])[0])


def _row(tap: RouterTap, k: int, st: dict) -> dict[str, Any]:
    """One row from a layer's stats and predictions."""
    pairs, length = st["collide"].shape
    per_pair = st["collide"].mean(axis=1)
    measured = float(per_pair.mean())
    v_pairs = float(per_pair.var(ddof=1) / pairs) if pairs > 1 else 0.0
    pred = np.asarray(st["per_position"], np.float64)
    predicted = float(pred.mean())
    dep = per_pair - pred.mean(axis=1)
    v_dep = float(dep.var(ddof=1) / pairs) if pairs > 1 else 0.0
    sd = math.sqrt(v_pairs + st["v_router"])
    diff = measured - predicted
    z = diff / sd if sd > 0 else (0.0 if abs(diff) < ZERO_SD_TOL else math.copysign(math.inf, diff))
    ci, on_pairs = normal_interval(measured, sd**2, Z95), normal_interval(measured, v_pairs, Z95)
    stack, _, index = st["name"].rpartition("/")
    row = {
        "layer": st["name"],
        "stack": stack,
        "index": int(index) if index.isdigit() else index,
        "overlap": st["overlap"],
        "realised": float(st["same"].mean()),
        "cosine": float(np.nanmean(st["cos"])) if np.isfinite(st["cos"]).any() else math.nan,
        "measured": measured,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "pairs_low": on_pairs[0],
        "pairs_high": on_pairs[1],
        "predicted": predicted,
        "predicted_at_f": _at_f(tap, k, st["overlap"], length, st["n"]),
        "departure": diff,
        "departure_low": diff - Z95 * math.sqrt(v_dep),
        "departure_high": diff + Z95 * math.sqrt(v_dep),
        "redrawn": st["redrawn"],
        "sd_router": math.sqrt(st["v_router"]),
        "sd_pairs": math.sqrt(v_pairs),
        "z": z,
        "effective_buckets": st["usage"]["effective"],
        **{col: st["usage"][key] for col, key in USAGE_COLUMNS.items()},
        "pairs": int(pairs),
        "positions": int(pairs * length),
    }
    if "top1_law" in st:
        row["top1_measured"] = float(st["top1"].mean())
        row["top1_predicted"] = float(st["top1_law"].mean())
    return row


def probe_tap(
    tap: RouterTap,
    rows: np.ndarray,
    replace_ids: np.ndarray,
    *,
    overlaps: Sequence[float],
    samples: int,
    router_draws: int,
    seed: int = 0,
    batch: int = 16,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Probe a tap: one row per (layer, overlap), layers in the tap's order.

    Args:
        tap: the router.
        rows: ``int[R, length]`` token rows (held-out text) the pairs are made from.
        replace_ids: ids a replaced position may take (ordinary tokens).
        overlaps: the ``f`` grid, each in ``[0, 1]``.
        samples: sentence pairs per overlap (>= 2).
        router_draws: redrawn Gaussian routers per row for the interval (0 or 1: none).
        seed: seeds the pairs and the redrawn routers.
        batch: rows per call of the tap.
        progress: called with a short message per overlap.

    Returns:
        The rows: the keys of :data:`lshsim.t5.probe.ROW_KEYS` plus ``departure``,
        ``departure_low``, ``departure_high`` and, for a top-k softmax router,
        ``top1_measured`` / ``top1_predicted``.
    """
    samples = check_int("samples", samples, 2)
    router_draws = check_int("router_draws", router_draws, 0)
    overlaps = [check_float("overlap", f, 0.0, 1.0) for f in overlaps]
    if not overlaps:
        raise ValueError("overlaps: need at least one overlap")
    stats: list[dict] = []
    for j, f in enumerate(overlaps):
        if progress:
            progress(f"overlap {f:g}")
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0, j]))
        a, b = make_pairs(rows, f, samples, replace_ids, rng)
        cap_a, cap_b = capture_rows(tap, a, batch), capture_rows(tap, b, batch)
        if list(cap_a) != list(cap_b):
            raise ValueError(f"tap {tap.name}: layers {list(cap_a)} for one sentence, "
                             f"{list(cap_b)} for its pair")  # fmt: skip
        for li, name in enumerate(cap_a):
            child = np.random.SeedSequence([seed, 1, j, li])
            stats.append(layer_stats(tap, name, f, cap_a[name], cap_b[name], router_draws, child))
    if progress:
        progress("theory")
    return finish_rows(tap, stats)


def finish_rows(tap: RouterTap, stats: Sequence[dict]) -> list[dict[str, Any]]:
    """The rows of :func:`layer_stats` results: the law in one table, sorted by layer then f."""
    k = tap.top_k
    _predictions(tap, k, stats)
    out = [_row(tap, k, st) for st in stats]
    order = {name: i for i, name in enumerate(dict.fromkeys(r["layer"] for r in out))}
    out.sort(key=lambda r: (order[r["layer"]], r["overlap"]))
    return out


def describe(tap: RouterTap, rows: Sequence[Mapping[str, Any]], points: int = 41) -> dict:
    """The tap's header, its rows and the random-router law as a curve (for the figure).

    The curve is the law against the cosine (``x = "cosine"``) on ``points`` cosines spanning
    the rows' mean cosines, or for a hash of ids (no cosine) the law at the overlap ``f``
    against ``f`` (``x = "overlap"``).
    """
    head = {
        "model": tap.name,
        "law": tap.law,
        "experts": tap.experts,
        "top_k": tap.top_k,
        "notes": list(tap.notes),
        "rows": list(rows),
    }
    if tap.law == NGram.name:
        xs = sorted({r["overlap"] for r in rows})
        ys = [float(np.mean([r["predicted_at_f"] for r in rows if r["overlap"] == x])) for x in xs]
        return {**head, "curve": {"x": "overlap", "at": xs, "law": ys}}
    cos = [r["cosine"] for r in rows]
    grid = np.linspace(max(-0.99, min(cos) - 0.05), min(0.999, max(cos) + 0.05), points)
    if tap.law == ProductKey.name:
        law = law_at_cosines(math.isqrt(tap.experts), 1, grid) ** 2 if tap.top_k == 1 else None
    else:
        law = law_at_cosines(tap.experts, tap.top_k, grid)
    curve = {"x": "cosine", "at": grid.tolist(), "law": None if law is None else law.tolist()}
    return {**head, "curve": curve}


def departures(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per layer: the mean learned-minus-random departure over the overlaps, with its interval.

    Each overlap draws its own sentence pairs, and the mean's variance is taken as the sum of
    the rows' pairs-only variances over ``R^2`` (``R`` rows). The overlaps draw their first
    sentences from the same held-out rows, so a row can recur across overlaps; where rows are
    few against ``overlaps x samples`` the interval is somewhat optimistic.

    Returns:
        ``[{"layer", "departure", "low", "high", "rows"}]`` in layer order.
    """
    layers: dict[str, list] = {}
    for r in rows:
        layers.setdefault(r["layer"], []).append(r)
    out = []
    for name, rs in layers.items():
        mean = float(np.mean([r["departure"] for r in rs]))
        var = sum(((r["departure_high"] - r["departure"]) / Z95) ** 2 for r in rs) / len(rs) ** 2
        half = Z95 * math.sqrt(var)
        out.append(
            {"layer": name, "departure": mean, "low": mean - half, "high": mean + half,
             "rows": len(rs)}
        )  # fmt: skip
    return out
