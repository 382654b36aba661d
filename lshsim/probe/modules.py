"""Router taps for product-key memories, any scoring callable, and token-id hash mappings.

* :func:`scores_tap`: any callable from ids to per-layer router inputs and scores (a torch
  module wrapped by the user, a JAX function): the experts are the top-k of the scores.
* :func:`productkey_tap`: XLM-style product-key memories inside a torch model (a module with
  ``query_proj``, ``keys`` of shape ``(heads, 2, n_keys, k_dim / 2)`` and ``knn``, as
  ``xlm/model/memory/memory.py``'s ``HashingMemory``): a forward hook records each memory's
  input, the query is recomputed with the memory's ``query_proj``, and head ``head``'s slots
  are the top-``knn`` of all ``n_keys^2`` sums of the two half-scores. That is the set XLM's
  ``get_indices`` returns (the top-``knn`` sums always lie in the product of the halves'
  top-``knn``; ``tests/probe/test_modules.py`` checks it against a transcription).
* :func:`hash_tap`: a mapping with ``hash(ids) -> {layer: int64[B, T, heads]}`` (Engram's
  ``NgramHashMapping``): head 0's bucket per position, head 0's table size from
  ``vocab_size_across_layers`` (or given), and windows compared on the mapping's compressed
  ids when it has ``compress``.

References:
    Lample et al. 2019 and XLM's ``memory.py`` (product keys); DeepSeek 2026,
    ``engram_demo_v1.py`` (``NgramHashMapping``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from lshsim.hashing import NGram, ProductKey, Voronoi
from lshsim.probe.tap import Capture, RouterTap, top_experts

__all__ = ["hash_tap", "productkey_slots", "productkey_tap", "scores_tap"]


def scores_tap(
    fn: Callable[[np.ndarray, np.ndarray], Mapping[str, tuple[Any, Any]]],
    *,
    experts: int,
    top_k: int = 1,
    name: str = "router",
    vocab: int | None = None,
) -> RouterTap:
    """A softmax router given as a function: ``fn(ids, mask) -> {layer: (inputs, scores)}``.

    Args:
        fn: per layer, the router's inputs ``[B, T, d]`` and its scores ``[B, T, experts]``
            (logits or probabilities: only their order matters).
        experts: experts per layer.
        top_k: experts picked per token.
        name: the tap's name.
        vocab: ids the function accepts.
    """

    def capture(ids, mask):
        out = {}
        for layer, (x, s) in fn(ids, mask).items():
            s = np.asarray(s, np.float32)
            if s.shape[-1] != experts:
                raise ValueError(
                    f"tap {name}: layer {layer} scored {s.shape[-1]} experts, not {experts}"
                )
            out[layer] = Capture(choice=top_experts(s, top_k), inputs=np.asarray(x, np.float32))
        return out

    return RouterTap(name, experts, top_k, Voronoi.name, capture, vocab=vocab)


def productkey_slots(query: np.ndarray, keys: np.ndarray, knn: int) -> np.ndarray:
    """Head slots ``[P, knn]`` (best first) of queries ``[P, d]`` and sub-keys ``[2, s, d/2]``."""
    half = keys.shape[-1]
    s1 = query[:, :half] @ keys[0].T
    s2 = query[:, half:] @ keys[1].T
    sums = (s1[:, :, None] + s2[:, None, :]).reshape(query.shape[0], -1)
    return top_experts(sums, knn)


def productkey_tap(
    model,
    memories: Mapping[str, Any],
    *,
    head: int = 0,
    name: str = "product keys",
    vocab: int | None = None,
) -> RouterTap:
    """A tap on XLM-style product-key memories of a torch model that reads token ids.

    Args:
        model: a torch module called as ``model(ids)`` (``LongTensor[B, T]``).
        memories: ``{layer name: memory module}``; all with the same ``n_keys`` and ``knn``.
        head: the memory head probed.
        name: the tap's name.
        vocab: ids the model accepts.
    """
    first = next(iter(memories.values()))
    n_keys, knn = int(first.keys.shape[2]), int(first.knn)

    def capture(ids, mask):
        import torch

        seen: dict[str, Any] = {}

        def recorder(layer):
            def hook(module, args, output):
                seen[layer] = args[0].detach()

            return hook

        hooks = [m.register_forward_hook(recorder(layer)) for layer, m in memories.items()]
        training = model.training
        model.eval()  # no dropout, batch norm from its running statistics
        try:
            with torch.no_grad():
                model(torch.as_tensor(ids, dtype=torch.long))
                out = {}
                for layer, mem in memories.items():
                    x = seen[layer].reshape(-1, seen[layer].shape[-1])
                    q = mem.query_proj(x).float().view(x.shape[0], mem.heads, mem.k_dim)[:, head]
                    keys = mem.keys.detach().float()[head].numpy()
                    q = q.numpy()
                    slots = productkey_slots(q, keys, knn)
                    b, t = ids.shape
                    out[layer] = Capture(
                        choice=slots.reshape(b, t, knn), inputs=q.reshape(b, t, -1)
                    )
        finally:
            for h in hooks:
                h.remove()
            model.train(training)
        return out

    return RouterTap(name, n_keys * n_keys, knn, ProductKey.name, capture, vocab=vocab)


def hash_tap(
    mapping,
    *,
    ngram: int = 2,
    moduli: Mapping[Any, int] | None = None,
    name: str = "n-gram hash",
    vocab: int | None = None,
) -> RouterTap:
    """A tap on a token-id hash mapping: head 0's bucket per position and layer.

    Args:
        mapping: an object with ``hash(ids) -> {layer: int64[B, T, heads]}`` (Engram's
            ``NgramHashMapping``), optionally ``compress(ids)`` (the windows are then
            compared on compressed ids) and ``vocab_size_across_layers`` (head 0's table size
            ``[layer][0][0]``).
        ngram: head 0's n-gram order (Engram: 2).
        moduli: ``{layer: head 0's table size}`` where the mapping does not say.
        name: the tap's name.
        vocab: ids the mapping accepts.
    """
    sizes = dict(moduli or {})
    if not sizes:
        across = getattr(mapping, "vocab_size_across_layers", None)
        if not across:
            raise ValueError("moduli: give head 0's table size per layer (the mapping has none)")
        sizes = {layer: int(per[0][0]) for layer, per in across.items()}
    names = {layer: f"layers/{layer}" for layer in sizes}
    compress = getattr(mapping, "compress", None)

    def capture(ids, mask):
        tokens = None if compress is None else np.asarray(compress(ids), np.int64)
        got = mapping.hash(ids)
        return {
            names[layer]: Capture(choice=np.asarray(h, np.int64)[..., :1], tokens=tokens)
            for layer, h in got.items()
        }

    return RouterTap(
        name,
        max(2, min(sizes.values())),
        1,
        NGram.name,
        capture,
        vocab=vocab,
        ngram=ngram,
        moduli={names[layer]: m for layer, m in sizes.items()},
    )
