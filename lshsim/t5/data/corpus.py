"""Text corpora for span-corruption pretraining: an embedded one, plain text and JSON lines.

Every reader returns a ``list[str]`` of documents in a deterministic order, with surrounding
whitespace stripped and empty documents dropped. A *document* is the unit that
:func:`split_documents` holds out and that the packer concatenates (see ``lshsim.t5.data.spans``).

The embedded corpus needs no download: it is the English text that ships with every CPython
(the ``pydoc`` help topics and the docstrings of the standard library), so the smoke configs
train anywhere. For real pretraining pass C4-style JSON lines (``{"text": ...}`` per line).

This module imports neither JAX nor the standard-library modules it reads: docstrings are
collected with :mod:`ast` from the source files, so no module's import side effects run.
"""

from __future__ import annotations

import ast
import functools
import gzip
import hashlib
import inspect
import json
import os
import sys
import sysconfig
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from lshsim._io import default_cache_dir, parse_json, read_json, write_atomic
from lshsim._validate import check_float, check_int

__all__ = [
    "MIN_DOCSTRING_WORDS",
    "check_corpus_paths",
    "embedded_corpus",
    "load_corpus",
    "read_jsonl",
    "read_text_files",
    "split_documents",
]

#: Docstrings shorter than this many words (e.g. "Return self==value.") are not documents.
MIN_DOCSTRING_WORDS = 10

#: Standard-library directories that hold tests, tools or vendored code rather than prose.
_SKIP_DIRS = frozenset(
    {
        "site-packages",
        "dist-packages",
        "test",
        "tests",
        "idlelib",
        "lib2to3",
        "__pycache__",
        "pydoc_data",  # its topics are read directly, see _pydoc_topics
        "turtledemo",
        "ensurepip",
    }
)

_JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")


# --------------------------------------------------------------------------- embedded corpus


def embedded_corpus() -> list[str]:
    """Return the English corpus that ships with CPython, one document per topic or docstring.

    The documents are (a) the texts of ``pydoc_data.topics.topics`` (the ``help()`` topics,
    sorted by topic name), then (b) the module, class and function docstrings of the standard
    library's ``.py`` sources (sorted paths, source order within a file), cleaned with
    :func:`inspect.cleandoc`, keeping those of at least :data:`MIN_DOCSTRING_WORDS` words.
    Sources are parsed with :mod:`ast`, never imported. Directories of tests, tools and
    third-party packages are skipped (``site-packages``, ``test``, ``tests``, ``idlelib``,
    ``lib2to3``, ...). Exact duplicates are dropped (first occurrence kept), so a held-out
    split cannot contain a verbatim copy of a training document.

    The result is computed once per process and a fresh list is returned on each call. It is
    kept in :func:`lshsim._io.default_cache_dir` as ``corpus-<key>.json`` (2 MB), where the
    key is a hash of this module's code, the Python version, the pydoc topics and every
    source file's path, size and modification time: parsing the sources takes about 4 s
    (nearly all of it ``ast.parse``), reading the cached documents about 20 ms. A missing,
    damaged or unwritable cache only means parsing again. On CPython 3.11 it holds about
    5 000 documents and 2 MB of text (about 0.4 M tokens with an 8 000-piece tokenizer):
    plenty for smoke runs, far too little for real pretraining.

    Returns:
        The documents, in a deterministic order.

    Raises:
        ValueError: if neither the standard-library sources nor ``pydoc_data`` are available.
    """
    return list(_embedded_corpus())


@functools.lru_cache(maxsize=1)
def _embedded_corpus() -> tuple[str, ...]:
    topics, files = _pydoc_topics(), _stdlib_sources()
    path = default_cache_dir() / f"corpus-{_fingerprint(topics, files)}.json"
    docs = _read_cached(path)
    if docs is None:
        docs = _dedupe([*topics, *_stdlib_docstrings(files)])
        if not docs:
            raise ValueError(
                "corpus: the embedded corpus is empty (no standard-library sources and no "
                "pydoc_data topics in this Python); pass corpus files instead"
            )
        try:
            write_atomic(path, json.dumps(docs))
        except OSError:
            pass  # an unwritable cache only costs the next process the parse again
    return tuple(docs)


