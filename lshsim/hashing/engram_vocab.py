"""Engram's compressing map: decoded token strings to compressed ids, with ``unicodedata``.

:func:`compress_table` builds Engram's compressing lookup table from decoded token strings
(:func:`sentencepiece_texts` gives them for a SentencePiece model); :func:`normalize_text`
documents where it can differ from the Hugging Face ``tokenizers`` normalisers Engram uses.
The hash itself is :mod:`lshsim.hashing.engram`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

__all__ = ["SENTINEL", "WHITE_SPACE", "compress_table", "normalize_text", "sentencepiece_texts"]


SENTINEL = "\ue000"
#: Unicode White_Space (what Rust's ``char::is_whitespace`` and so ``Strip`` remove).
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_RUNS = frozenset(" \t\r\n")


def normalize_text(text: str) -> str:
    r"""Engram's normaliser with ``unicodedata``: the steps of its ``tokenizers`` sequence.

    1. NFKC, then NFD; 2. drop every combining mark (categories Mn, Mc, Me, as ``StripAccents``
    does after NFD); 3. lowercase character by character (``Lowercase`` maps each char with
    Rust's ``char::to_lowercase``: no final-sigma rule, unlike ``str.lower()`` on a word);
    4. every run of ``[ \t\r\n]`` becomes one space; 5. a text that is exactly one space
    stays one space, otherwise leading and trailing Unicode White_Space is stripped.

    Where it can differ from Hugging Face ``tokenizers``: the Unicode version of the tables
    (Python's ``unicodedata.unidata_version`` against the Rust crates'), which moves characters
    assigned or re-categorised in between (normalisation, marks, case); and a text holding the
    private-use sentinel U+E000, which Engram turns into a space (done here too). Python's own
    ``str.strip()``/``isspace()`` differ from White_Space (U+001C..U+001F), so they are not used.
    """
    s = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
    s = "".join(c for c in s if unicodedata.category(c)[0] != "M")
    s = "".join(c.lower() for c in s)
    out, in_run = [], False
    for c in s:
        if c in _RUNS:
            if not in_run:
                out.append(" ")
            in_run = True
        else:
            out.append(c)
            in_run = False
    s = "".join(out)
    if s == " ":
        s = SENTINEL
    lo, hi = 0, len(s)
    while lo < hi and s[lo] in WHITE_SPACE:
        lo += 1
    while hi > lo and s[hi - 1] in WHITE_SPACE:
        hi -= 1
    return s[lo:hi].replace(SENTINEL, " ")


def compress_table(
    pieces: Sequence[str], raw_tokens: Sequence[str] | None = None
) -> tuple[np.ndarray, int]:
    """Engram's ``CompressedTokenizer`` lookup from decoded token strings.

    Token ``i``'s key is :func:`normalize_text` of its text (the text itself if that is empty),
    or its raw token string when the text holds U+FFFD (an incomplete UTF-8 sequence); tokens
    with equal keys share a new id, numbered in order of first appearance.

    Args:
        pieces: ``decode([i])`` for every token id ``i``.
        raw_tokens: the raw token strings (``convert_ids_to_tokens``), for U+FFFD texts;
            default: the texts.

    Returns:
        ``(lookup int64[V], new_vocab)``: ``lookup[old] = new``, ``new_vocab`` new ids.
    """
    texts = list(pieces)
    if any(not isinstance(t, str) for t in texts):
        raise ValueError("pieces must be strings (the decoded text of every token)")
    raw = texts if raw_tokens is None else list(raw_tokens)
    if len(raw) != len(texts):
        raise ValueError(f"raw_tokens must have one entry per piece ({len(texts)}), got {len(raw)}")
    keys: dict[str, int] = {}
    lookup = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        key = raw[i] if "\ufffd" in text else (normalize_text(text) or text)
        lookup[i] = keys.setdefault(key, len(keys))
    return lookup, len(keys)


def sentencepiece_texts(model) -> tuple[list[str], list[str]]:
    """``(decoded texts, raw pieces)`` of every id of a SentencePiece model.

    A control or unknown piece's text is the piece itself (``<pad>``, ``</s>``, ``<unk>``), as
    a Hugging Face ``decode([id], skip_special_tokens=False)`` gives it; every other piece is
    ``decode([id])`` (``▁the`` -> ``the``; a byte piece of a non-ASCII byte -> U+FFFD, so its
    key is the raw piece ``<0xE2>``).

    Args:
        model: a ``SentencePieceProcessor``, serialized model bytes, a ``.model`` path, or an
            object with a ``model_proto`` attribute (:class:`lshsim.t5.data.Tokenizer`).
    """
    import sentencepiece as spm

    sp = model
    if not isinstance(model, spm.SentencePieceProcessor):
        proto = getattr(model, "model_proto", model)
        sp = spm.SentencePieceProcessor()
        if isinstance(proto, bytes | bytearray):
            sp.LoadFromSerializedProto(bytes(proto))
        else:
            sp.Load(str(proto))
    texts, raw = [], []
    for i in range(sp.get_piece_size()):
        piece = sp.id_to_piece(i)
        special = sp.is_control(i) or sp.is_unknown(i)
        texts.append(piece if special else sp.decode([i]))
        raw.append(piece)
    return texts, raw
