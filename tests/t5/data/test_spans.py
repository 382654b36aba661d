"""Tests for lshsim.t5.data.spans: T5 span-corruption semantics, packing and the pure dataset."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lshsim.t5.data.spans import (
    SpanCorruptionDataset,
    build_dataset,
    compute_input_and_target_lengths,
    corrupted_lengths,
    pack_tokens,
    random_spans_noise_mask,
    span_corrupt,
)

SENTINELS = tuple(range(1099, 999, -1))  # <extra_id_0> = 1099, counting down
EOS = 1


def runs(mask):
    """(value, length) of each maximal run of equal values."""
    out = []
    for v in mask.tolist():
        if out and out[-1][0] == v:
            out[-1][1] += 1
        else:
            out.append([v, 1])
    return [tuple(r) for r in out]


def reconstruct(inputs, targets, sentinels=SENTINELS):
    """Undo span corruption: put each sentinel's target tokens back into the inputs."""
    index = {s: i for i, s in enumerate(sentinels)}
    spans: dict[int, list[int]] = {}
    current = None
    for t in targets:
        if t in index:
            current = index[t]
            spans[current] = []
        else:
            spans[current].append(t)
    out = []
    for t in inputs:
        out.extend(spans[index[t]] if t in index else [t])
    return out


def expected_counts(length, density, mean):
    num_noise = min(max(round(length * density), 1), length - 1)
    num_spans = max(round(num_noise / mean), 1)
    return num_noise, min(num_spans, length - num_noise)


# ----------------------------------------------------------------------------- lengths


@pytest.mark.parametrize(
    ("inputs_length", "density", "mean", "expected"),
    [
        (512, 0.15, 3.0, (568, 114)),  # T5's default pretraining lengths
        (128, 0.15, 3.0, (141, 29)),  # 141*.15=21.15 -> 21 noise, 7 spans: 120+7+1=128
        (1024, 0.15, 3.0, (1137, 229)),  # 170.55 -> 171 noise, 57 spans: 966+57+1=1024
        (10, 0.15, 3.0, (10, 4)),  # the shortest: 2 noise tokens in 1 span
    ],
)
def test_known_lengths(inputs_length, density, mean, expected):
    """Hand-computed values of T5's random_spans_helper."""
    assert compute_input_and_target_lengths(inputs_length, density, mean) == expected


@given(
    st.integers(1, 3000),
    st.sampled_from([0.05, 0.1, 0.15, 0.25, 0.3, 0.4, 0.5]),
    st.sampled_from([1.0, 2.0, 3.0, 5.0, 8.0]),
)
def test_lengths_are_the_largest_that_fit(n, density, mean):
    """The raw length's inputs + eos fill input_length exactly; one more token would not fit."""
    try:
        raw, targets = compute_input_and_target_lengths(n, density, mean)
    except ValueError as e:
        need = int(re.search(r"need >= (\d+)", str(e)).group(1))
        assert str(e).startswith(f"input_length: {n} is too short")
        assert n < need
        compute_input_and_target_lengths(need, density, mean)
        return
    got_in, got_tgt, spans = corrupted_lengths(raw, density, mean)
    assert spans >= 1
    if density == 0.5:  # T5 trims one raw token (and one target slot) so targets <= inputs
        assert got_in <= n and got_tgt <= targets <= n
    else:
        assert got_in == n and got_tgt == targets
        assert corrupted_lengths(raw + 1, density, mean)[0] > n


def test_too_short_input_length():
    """Below one noise span the message names input_length and the minimum."""
    with pytest.raises(
        ValueError,
        match=r"^input_length: 4 is too short for span corruption with noise_density 0.15 and "
        r"mean_span 3 \(need >= 10\)$",
    ):
        compute_input_and_target_lengths(4)
    with pytest.raises(ValueError, match=r"need >= 10"):
        compute_input_and_target_lengths(9)


def test_density_too_high_for_spans():
    """More noise spans than non-noise tokens at every length is a noise_density error."""
    with pytest.raises(ValueError, match=r"^noise_density: 0.9 with mean_span 3 leaves fewer"):
        compute_input_and_target_lengths(512, 0.9, 3.0)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((512, 0.0, 3.0), r"^noise_density must be in \(0, 1\)"),
        ((512, 1.0, 3.0), r"^noise_density must be in \(0, 1\)"),
        ((512, 0.15, 0.5), r"^mean_span must be in \[1, inf\)"),
        ((512.5, 0.15, 3.0), r"^input_length must be an integer"),
        ((0, 0.15, 3.0), r"^input_length must be an integer >= 1"),
    ],
)
def test_length_arguments_validated(args, match):
    """Each bad argument raises a ValueError naming it."""
    with pytest.raises(ValueError, match=match):
        compute_input_and_target_lengths(*args)


