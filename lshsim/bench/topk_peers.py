"""Product-key top-k (PKM's rule) against XLM's own torch code, the same sub-keys and answers.

The peer is a faithful port of ``HashingMemoryProductFast._get_indices`` (facebookresearch/XLM,
``xlm/model/memory/memory.py``; the Memory Layers code keeps the same steps): ``F.linear`` of
each query half with its ``s`` sub-keys, ``topk(k)`` of each, the ``k^2`` cartesian sums and
their ``topk(k)``, the slots gathered (``i * s + j``), in float32 with ``torch.no_grad`` on
``torch.set_num_threads(2)``. Ours is :func:`lshsim.hashing.topk.topk_sets` on a
:class:`~lshsim.hashing.productkey.ProductKey` with the same sub-keys (float32 queries). The
check: both return the same set of ``k`` slots for every query, in the same order for at
least 99.9% of them (the two SGEMMs round differently, so a float32 near-tie among the sums
may come out in either order: measured, 1 row of 4096 at k = 32, its set and exact scores
the same).

Grid (issue 33): ``n = s^2`` for ``s`` in {128, 512, 1024}, ``k`` in {8, 32}, batch 4096,
``d = 512``; goal >= 1.5x at every point.

References:
    G. Lample et al., "Large memory layers with product keys", NeurIPS 2019; V.-P. Berges et
    al., "Memory layers at scale", 2024.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lshsim.bench.timing import interleaved, speedup_row

#: (s, k) grid points; batch and dimension.
GRID = ((128, 8), (128, 32), (512, 8), (512, 32), (1024, 8), (1024, 32))
BATCH, DIM = 4096, 512
#: Torch's intra-op threads (the machine's two cores).
TORCH_THREADS = 2


def xlm_get_indices(torch, query, keys1, keys2, knn: int):
    """XLM's ``HashingMemoryProductFast._get_indices`` (no query normalisation), ported.

    Args:
        torch: the ``torch`` module.
        query: float32 tensor ``[bs, k_dim]``.
        keys1: ``[n_keys, k_dim / 2]`` sub-keys of the first half.
        keys2: those of the second half.
        knn: ``k``.

    Returns:
        ``(scores, indices)``, each ``[bs, knn]``.
    """
    functional = torch.nn.functional
    bs, half, n_keys = query.size(0), query.size(1) // 2, len(keys1)
    q1, q2 = query[:, :half], query[:, half:]
    scores1 = functional.linear(q1, keys1, bias=None)
    scores2 = functional.linear(q2, keys2, bias=None)
    scores1, indices1 = scores1.topk(knn, dim=1, largest=True, sorted=True)
    scores2, indices2 = scores2.topk(knn, dim=1, largest=True, sorted=True)
    all_scores = (
        scores1.view(bs, knn, 1).expand(bs, knn, knn)
        + scores2.view(bs, 1, knn).expand(bs, knn, knn)
    ).view(bs, -1)
    all_indices = (
        indices1.view(bs, knn, 1).expand(bs, knn, knn) * n_keys
        + indices2.view(bs, 1, knn).expand(bs, knn, knn)
    ).view(bs, -1)
    scores, best = torch.topk(all_scores, k=knn, dim=1, largest=True, sorted=True)
    return scores, all_indices.gather(1, best)


def productkey_topk(quick: bool) -> list[dict[str, Any]]:
    """Our product-key top-k vs XLM's torch ``_get_indices`` over :data:`GRID`."""
    import torch

    from lshsim.hashing import make_family
    from lshsim.hashing.topk import topk_sets

    torch.set_num_threads(TORCH_THREADS)
    rounds = 5 if quick else 15
    x = np.random.default_rng(11).standard_normal((BATCH, DIM)).astype(np.float32)
    xt = torch.from_numpy(x)
    out = []
    for s, k in GRID:
        fam = make_family("productkey", s * s, DIM, seed=5)
        k1 = torch.from_numpy(fam.keys1.astype(np.float32))
        k2 = torch.from_numpy(fam.keys2.astype(np.float32))

        def peer(k=k, k1=k1, k2=k2):
            with torch.no_grad():
                return xlm_get_indices(torch, xt, k1, k2, k)[1]

        fns = {"ours": lambda fam=fam, k=k: topk_sets(fam, x, k), "xlm": peer}
        t = interleaved(fns, rounds=rounds, warmup=1)
        ours, theirs = fns["ours"](), fns["xlm"]().numpy()
        same_sets = all(set(a) == set(b) for a, b in zip(ours, theirs, strict=True))
        same_order = float(np.mean((ours == theirs).all(axis=1)))
        out.append(
            speedup_row(
                f"productkey top-k n={s}^2 k={k} batch={BATCH} d={DIM} vs XLM torch",
                t,
                "ours",
                "xlm",
                goal=1.5,
                ours="lshsim.hashing.topk.topk_sets on ProductKey (float32 queries)",
                peer=f"XLM HashingMemoryProductFast._get_indices, torch {TORCH_THREADS} threads",
                checks={"same_sets": same_sets, "same_order": same_order >= 0.999},
                same_order_rows=same_order,
            )
        )
    return out


CASES = {"productkey_topk": productkey_topk}
