"""A plain NumPy transcription of Engram's hashing (DeepSeek, ``engram_demo_v1.py``).

Written from the facts of ``NgramHashMapping`` and ``CompressedTokenizer`` (not their code),
step by step and without any shortcut, so that :mod:`lshsim.hashing.engram` (one fused Numba
pass) can be checked against it bit for bit and timed against it:

* :class:`NgramHashMappingRef`: the per-layer multipliers (``default_rng(seed + 10007 layer)``,
  ``2 r + 1`` with ``r`` below ``half_bound``), the prime search (``find_next_prime`` with one
  set of used primes over all orders and layers), and ``_get_ngram_hashes``: left-padded shifts,
  the int64 multiply-XOR mix of every order and ``mix % prime`` per head, stacked as
  ``int64[B, T, (N - 1) H]``. It takes the compressed vocabulary size directly (no tokenizer);
  a lookup table, when given, is applied first as ``CompressedTokenizer._compress`` does
  (non-negative ids only) and maps the pad id.
* :func:`build_lookup_table`: ``CompressedTokenizer._build_lookup_table`` on a list of decoded
  token strings (``decode([id])``), with a pluggable normaliser: by default the Hugging Face
  ``tokenizers`` normaliser sequence Engram builds, where that package is installed.
* :func:`engram_module_forward`: ``Engram.forward`` (multi-head embedding, key and value
  projections, the gate with its signed square root, ``ShortConv``) in torch with
  ``hc_mult = 1``, on given weights, the parity reference of the model's ``engram`` lookup.
* :func:`handmade_sentencepiece_model`: a small SentencePiece model built in memory (controls,
  accents, case, NFKC forms, byte pieces) for the compressing map's tests.

Primality here is trial division (independent of :func:`lshsim.laws.ngram.is_prime`), which
is fine for the table sizes of the tests and the benchmark (below about ``10^10``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "NgramHashMappingRef",
    "build_lookup_table",
    "engram_family",
    "engram_module_forward",
    "find_next_prime",
    "handmade_sentencepiece_model",
    "hf_normalizer",
    "is_prime_trial",
]

SENTINEL = "\ue000"


def is_prime_trial(k: int) -> bool:
    """Primality by trial division over ``6 i +- 1``."""
    if k < 2:
        return False
    if k < 4:
        return True
    if k % 2 == 0 or k % 3 == 0:
        return False
    i = 5
    while i * i <= k:
        if k % i == 0 or k % (i + 2) == 0:
            return False
        i += 6
    return True


def find_next_prime(start: int, seen_primes: set[int]) -> int:
    """The first prime ``> start`` that is not in ``seen_primes``."""
    candidate = start + 1
    while True:
        if is_prime_trial(candidate) and candidate not in seen_primes:
            return candidate
        candidate += 1


class NgramHashMappingRef:
    """Engram's ``NgramHashMapping`` on compressed ids, in NumPy.

    Args:
        engram_vocab_size: table size per order ``2 .. max_ngram_size``.
        max_ngram_size: ``N``.
        n_head_per_ngram: ``H``.
        layer_ids: the layers, in order (the prime search runs through them in this order).
        pad_id: the pad id (an original id when ``lookup_table`` is given, mapped through it).
        seed: the base seed.
        vocab_size: the compressed vocabulary size (``len(CompressedTokenizer)``).
        lookup_table: optional ``lookup[old_id] = new_id``; ids are compressed first.
    """

    def __init__(
        self,
        engram_vocab_size: Sequence[int],
        max_ngram_size: int,
        n_head_per_ngram: int,
        layer_ids: Sequence[int],
        pad_id: int,
        seed: int,
        vocab_size: int,
        lookup_table: np.ndarray | None = None,
    ):
        self.vocab_size_per_ngram = list(engram_vocab_size)
        self.max_ngram_size = max_ngram_size
        self.n_head_per_ngram = n_head_per_ngram
        self.layer_ids = list(layer_ids)
        self.lookup_table = lookup_table
        self.pad_id = int(lookup_table[pad_id]) if lookup_table is not None else pad_id
        self.tokenizer_vocab_size = vocab_size
        max_long = np.iinfo(np.int64).max
        half_bound = max(1, int(max_long // vocab_size) // 2)
        self.layer_multipliers = {}
        for layer_id in self.layer_ids:
            g = np.random.default_rng(int(seed + 10007 * int(layer_id)))
            r = g.integers(low=0, high=half_bound, size=(max_ngram_size,), dtype=np.int64)
            self.layer_multipliers[layer_id] = r * 2 + 1
        self.vocab_size_across_layers = self._primes()

    def _primes(self) -> dict[int, list[list[int]]]:
        seen: set[int] = set()
        out = {}
        for layer_id in self.layer_ids:
            per_order = []
            for ngram in range(2, self.max_ngram_size + 1):
                start = self.vocab_size_per_ngram[ngram - 2] - 1
                sizes = []
                for _ in range(self.n_head_per_ngram):
                    p = find_next_prime(start, seen)
                    seen.add(p)
                    sizes.append(p)
                    start = p
                per_order.append(sizes)
            out[layer_id] = per_order
        return out

    def compress(self, input_ids) -> np.ndarray:
        """``lookup[id]`` for ids ``>= 0``; negative ids unchanged (no table: a copy)."""
        arr = np.asarray(input_ids, dtype=np.int64)
        out = arr.copy()
        if self.lookup_table is not None:
            mask = arr >= 0
            out[mask] = self.lookup_table[arr[mask]]
        return out

    def get_ngram_hashes(self, input_ids, layer_id: int) -> np.ndarray:
        """``_get_ngram_hashes`` on already compressed ids ``[B, T]``: int64[B, T, (N-1) H]."""
        x = np.asarray(input_ids, dtype=np.int64)
        _, length = x.shape
        mult = self.layer_multipliers[layer_id]

        def shift(k: int) -> np.ndarray:
            if k == 0:
                return x
            padded = np.pad(x, ((0, 0), (k, 0)), mode="constant", constant_values=self.pad_id)
            return padded[:, :length]

        shifts = [shift(k) for k in range(self.max_ngram_size)]
        heads = []
        for n in range(2, self.max_ngram_size + 1):
            mix = shifts[0] * mult[0]
            for k in range(1, n):
                mix = np.bitwise_xor(mix, shifts[k] * mult[k])
            for mod in self.vocab_size_across_layers[layer_id][n - 2]:
                heads.append((mix % int(mod)).astype(np.int64, copy=False))
        return np.stack(heads, axis=2)

    def hash(self, input_ids) -> dict[int, np.ndarray]:
        """Compress, then hash for every layer: ``{layer: int64[B, T, (N-1) H]}``."""
        ids = self.compress(input_ids)
        return {layer: self.get_ngram_hashes(ids, layer) for layer in self.layer_ids}


def engram_family(h, tokens: np.ndarray) -> np.ndarray:
    """The ``engram`` family's hash of ``h`` with Python ints: full windows of order ``N``.

    Head ``j`` of the window ending at ``t``: ``(XOR_k (x_{t-k} m_k mod 2^64, as int64)) mod
    p_j``, Python's floor mod; ``[..., l - N + 1, H]`` (``[..., l - N + 1]`` for one head).
    """
    mult = [int(m) for m in h.multipliers]
    order, primes = len(mult), [int(p) for p in h.primes]
    x = np.asarray(tokens, dtype=np.int64)
    lead, length = x.shape[:-1], x.shape[-1]
    rows = x.reshape(-1, length)
    windows = max(length - order + 1, 0)
    out = np.zeros((rows.shape[0], windows, len(primes)), dtype=np.int64)
    for i, row in enumerate(rows):
        for t in range(order - 1, length):
            v = 0
            for k in range(order):
                v ^= (int(row[t - k]) * mult[k]) % 2**64
            v = v - 2**64 if v >= 2**63 else v
            out[i, t - order + 1] = [v % p for p in primes]
    out = out.reshape(*lead, windows, len(primes))
    return out if len(primes) > 1 else out[..., 0]


def hf_normalizer() -> Callable[[str], str]:
    """Engram's normaliser built with Hugging Face ``tokenizers`` (ImportError if absent)."""
    from tokenizers import Regex, normalizers

    seq = normalizers.Sequence(
        [
            normalizers.NFKC(),
            normalizers.NFD(),
            normalizers.StripAccents(),
            normalizers.Lowercase(),
            normalizers.Replace(Regex(r"[ \t\r\n]+"), " "),
            normalizers.Replace(Regex(r"^ $"), SENTINEL),
            normalizers.Strip(),
            normalizers.Replace(SENTINEL, " "),
        ]
    )
    return seq.normalize_str