# ----------------------------------------------------------------------------- noise mask


@given(
    st.integers(2, 2000),
    st.floats(0.01, 0.99),
    st.floats(1.0, 10.0),
    st.integers(0, 2**32 - 1),
)
def test_noise_mask_counts(length, density, mean, seed):
    """Exactly T5's noise count, in exactly its number of spans, starting with non-noise."""
    mask = random_spans_noise_mask(length, density, mean, seed)
    num_noise, num_spans = expected_counts(length, density, mean)
    assert mask.shape == (length,) and mask.dtype == np.bool_
    assert mask.sum() == num_noise
    r = runs(mask)
    assert sum(1 for v, _ in r if v) == num_spans
    assert r[0][0] is False and r[-1][0] is True
    assert len(r) == 2 * num_spans  # alternating, non-empty runs


def test_noise_mask_length_one():
    """A single token is never noise (T5 pads to 2 and truncates)."""
    assert random_spans_noise_mask(1, 0.5, 3.0, 0).tolist() == [False]


def test_noise_mask_is_seeded():
    """Same seed, same mask; a Generator or SeedSequence works as well as an int."""
    a = random_spans_noise_mask(568, 0.15, 3.0, 7)
    assert np.array_equal(a, random_spans_noise_mask(568, 0.15, 3.0, 7))
    ss = np.random.SeedSequence(7)
    assert np.array_equal(a, random_spans_noise_mask(568, 0.15, 3.0, ss))
    gen = np.random.Generator(np.random.PCG64(7))
    assert np.array_equal(a, random_spans_noise_mask(568, 0.15, 3.0, gen))
    assert not np.array_equal(a, random_spans_noise_mask(568, 0.15, 3.0, 8))


def test_noise_mask_segmentation_is_uniform():
    """Span lengths follow a uniform random composition, as T5's shuffled cut points.

    For n items in k non-empty parts, the first part has length 1 with probability
    (k-1)/(n-1) and mean n/k. With 4000 fixed-seed masks of T5's 568 tokens (85 noise tokens
    in 28 spans, 483 others), both estimates must lie within 5 standard errors.
    """
    n_noise, n_clean, k, reps = 85, 483, 28, 4000
    first_noise, first_clean = [], []
    for s in range(reps):
        r = runs(random_spans_noise_mask(568, 0.15, 3.0, s))
        first_clean.append(r[0][1])
        first_noise.append(r[1][1])
    p1 = (k - 1) / (n_noise - 1)
    est = np.mean(np.array(first_noise) == 1)
    assert abs(est - p1) < 5 * math.sqrt(p1 * (1 - p1) / reps)
    pmf = [
        math.comb(n_clean - j - 1, k - 2) / math.comb(n_clean - 1, k - 1) for j in range(1, n_clean)
    ]
    js = np.arange(1, n_clean)
    mean = float(np.dot(js, pmf))
    sd = math.sqrt(float(np.dot((js - mean) ** 2, pmf)))
    assert mean == pytest.approx(n_clean / k)
    assert abs(np.mean(first_clean) - mean) < 5 * sd / math.sqrt(reps)


def test_noise_mask_validation():
    """Bad length or rng raise ValueError naming them."""
    with pytest.raises(ValueError, match=r"^length must be an integer >= 1"):
        random_spans_noise_mask(0, 0.15, 3.0, 0)
    with pytest.raises(ValueError, match=r"^rng must be"):
        random_spans_noise_mask(10, 0.15, 3.0, "seed")
    with pytest.raises(ValueError, match=r"^rng must be"):
        random_spans_noise_mask(10, 0.15, 3.0, -1)


# ----------------------------------------------------------------------------- span_corrupt

token_lists = st.lists(st.tuples(st.integers(2, 999), st.booleans()), min_size=1, max_size=150)


