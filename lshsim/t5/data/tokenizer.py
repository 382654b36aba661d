"""SentencePiece tokenizer in the T5 layout: pad 0, eos 1, unk 2, then 100 sentinels on top.

The layout (Raffel et al. 2020; ``seqio.SentencePieceVocabulary`` with ``extra_ids=100``):

- ids ``0 .. num_pieces - 1`` are the SentencePiece unigram model's pieces, with ``<pad>`` = 0,
  ``</s>`` (eos) = 1 and ``<unk>`` = 2 and no bos;
- ids ``num_pieces .. num_pieces + 99`` are the span-corruption sentinels, counting *down*:
  ``<extra_id_i>`` = ``num_pieces + 99 - i``, so ``<extra_id_0>`` is the largest;
- the model's embedding table has ``vocab_size`` rows: ``num_pieces + 100`` rounded up to a
  multiple of 128 (32000 pieces -> 32128, the paper's and T5 v1.1's vocabulary). The rows above
  the sentinels are never produced by :meth:`Tokenizer.encode`.

The released T5 ``spiece.model`` loads with :meth:`Tokenizer.load` and gives T5's ids exactly.
:func:`train_tokenizer` trains a new model in memory, deterministically, with a file cache.
No JAX here: the data pipeline must import fast.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import sentencepiece as spm

from lshsim._io import default_cache_dir, write_atomic
from lshsim._validate import check_float, check_int

__all__ = [
    "MIN_PIECES",
    "NUM_SENTINELS",
    "VOCAB_MULTIPLE",
    "Tokenizer",
    "default_cache_dir",
    "train_tokenizer",
]

#: Sentinel ids ``<extra_id_0>`` .. ``<extra_id_99>``, as in T5.
NUM_SENTINELS = 100
#: The embedding table's row count is padded up to a multiple of this (T5: 32100 -> 32128).
VOCAB_MULTIPLE = 128
#: Smallest ``num_pieces`` :func:`train_tokenizer` accepts: a unigram model needs room for the
#: corpus's characters besides the three special pieces.
MIN_PIECES = 100

_PAD, _EOS, _UNK = 0, 1, 2


class Tokenizer:
    """A SentencePiece model plus T5's 100 sentinel ids.

    Args:
        model_proto: a serialized SentencePiece ``ModelProto`` whose ``<pad>`` is id 0 and
            ``</s>`` id 1 (T5's layout; both the released ``spiece.model`` and the models of
            :func:`train_tokenizer` have it).

    Raises:
        ValueError: if the bytes are not a SentencePiece model or the layout differs.
    """

    def __init__(self, model_proto: bytes) -> None:
        sp = spm.SentencePieceProcessor()
        try:
            sp.LoadFromSerializedProto(bytes(model_proto))
        except (RuntimeError, OSError, TypeError) as exc:
            raise ValueError(f"model_proto: not a SentencePiece model ({exc})") from None
        if sp.pad_id() != _PAD or sp.eos_id() != _EOS:
            raise ValueError(
                f"model_proto: T5 layout needs pad_id 0 and eos_id 1, got pad_id {sp.pad_id()} "
                f"and eos_id {sp.eos_id()}"
            )
        self._sp = sp
        self._proto = bytes(model_proto)
        self._num_pieces = int(sp.get_piece_size())
        self._sentinels = tuple(
            self._num_pieces + NUM_SENTINELS - 1 - i for i in range(NUM_SENTINELS)
        )

    # ------------------------------------------------------------------ layout

    @property
    def num_pieces(self) -> int:
        """Number of SentencePiece pieces (ids ``0 .. num_pieces - 1``), specials included."""
        return self._num_pieces

    @property
    def vocab_size(self) -> int:
        """Embedding rows: ``num_pieces + 100`` rounded up to a multiple of 128."""
        n = self._num_pieces + NUM_SENTINELS
        return -(-n // VOCAB_MULTIPLE) * VOCAB_MULTIPLE

    @property
    def pad_id(self) -> int:
        """Padding id, 0 (also the decoder's start token)."""
        return _PAD

    @property
    def eos_id(self) -> int:
        """End-of-sequence id, 1."""
        return _EOS

    @property
    def unk_id(self) -> int:
        """Unknown-piece id (2 in T5's layout)."""
        return int(self._sp.unk_id())

    @property
    def num_sentinels(self) -> int:
        """Number of sentinel ids, 100."""
        return NUM_SENTINELS

    def sentinel(self, i: int) -> int:
        """Return the id of ``<extra_id_i>``: ``num_pieces + 99 - i``.

        Raises:
            ValueError: if ``i`` is not an integer in ``[0, 99]``.
        """
        integer = isinstance(i, (int, np.integer)) and not isinstance(i, bool)
        if not integer or not 0 <= i < NUM_SENTINELS:
            raise ValueError(f"i: sentinel index must be an integer in [0, 99], got {i!r}")
        return self._sentinels[int(i)]

    @property
    def sentinel_ids(self) -> tuple[int, ...]:
        """Ids of ``<extra_id_0>``, ``<extra_id_1>``, ..., ``<extra_id_99>`` (decreasing)."""
        return self._sentinels

    @property
    def model_proto(self) -> bytes:
        """The serialized SentencePiece model."""
        return self._proto

    def __repr__(self) -> str:
        return f"Tokenizer(num_pieces={self.num_pieces}, vocab_size={self.vocab_size})"

    # ------------------------------------------------------------------ encode / decode

    def encode(self, text: str) -> list[int]:
        """Encode one text to piece ids, without eos (T5 appends eos after span corruption).

        SentencePiece's ``nmt_nfkc`` normalisation applies: runs of whitespace, newlines
        included, become one space. A literal ``"<extra_id_0>"`` in the text is ordinary
        characters, never a sentinel id.
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}")
        return list(self._sp.encode(text, out_type=int))

    def encode_batch(self, texts: Sequence[str], num_threads: int = -1) -> list[list[int]]:
        """Encode many texts (SentencePiece threads, -1: all cores); the ids of :meth:`encode`."""
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise ValueError("texts must all be str")
        if not texts:
            return []
        encoded = self._sp.encode(texts, out_type=int, num_threads=int(num_threads))
        return [list(ids) for ids in encoded]

    def decode(self, ids: Iterable[int], *, stop_at_eos: bool = True) -> str:
        """Decode ids to text, rendering sentinels as ``<extra_id_i>``.

        Pad ids (0) are dropped; with ``stop_at_eos`` (the default, as in ``seqio``) decoding
        ends at the first eos, otherwise eos is dropped. Ids in the padded rows above the
        sentinels decode as unk. A sentinel after other text is preceded by a space, as with
        seqio's ``"▁<extra_id_i>"`` pieces.

        Raises:
            ValueError: if an id is outside ``[0, vocab_size)``.
        """
        out: list[str] = []
        run: list[int] = []

        def flush() -> None:
            if run:
                text = self._sp.decode(run)
                if out and self._sp.id_to_piece(run[0]).startswith("▁"):
                    text = " " + text  # SentencePiece drops the first piece's word boundary
                out.append(text)
                run.clear()

        top = self._num_pieces + NUM_SENTINELS
        for raw in ids:
            t = int(raw)
            if not 0 <= t < self.vocab_size:
                raise ValueError(f"ids: {t} is outside [0, {self.vocab_size})")
            if t == _PAD:
                continue
            if t == _EOS:
                if stop_at_eos:
                    break
                continue
            if t < self._num_pieces:
                run.append(t)
            elif t < top:
                flush()
                out.append(f"{' ' if out else ''}<extra_id_{top - 1 - t}>")
            else:
                run.append(self.unk_id)
        flush()
        return "".join(out)

    # ------------------------------------------------------------------ files

    def save(self, path: str | Path) -> None:
        """Write the SentencePiece model to ``path`` atomically (temp file, then rename)."""
        write_atomic(Path(path), self._proto)

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        """Load a SentencePiece ``.model`` file, e.g. T5's released ``spiece.model``.

        Raises:
            ValueError: if the file does not exist or is not a T5-layout SentencePiece model.
        """
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"tokenizer: no such file {str(path)!r}")
        try:
            return cls(p.read_bytes())
        except ValueError as exc:
            raise ValueError(f"tokenizer: {str(path)!r}: {exc}") from None


# ---------------------------------------------------------------------- training


def _sentences(docs: Sequence[str]) -> list[str]:
    """SentencePiece trains on lines: split documents at newlines, drop blank lines."""
    return [line.strip() for doc in docs for line in doc.splitlines() if line.strip()]


def _cache_key(docs: Sequence[str], options: dict) -> str:
    h = hashlib.sha256()
    header = {"format": "lshsim-spm-1", "sentencepiece": spm.__version__, **options}
    h.update(json.dumps(header, sort_keys=True).encode())
    for doc in docs:
        b = doc.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def train_tokenizer(
    docs: Sequence[str],
    num_pieces: int,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    seed: int = 0,
    max_sentences: int = 2_000_000,
    character_coverage: float = 0.9995,
    num_threads: int = 4,
) -> Tokenizer:
    """Train a T5-layout SentencePiece unigram model on ``docs``, or load it from the cache.

    The documents are split into lines (SentencePiece's "sentences"); when there are more than
    ``max_sentences``, a uniform sample of that many (drawn from ``seed``, kept in corpus
    order) is used. Training is deterministic: the same documents and arguments give the same
    model bytes. The unigram trainer's result depends on ``num_threads`` (its EM sums in
    per-thread chunks), so the default is a fixed 4 rather than the machine's core count.

    The vocabulary limit is soft (``hard_vocab_limit=False``): a corpus too small for
    ``num_pieces`` pieces gives fewer, and the tokenizer's ``num_pieces`` is then the real
    count, with the sentinels right above it.

    The model is cached in ``cache_dir`` (default :func:`default_cache_dir`) as
    ``spm-<key>.model``, where ``key`` is a SHA-256 of the documents, all arguments but the
    cache ones, and the SentencePiece version; it is written atomically, so a killed run never
    leaves a truncated model behind.

    Args:
        docs: the training documents.
        num_pieces: pieces to learn, specials included (T5: 32000); at least :data:`MIN_PIECES`.
        cache_dir: where cached models live.
        use_cache: read and write the cache.
        seed: seeds the sentence sample (used, and part of the cache key, only when there are
            more than ``max_sentences`` lines).
        max_sentences: cap on the lines the trainer sees.
        character_coverage: fraction of characters the model covers (the rest map to unk).
        num_threads: trainer threads (part of the cache key: it changes the result).

    Returns:
        The tokenizer.

    Raises:
        ValueError: on a bad argument, or if there is no text to train on.
    """
    num_pieces = check_int("num_pieces", num_pieces, MIN_PIECES)
    seed = check_int("seed", seed, 0)
    max_sentences = check_int("max_sentences", max_sentences, 1)
    num_threads = check_int("num_threads", num_threads, 1, 1024)
    coverage = check_float("character_coverage", character_coverage, 0.9, 1.0)
    if isinstance(docs, str):
        raise ValueError("docs must be a sequence of documents, got a single str")
    docs = list(docs)
    lines = _sentences(docs)
    if not lines:
        raise ValueError("docs: no text to train a tokenizer on")
    options = {
        "num_pieces": num_pieces,
        # The seed only matters when lines are sampled: leave it out of the key otherwise.
        "seed": seed if len(lines) > max_sentences else None,
        "max_sentences": max_sentences,
        "character_coverage": coverage,
        "num_threads": num_threads,
    }
    cache_path = None
    if use_cache:
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        cache_path = root / f"spm-{_cache_key(docs, options)[:16]}.model"
        if cache_path.is_file():
            try:
                return Tokenizer(cache_path.read_bytes())
            except ValueError:
                pass  # a foreign or damaged file: retrain and overwrite it
    proto = _train(lines, options)
    tok = Tokenizer(proto)
    if cache_path is not None:
        write_atomic(cache_path, proto)
    return tok


def _train(lines: list[str], options: dict) -> bytes:
    if options["seed"] is not None:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(options["seed"])))
        keep = np.sort(rng.choice(len(lines), size=options["max_sentences"], replace=False))
        lines = [lines[i] for i in keep]
    writer = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=writer,
            model_type="unigram",
            vocab_size=options["num_pieces"],
            hard_vocab_limit=False,
            pad_id=_PAD,
            eos_id=_EOS,
            unk_id=_UNK,
            bos_id=-1,
            character_coverage=options["character_coverage"],
            num_threads=options["num_threads"],
            input_sentence_size=0,  # sampling is done above, from our seed
            shuffle_input_sentence=False,
            max_sentence_length=1 << 16,
            minloglevel=2,  # errors only: no progress spam on stderr
        )
    except RuntimeError as exc:
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else "training failed"
        raise ValueError(
            f"num_pieces: sentencepiece cannot train {options['num_pieces']} pieces on this "
            f"corpus ({msg})"
        ) from None
    return writer.getvalue()
