"""Tests for lshsim.t5.data.tokenizer: T5 layout, encode/decode, deterministic cached training."""

from __future__ import annotations

import io

import numpy as np
import pytest
import sentencepiece as spm

from lshsim.t5.data import tokenizer as tokmod
from lshsim.t5.data.corpus import embedded_corpus
from lshsim.t5.data.tokenizer import NUM_SENTINELS, Tokenizer, train_tokenizer

NUM_PIECES = 400


@pytest.fixture(scope="module")
def docs():
    return embedded_corpus()[:300]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("spm-cache")


@pytest.fixture(scope="module")
def tok(docs, cache):
    return train_tokenizer(docs, NUM_PIECES, cache_dir=cache)


SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Return the value of the attribute, if any; otherwise raise an error.",
    "This function is called when the module is imported.",
]

# ----------------------------------------------------------------------------- layout


def test_special_ids(tok):
    """pad is 0, eos 1, unk 2, and there is no bos."""
    sp = spm.SentencePieceProcessor(model_proto=tok.model_proto)
    assert (tok.pad_id, tok.eos_id, tok.unk_id) == (0, 1, 2)
    assert (sp.pad_id(), sp.eos_id(), sp.unk_id(), sp.bos_id()) == (0, 1, 2, -1)
    assert [sp.id_to_piece(i) for i in range(3)] == ["<pad>", "</s>", "<unk>"]


def test_sentinels_count_down_from_the_top(tok):
    """<extra_id_i> is num_pieces + 99 - i: all above the real pieces, extra_id_0 the largest."""
    n = tok.num_pieces
    assert n == NUM_PIECES
    assert tok.sentinel(0) == n + 99
    assert tok.sentinel(99) == n
    assert tok.sentinel_ids == tuple(n + 99 - i for i in range(NUM_SENTINELS))
    assert len(set(tok.sentinel_ids)) == NUM_SENTINELS
    assert max(tok.sentinel_ids) < tok.vocab_size


@pytest.mark.parametrize("i", [-1, 100, 1.0, True, "0"])
def test_sentinel_range(tok, i):
    """sentinel(i) accepts only integers in [0, 99]."""
    with pytest.raises(ValueError, match=r"^i: sentinel index must be an integer in \[0, 99\]"):
        tok.sentinel(i)


def test_vocab_size_padded_to_128(tok, monkeypatch):
    """vocab_size = num_pieces + 100 rounded up to 128; T5's 32000 pieces give 32128."""
    assert tok.vocab_size == 512
    for pieces, size in [(32000, 32128), (28, 128), (29, 256), (156, 256), (157, 384)]:
        monkeypatch.setattr(tok, "_num_pieces", pieces)
        assert tok.vocab_size == size


# ----------------------------------------------------------------------------- encode/decode


@pytest.mark.parametrize("text", SENTENCES)
def test_round_trip(tok, text):
    """Ordinary single-spaced text decodes back to itself; encode adds no eos or pad."""
    ids = tok.encode(text)
    assert ids
    assert all(3 <= i < tok.num_pieces for i in ids)  # no pad, eos or unk
    assert tok.decode(ids) == text


def test_encode_batch_matches_encode(tok):
    """encode_batch is encode applied to each text, in order."""
    assert tok.encode_batch(SENTENCES) == [tok.encode(s) for s in SENTENCES]
    assert tok.encode_batch([]) == []


def test_encode_normalises_whitespace(tok):
    """Runs of whitespace, newlines included, become single spaces (nmt_nfkc)."""
    assert tok.decode(tok.encode("the  value\n\nof")) == "the value of"


def test_literal_sentinel_text_is_not_a_sentinel(tok):
    """Typing '<extra_id_0>' gives ordinary pieces, never the sentinel id."""
    ids = tok.encode("<extra_id_0> text")
    assert not set(ids) & set(tok.sentinel_ids)


def test_decode_sentinels_pad_and_eos(tok):
    """Sentinels render as <extra_id_i>, pads are dropped, decoding stops at eos."""
    a, b = tok.encode("the value"), tok.encode("of the module")
    ids = [0, *a, tok.sentinel(0), 0, *b, tok.sentinel(7), tok.eos_id, *a, 0]
    assert tok.decode(ids) == "the value <extra_id_0> of the module <extra_id_7>"
    assert tok.decode(ids, stop_at_eos=False).endswith("<extra_id_7> the value")
    assert tok.decode([tok.sentinel(3), *b]) == "<extra_id_3> of the module"
    assert tok.decode(np.array([tok.sentinel(1)], dtype=np.int32)) == "<extra_id_1>"


def test_decode_padding_rows_and_range(tok):
    """Ids in the padded rows decode as unk; ids outside the table are an error."""
    top = tok.num_pieces + NUM_SENTINELS
    assert tok.decode([top]) == tok.decode([tok.unk_id])
    with pytest.raises(ValueError, match=r"^ids: 512 is outside \[0, 512\)"):
        tok.decode([5, tok.vocab_size])
    with pytest.raises(ValueError, match=r"^ids: -1"):
        tok.decode([-1])


# ----------------------------------------------------------------------------- training


def test_training_is_deterministic(docs, tok):
    """Training twice on the same documents gives the same model bytes."""
    again = train_tokenizer(docs, NUM_PIECES, use_cache=False)
    assert again.model_proto == tok.model_proto