@given(token_lists)
def test_corruption_is_invertible(pairs):
    """For any mask, putting the targets' spans back at the sentinels gives the tokens."""
    tokens = np.array([t for t, _ in pairs])
    mask = np.array([m for _, m in pairs])
    inputs, targets = span_corrupt(tokens, mask, SENTINELS, eos_id=None)
    assert inputs.dtype == np.int32 and targets.dtype == np.int32
    assert reconstruct(inputs.tolist(), targets.tolist()) == tokens.tolist()
    k = sum(1 for v, _ in runs(mask) if v)
    assert [t for t in inputs.tolist() if t in SENTINELS] == list(SENTINELS[:k])
    assert [t for t in targets.tolist() if t in SENTINELS] == list(SENTINELS[:k])
    assert len(inputs) == (~mask).sum() + k and len(targets) == mask.sum() + k


@given(st.integers(10, 1200), st.integers(0, 2**32 - 1))
def test_corrupted_chunk_fills_input_length(n, seed):
    """A raw chunk of the computed length corrupts to exactly input_length, targets fit."""
    raw, target_length = compute_input_and_target_lengths(n)
    tokens = np.random.default_rng(seed).integers(2, 999, raw)
    mask = random_spans_noise_mask(raw, 0.15, 3.0, seed)
    inputs, targets = span_corrupt(tokens, mask, SENTINELS, eos_id=EOS)
    assert len(inputs) == n
    assert len(targets) == target_length
    assert inputs[-1] == EOS and targets[-1] == EOS
    assert reconstruct(inputs[:-1].tolist(), targets[:-1].tolist()) == tokens.tolist()


def test_span_corrupt_example():
    """A hand-worked example: spans 1-2 and 5 become extra_id_0 and extra_id_1."""
    tokens = np.array([10, 11, 12, 13, 14, 15])
    mask = np.array([False, True, True, False, False, True])
    inputs, targets = span_corrupt(tokens, mask, SENTINELS)
    assert inputs.tolist() == [10, 1099, 13, 14, 1098, EOS]
    assert targets.tolist() == [1099, 11, 12, 1098, 15, EOS]


def test_span_corrupt_validation():
    """Shape and dtype mismatches and too few sentinels are errors."""
    with pytest.raises(ValueError, match=r"^mask: shape"):
        span_corrupt(np.arange(5), np.zeros(4, bool), SENTINELS)
    with pytest.raises(ValueError, match=r"^mask: dtype must be bool"):
        span_corrupt(np.arange(4), np.zeros(4, int), SENTINELS)
    with pytest.raises(ValueError, match=r"^sentinel_ids: 2 noise spans but only 1 sentinels"):
        span_corrupt(np.arange(4), np.array([True, False, True, False]), SENTINELS[:1])


# ----------------------------------------------------------------------------- packing


def test_pack_tokens_concatenates_and_drops_tail():
    """Documents are joined without separators and cut into full rows only."""
    packed = pack_tokens([[5, 6, 7], [], [8], [9, 10, 11, 12]], 3)
    assert packed.dtype == np.int32
    assert packed.tolist() == [[5, 6, 7], [8, 9, 10]]
    assert pack_tokens([[5, 6]], 3).shape == (0, 3)
    assert pack_tokens([], 3).shape == (0, 3)


# ----------------------------------------------------------------------------- dataset

INPUT_LENGTH = 32
RAW, TARGET = compute_input_and_target_lengths(INPUT_LENGTH)


def make_dataset(num_chunks=48, seed=0, **kwargs):
    chunks = np.random.default_rng(123).integers(2, 999, (num_chunks, RAW))
    kwargs.setdefault("input_length", INPUT_LENGTH)
    return SpanCorruptionDataset(chunks, sentinel_ids=SENTINELS, seed=seed, **kwargs)


def chunk_of(ds, enc_row, tgt_row):
    """The chunk index a batch row was made from (by undoing the corruption)."""
    inputs = [t for t in enc_row.tolist() if t not in (0, EOS)]
    targets = [t for t in tgt_row.tolist() if t not in (0, EOS)]
    tokens = reconstruct(inputs, targets)
    (idx,) = np.flatnonzero((ds.chunks == np.array(tokens)).all(axis=1))
    return int(idx)