def build_lookup_table(
    texts: Sequence[str],
    raw_tokens: Sequence[str] | None = None,
    normalize: Callable[[str], str] | None = None,
) -> tuple[np.ndarray, int]:
    """``_build_lookup_table``: token ``i``'s key is its normalised text, merged by key.

    Args:
        texts: ``decode([i])`` of every token ``i``.
        raw_tokens: ``convert_ids_to_tokens(i)``, the key of a text holding U+FFFD
            (default: the text itself).
        normalize: the normaliser (default: :func:`hf_normalizer`).

    Returns:
        ``(lookup int64[V], number of new tokens)``; new ids in order of first appearance.
    """
    normalize = normalize or hf_normalizer()
    raw = list(texts) if raw_tokens is None else list(raw_tokens)
    key2new: dict[str, int] = {}
    old2new = {}
    for tid, text in enumerate(texts):
        if "\ufffd" in text:
            key = raw[tid]
        else:
            norm = normalize(text)
            key = norm if norm else text
        nid = key2new.get(key)
        if nid is None:
            nid = len(key2new)
            key2new[key] = nid
        old2new[tid] = nid
    lookup = np.empty(len(texts), dtype=np.int64)
    for tid in range(len(texts)):
        lookup[tid] = old2new[tid]
    return lookup, len(key2new)


