"""The routing probe's theory for the routed lookups (``tokenid``, ``softmax``, ``lsh``).

One bucket per token: a layer's two sentences collide at a position when their buckets are
equal. At initialisation a router or LSH matrix is drawn independently of its inputs, so given
the recorded inputs the collision probability is the hash family's ``P(n, cosine)`` at their
cosine (:mod:`lshsim.t5.probe` explains the intervals); Token-ID's buckets are the tokens, so
its collision is exact token equality (family ``None``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lshsim import theory
from lshsim.t5.usage import pair_weights, split_record, usage_metrics

__all__ = ["cosines", "redrawn_rates", "router_at_overlap", "router_predictions", "router_stats"]


def cosines(xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    """Cosines of paired vectors over their last axis (0 where a vector is 0), in ``[-1, 1]``."""
    xa = xa.astype(np.float64)
    xb = xb.astype(np.float64)
    num = np.einsum("...i,...i->...", xa, xb)
    den = np.linalg.norm(xa, axis=-1) * np.linalg.norm(xb, axis=-1)
    return np.clip(num / np.where(den > 0, den, 1.0), -1.0, 1.0)


def redrawn_rates(
    family: str, n: int, params: dict, xa: np.ndarray, xb: np.ndarray, draws: int, seed
) -> np.ndarray:
    """Collision rates of ``draws`` fresh lookups of ``family`` on the recorded inputs.

    Each lookup is drawn by :func:`lshsim.hashing.make_family` from one child of ``seed``;
    the hashing is done here with one BLAS product for all draws (the kernels hash one
    function at a time).

    Args:
        family: ``voronoi``, ``simhash`` or ``crosspolytope`` (Gaussian rotation).
        n: buckets.
        params: the family's parameters.
        xa: ``[P, d]`` first inputs.
        xb: ``[P, d]`` the paired second inputs.
        draws: number of independent lookups.
        seed: a ``SeedSequence`` (or int) for the draws.

    Returns:
        ``float64[draws]``: each draw's fraction of pairs in one bucket.
    """
    from lshsim.hashing import get_family, make_family

    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    d = xa.shape[-1]
    mats = [make_family(family, n, d, seed=c, **params).matrix for c in seq.spawn(draws)]
    m = mats[0].shape[0]
    stacked = np.concatenate(mats).T.astype(np.float32)  # [d, draws * m]
    sa = (xa.astype(np.float32) @ stacked).reshape(-1, draws, m)
    sb = (xb.astype(np.float32) @ stacked).reshape(-1, draws, m)
    rule = get_family(family).buckets_from_scores
    return np.array([np.mean(rule(sa[:, r]) == rule(sb[:, r])) for r in range(draws)])


def router_stats(
    name: str,
    overlap: float,
    n: int,
    family: str | None,
    params: dict,
    rec_a: tuple[np.ndarray, np.ndarray],
    rec_b: tuple[np.ndarray, np.ndarray],
    tok_a: np.ndarray,
    tok_b: np.ndarray,
    *,
    router_draws: int,
    seed,
) -> dict[str, Any]:
    """:func:`lshsim.t5.probe.layer_stats` for a routed lookup of ``n`` buckets.

    ``family``/``params``: the lookup's theory (``None``: token equality, whose "re-drawn"
    rate is the share of equal tokens).
    """
    (ba, xa, wa), (bb, xb, wb) = split_record(rec_a), split_record(rec_b)
    same = tok_a == tok_b
    redrawn, v_router = math.nan, 0.0
    if family is None:
        redrawn = float(same.mean())
    elif router_draws > 1:
        d = xa.shape[-1]
        rates = redrawn_rates(
            family, n, params, xa.reshape(-1, d), xb.reshape(-1, d), router_draws, seed
        )
        redrawn, v_router = float(rates.mean()), float(rates.var(ddof=1))
    weights = pair_weights(wa, wb, ba, bb)
    usage = usage_metrics(np.concatenate([ba.ravel(), bb.ravel()]), n, weights)
    return {
        "name": name,
        "overlap": overlap,
        "effective_buckets": usage["effective"],
        "usage": usage,
        "collide": ba == bb,
        "cos": cosines(xa, xb),
        "same": same,
        "redrawn": redrawn,
        "v_router": v_router,
    }


def router_predictions(
    family: str | None, n: int, params: dict, stats: Sequence[dict]
) -> list[np.ndarray]:
    """Per-position predictions: ``P(n, cos)`` in one theory call (token equality: ``same``)."""
    if family is None:
        return [st["same"].astype(np.float64) for st in stats]
    flat = np.concatenate([st["cos"].reshape(-1) for st in stats])
    pred = theory.probabilities(family, n, flat, **params)
    splits = np.cumsum([st["cos"].size for st in stats])[:-1]
    return [p.reshape(st["cos"].shape) for p, st in zip(np.split(pred, splits), stats, strict=True)]


@functools.lru_cache(maxsize=64)
def _at_cosine(family: str, n: int, cosine: float, params: tuple) -> float:
    return theory.probability(family, n, cosine, **dict(params))


def router_at_overlap(family: str | None, n: int, params: dict, f: float) -> float:
    """The prediction at cosine ``f`` (token equality: ``f``, the share of equal tokens)."""
    if family is None:
        return f
    return _at_cosine(family, n, f, tuple(params.items()))