def test_batch_shapes_and_features():
    """T5X features: shapes, dtypes, shift-right decoder inputs and loss weights."""
    ds = make_dataset()
    assert (ds.raw_length, ds.input_length, ds.target_length) == (RAW, INPUT_LENGTH, TARGET)
    b = ds.batch(3, 5)
    assert set(b) == {
        "encoder_input_tokens",
        "decoder_target_tokens",
        "decoder_input_tokens",
        "decoder_loss_weights",
    }
    assert b["encoder_input_tokens"].shape == (5, INPUT_LENGTH)
    assert b["encoder_input_tokens"].dtype == np.int32
    for key in ("decoder_target_tokens", "decoder_input_tokens", "decoder_loss_weights"):
        assert b[key].shape == (5, TARGET)
    assert b["decoder_input_tokens"].dtype == np.int32
    assert b["decoder_loss_weights"].dtype == np.float32
    tgt = b["decoder_target_tokens"]
    assert (b["decoder_input_tokens"][:, 0] == 0).all()
    assert np.array_equal(b["decoder_input_tokens"][:, 1:], tgt[:, :-1])
    assert np.array_equal(b["decoder_loss_weights"], (tgt != 0).astype(np.float32))
    assert (b["encoder_input_tokens"][:, -1] == EOS).all()  # the chunk fills input_length
    assert (tgt[:, 0] == SENTINELS[0]).all()


def test_rows_are_the_public_functions_of_their_example_index():
    """Row k is span_corrupt(chunk, random_spans_noise_mask(SeedSequence([seed, 0, k])))."""
    ds = make_dataset(seed=9)
    b = ds.batch(2, 4)
    for r in range(4):
        k = 2 * 4 + r
        enc, tgt = b["encoder_input_tokens"][r], b["decoder_target_tokens"][r]
        chunk = ds.chunks[chunk_of(ds, enc, tgt)]
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([9, 0, k])))
        mask = random_spans_noise_mask(RAW, 0.15, 3.0, rng)
        inputs, targets = span_corrupt(chunk, mask, SENTINELS, EOS)
        assert enc.tolist() == inputs.tolist()
        assert tgt.tolist() == targets.tolist() + [0] * (TARGET - targets.size)


def test_target_padding():
    """A longer target_length pads with 0, which gets loss weight 0."""
    b = make_dataset(target_length=TARGET + 4).batch(0, 3)
    assert (b["decoder_target_tokens"][:, TARGET:] == 0).all()
    assert (b["decoder_loss_weights"][:, TARGET:] == 0).all()
    assert (b["decoder_loss_weights"][:, :TARGET] == 1).all()


def test_batch_is_a_pure_function_of_seed_and_step():
    """A fresh dataset (a resumed run) gives the same batch; other steps and seeds differ."""
    ds = make_dataset()
    first = [ds.batch(s, 8) for s in range(12)]
    resumed = make_dataset()
    for s in (9, 7, 0):
        again = resumed.batch(s, 8)
        for key, value in first[s].items():
            assert np.array_equal(again[key], value)
    enc = [b["encoder_input_tokens"] for b in first]
    assert all(not np.array_equal(enc[i], enc[j]) for i in range(12) for j in range(i))
    other = make_dataset(seed=1).batch(0, 8)["encoder_input_tokens"]
    assert not np.array_equal(other, enc[0])


def test_rows_depend_only_on_example_index():
    """Row r of step s is example s * batch_size + r, whatever the batch size."""
    ds = make_dataset()
    big = ds.batch(0, 16)
    small = ds.batch(1, 8)
    for key in big:
        assert np.array_equal(big[key][8:], small[key])


def test_each_epoch_visits_every_chunk_once():
    """Six steps of 8 cover the 48 chunks once, in a fresh order each epoch."""
    ds = make_dataset()
    orders = []
    for epoch in range(2):
        order = []
        for s in range(6 * epoch, 6 * epoch + 6):
            b = ds.batch(s, 8)
            order += [
                chunk_of(ds, e, t)
                for e, t in zip(b["encoder_input_tokens"], b["decoder_target_tokens"], strict=True)
            ]
        assert sorted(order) == list(range(48))
        orders.append(order)
    assert orders[0] != orders[1]


def test_eval_batches_fixed_and_cyclic():
    """Eval batches are identical on every call and cycle through the chunks in order."""
    ds = make_dataset(num_chunks=5)
    a = ds.eval_batches(4, 3)
    b = make_dataset(num_chunks=5).eval_batches(4, 3)
    assert len(a) == 3
    for x, y in zip(a, b, strict=True):
        for key in x:
            assert np.array_equal(x[key], y[key])
    used = [
        chunk_of(ds, e, t)
        for batch in a
        for e, t in zip(batch["encoder_input_tokens"], batch["decoder_target_tokens"], strict=True)
    ]
    assert used == [k % 5 for k in range(12)]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda ds: ds.batch(-1, 8), r"^step must be an integer >= 0"),
        (lambda ds: ds.batch(0, 0), r"^batch_size must be an integer >= 1"),
        (lambda ds: ds.batch(1.5, 8), r"^step must be an integer"),
        (lambda ds: ds.eval_batches(0, 1), r"^batch_size must be an integer >= 1"),
        (lambda ds: ds.eval_batches(2, 0), r"^num_batches must be an integer >= 1"),
    ],
)
def test_batch_arguments_validated(call, match):
    """Bad step, batch_size or num_batches raise ValueError naming them."""
    with pytest.raises(ValueError, match=match):
        call(make_dataset())