def engram_module_forward(
    hidden: np.ndarray,
    hash_ids: np.ndarray,
    primes: Sequence[int],
    weights: dict[str, np.ndarray],
    *,
    kernel_size: int,
    dilation: int,
) -> np.ndarray:
    """``Engram.forward`` with ``hc_mult = 1`` in torch (float64), on the given weights.

    Transcribed from ``engram_demo_v1.py``: ``MultiHeadEmbedding`` (offsets = cumulative
    primes), ``key_projs[0]``/``value_proj`` (``nn.Linear``, with bias), ``norm1``/``norm2``
    (``nn.RMSNorm(d)``: eps = float32's machine epsilon, the value torch takes for a float32
    module), ``gate = (k . q) / sqrt(d)``, ``gate = |gate|.clamp_min(1e-6).sqrt() sign(gate)``,
    ``sigmoid``, ``value = gate * value_proj(e)``, ``ShortConv`` (``nn.RMSNorm(d, 1e-5)``,
    depthwise ``nn.Conv1d`` without bias, ``padding = (K - 1) dilation`` cut to ``T``, SiLU),
    ``output = value + short_conv(value)``.

    Args:
        hidden: ``[B, T, d]`` hidden states (the query).
        hash_ids: int ``[B, T, heads]`` hashes (``_get_ngram_hashes``).
        primes: the heads' table sizes, in the hash's order.
        weights: ``table [sum p, e]``, ``key_kernel``/``value_kernel [heads e, d]`` (x @ W),
            ``key_bias``/``value_bias [d]``, ``key_norm_scale``/``query_norm_scale``/
            ``conv_norm_scale [d]``, ``conv_kernel [K, d]`` (tap ``k`` of channel ``c``).
        kernel_size: ``K``.
        dilation: Engram's ``max_ngram_size``.

    Returns:
        ``[B, T, d]`` float64.
    """
    import torch
    from torch import nn

    dt = torch.float64
    w = {k: torch.as_tensor(np.asarray(v), dtype=dt) for k, v in weights.items()}
    x = torch.as_tensor(np.asarray(hidden), dtype=dt)
    _, length, d = x.shape
    eps = float(np.finfo(np.float32).eps)
    offsets = [0]
    for p in list(primes)[:-1]:
        offsets.append(offsets[-1] + int(p))
    emb = nn.Embedding(int(sum(primes)), w["table"].shape[1]).to(dt)
    key_proj = nn.Linear(w["key_kernel"].shape[0], d).to(dt)
    value_proj = nn.Linear(w["value_kernel"].shape[0], d).to(dt)
    norm1, norm2 = nn.RMSNorm(d, eps=eps).to(dt), nn.RMSNorm(d, eps=eps).to(dt)
    conv_norm = nn.RMSNorm(d, eps=1e-5).to(dt)
    conv = nn.Conv1d(
        d, d, kernel_size, groups=d, bias=False, padding=(kernel_size - 1) * dilation,
        dilation=dilation,
    ).to(dt)  # fmt: skip
    with torch.no_grad():
        emb.weight.copy_(w["table"])
        key_proj.weight.copy_(w["key_kernel"].T)
        key_proj.bias.copy_(w["key_bias"])
        value_proj.weight.copy_(w["value_kernel"].T)
        value_proj.bias.copy_(w["value_bias"])
        norm1.weight.copy_(w["key_norm_scale"])
        norm2.weight.copy_(w["query_norm_scale"])
        conv_norm.weight.copy_(w["conv_norm_scale"])
        conv.weight.copy_(w["conv_kernel"].T[:, None, :])
        ids = torch.as_tensor(np.asarray(hash_ids, dtype=np.int64)) + torch.tensor(offsets)
        embeddings = emb(ids).flatten(start_dim=-2)
        key = key_proj(embeddings)
        normed_key = norm1(key)
        normed_query = norm2(x)
        gate = (normed_key * normed_query).sum(dim=-1) / math.sqrt(d)
        gate = gate.abs().clamp_min(1e-6).sqrt() * gate.sign()
        gate = gate.sigmoid().unsqueeze(-1)
        value = gate * value_proj(embeddings)
        y = conv(conv_norm(value).transpose(1, 2))[..., :length]
        short = nn.SiLU()(y).transpose(1, 2)
        return (value + short).numpy()


