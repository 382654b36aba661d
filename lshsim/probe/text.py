"""The token rows a tap reads: held-out text, tokenised as the tapped model would be.

With the model's own tokenizer (a Hugging Face folder's), the held-out documents of the corpus
(the embedded one by default; :func:`lshsim.t5.data.corpus.split_documents`) are tokenised
with it, concatenated and cut into rows; a replaced position takes any id of the tokenizer
that is not special and that the model accepts. Without one, lshsim's own SentencePiece
tokenizer of the ``tiny`` config (:func:`lshsim.t5.probe.sentence_source`) makes the rows and
the ids are taken modulo the model's vocabulary (the tap's note says so).
"""

from __future__ import annotations

import numpy as np

from lshsim._validate import check_int
from lshsim.probe.tap import RouterTap

__all__ = ["tap_rows"]


def tap_rows(
    tap: RouterTap, *, corpus=None, seed: int = 0, length: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """``(rows int64[R, length], replace_ids)`` for ``tap``.

    Args:
        tap: the router (its ``tokenizer`` and ``vocab`` are used).
        corpus: corpus paths (``None``: the embedded corpus).
        seed: the held-out split's seed.
        length: tokens per row.

    Raises:
        ValueError: a corpus too short for one row, or fewer than 2 ordinary ids.
    """
    length = check_int("length", length, 2)
    if tap.tokenizer is not None:
        return _own_tokenizer(tap, corpus, seed, length)
    from lshsim.t5.configs import get_config
    from lshsim.t5.probe import sentence_source

    rows, ids = sentence_source(get_config("tiny"), corpus=corpus, seed=seed, length=length)
    rows = rows.astype(np.int64)
    if tap.vocab is not None:
        rows, ids = rows % tap.vocab, np.unique(ids % tap.vocab)
    return rows, ids


def _own_tokenizer(tap: RouterTap, corpus, seed: int, length: int):
    """Rows from the held-out documents with the tap's tokenizer."""
    from lshsim.t5.data.corpus import load_corpus, split_documents
    from lshsim.t5.probe import held_out_rows

    tok = tap.tokenizer
    limit = len(tok) if tap.vocab is None else min(len(tok), tap.vocab)
    special = set(tok.all_special_ids)
    ids = np.array([i for i in range(limit) if i not in special], dtype=np.int64)
    if ids.size < 2:
        raise ValueError(f"tokenizer: {ids.size} ordinary ids (of {len(tok)}): not a usable one")
    _, docs = split_documents(load_corpus(corpus), seed=seed)

    class _Encoder:  # held_out_rows' tokenizer interface
        @staticmethod
        def encode_batch(texts):
            return [tok(t, add_special_tokens=False)["input_ids"] for t in texts]

    rows = held_out_rows(docs, _Encoder, length).astype(np.int64)
    if tap.vocab is not None and rows.max(initial=0) >= tap.vocab:
        raise ValueError(f"tokenizer: ids up to {rows.max()} for a model of {tap.vocab} ids")
    return rows, ids