def test_dataset_construction_errors():
    """Chunks that do not fit, contain pad or have the wrong shape are rejected."""
    with pytest.raises(ValueError, match=rf"^input_length: 31 is too short for chunks of {RAW} "):
        make_dataset(input_length=INPUT_LENGTH - 1)
    with pytest.raises(ValueError, match=rf"^target_length: {TARGET - 1} is too short for chunks"):
        make_dataset(target_length=TARGET - 1)
    with pytest.raises(ValueError, match=r"^chunks: contain the pad id 0"):
        SpanCorruptionDataset(np.zeros((2, RAW), int), input_length=32, sentinel_ids=SENTINELS)
    with pytest.raises(ValueError, match=r"^chunks: need a 2-D array"):
        SpanCorruptionDataset(np.full(RAW, 5), input_length=32, sentinel_ids=SENTINELS)
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0"):
        make_dataset(seed=-1)
    raw, _ = compute_input_and_target_lengths(2080)  # 2310 tokens: 115 spans > 100 sentinels
    with pytest.raises(ValueError, match=r"^input_length: chunks of 2310 tokens get 115 noise"):
        SpanCorruptionDataset(np.full((1, raw), 5), input_length=2080, sentinel_ids=SENTINELS)


# ----------------------------------------------------------------------------- build_dataset


class CharTokenizer:
    """One id per character: enough of a tokenizer to test packing quickly."""

    eos_id = EOS
    sentinel_ids = SENTINELS

    def encode_batch(self, texts):
        return [[2 + ord(c) % 900 for c in t] for t in texts]


def test_build_dataset_packs_documents():
    """Documents are tokenized and concatenated without separators into raw-length chunks."""
    docs = ["abcdefghij" * 7, "klmnopqrst" * 4]
    ds = build_dataset(docs, CharTokenizer(), input_length=INPUT_LENGTH, seed=5)
    stream = [2 + ord(c) for c in "".join(docs)]
    assert ds.num_chunks == len(stream) // RAW
    assert ds.chunks.tolist() == [stream[i * RAW : (i + 1) * RAW] for i in range(ds.num_chunks)]
    assert ds.target_length == TARGET and ds.seed == 5
    many = [f"d{i}" for i in range(5000)]  # more documents than one tokenization block
    stream = [2 + ord(c) for c in "".join(many)]
    ds = build_dataset(many, CharTokenizer(), input_length=INPUT_LENGTH)
    assert ds.chunks.reshape(-1).tolist() == stream[: ds.num_chunks * RAW]
    assert len(stream) - ds.num_chunks * RAW < RAW


def test_build_dataset_errors():
    """A short target_length or a corpus smaller than one chunk is a ValueError."""
    tok = CharTokenizer()
    with pytest.raises(ValueError, match=r"^target_length: 7 is too short for input_length 32 "):
        build_dataset(["x" * 100], tok, input_length=INPUT_LENGTH, target_length=TARGET - 1)
    with pytest.raises(ValueError, match=r"^corpus: 2 documents \(20 characters\) are too small"):
        build_dataset(["x" * 10, "y" * 10], tok, input_length=INPUT_LENGTH)
    with pytest.raises(ValueError, match=r"^input_length: 4 is too short"):
        build_dataset(["x" * 100], tok, input_length=4)


def test_build_dataset_with_trained_tokenizer(tmp_path):
    """End to end: embedded corpus, a small trained tokenizer, decodable batches."""
    from lshsim.t5.data.corpus import embedded_corpus
    from lshsim.t5.data.tokenizer import train_tokenizer

    docs = embedded_corpus()[:150]
    tok = train_tokenizer(docs, 300, cache_dir=tmp_path)
    ds = build_dataset(docs, tok, input_length=64)
    b = ds.batch(0, 4)
    assert b["encoder_input_tokens"].max() < tok.vocab_size
    text = tok.decode(b["decoder_target_tokens"][0])
    assert text.startswith("<extra_id_0>")
    assert "<extra_id_1>" in tok.decode(b["encoder_input_tokens"][0])
