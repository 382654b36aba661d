"""Top-k of the spherical families against torch and NumPy; the reduced top-k sampler in n.

* ``spherical_topk``: :func:`lshsim.hashing.topk.topk_sets` on Voronoi and on the Gaussian
  cross-polytope (dense rotation) against the obvious peers on the same float32 queries and
  centres: ``torch.topk`` of the whole score matrix (2 threads) and NumPy's
  ``argpartition`` + a sort of the ``k`` (the cross-polytope's scores are ``concat(y, -y)``
  of the rotated ``y``, its bucket ids in that order). Ours works in blocks of rows, so its
  extra memory is O(rows x n), not O(m n) as both peers' score matrices. Check: the same set
  of ``k`` buckets for >= 99.9% of the rows (float32 near-ties may swap the k-th). Goal >= 1.2x
  against each peer (issue 33), at (n, k, m) = (1024, 8, 16384) and (16384, 32, 4096), d = 256.
* ``topk_reduced``: :func:`lshsim.estimate_topk.estimate_topk_overlap` in reduced mode (the
  order statistics the top-k needs, O(k) per trial) at n = 2^10 and 2^20: the ratio of its
  time per trial at 2^20 to 2^10 (goal <= 1.5: flat in n); and its speed-up over full mode
  (n scores per trial) at n = 2^10 (goal >= 10).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lshsim.bench.timing import interleaved, row, speedup_row
from lshsim.hashing import CrossPolytope, Voronoi

#: (n, k, m) points of the spherical top-k rows; the dimension.
SPHERICAL_GRID = ((1024, 8, 16384), (16384, 32, 4096))
SPHERICAL_DIM = 256
TORCH_THREADS = 2


def _peer_scores(fam, x: np.ndarray) -> np.ndarray:
    """The float32 score matrix whose column order is the family's bucket ids."""
    y = x @ np.ascontiguousarray(fam.matrix, dtype=np.float32).T
    return np.concatenate([y, -y], axis=1) if fam.name == CrossPolytope.name else y


def _numpy_topk(fam, x: np.ndarray, k: int) -> np.ndarray:
    scores = _peer_scores(fam, x)
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1)
    return np.take_along_axis(part, order, axis=1)


def spherical_topk(quick: bool) -> list[dict[str, Any]]:
    """Voronoi and Gaussian cross-polytope top-k vs ``torch.topk`` and ``argpartition``."""
    import torch

    from lshsim.hashing import make_family
    from lshsim.hashing.topk import topk_sets

    torch.set_num_threads(TORCH_THREADS)
    rounds = 3 if quick else 7
    out = []
    for family, params in ((Voronoi.name, {}), (CrossPolytope.name, {"rotation": "gaussian"})):
        for n, k, m in SPHERICAL_GRID:
            m = m // 4 if quick else m
            fam = make_family(family, n, SPHERICAL_DIM, seed=3, **params)
            x = np.random.default_rng(7).standard_normal((m, SPHERICAL_DIM)).astype(np.float32)

            def torch_topk(fam=fam, x=x, k=k):
                with torch.no_grad():
                    return torch.from_numpy(_peer_scores(fam, x)).topk(k, dim=1)[1]

            fns = {
                "ours": lambda fam=fam, x=x, k=k: topk_sets(fam, x, k),
                "torch": torch_topk,
                "numpy": lambda fam=fam, x=x, k=k: _numpy_topk(fam, x, k),
            }
            t = interleaved(fns, rounds=rounds, warmup=1)
            ours = fns["ours"]()
            for peer, ids in (("torch", fns["torch"]().numpy()), ("numpy", fns["numpy"]())):
                same = float(np.mean([set(a) == set(b) for a, b in zip(ours, ids, strict=True)]))
                out.append(
                    speedup_row(
                        f"{family} top-k n={n} k={k} m={m} d={SPHERICAL_DIM} f32 vs {peer}",
                        t,
                        "ours",
                        peer,
                        goal=1.2,
                        ours="lshsim.hashing.topk.topk_sets (blocks of rows: O(rows n) memory)",
                        peer=(
                            f"torch.topk of the (m, n) score matrix, {TORCH_THREADS} threads"
                            if peer == "torch"
                            else "numpy argpartition of the (m, n) score matrix + sort of k"
                        ),
                        checks={"same_sets": same >= 0.999},
                        same_set_rows=same,
                    )
                )
    return out


def topk_reduced(quick: bool) -> list[dict[str, Any]]:
    """The reduced top-k sampler's time per trial at n = 2^10 and 2^20, and vs full mode."""
    from lshsim.estimate_topk import estimate_topk_overlap

    k, cosine = 8, 0.7
    trials = 20_000 if quick else 100_000
    full_trials = 500 if quick else 2_000
    rounds = 3 if quick else 7

    def reduced(n: int):
        return estimate_topk_overlap("voronoi", n, k, cosine=cosine, samples=trials,
                                     mode="reduced", seed=1)  # fmt: skip

    def full():
        return estimate_topk_overlap("voronoi", 2**10, k, cosine=cosine, samples=full_trials,
                                     mode="full", seed=1)  # fmt: skip

    fns = {"2^10": lambda: reduced(2**10), "2^20": lambda: reduced(2**20), "full 2^10": full}
    t = interleaved(fns, rounds=rounds, warmup=1)
    per = {name: t[name]["median"] / (full_trials if name == "full 2^10" else trials) for name in t}
    agree = abs(reduced(2**10).overlap - full().overlap) < 0.05
    flat = row(
        f"voronoi reduced top-k (k={k}, a={cosine}) time per trial, n=2^20 / n=2^10",
        ratio=per["2^20"] / per["2^10"],
        goal=1.5,
        op="<=",
        measure="time per trial at n = 2^20 / at n = 2^10",
        ours=f"estimate_topk_overlap(mode='reduced'), {trials} trials",
        peer="the same at n = 2^10",
        ours_s=per["2^20"],
        peer_s=per["2^10"],
    )
    speed = row(
        f"voronoi reduced top-k (k={k}, a={cosine}) vs full mode, n=2^10, per trial",
        ratio=per["full 2^10"] / per["2^10"],
        goal=10,
        op=">=",
        measure="full time per trial / reduced time per trial",
        ours=f"estimate_topk_overlap(mode='reduced'), {trials} trials",
        peer=f"estimate_topk_overlap(mode='full', dim=64), {full_trials} trials",
        ours_s=per["2^10"],
        peer_s=per["full 2^10"],
        checks={"estimates agree within 0.05": agree},
    )
    return [flat, speed]


CASES = {"spherical_topk": spherical_topk, "topk_reduced": topk_reduced}