def _fingerprint(topics: list[str], files: list[Path]) -> str:
    """What the embedded corpus is made from: this module's code, the Python, every source.

    A source is named by its path, size and modification time (``stat``: about 5 ms for the
    whole standard library, against about 4 s to parse it), the topics by their text.
    """
    h = hashlib.sha256()
    h.update(Path(__file__).read_bytes())
    h.update(f"{sys.version}\0{MIN_DOCSTRING_WORDS}\0".encode())
    h.update(json.dumps(topics).encode())
    for path in files:
        try:
            st = path.stat()
        except OSError:  # gone since the walk: the parse skips it too
            continue
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def _read_cached(path: Path) -> list[str] | None:
    """The documents cached at ``path``, or ``None`` if it is missing, unreadable or foreign."""
    try:
        docs = read_json(path, expect=list)
    except ValueError:
        return None
    return docs if docs and all(isinstance(d, str) for d in docs) else None


def _pydoc_topics() -> list[str]:
    try:
        from pydoc_data.topics import topics  # optional in stripped Pythons
    except ImportError:
        return []
    return [text.strip() for _, text in sorted(topics.items()) if text.strip()]


def _stdlib_sources() -> list[Path]:
    root = sysconfig.get_paths().get("stdlib")
    if not root or not os.path.isdir(root):
        return []
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        files.extend(Path(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return files


def _stdlib_docstrings(files: list[Path]) -> list[str]:
    docs: list[str] = []
    for path in files:
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError, OSError, UnicodeDecodeError):
            continue  # a broken or unreadable file in an odd installation: skip it
        for node in _definitions(tree):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                text = inspect.cleandoc(doc).strip()
                if len(text.split()) >= MIN_DOCSTRING_WORDS:
                    docs.append(text)
    return docs


_DEFS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _definitions(tree: ast.Module) -> Iterator[ast.AST]:
    """Yield the module, class and function nodes in source order.

    Only statement blocks are visited (docstrings live nowhere else), which is about five
    times faster than :func:`ast.walk` over every expression node.
    """
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFS):
            yield node
        children = [
            child
            for name in _BLOCKS
            if isinstance(block := getattr(node, name, None), list)
            for child in block
        ]
        stack.extend(reversed(children))


def _dedupe(docs: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(docs))


# --------------------------------------------------------------------------- file readers


def _open_text(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def check_corpus_paths(paths, option: str = "--corpus") -> None:
    """Refuse, before any reading, a corpus path that does not exist (a file or a folder).

    Args:
        paths: the given paths (``None`` or empty: the embedded corpus).
        option: the option named in the message.

    Raises:
        ValueError: ``--corpus: no such file PATH``.
    """
    for path in paths or ():
        if not Path(path).exists():
            raise ValueError(f"{option}: no such file {path}")


def _existing_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"corpus: no such file {str(path)!r}")
    return p


def read_text_files(paths: Iterable[str | Path]) -> list[str]:
    """Read plain-text files (optionally gzipped), one document per paragraph.

    A paragraph is a maximal run of non-blank lines; its lines are joined with newlines.
    Paragraphs (rather than whole files) are the documents so that a single book-sized file can
    still be split into train and held-out parts.

    Args:
        paths: text files, UTF-8, read in the given order; names ending in ``.gz`` are
            decompressed.

    Returns:
        The paragraphs of all files, in file order.

    Raises:
        ValueError: if a file does not exist or is not valid UTF-8 (gzip).
    """
    docs: list[str] = []
    for path in paths:
        p = _existing_file(path)
        try:
            with _open_text(p) as fh:
                para: list[str] = []
                for line in fh:
                    if line.strip():
                        para.append(line.rstrip())
                    elif para:
                        docs.append("\n".join(para).strip())
                        para = []
                if para:
                    docs.append("\n".join(para).strip())
        except (UnicodeDecodeError, OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"corpus: cannot read {str(path)!r}: {_one_line(exc)}") from None
    return docs


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (a damaged gzip stream's is zlib's)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def read_jsonl(paths: Iterable[str | Path], field: str = "text") -> list[str]:
    """Read C4-style JSON lines (``{"text": ...}`` per line), optionally gzipped.

    Blank lines are skipped. A file whose first non-blank character is ``[`` is read as one
    JSON array of such objects instead.

    Args:
        paths: ``.jsonl`` / ``.json`` files, read in the given order; ``.gz`` is decompressed.
        field: the key that holds each record's text.

    Returns:
        One document per record, in file order (empty texts dropped).

    Raises:
        ValueError: if a file does not exist, is not UTF-8 (a damaged gzip stream), a line is
            not valid JSON (the message names the file and line number; nesting too deep and a
            repeated key count), a record is not an object, or it lacks ``field`` or its value
            is not a string.
    """
    docs: list[str] = []
    for path in paths:
        p = _existing_file(path)
        try:
            with _open_text(p) as fh:
                text = fh.read()
        except (UnicodeDecodeError, OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"corpus: cannot read {str(path)!r}: {_one_line(exc)}") from None
        if text.lstrip().startswith("["):
            numbered = [(0, r) for r in parse_json(text, f"corpus: {path}")]
        else:
            numbered = [
                (lineno, parse_json(line, f"corpus: {path}:{lineno}"))
                for lineno, line in enumerate(text.split("\n"), start=1)
                if line.strip()
            ]
        for lineno, record in numbered:
            where = f"{path}:{lineno}" if lineno else str(path)
            if not isinstance(record, dict):
                raise ValueError(f"corpus: {where}: expected a JSON object, got {record!r:.40}")
            if field not in record:
                raise ValueError(f"corpus: {where}: record has no field {field!r}")
            value = record[field]
            if not isinstance(value, str):
                raise ValueError(f"corpus: {where}: field {field!r} is not a string")
            if value.strip():
                docs.append(value.strip())
    return docs