def handmade_sentencepiece_model() -> bytes:
    """A 270-piece SentencePiece model (T5 layout) with pieces the compressing map merges.

    Controls ``<pad> </s> <unk>``, accents and case (``▁Café``, ``▁cafe``, ``CAFE``), NFKC forms
    (``ﬁ``, ``Ⅻ``), ``▁the``/``The``, and the 256 byte pieces (byte fallback).
    """
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    pieces = [
        ("<pad>", 3), ("</s>", 3), ("<unk>", 2), ("▁", 1), ("▁Café", 1), ("▁cafe", 1),
        ("CAFE", 1), ("é", 1), ("e", 1), ("ﬁ", 1), ("fi", 1), ("Ⅻ", 1), ("▁the", 1), ("The", 1),
    ]  # fmt: skip
    pieces += [(f"<0x{b:02X}>", 6) for b in range(256)]
    for text, kind in pieces:
        p = m.pieces.add()
        p.piece, p.score, p.type = text, 0.0, kind
    m.trainer_spec.model_type = 1
    m.trainer_spec.byte_fallback = True
    m.trainer_spec.pad_id, m.trainer_spec.eos_id, m.trainer_spec.unk_id = 0, 1, 2
    m.trainer_spec.bos_id = -1
    return m.SerializeToString()
