"""Engram's n-gram hash as deployed (DeepSeek, ``engram_demo_v1.py``), in one fused Numba pass.

Engram (``NgramHashMapping``) hashes compressed token ids. For every layer it draws one set of
``N`` odd multipliers ``m_k = 2 r_k + 1``, ``r = default_rng(seed + 10007 layer).integers(0,
half_bound, N)`` with ``half_bound = max(1, (2^63 - 1) // V // 2)`` (``V`` the compressed
vocabulary); for every order ``n = 2 .. N`` the mix of the window ending at ``t`` is::

    mix_n(t) = (x_t m_0) XOR (x_{t-1} m_1) XOR ... XOR (x_{t-n+1} m_{n-1})   # int64, wrapping

(``x_{t-k}`` is the pad id where ``t - k < 0``), and head ``j`` of order ``n`` is
``mix_n(t) mod p_{n,j}`` (NumPy's floor mod: in ``[0, p)`` even for a negative mix). The
primes come from one search shared by all orders and layers (:func:`engram_primes`). The
output of a layer is ``int64[..., T, (N - 1) H]``, order-major.

:class:`EngramHash` reproduces this bit for bit (checked against the NumPy transcription
:mod:`lshsim.testing.engram_reference`). :func:`engram_kernel` walks the ids once: at each
position it extends the mix one token at a time (order ``n``'s mix is order ``n - 1``'s XOR
one more product) and reduces it by every head's prime with :func:`floor_mod_u64`, an exact
Barrett reduction: with ``M = floor((2^64 - 1) / p)``, ``q = floor(u M / 2^64)`` (one 64 x 64
-> 128-bit multiply) is ``floor(u / p)`` or one less, so ``u - q p`` needs at most one
subtraction of ``p``; a negative mix ``v = u - 2^64`` then subtracts ``2^64 mod p``. No
division is executed.

:class:`Engram` is the same hash as a lookup family (``n`` = table size, ``ngram`` = order,
``heads``, ``compressed_vocab``): one order, full windows, the ``H`` smallest primes ``>= n``
(Engram's search for one order), multipliers drawn from the family's seed with Engram's
distribution. Its exact law on the sentence model is :mod:`lshsim.laws.engram`.

:func:`compress_table`, :func:`sentencepiece_texts` and :func:`normalize_text` (Engram's
compressing map) live in :mod:`lshsim.hashing.engram_vocab` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from lshsim._validate import as_token_ids, check_buckets, check_int
from lshsim.hashing.base import HashFamily, OverlapLaw, Param
from lshsim.hashing.engram_vocab import compress_table, normalize_text, sentencepiece_texts
from lshsim.laws.engram import (
    ENGRAM_PRIME_STEP,
    INT64_MAX,
    MAX_HEADS,
    MAX_NGRAM,
    MAX_TABLE,
    engram_half_bound,
    engram_parts,
    engram_primes,
    engram_probability,
    engram_summary,
)

__all__ = [
    "DEFAULT_TABLE",
    "DEFAULT_VOCAB",
    "Engram",
    "EngramHash",
    "barrett_constants",
    "compress_table",
    "engram_kernel",
    "floor_mod",
    "floor_mod_u64",
    "normalize_text",
    "sentencepiece_texts",
]

#: DeepSeek-V3's compressed vocabulary in the demo's setting, and its table size per order.
DEFAULT_VOCAB = 129280
DEFAULT_TABLE = 5 * 129280


# --------------------------------------------------------------------------- fast floor mod


@intrinsic
def umulhi(typingctx, a, b):  # pragma: no cover - compiled
    """High 64 bits of the 128-bit product of two uint64 (one ``mul`` on x86-64)."""
    if a != types.uint64 or b != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        prod = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(prod, ir.Constant(wide, 64)), ir.IntType(64))

    return types.uint64(types.uint64, types.uint64), codegen


@numba.njit(cache=True, inline="always")
def floor_mod_u64(u, p, magic, neg):  # pragma: no cover - jit
    """``int64(u) mod p`` (floor mod, in ``[0, p)``) for the bits ``u`` of an int64.

    Args:
        u: uint64, the two's-complement bits of the int64 ``v``.
        p: uint64 modulus in ``[1, 2^63)``.
        magic: uint64 ``floor((2^64 - 1) / p)``.
        neg: int64 ``2^64 mod p`` (subtracted when ``v < 0``: ``v = u - 2^64``).
    """
    r = u - umulhi(u, magic) * p  # in [0, 2p): the Barrett quotient is low by at most one
    if r >= p:
        r -= p
    out = np.int64(r)
    if u >> np.uint64(63):
        out -= neg
        if out < 0:
            out += np.int64(p)
    return out


def barrett_constants(moduli) -> np.ndarray:
    """One record per modulus: uint64 ``[p, floor((2^64 - 1) / p), 2^64 mod p]``, shape ``[H, 3]``.

    A record per head (rather than three arrays) also keeps LLVM from vectorising the heads
    loop of :func:`engram_kernel`, whose 128-bit products would then be split lane by lane
    (measured 1.6x slower).
    """
    mods = [int(p) for p in np.asarray(moduli).reshape(-1)]
    if any(not 1 <= p <= INT64_MAX for p in mods):
        raise ValueError("moduli must be integers in [1, 2^63 - 1]")
    rec = [(p, (2**64 - 1) // p, 2**64 % p) for p in mods]
    return np.array(rec, dtype=np.uint64).reshape(len(mods), 3)


@numba.njit(cache=True, nogil=True)
def _floor_mod_kernel(values, c, out):  # pragma: no cover - jit
    for i in range(values.shape[0]):
        out[i] = floor_mod_u64(np.uint64(values[i]), c[0], c[1], np.int64(c[2]))


def floor_mod(values, modulus: int) -> np.ndarray:
    """``values % modulus`` for int64 values by :func:`floor_mod_u64` (tests and reference).

    Args:
        values: int64 array, any shape.
        modulus: in ``[1, 2^63)``.

    Returns:
        int64 array like ``values``, equal to NumPy's ``values % modulus``.
    """
    x = np.ascontiguousarray(values, dtype=np.int64)
    c = barrett_constants([check_int("modulus", modulus, 1, INT64_MAX)])
    out = np.empty(x.size, dtype=np.int64)
    _floor_mod_kernel(x.reshape(-1), c[0], out)
    return out.reshape(x.shape)


# --------------------------------------------------------------------------- the kernel


@numba.njit(cache=True, nogil=True)
def engram_kernel(ids, mult, first, start, pad, consts, out):  # pragma: no cover - jit
    """Every head of orders ``first .. N`` at positions ``start .. T - 1``, in one pass.

    ``out[i, t - start, (n - first) H + j] = mix_n(t) mod primes[(n - first) H + j]`` with
    ``mix_n(t) = XOR_{k < n} ids[i, t - k] mult[r, k]`` (wrapping; ``pad`` where ``t < k``),
    ``r = i`` when ``mult`` has one row per id row, else ``0``.

    Args:
        ids: int64[B, T].
        mult: uint64[R, N], ``R`` in ``{1, B}``.
        first: the lowest order hashed (2 for Engram's layer output).
        start: the first position (0: every position, left-padded; ``N - 1``: full windows).
        pad: uint64, the (compressed) pad id's bits.
        consts: uint64[(N - first + 1) H, 3], per head, order-major (:func:`barrett_constants`).
        out: int64[B, T - start, (N - first + 1) H].
    """
    rows, length = ids.shape
    mrows, order = mult.shape
    heads = consts.shape[0] // (order - first + 1)
    for i in range(rows):
        r = i if mrows > 1 else 0
        for t in range(start, length):
            mix = np.uint64(0)
            for k in range(order):
                tok = np.uint64(ids[i, t - k]) if t >= k else pad
                mix ^= tok * mult[r, k]
                if k + 1 >= first:
                    base = (k + 1 - first) * heads
                    for j in range(heads):
                        c = consts[base + j]
                        out[i, t - start, base + j] = floor_mod_u64(mix, c[0], c[1], np.int64(c[2]))


def _run_kernel(ids, mult, first, start, pad, constants, heads_total) -> np.ndarray:
    """Run :func:`engram_kernel` on ids ``[..., T]``; return int64 ``[..., T - start, heads]``."""
    lead, length = ids.shape[:-1], ids.shape[-1]
    flat = ids.reshape(int(np.prod(lead, dtype=np.int64)), length)
    positions = max(length - start, 0)
    out = np.empty((flat.shape[0], positions, heads_total), dtype=np.int64)
    if positions and flat.shape[0]:
        engram_kernel(flat, mult, first, start, np.uint64(pad % 2**64), constants, out)
    return out.reshape(*lead, positions, heads_total)


def _as_ids(ids, name: str = "ids") -> np.ndarray:
    """Integer ids ``[..., T]`` (int64; any value: Engram does not range-check)."""
    x = np.asarray(ids)
    if x.dtype.kind not in "iu":
        raise ValueError(f"{name} must be an integer array of token ids, got dtype {x.dtype}")
    if x.ndim < 1:
        raise ValueError(f"{name} must have at least one axis (the sequence), got a scalar")
    if x.dtype.kind == "u" and x.size and x.max() > INT64_MAX:
        raise ValueError(f"{name} must fit int64, got {int(x.max())}")
    return np.ascontiguousarray(x, dtype=np.int64)


# --------------------------------------------------------------------------- Engram as deployed


def _flatten(values: Iterable[Iterable[int]]) -> list[int]:
    return [int(v) for row in values for v in row]


def _check_layers(layer_ids) -> tuple[int, ...]:
    if isinstance(layer_ids, int | np.integer):
        layer_ids = (layer_ids,)
    try:
        layers = tuple(check_int("layer_ids", v, 0) for v in layer_ids)
    except TypeError:
        raise ValueError(
            f"layer_ids must be a sequence of integers >= 0, got {layer_ids!r}"
        ) from None
    if not layers or len(set(layers)) != len(layers):
        raise ValueError(f"layer_ids must be distinct integers >= 0 (at least one), got {layers}")
    return layers


class EngramHash:
    """Engram's ``NgramHashMapping`` on compressed ids: bit for bit, one Numba pass per layer.

    Args:
        vocab_size: the compressed vocabulary ``V`` (``len(CompressedTokenizer)``); with
            ``lookup`` it defaults to ``lookup.max() + 1`` (what :func:`compress_table` gives).
        lookup: optional int64 ``lookup[old_id] = new_id``: :meth:`hash` then compresses first
            (ids ``>= 0``; negative ids pass unchanged, as in Engram) and the pad id is mapped.
        table_sizes: Engram's ``engram_vocab_size``: one int for every order, or one per order
            ``2 .. max_ngram_size``, each in ``[2, 2^40]``.
        max_ngram_size: ``N`` in ``[2, 64]``.
        heads: ``H`` in ``[1, 64]`` per order.
        layer_ids: the layers, in Engram's order (it fixes the prime search).
        pad_id: the pad id (an original id when ``lookup`` is given).
        seed: base seed ``>= 0``; layer ``i`` uses ``seed + 10007 i``.

    Attributes:
        pad: the compressed pad id used for the left padding.
        half_bound: ``max(1, (2^63 - 1) // V // 2)``.
    """

    def __init__(
        self,
        vocab_size: int | None = None,
        *,
        lookup=None,
        table_sizes: int | Sequence[int] = DEFAULT_TABLE,
        max_ngram_size: int = 3,
        heads: int = 8,
        layer_ids: Sequence[int] = (1, 15),
        pad_id: int = 2,
        seed: int = 0,
    ):
        self.max_ngram_size = check_int("max_ngram_size", max_ngram_size, 2, MAX_NGRAM)
        self.heads = check_int("heads (H)", heads, 1, MAX_HEADS)
        self.layer_ids = _check_layers(layer_ids)
        self.seed = check_int("seed", seed, 0, 2**62)
        orders = self.max_ngram_size - 1
        if isinstance(table_sizes, int | np.integer):
            table_sizes = [table_sizes] * orders
        sizes = tuple(check_int("table_sizes", v, 2, MAX_TABLE) for v in table_sizes)
        if len(sizes) != orders:
            raise ValueError(
                f"table_sizes must give one size per order 2..{self.max_ngram_size} "
                f"({orders}), got {len(sizes)}"
            )
        self.table_sizes = sizes
        self.lookup = None
        if lookup is not None:
            lk = np.asarray(lookup)
            if lk.dtype.kind not in "iu" or lk.ndim != 1 or lk.size == 0:
                raise ValueError("lookup must be a non-empty 1-D integer array (old id -> new id)")
            if lk.min() < 0:
                raise ValueError("lookup must map to ids >= 0")
            self.lookup = np.ascontiguousarray(lk, dtype=np.int64)
            if vocab_size is None:
                vocab_size = int(self.lookup.max()) + 1
        if vocab_size is None:
            raise ValueError("vocab_size (compressed vocabulary) is required without a lookup")
        self.vocab_size = check_int("vocab_size (compressed vocabulary)", vocab_size, 1, INT64_MAX)
        if self.lookup is not None and self.lookup.max() >= self.vocab_size:
            raise ValueError(f"lookup ids must be < vocab_size = {self.vocab_size}")
        pad_hi = self.lookup.size - 1 if self.lookup is not None else INT64_MAX
        pad_id = check_int("pad_id", pad_id, 0, pad_hi)
        self.pad = int(self.lookup[pad_id]) if self.lookup is not None else pad_id
        self.half_bound = engram_half_bound(self.vocab_size)
        self._mult = {}
        for layer in self.layer_ids:
            rng = np.random.default_rng(self.seed + ENGRAM_PRIME_STEP * layer)
            r = rng.integers(0, self.half_bound, size=self.max_ngram_size, dtype=np.int64)
            self._mult[layer] = r * 2 + 1
        self._primes = engram_primes(self.table_sizes, self.heads, self.layer_ids)
        self._constants = {
            layer: barrett_constants(_flatten(self._primes[layer])) for layer in self.layer_ids
        }

    def _layer(self, layer) -> int:
        if isinstance(layer, bool) or not isinstance(layer, int | np.integer):
            raise ValueError(f"layer must be one of layer_ids {self.layer_ids}, got {layer!r}")
        if int(layer) not in self._mult:
            raise ValueError(f"layer must be one of layer_ids {self.layer_ids}, got {layer}")
        return int(layer)

    def multipliers(self, layer: int) -> np.ndarray:
        """The layer's ``N`` odd multipliers, int64 (a copy)."""
        return self._mult[self._layer(layer)].copy()

    def primes(self, layer: int) -> dict[int, list[int]]:
        """The layer's head primes per order: ``{2: [H primes], 3: [...], ...}``."""
        per = self._primes[self._layer(layer)]
        return {n: list(per[n - 2]) for n in range(2, self.max_ngram_size + 1)}

    def compress(self, ids) -> np.ndarray:
        """``lookup[id]`` for ids ``>= 0`` (negatives unchanged); without a lookup, the ids."""
        x = _as_ids(ids)
        if self.lookup is None:
            return x
        if x.size and x.max() >= self.lookup.size:
            raise ValueError(f"ids must be < len(lookup) = {self.lookup.size}, got {int(x.max())}")
        return np.where(x >= 0, self.lookup[np.maximum(x, 0)], x)

    def hash(self, ids, layer: int) -> np.ndarray:
        """Engram's hashes of one layer: int64 ``[..., T, (N - 1) H]``, order-major.

        Args:
            ids: integer ids ``[..., T]`` (original ids when a lookup was given, else
                compressed ids; any int64 value is hashed as Engram would, wrapping).
            layer: one of ``layer_ids``.
        """
        layer = self._layer(layer)
        x = self.compress(ids)
        mult = self._mult[layer].astype(np.uint64)[None]
        total = (self.max_ngram_size - 1) * self.heads
        return _run_kernel(x, mult, 2, 0, self.pad, self._constants[layer], total)

    def pair_hits(self, tokens1, tokens2, rng, layer: int) -> np.ndarray:
        """Which heads of aligned windows agree, a fresh multiplier set per pair (Monte Carlo).

        The law's trial (:mod:`lshsim.laws.engram`, on compressed ids): the layer's primes and
        padding, but pair ``i``'s ``N`` multipliers drawn anew from ``rng`` with Engram's
        distribution (``2 r + 1``, ``r`` below ``half_bound``).

        Args:
            tokens1: int ids ``[p, T]`` (original ids when a lookup was given).
            tokens2: ``[p, T]``, aligned with ``tokens1``.
            rng: a ``numpy.random.Generator`` for the ``p`` multiplier sets.
            layer: one of ``layer_ids`` (its primes).

        Returns:
            bool ``[p, T, (N - 1) H]``: head agreement, order-major.
        """
        layer = self._layer(layer)
        x1, x2 = self.compress(tokens1), self.compress(tokens2)
        if x1.ndim != 2 or x1.shape != x2.shape:
            raise ValueError(
                f"tokens1 and tokens2 must have one shape [p, T], got {x1.shape}, {x2.shape}"
            )
        mult = Engram.draw_multipliers(rng, (x1.shape[0], self.max_ngram_size), self.vocab_size)
        mult = np.ascontiguousarray(mult.astype(np.uint64))
        total = (self.max_ngram_size - 1) * self.heads
        consts = self._constants[layer]
        a = _run_kernel(x1, mult, 2, 0, self.pad, consts, total)
        b = _run_kernel(x2, mult, 2, 0, self.pad, consts, total)
        return a == b

    def hash_layers(self, ids) -> dict[int, np.ndarray]:
        """``{layer: hash(ids, layer)}`` for every layer (Engram's ``hash``)."""
        return {layer: self.hash(ids, layer) for layer in self.layer_ids}

    def __repr__(self) -> str:
        return (
            f"EngramHash(vocab_size={self.vocab_size}, table_sizes={list(self.table_sizes)}, "
            f"max_ngram_size={self.max_ngram_size}, heads={self.heads}, "
            f"layer_ids={list(self.layer_ids)}, pad={self.pad}, seed={self.seed})"
        )


# --------------------------------------------------------------------------- the family


class Engram(HashFamily):
    """Engram's hash as a lookup family: one order ``N``, ``H`` heads sharing one int64 mix.

    Params:
        ngram: the order ``N`` in ``[2, 64]`` (default 2; Engram's orders; at ``N = 1`` the
            mix ``x m`` is linear and the law's uniform model fails).
        heads: ``H`` in ``[1, 64]`` (default 1); moduli: the ``H`` smallest primes ``>= n``.
        compressed_vocab: ``V`` (default 129280): the multipliers are ``2 r + 1``, ``r``
            uniform below ``max(1, (2^63 - 1) // V // 2)``.

    ``hash(tokens)`` takes int ids ``[..., l]`` in ``[0, 2^61 - 1)`` and returns int64 buckets
    ``[..., l - N + 1]`` for one head, ``[..., l - N + 1, H]`` for several: the full windows.

    Attributes:
        multipliers: int64[N], odd; ``multipliers[k]`` multiplies token ``t - k``.
        primes: int64[H].
    """

    name = "engram"
    help = (
        "Engram as deployed: hashed N-gram, one int64 multiply-XOR mix, H heads = mix mod "
        "the H smallest primes >= n; one trial per window"
    )
    parameters = (
        Param(
            "ngram",
            int,
            "ngram/engram: the order N in [1, l] (engram: [2, l]; default 2): position t "
            "hashes tokens t-N+1..t",
            metavar="N",
            draw=(2, 4),
        ),
        Param(
            "heads",
            int,
            "ngram/engram: H in [1, 64] hash heads (default 1); engram's heads share one mix",
            metavar="H",
            draw=(1, 8),
        ),
        Param(
            "compressed_vocab",
            int,
            "engram: compressed vocabulary V (default 129280), which bounds the multipliers",
            flag="compressed-vocab",
            metavar="V",
            draw=(1, 2**20),
        ),
    )
    max_log2 = 40
    reference = "lshsim.testing.engram_reference:engram_family"
    overlap_law_is_exact = True
    input_kind = "sequences"
    similarity = "overlap"

    @classmethod
    def check_params(cls, n, ngram=2, heads=1, compressed_vocab=DEFAULT_VOCAB, **params):
        """Validate ``n`` in ``[2, 2^40]``, ``ngram`` in ``[2, 64]``, ``heads`` in ``[1, 64]``."""
        if params:
            raise ValueError(f"unknown parameter(s) for engram: {', '.join(params)}")
        n = check_buckets(n)
        if n > MAX_TABLE:
            raise ValueError(f"n (buckets) must be <= 2^40 for family 'engram', got {n}")
        return {
            "n": n,
            "ngram": check_int("ngram (N)", ngram, 2, MAX_NGRAM),
            "heads": check_int("heads (H)", heads, 1, MAX_HEADS),
            "compressed_vocab": check_int("compressed_vocab (V)", compressed_vocab, 1, INT64_MAX),
        }

    @classmethod
    def moduli(cls, n: int, heads: int) -> list[int]:
        """Engram's primes for one order: the ``H`` smallest primes ``>= n``."""
        return engram_primes([n], heads, [0])[0][0]

    @classmethod
    def draw_multipliers(cls, rng, shape, compressed_vocab: int) -> np.ndarray:
        """Odd int64 multipliers ``2 r + 1``, ``r`` uniform below Engram's ``half_bound``."""
        half = engram_half_bound(compressed_vocab)
        return rng.integers(0, half, size=shape, dtype=np.int64) * 2 + 1

    def _draw(self, rng):
        p = self.params
        self.multipliers = self.draw_multipliers(rng, p["ngram"], p["compressed_vocab"])
        self.primes = np.array(self.moduli(self.n, p["heads"]), dtype=np.int64)
        self._constants = barrett_constants(self.primes)

    def _hash(self, tokens):
        x = as_token_ids(tokens, "batch")
        if x.size and x.min() < 0:
            raise ValueError("batch token ids must be >= 0 for family 'engram'")
        order, heads = self.params["ngram"], self.params["heads"]
        mult = self.multipliers.astype(np.uint64)[None]
        out = _run_kernel(x, mult, order, order - 1, 0, self._constants, heads)
        return out if heads > 1 else out[..., 0]

    @classmethod
    def head_hits(cls, n, tokens1, tokens2, rng, *, pad_id: int | None = None, **params):
        """Heads in which aligned windows collide, one fresh function per pair.

        Args:
            n: buckets (the table size; primes from ``n``).
            tokens1: int64[p, l], the first sentence of each pair (ids >= 0).
            tokens2: int64[p, l], the second, aligned with the first.
            rng: draws the ``p`` multiplier sets.
            pad_id: None: the ``l - N + 1`` full windows; an id: every position, left-padded
                with it as Engram does.
            **params: ``ngram``, ``heads``, ``compressed_vocab``.

        Returns:
            int64[p, windows]: per pair and window, how many heads agree.
        """
        p = cls.check_params(n, **params)
        order, heads = p["ngram"], p["heads"]
        count = tokens1.shape[0]
        mult = cls.draw_multipliers(rng, (count, order), p["compressed_vocab"]).astype(np.uint64)
        consts = barrett_constants(cls.moduli(p["n"], heads))
        start, pad = (order - 1, 0) if pad_id is None else (0, check_int("pad_id", pad_id, 0))
        a = _run_kernel(as_token_ids(tokens1), mult, order, start, pad, consts, heads)
        b = _run_kernel(as_token_ids(tokens2), mult, order, start, pad, consts, heads)
        return (a == b).sum(axis=-1)

    @classmethod
    def pair_collisions(cls, n, tokens1, tokens2, rng, **params) -> np.ndarray:
        """int64[H + 1]: how many (pair, full window) trials collided in exactly ``k`` heads."""
        p = cls.check_params(n, **params)
        hits = cls.head_hits(n, tokens1, tokens2, rng, **params).reshape(-1)
        return np.bincount(hits, minlength=p["heads"] + 1).astype(np.int64)

    @classmethod
    def overlap_details(cls, n, overlap, length, **params):
        """The law's parts (:func:`lshsim.laws.engram.engram_summary`)."""
        p = cls.check_params(n, **params)
        primes = cls.moduli(p["n"], p["heads"])
        return engram_summary(p["ngram"], primes, overlap, length, vocab=p["compressed_vocab"])

    @classmethod
    def amplification_law(cls, n, similarities, *, length=32, vocab=32128, **params):
        """Atoms 1 (equal windows: probability ``q``) and ``rho`` (distinct windows).

        Under the uniform-mix model of :mod:`lshsim.laws.engram`, a function drawn with its
        own multipliers collides on distinct windows with probability ``rho`` (every head),
        independently of another draw; the compressed vocabulary (not ``vocab``) sets ``rho``.
        """
        p = cls.check_params(n, **params)
        primes = cls.moduli(p["n"], p["heads"])
        parts = [
            engram_parts(p["ngram"], primes, f, length, vocab=p["compressed_vocab"])
            for f in np.asarray(similarities, dtype=np.float64)
        ]
        q = np.array([a for a, _ in parts])
        rho = np.array([b for _, b in parts])
        return np.stack([np.ones_like(q), rho], axis=1), np.stack([q, 1.0 - q], axis=1)

    @classmethod
    def overlap_law(cls, n, overlap, *, dim, length, vocab, cosines, seed, **params):
        """``q + (1 - q) rho(prod p_j)`` under the uniform-mix model (:mod:`lshsim.laws.engram`)."""
        p = cls.check_params(n, **params)
        primes = cls.moduli(p["n"], p["heads"])
        return OverlapLaw(
            engram_probability(p["ngram"], primes, overlap, length, vocab=p["compressed_vocab"])
        )
