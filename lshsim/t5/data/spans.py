"""T5 span corruption in NumPy: noise masks, sentinels, packing and a deterministic dataset.

Re-implements the semantics of T5's ``random_spans_helper``, ``random_spans_noise_mask`` and
``noise_span_to_unique_sentinel`` (``t5/data/preprocessors.py``; Raffel et al. 2020, §3.1.4):
a chunk of ``raw_length`` tokens gets ``round(raw_length * noise_density)`` noise tokens in
``round(num_noise / mean_span)`` spans; the encoder sees the chunk with each span replaced by
one sentinel (``<extra_id_0>``, ``<extra_id_1>``, ... in order) and eos; the decoder predicts
each sentinel followed by its span's tokens, then eos.

As in T5's ``span_corruption`` task, documents are tokenized *without* eos, concatenated with
no separator and split into chunks of exactly ``raw_length`` tokens (the tail is dropped), so
a chunk may straddle a document boundary.

:class:`SpanCorruptionDataset` makes every batch a pure function of ``(seed, step,
batch_size)``: resuming a killed run at step ``s`` reproduces the uninterrupted run's batches.

Deviations from T5, none of which changes a case T5 handles: ``num_noise_spans`` is also
capped at the number of non-noise tokens (T5 fails there), :func:`span_corrupt` numbers the
noise spans even when a mask starts with noise (T5's two-sided sentinel trick then misaligns
inputs and targets), and random segmentations are drawn as sorted random cut points (the same
uniform distribution over compositions as T5's shuffled indicator).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from lshsim._validate import check_float, check_int

if TYPE_CHECKING:
    from lshsim.t5.data.tokenizer import Tokenizer

__all__ = [
    "SpanCorruptionDataset",
    "build_dataset",
    "compute_input_and_target_lengths",
    "corrupted_lengths",
    "pack_tokens",
    "random_spans_noise_mask",
    "span_corrupt",
]

_TRAIN_MASKS, _EVAL_MASKS, _PERMUTATION = 0, 1, 2  # independent streams of one seed
_ENCODE_BLOCK = 4096  # documents tokenized at a time by build_dataset


def _check_density(noise_density: float, mean_span: float) -> tuple[float, float]:
    d = check_float("noise_density", noise_density, 0.0, 1.0, lo_open=True, hi_open=True)
    m = check_float("mean_span", mean_span, 1.0, float("inf"), hi_open=True)
    return d, m


def _span_counts(length: int, noise_density: float, mean_span: float) -> tuple[int, int]:
    """``(num_noise, num_spans)`` of a mask over ``length >= 2`` tokens, as T5 computes them."""
    num_noise = min(max(round(length * noise_density), 1), length - 1)
    num_spans = max(round(num_noise / mean_span), 1)
    return num_noise, min(num_spans, length - num_noise)


def corrupted_lengths(
    raw_length: int, noise_density: float = 0.15, mean_span: float = 3.0
) -> tuple[int, int, int]:
    """Return ``(inputs_length, targets_length, num_spans)`` for a chunk of ``raw_length``.

    Both lengths include eos: inputs hold the non-noise tokens and one sentinel per span,
    targets the noise tokens and one sentinel per span. They are the same for every mask
    :func:`random_spans_noise_mask` draws.
    """
    raw_length = check_int("raw_length", raw_length, 2)
    d, m = _check_density(noise_density, mean_span)
    num_noise, num_spans = _span_counts(raw_length, d, m)
    return raw_length - num_noise + num_spans + 1, num_noise + num_spans + 1, num_spans


def compute_input_and_target_lengths(
    inputs_length: int, noise_density: float = 0.15, mean_span: float = 3.0
) -> tuple[int, int]:
    """Raw chunk length and targets length for span corruption, as T5's ``random_spans_helper``.

    The raw length is the largest whose corrupted inputs, eos included, fit ``inputs_length``;
    the targets length follows from it (eos included). For T5's defaults, ``inputs_length``
    512 gives ``(568, 114)``. As in T5, at ``noise_density == 0.5`` a targets length above
    the inputs length is trimmed by one raw token and one target slot (the targets length is
    then an upper bound).

    Args:
        inputs_length: the encoder length, at least big enough for one noise span.
        noise_density: fraction of noise tokens, in ``(0, 1)``.
        mean_span: mean noise-span length, ``>= 1``.

    Returns:
        ``(raw_tokens_length, targets_length)``.

    Raises:
        ValueError: if ``inputs_length`` is too short for at least one noise span (the message
            gives the minimum), or the density leaves fewer non-noise tokens than spans.
    """
    inputs_length = check_int("input_length", inputs_length, 1)
    d, m = _check_density(noise_density, mean_span)
    raw, targets = _t5_helper(inputs_length, d, m)
    if _degenerate(raw, d, m):
        need = _min_input_length(d, m)
        if need is None:
            raise ValueError(
                f"noise_density: {d:g} with mean_span {m:g} leaves fewer non-noise tokens than "
                "noise spans (need 1 - noise_density >= noise_density / mean_span)"
            )
        raise ValueError(
            f"input_length: {inputs_length} is too short for span corruption with noise_density "
            f"{d:g} and mean_span {m:g} (need >= {need})"
        )
    return raw, targets


def _min_input_length(d: float, m: float, max_tokens: int = 1 << 16) -> int | None:
    """Smallest ``inputs_length`` whose T5 raw length is not degenerate, if any is found."""
    if 1.0 - d < d / m:
        return None  # non-noise runs out before spans do, at every large length
    for tokens_length in range(2, max_tokens):
        if not _degenerate(tokens_length, d, m):
            need = _t5_lengths(tokens_length, d, m)[0]
            if not _degenerate(_t5_helper(need, d, m)[0], d, m):
                return need
    return None


def _t5_lengths(tokens_length: int, d: float, m: float) -> tuple[int, int]:
    num_noise = round(tokens_length * d)
    num_spans = round(num_noise / m)
    return tokens_length - num_noise + num_spans + 1, num_noise + num_spans + 1


def _t5_helper(inputs_length: int, d: float, m: float) -> tuple[int, int]:
    """T5's ``random_spans_helper`` with one extra token per span on each side."""
    tokens_length = inputs_length - 1
    while _t5_lengths(tokens_length + 1, d, m)[0] <= inputs_length:
        tokens_length += 1
    _, targets_length = _t5_lengths(tokens_length, d, m)
    if d == 0.5 and targets_length > inputs_length:  # T5's hack for round lengths
        tokens_length -= 1
        targets_length -= 1
    return tokens_length, targets_length