def test_cache_hit_skips_training(docs, tok, cache, monkeypatch):
    """The second call loads from the cache; a different argument misses it."""
    files = sorted(p.name for p in cache.iterdir())
    assert len(files) == 1
    assert files[0].startswith("spm-") and files[0].endswith(".model")

    def boom(*args, **kwargs):
        raise AssertionError("trained although cached")

    monkeypatch.setattr(tokmod, "_train", boom)
    assert train_tokenizer(docs, NUM_PIECES, cache_dir=cache).model_proto == tok.model_proto
    with pytest.raises(AssertionError, match="trained although cached"):
        train_tokenizer(docs, NUM_PIECES + 1, cache_dir=cache)
    with pytest.raises(AssertionError, match="trained although cached"):
        train_tokenizer(docs[:-1], NUM_PIECES, cache_dir=cache)


def test_seed_samples_lines_only_beyond_max_sentences(docs, tok, cache, monkeypatch):
    """The seed picks the sampled lines; without sampling it changes nothing (cache hit)."""
    small = docs[:40]
    a = train_tokenizer(small, 150, use_cache=False, max_sentences=60, seed=0)
    b = train_tokenizer(small, 150, use_cache=False, max_sentences=60, seed=0)
    c = train_tokenizer(small, 150, use_cache=False, max_sentences=60, seed=1)
    assert a.model_proto == b.model_proto != c.model_proto
    monkeypatch.setattr(tokmod, "_train", None)  # any training attempt would fail
    assert train_tokenizer(docs, NUM_PIECES, cache_dir=cache, seed=5).model_proto == tok.model_proto


def test_cache_dir_from_environment(docs, tmp_path, monkeypatch):
    """Without cache_dir the model goes to $LSHSIM_CACHE, written without temp leftovers."""
    monkeypatch.setenv("LSHSIM_CACHE", str(tmp_path / "env-cache"))
    small = docs[:40]
    train_tokenizer(small, 150)
    files = list((tmp_path / "env-cache").iterdir())
    assert [p.suffix for p in files] == [".model"]


def test_damaged_cache_file_is_replaced(docs, tmp_path):
    """A truncated cache file is retrained and overwritten, not trusted."""
    small = docs[:40]
    good = train_tokenizer(small, 150, cache_dir=tmp_path)
    (path,) = tmp_path.iterdir()
    path.write_bytes(b"garbage")
    assert train_tokenizer(small, 150, cache_dir=tmp_path).model_proto == good.model_proto
    assert path.read_bytes() == good.model_proto


def test_training_is_quiet(docs, capfd):
    """SentencePiece's progress log does not reach stderr."""
    train_tokenizer(docs[:40], 150, use_cache=False)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_small_corpus_gives_fewer_pieces():
    """The vocabulary limit is soft: fewer pieces than asked, sentinels right above them."""
    t = train_tokenizer(["hello world, the brown fox"] * 3, 300, use_cache=False)
    assert t.num_pieces < 300
    assert t.sentinel(0) == t.num_pieces + 99
    assert t.decode(t.encode("hello world")) == "hello world"


@pytest.mark.parametrize(
    ("num_pieces", "match"),
    [
        (99, r"^num_pieces must be an integer >= 100, got 99"),
        (2.5, r"^num_pieces must be an integer"),
    ],
)
def test_num_pieces_validated(num_pieces, match):
    """Too few pieces, or a non-integer count, is rejected before training."""
    with pytest.raises(ValueError, match=match):
        train_tokenizer(["some text"], num_pieces, use_cache=False)


def test_too_many_characters_for_num_pieces():
    """A corpus with more distinct characters than pieces is a ValueError naming num_pieces."""
    text = "".join(chr(c) for c in range(0x4E00, 0x4E00 + 300))
    with pytest.raises(ValueError, match=r"^num_pieces: sentencepiece cannot train 100 pieces"):
        train_tokenizer([text], 100, use_cache=False, character_coverage=1.0)


def test_no_text():
    """Documents without text cannot train a tokenizer."""
    with pytest.raises(ValueError, match=r"^docs: no text"):
        train_tokenizer(["", "  \n "], 100, use_cache=False)


# ----------------------------------------------------------------------------- files


def test_save_and_load(tok, tmp_path):
    """A saved model loads back with the same bytes, ids and layout."""
    path = tmp_path / "sub" / "t5.model"
    tok.save(path)
    back = Tokenizer.load(path)
    assert back.model_proto == tok.model_proto
    assert back.encode(SENTENCES[0]) == tok.encode(SENTENCES[0])
    assert (back.num_pieces, back.vocab_size) == (tok.num_pieces, tok.vocab_size)
    assert list(path.parent.iterdir()) == [path]


def test_load_errors(tmp_path):
    """Missing files, non-models and models in another layout are rejected."""
    with pytest.raises(ValueError, match=r"^tokenizer: no such file"):
        Tokenizer.load(tmp_path / "none.model")
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match=r"^tokenizer: .*bad\.model.*not a SentencePiece model"):
        Tokenizer.load(bad)


def test_other_layout_rejected(docs):
    """A SentencePiece model with default ids (unk 0, bos 1, eos 2) is not T5's layout."""
    w = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(docs[:40]), model_writer=w, vocab_size=150, minloglevel=2
    )
    with pytest.raises(ValueError, match=r"^model_proto: T5 layout needs pad_id 0 and eos_id 1"):
        Tokenizer(w.getvalue())
