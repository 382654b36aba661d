"""A tiny Mixtral trained on CPU with ``transformers``: the reproduce study's trained router.

:func:`tiny_mixtral` builds the model from a config (never from the hub), :func:`train_lm`
trains it as a causal language model with AdamW on token rows (Mixtral's load-balancing loss
on, as Mixtral trains), and :func:`mean_loss` measures held-out loss. torch is imported
inside the functions.

References:
    Jiang et al. 2024 (Mixtral of experts); ``transformers``' ``MixtralForCausalLM``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["mean_loss", "tiny_mixtral", "train_lm"]


def tiny_mixtral(vocab: int, *, hidden: int, layers: int, experts: int, top_k: int, seed: int):
    """A randomly initialised ``MixtralForCausalLM`` (4 heads, 2 key-value heads, d_ff 2 hidden)."""
    import torch
    import transformers

    torch.manual_seed(seed)
    cfg = transformers.MixtralConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        num_local_experts=experts,
        num_experts_per_tok=top_k,
        output_router_logits=True,
        tie_word_embeddings=True,
    )
    return transformers.MixtralForCausalLM(cfg).eval()


def train_lm(
    model,
    rows: np.ndarray,
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    progress: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` on random batches of ``rows`` (next-token loss + its router aux loss).

    Returns:
        The training loss of every step; the model is left in eval mode.
    """
    import torch

    gen = np.random.default_rng(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    losses = []
    for step in range(steps):
        ids = torch.as_tensor(rows[gen.integers(0, rows.shape[0], batch)], dtype=torch.long)
        loss = model(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if progress:
            progress(step, losses[-1])
    model.eval()
    return losses


def mean_loss(model, rows: np.ndarray, batch: int = 32) -> float:
    """Mean next-token cross-entropy (without the router loss) over ``rows``, in eval mode."""
    import torch

    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, rows.shape[0], batch):
            ids = torch.as_tensor(rows[start : start + batch], dtype=torch.long)
            logits = model(input_ids=ids, output_router_logits=False).logits[:, :-1]
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).float(),
                ids[:, 1:].reshape(-1),
                reduction="sum",
            )
            total += float(loss)
            count += ids[:, 1:].numel()
    return total / count