def _expand(paths: Sequence[str | Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            files.extend(
                sorted(
                    f
                    for f in p.rglob("*")
                    if f.is_file() and not any(part.startswith(".") for part in f.parts)
                )
            )
        else:
            files.append(_existing_file(path))
    return files


def load_corpus(paths: Sequence[str | Path] | None = None) -> list[str]:
    """Load documents from files, or the embedded corpus when no paths are given.

    Files ending in ``.jsonl``, ``.json``, ``.jsonl.gz`` or ``.json.gz`` are read with
    :func:`read_jsonl` (field ``"text"``); anything else with :func:`read_text_files`. A
    directory stands for all its files, recursively, in sorted order (hidden files skipped).

    Args:
        paths: files or directories; ``None`` or empty for :func:`embedded_corpus`.

    Returns:
        The documents of all files, in the given order.

    Raises:
        ValueError: if a path does not exist, a file is malformed, or there is no text at all.
    """
    if paths is None or len(paths) == 0:
        return embedded_corpus()
    if isinstance(paths, (str, Path)):
        paths = [paths]
    docs: list[str] = []
    for f in _expand(paths):
        if f.name.endswith(_JSONL_SUFFIXES):
            docs.extend(read_jsonl([f]))
        else:
            docs.extend(read_text_files([f]))
    docs = [d for d in docs if d]
    if not docs:
        shown = ", ".join(repr(str(p)) for p in paths)
        raise ValueError(f"corpus: {shown} contains no text")
    return docs


# --------------------------------------------------------------------------- held-out split


def _doc_key(text: str, seed: int) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(seed.to_bytes(16, "little", signed=True))
    h.update(text.encode("utf-8"))
    return h.digest()


def split_documents(
    docs: Sequence[str], eval_fraction: float = 0.05, seed: int = 0
) -> tuple[list[str], list[str]]:
    """Split documents into a training and a held-out part, deterministically.

    Each document gets a key, the BLAKE2b hash of ``seed`` and its text (stable across
    processes and machines, unlike the salted built-in :func:`hash`). The
    ``max(1, round(eval_fraction * len(docs)))`` documents with the smallest keys are held out
    (ties broken by position). Both parts keep the input order. Because the key depends only
    on a document's own text, appending documents to a corpus moves few documents across.

    Args:
        docs: the documents, at least 2.
        eval_fraction: the held-out fraction, in ``(0, 1)``.
        seed: selects a different split.

    Returns:
        ``(train, eval)``, both non-empty.

    Raises:
        ValueError: if ``eval_fraction`` is outside ``(0, 1)``, ``seed`` is not an integer, or
            there are too few documents for two non-empty parts.
    """
    seed = check_int("seed", seed, -(2**127), 2**127 - 1)  # 16 signed bytes in the key
    frac = check_float("eval_fraction", eval_fraction, 0.0, 1.0, lo_open=True, hi_open=True)
    n = len(docs)
    if n < 2:
        raise ValueError(f"corpus: {n} document(s) cannot be split into train and eval (need >= 2)")
    n_eval = min(max(1, round(frac * n)), n - 1)
    order = sorted(range(n), key=lambda i: (_doc_key(docs[i], seed), i))
    held = set(order[:n_eval])
    train = [d for i, d in enumerate(docs) if i not in held]
    evals = [d for i, d in enumerate(docs) if i in held]
    return train, evals