def _degenerate(tokens_length: int, d: float, m: float) -> bool:
    """True when T5's unclipped counts lack a noise span or a non-noise token per span."""
    num_noise = round(tokens_length * d)
    num_spans = round(num_noise / m)
    return num_spans < 1 or tokens_length - num_noise < num_spans


def _as_rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence) or (
        isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0
    ):
        return np.random.Generator(np.random.PCG64(rng))
    raise ValueError(
        f"rng must be a numpy Generator, SeedSequence or non-negative int seed, got {rng!r}"
    )


def _segment_lengths(num_items: int, num_segments: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random composition of ``num_items`` into ``num_segments`` positive parts."""
    cuts = np.sort(rng.choice(num_items - 1, size=num_segments - 1, replace=False)) + 1
    return np.diff(np.concatenate(([0], cuts, [num_items])))


def random_spans_noise_mask(
    length: int,
    noise_density: float,
    mean_span: float,
    rng: np.random.Generator | np.random.SeedSequence | int,
) -> np.ndarray:
    """Draw T5's span-corruption noise mask.

    ``num_noise = round(length * noise_density)`` clipped to ``[1, length - 1]``;
    ``num_spans = max(1, round(num_noise / mean_span))`` (also capped at the non-noise count).
    Noise and non-noise tokens are each split into ``num_spans`` non-empty runs at random and
    interleaved, starting with non-noise, so the mask ends with noise. A length of 1 is
    treated as 2 and truncated (all non-noise), as in T5.

    Args:
        length: mask length, ``>= 1``.
        noise_density: fraction of noise tokens, in ``(0, 1)``.
        mean_span: mean noise-span length, ``>= 1``.
        rng: a :class:`numpy.random.Generator`, :class:`numpy.random.SeedSequence` or int seed.

    Returns:
        ``bool[length]``, True at noise tokens.
    """
    orig = check_int("length", length, 1)
    d, m = _check_density(noise_density, mean_span)
    gen = _as_rng(rng)
    n = max(orig, 2)
    return _draw_mask(n, *_span_counts(n, d, m), gen)[:orig]


def _draw_mask(n: int, num_noise: int, num_spans: int, gen: np.random.Generator) -> np.ndarray:
    noise = _segment_lengths(num_noise, num_spans, gen)
    clean = _segment_lengths(n - num_noise, num_spans, gen)
    runs = np.stack([clean, noise], axis=1).reshape(-1)
    return np.repeat(np.tile(np.array([False, True]), num_spans), runs)


def span_corrupt(
    tokens: np.ndarray, mask: np.ndarray, sentinel_ids: Sequence[int], eos_id: int | None = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Replace each noise span by a sentinel; the targets spell the spans out.

    With spans numbered 0, 1, ... left to right: ``inputs`` is ``tokens`` with span ``i``
    replaced by ``sentinel_ids[i]``; ``targets`` is, for each span, ``sentinel_ids[i]``
    followed by the span's tokens. Both end with ``eos_id`` unless it is None, as T5 appends eos
    to both (the lengths of :func:`corrupted_lengths` include it).

    Args:
        tokens: ``int[length]``.
        mask: ``bool[length]``, True at noise tokens.
        sentinel_ids: ids of ``<extra_id_0>``, ``<extra_id_1>``, ... (at least one per span).
        eos_id: appended to both outputs; None appends nothing.

    Returns:
        ``(inputs, targets)``, int32 arrays.

    Raises:
        ValueError: on mismatched shapes or more spans than sentinels.
    """
    tokens = np.asarray(tokens)
    mask = np.asarray(mask)
    if tokens.ndim != 1 or mask.shape != tokens.shape:
        raise ValueError(f"mask: shape {mask.shape} does not match tokens {tokens.shape} (1-D)")
    if mask.dtype != np.bool_:
        raise ValueError(f"mask: dtype must be bool, got {mask.dtype}")
    sentinels = np.asarray(sentinel_ids, dtype=np.int32)
    num_spans = int((mask & ~np.concatenate(([False], mask[:-1]))).sum())
    if num_spans > sentinels.size:
        raise ValueError(
            f"sentinel_ids: {num_spans} noise spans but only {sentinels.size} sentinels"
        )
    inputs, targets = _corrupt(tokens, mask, sentinels)
    if eos_id is not None:
        inputs = np.append(inputs, np.int32(eos_id))
        targets = np.append(targets, np.int32(eos_id))
    return inputs, targets


def _corrupt(
    tokens: np.ndarray, mask: np.ndarray, sentinels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`span_corrupt` without checks or eos; ``sentinels`` int32, one per span."""
    prev = np.concatenate(([False], mask[:-1]))
    first = mask & ~prev
    span_sentinel = sentinels[np.maximum(np.cumsum(first) - 1, 0)]
    inputs = np.where(first, span_sentinel, tokens)[~(mask & prev)].astype(np.int32)
    starts = np.flatnonzero(first[mask])
    targets = np.insert(tokens[mask].astype(np.int32), starts, sentinels[: starts.size])
    return inputs, targets


def pack_tokens(token_lists: Sequence[Sequence[int]], raw_length: int) -> np.ndarray:
    """Concatenate tokenized documents and cut them into rows of exactly ``raw_length``.

    No separator is put between documents and the incomplete tail is dropped, as T5's
    ``reduce_concat_tokens`` + ``split_tokens`` do in its ``span_corruption`` task.

    Returns:
        ``int32[num_chunks, raw_length]`` (``num_chunks`` may be 0).
    """
    raw_length = check_int("raw_length", raw_length, 1)
    parts = [np.asarray(t, dtype=np.int32).reshape(-1) for t in token_lists]
    stream = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    n = stream.size // raw_length
    return stream[: n * raw_length].reshape(n, raw_length)


class SpanCorruptionDataset:
    """Fixed-length span-corruption batches over packed chunks, a pure function of the step.

    Example ``k`` of the training stream (``k = step * batch_size + row``) is chunk
    ``perm_e[k mod num_chunks]`` of epoch ``e = k // num_chunks``, where ``perm_e`` is drawn
    from ``SeedSequence([seed, 2, e])``, corrupted with a noise mask drawn from
    ``SeedSequence([seed, 0, k])``. So :meth:`batch` depends on nothing but its arguments and
    the constructor's, and rows depend only on their example index.

    Batches are dicts of T5X feature names: ``encoder_input_tokens`` int32 ``[B,
    input_length]``, ``decoder_target_tokens`` int32 ``[B, target_length]``,
    ``decoder_input_tokens`` (the targets shifted right, 0 first) and ``decoder_loss_weights``
    float32 (1 where the target is not padding); padding is 0.

    Args:
        chunks: ``int[num_chunks, raw_length]`` token ids, no pad (0) among them.
        input_length: encoder length; the corrupted chunk plus eos must fit.
        target_length: decoder length; None for exactly what the chunks need.
        noise_density: fraction of noise tokens, in ``(0, 1)``.
        mean_span: mean noise-span length, ``>= 1``.
        sentinel_ids: ids of ``<extra_id_0>``, ``<extra_id_1>``, ... (``Tokenizer.sentinel_ids``).
        eos_id: appended to inputs and targets.
        seed: non-negative integer seed of the chunk order and the masks.

    Raises:
        ValueError: on bad shapes or parameters, or if the corrupted chunks do not fit.
    """

    def __init__(
        self,
        chunks: np.ndarray,
        *,
        input_length: int,
        target_length: int | None = None,
        noise_density: float = 0.15,
        mean_span: float = 3.0,
        sentinel_ids: Sequence[int],
        eos_id: int = 1,
        seed: int = 0,
    ) -> None:
        chunks = np.asarray(chunks)
        if chunks.ndim != 2 or chunks.shape[0] < 1 or chunks.shape[1] < 2:
            raise ValueError(
                f"chunks: need a 2-D array of >= 1 rows of >= 2 tokens, got {chunks.shape}"
            )
        if not np.issubdtype(chunks.dtype, np.integer):
            raise ValueError(f"chunks: dtype must be integer, got {chunks.dtype}")
        if (chunks == 0).any():
            raise ValueError("chunks: contain the pad id 0")
        self._chunks = np.ascontiguousarray(chunks, dtype=np.int32)
        self._density, self._mean_span = _check_density(noise_density, mean_span)
        self._seed = check_int("seed", seed, 0)
        self._eos = check_int("eos_id", eos_id, 0)
        self._sentinels = np.asarray(sentinel_ids, dtype=np.int32).reshape(-1)
        raw = self.raw_length
        need_in, need_tgt, spans = corrupted_lengths(raw, self._density, self._mean_span)
        self._input_length = check_int("input_length", input_length, 1)
        if need_in > self._input_length:
            raise ValueError(
                f"input_length: {input_length} is too short for chunks of {raw} tokens "
                f"(their corrupted inputs need {need_in})"
            )
        if target_length is None:
            target_length = need_tgt
        self._target_length = check_int("target_length", target_length, 1)
        if need_tgt > self._target_length:
            raise ValueError(
                f"target_length: {target_length} is too short for chunks of {raw} tokens "
                f"(their targets need {need_tgt})"
            )
        if spans > self._sentinels.size:
            raise ValueError(
                f"input_length: chunks of {raw} tokens get {spans} noise spans but there are "
                f"only {self._sentinels.size} sentinel_ids"
            )
        self._perms: dict[int, np.ndarray] = {}

    @property
    def num_chunks(self) -> int:
        """Number of packed chunks (examples per epoch)."""
        return int(self._chunks.shape[0])

    @property
    def raw_length(self) -> int:
        """Tokens per chunk before corruption."""
        return int(self._chunks.shape[1])

    @property
    def input_length(self) -> int:
        """Encoder length of the batches."""
        return self._input_length

    @property
    def target_length(self) -> int:
        """Decoder length of the batches."""
        return self._target_length

    @property
    def seed(self) -> int:
        """The seed of chunk order and masks."""
        return self._seed

    @property
    def chunks(self) -> np.ndarray:
        """The packed chunks (a read-only view)."""
        view = self._chunks.view()
        view.flags.writeable = False
        return view

    def __repr__(self) -> str:
        return (
            f"SpanCorruptionDataset(num_chunks={self.num_chunks}, raw_length={self.raw_length}, "
            f"input_length={self.input_length}, target_length={self.target_length}, "
            f"seed={self.seed})"
        )

    def _permutation(self, epoch: int) -> np.ndarray:
        perm = self._perms.get(epoch)
        if perm is None:
            ss = np.random.SeedSequence([self._seed, _PERMUTATION, epoch])
            perm = np.random.Generator(np.random.PCG64(ss)).permutation(self.num_chunks)
            if len(self._perms) >= 2:  # a batch spans at most a few epochs: keep a small cache
                self._perms.pop(next(iter(self._perms)))
            self._perms[epoch] = perm
        return perm

    def batch(self, step: int, batch_size: int) -> dict[str, np.ndarray]:
        """Return training batch ``step``: a pure function of ``(seed, step, batch_size)``.

        Args:
            step: the training step, ``>= 0``.
            batch_size: rows, ``>= 1``.

        Returns:
            The four T5X features (see the class docstring).
        """
        step = check_int("step", step, 0)
        batch_size = check_int("batch_size", batch_size, 1)
        index = step * batch_size + np.arange(batch_size, dtype=np.int64)
        epoch, pos = np.divmod(index, self.num_chunks)
        rows = np.empty(batch_size, dtype=np.int64)
        for e in np.unique(epoch):
            sel = epoch == e
            rows[sel] = self._permutation(int(e))[pos[sel]]
        return self._features(rows, index, _TRAIN_MASKS)

    def eval_batches(self, batch_size: int, num_batches: int) -> list[dict[str, np.ndarray]]:
        """Return a fixed list of evaluation batches.

        Example ``k`` is chunk ``k mod num_chunks`` in order (cycling when there are fewer
        chunks than examples), with a mask from ``SeedSequence([seed, 1, k])``: independent of
        the training masks and identical on every call.
        """
        batch_size = check_int("batch_size", batch_size, 1)
        num_batches = check_int("num_batches", num_batches, 1)
        out = []
        for b in range(num_batches):
            index = b * batch_size + np.arange(batch_size, dtype=np.int64)
            out.append(self._features(index % self.num_chunks, index, _EVAL_MASKS))
        return out

    def _features(self, rows: np.ndarray, index: np.ndarray, stream: int) -> dict[str, np.ndarray]:
        b = rows.size
        enc = np.zeros((b, self._input_length), dtype=np.int32)
        tgt = np.zeros((b, self._target_length), dtype=np.int32)
        raw = self.raw_length
        counts = _span_counts(raw, self._density, self._mean_span)
        for r in range(b):
            # The fast path of span_corrupt(chunk, random_spans_noise_mask(..., rng), ...).
            ss = np.random.SeedSequence([self._seed, stream, int(index[r])])
            mask = _draw_mask(raw, *counts, np.random.Generator(np.random.PCG64(ss)))
            inputs, targets = _corrupt(self._chunks[rows[r]], mask, self._sentinels)
            enc[r, : inputs.size] = inputs
            enc[r, inputs.size] = self._eos
            tgt[r, : targets.size] = targets
            tgt[r, targets.size] = self._eos
        dec_in = np.zeros_like(tgt)
        dec_in[:, 1:] = tgt[:, :-1]
        return {
            "encoder_input_tokens": enc,
            "decoder_target_tokens": tgt,
            "decoder_input_tokens": dec_in,
            "decoder_loss_weights": (tgt != 0).astype(np.float32),
        }


def build_dataset(
    docs: Sequence[str],
    tokenizer: Tokenizer,
    *,
    input_length: int,
    target_length: int | None = None,
    noise_density: float = 0.15,
    mean_span: float = 3.0,
    seed: int = 0,
) -> SpanCorruptionDataset:
    """Tokenize, pack and chunk ``docs`` into a :class:`SpanCorruptionDataset`.

    The chunk length is the largest that fits ``input_length`` after corruption
    (:func:`compute_input_and_target_lengths`: 568 raw tokens for 512 inputs).

    Args:
        docs: the documents.
        tokenizer: anything with ``encode_batch``, ``sentinel_ids`` and ``eos_id``
            (a :class:`lshsim.t5.data.tokenizer.Tokenizer`).
        input_length: encoder length.
        target_length: decoder length; None for the computed one (114 for 512 inputs).
        noise_density: fraction of noise tokens, in ``(0, 1)``.
        mean_span: mean noise-span length, ``>= 1``.
        seed: non-negative seed of chunk order and masks.

    Returns:
        The dataset.

    Raises:
        ValueError: if ``target_length`` is below the computed one, the corpus has fewer tokens
            than one chunk, or a parameter is out of range.
    """
    raw_length, needed = compute_input_and_target_lengths(input_length, noise_density, mean_span)
    if target_length is not None:
        target_length = check_int("target_length", target_length, 1)
        if target_length < needed:
            raise ValueError(
                f"target_length: {target_length} is too short for input_length {input_length} "
                f"(span corruption needs >= {needed})"
            )
    if isinstance(docs, str):
        raise ValueError("docs must be a sequence of documents, got a single str")
    docs = list(docs)
    stream = []  # int32 per block of documents: Python int lists would need ~10x the memory
    for start in range(0, len(docs), _ENCODE_BLOCK):
        ids = tokenizer.encode_batch(docs[start : start + _ENCODE_BLOCK])
        stream.append(np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int32))
    chunks = pack_tokens(stream, raw_length)
    if chunks.shape[0] == 0:
        total = sum(len(d) for d in docs)
        raise ValueError(
            f"corpus: {len(docs)} documents ({total} characters) are too small for one chunk "
            f"of {raw_length} tokens (input_length {input_length})"
        )
    return SpanCorruptionDataset(
        chunks,
        input_length=input_length,
        target_length=target_length,
        noise_density=noise_density,
        mean_span=mean_span,
        sentinel_ids=tokenizer.sentinel_ids,
        eos_id=tokenizer.eos_id,
        seed=seed,
    )
