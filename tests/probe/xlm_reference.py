"""A transcription of XLM's product-key memory read (``xlm/model/memory/memory.py``,
``HashingMemory``: ``query_proj``, ``get_indices``, ``forward``; ``_get_indices`` is the
project's port of it, :func:`lshsim.bench.topk_peers.xlm_get_indices`), in torch,
for checking :func:`lshsim.probe.modules.productkey_tap` against the code it reads. Dropout,
batch norm and the value-table options are left out (eval mode, no batch norm)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from lshsim.bench.topk_peers import xlm_get_indices


class HashingMemoryRef(nn.Module):
    """XLM's memory with ``heads`` heads of ``n_keys^2`` slots and top-``knn`` reads."""

    def __init__(self, input_dim: int, k_dim: int, n_keys: int, heads: int, knn: int, v_dim: int):
        super().__init__()
        self.input_dim, self.k_dim, self.n_keys, self.heads, self.knn = (
            input_dim, k_dim, n_keys, heads, knn,
        )  # fmt: skip
        self.v_dim = v_dim
        self.keys = nn.Parameter(torch.randn(heads, 2, n_keys, k_dim // 2))
        self.values = nn.EmbeddingBag(n_keys**2, v_dim, mode="sum")
        self.query_proj = nn.Sequential(nn.Linear(input_dim, heads * k_dim, bias=True))
        self.last_indices = None

    def _get_indices(self, query, subkeys):
        """XLM's per-head read: the project's port, ``topk_peers.xlm_get_indices``."""
        assert query.dim() == 2 and query.size(1) == self.k_dim
        return xlm_get_indices(torch, query, subkeys[0], subkeys[1], self.knn)

    def get_indices(self, query):
        assert query.dim() == 2 and query.size(1) == self.k_dim
        query = query.view(-1, self.heads, self.k_dim)
        bs = len(query)
        outputs = [self._get_indices(query[:, i], self.keys[i]) for i in range(self.heads)]
        s = torch.cat([s.view(bs, 1, self.knn) for s, _ in outputs], 1)
        i = torch.cat([i.view(bs, 1, self.knn) for _, i in outputs], 1)
        return s.view(-1, self.knn), i.view(-1, self.knn)

    def forward(self, input):
        prefix_shape = input.shape[:-1]
        bs = int(torch.tensor(prefix_shape).prod())
        query = self.query_proj(input.contiguous().view(-1, self.input_dim))
        query = query.view(bs * self.heads, self.k_dim)
        scores, indices = self.get_indices(query)
        self.last_indices = indices.view(bs, self.heads, self.knn)
        scores = F.softmax(scores.float(), dim=-1).type_as(scores)
        indices = indices.view(bs, self.heads * self.knn)
        scores = scores.view(bs, self.heads * self.knn)
        output = self.values(indices, per_sample_weights=scores)
        return output.view((*prefix_shape, self.v_dim))


class MemoryModel(nn.Module):
    """Token embedding, a mixing layer, then the memory: a model that reads ids."""

    def __init__(self, vocab: int, dim: int, **memory):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Conv1d(dim, dim, kernel_size=3, padding=2)
        self.memory = HashingMemoryRef(dim, **memory)

    def forward(self, ids):
        x = self.embed(ids).transpose(1, 2)
        x = self.mix(x)[..., : ids.shape[1]].transpose(1, 2)  # causal window of 3 tokens
        return self.memory(x)
