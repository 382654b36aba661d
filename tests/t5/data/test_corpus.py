"""Tests for lshsim.t5.data.corpus: the embedded corpus, file readers and the held-out split."""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lshsim.t5.data import corpus
from lshsim.t5.data.corpus import (
    MIN_DOCSTRING_WORDS,
    embedded_corpus,
    load_corpus,
    read_jsonl,
    read_text_files,
    split_documents,
)

# ----------------------------------------------------------------------------- embedded


def test_embedded_corpus_is_big_english_text():
    """The embedded corpus has thousands of documents of ordinary English prose."""
    docs = embedded_corpus()
    assert len(docs) > 1000
    assert sum(map(len, docs)) > 500_000
    assert all(isinstance(d, str) and d == d.strip() and d for d in docs)
    words = Counter(w.lower() for d in docs for w in d.split())
    top = {w for w, _ in words.most_common(20)}
    assert {"the", "of", "a", "to", "is"} <= top
    with_the = sum(" the " in d for d in docs) / len(docs)
    assert with_the > 0.5


def test_embedded_corpus_is_deterministic_and_copied():
    """Two calls give equal lists; mutating one does not change the cached corpus."""
    a = embedded_corpus()
    b = embedded_corpus()
    assert a == b
    a.clear()
    assert embedded_corpus() == b


def test_embedded_corpus_has_topics_then_docstrings_without_duplicates():
    """It starts with the pydoc topics, holds no duplicate, and short docstrings are dropped."""
    from pydoc_data.topics import topics

    docs = embedded_corpus()
    first = list(dict.fromkeys(t.strip() for _, t in sorted(topics.items()) if t.strip()))
    assert docs[: len(first)] == first
    assert len(set(docs)) == len(docs)
    assert all(len(d.split()) >= MIN_DOCSTRING_WORDS for d in docs[len(first) :])


def test_embedded_corpus_imports_no_stdlib_module():
    """Docstrings come from ast, so modules with import side effects are never imported."""
    embedded_corpus()
    assert "antigravity" not in sys.modules
    assert "this" not in sys.modules


def test_embedded_corpus_falls_back_to_pydoc_topics(monkeypatch):
    """Without standard-library sources the corpus is the pydoc topics alone."""
    monkeypatch.setattr(corpus, "_stdlib_sources", list)
    docs = list(corpus._embedded_corpus.__wrapped__())  # bypass the process cache
    assert docs == list(dict.fromkeys(corpus._pydoc_topics()))
    assert docs


def test_embedded_corpus_empty_raises(monkeypatch):
    """With neither source the corpus is an error, not an empty list."""
    monkeypatch.setattr(corpus, "_stdlib_sources", list)
    monkeypatch.setattr(corpus, "_pydoc_topics", list)
    with pytest.raises(ValueError, match=r"^corpus: .*empty"):
        corpus._embedded_corpus.__wrapped__()


@pytest.fixture
def few_sources(tmp_path, monkeypatch):
    """The corpus built from 3 standard-library files, cached in a private folder; returns
    the files and a list that counts the parses."""
    files = corpus._stdlib_sources()[:3]
    parses, parse = [], corpus._stdlib_docstrings
    monkeypatch.setattr(corpus, "_stdlib_sources", lambda: list(files))
    monkeypatch.setattr(corpus, "_stdlib_docstrings", lambda f: parses.append(1) or parse(f))
    monkeypatch.setenv("LSHSIM_CACHE", str(tmp_path / "cache"))
    return files, parses


def test_embedded_corpus_is_cached_on_disk_and_read_back(tmp_path, few_sources):
    """The first process parses and writes corpus-<key>.json; the next reads it unparsed."""
    _, parses = few_sources
    docs = corpus._embedded_corpus.__wrapped__()
    (cached,) = (tmp_path / "cache").glob("corpus-*.json")
    assert json.loads(cached.read_text()) == list(docs) and len(parses) == 1
    assert corpus._embedded_corpus.__wrapped__() == docs and len(parses) == 1
    topics = tuple(dict.fromkeys(corpus._pydoc_topics()))
    assert docs[: len(topics)] == topics and len(docs) > len(topics)


def test_a_changed_source_or_a_damaged_cache_is_parsed_again(tmp_path, few_sources, monkeypatch):
    """Another size or modification time of a source is another key; a cache file that is
    not a list of documents is ignored and rewritten; an unwritable cache is no error."""
    files, parses = few_sources
    docs = corpus._embedded_corpus.__wrapped__()
    (cached,) = (tmp_path / "cache").glob("corpus-*.json")
    stat = type(files[0]).stat
    with monkeypatch.context() as m:  # the first file as if edited: the second one's stat
        m.setattr(type(files[0]), "stat", lambda p, **kw: stat(files[1] if p == files[0] else p))
        assert corpus._embedded_corpus.__wrapped__() == docs and len(parses) == 2
    assert len(list((tmp_path / "cache").glob("corpus-*.json"))) == 2
    monkeypatch.setattr(corpus, "_stdlib_docstrings", lambda f: parses.append(1) or [])
    for damaged in ("[1, 2", "{}", "[]", '["a", 3]'):
        cached.write_text(damaged)
        again = corpus._embedded_corpus.__wrapped__()
        assert again == tuple(dict.fromkeys(corpus._pydoc_topics()))  # parsed (to nothing)
        assert json.loads(cached.read_text()) == list(again)
    assert len(parses) == 6
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("LSHSIM_CACHE", str(tmp_path / "file" / "cache"))
    assert corpus._embedded_corpus.__wrapped__() == again and len(parses) == 7


def test_definitions_in_source_order():
    """Nested and conditional definitions are all found, in source order."""
    import ast

    src = '''
"""Module doc."""
class A:
    """Class doc."""
    def f(self):
        """Method doc."""
if True:
    def g():
        """Conditional doc."""
else:
    async def h():
        """Async doc."""
try:
    pass
finally:
    def k():
        """Finally doc."""
'''
    docs = [ast.get_docstring(n) for n in corpus._definitions(ast.parse(src))]
    assert docs == [
        "Module doc.",
        "Class doc.",
        "Method doc.",
        "Conditional doc.",
        "Async doc.",
        "Finally doc.",
    ]


# ----------------------------------------------------------------------------- text files


def test_read_text_files_splits_paragraphs(tmp_path):
    """Paragraphs separated by blank lines are documents; gzip is read transparently."""
    a = tmp_path / "a.txt"
    a.write_text("First line.\nSecond line.\n\n\n  \nNext para.\n", encoding="utf-8")
    b = tmp_path / "b.txt.gz"
    with gzip.open(b, "wt", encoding="utf-8") as fh:
        fh.write("Gzipped paragraph.\n\nAnother one")
    assert read_text_files([a, b]) == [
        "First line.\nSecond line.",
        "Next para.",
        "Gzipped paragraph.",
        "Another one",
    ]


def test_read_text_files_missing_file(tmp_path):
    """A missing file is a one-line ValueError naming the corpus and the path."""
    with pytest.raises(ValueError, match=r"^corpus: no such file '.*nope\.txt'$"):
        read_text_files([tmp_path / "nope.txt"])


def test_read_text_files_bad_utf8(tmp_path):
    """Undecodable bytes are a ValueError naming the file."""
    p = tmp_path / "bad.txt"
    p.write_bytes(b"\xff\xfe\xfa not utf8")
    with pytest.raises(ValueError, match=r"^corpus: cannot read .*bad\.txt"):
        read_text_files([p])


# ----------------------------------------------------------------------------- json lines


def _write_jsonl(path, records, opener=open):
    with opener(path, "wt", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")


def test_read_jsonl_plain_and_gzip(tmp_path):
    """C4-style records are read in order from .jsonl and .jsonl.gz; blank texts dropped."""
    a = tmp_path / "a.jsonl"
    _write_jsonl(a, [{"text": "one", "url": "x"}, {"text": "  "}, {"text": " two\n"}])
    b = tmp_path / "b.jsonl.gz"
    _write_jsonl(b, [{"text": "three"}], opener=gzip.open)
    assert read_jsonl([a, b]) == ["one", "two", "three"]


def test_read_jsonl_array_and_custom_field(tmp_path):
    """A JSON array of objects works too, and the field name is configurable."""
    p = tmp_path / "x.json"
    p.write_text(json.dumps([{"body": "alpha"}, {"body": "beta"}]), encoding="utf-8")
    assert read_jsonl([p], field="body") == ["alpha", "beta"]


def test_read_jsonl_bad_line_names_file_and_line(tmp_path):
    """An invalid JSON line is reported with its file and 1-based line number."""
    p = tmp_path / "bad.jsonl"
    p.write_text('{"text": "ok"}\n\n{"text": oops}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"^corpus: .*bad\.jsonl:3: not valid JSON"):
        read_jsonl([p])


def test_read_jsonl_missing_field(tmp_path):
    """A record without the field is a ValueError naming the field and line."""
    p = tmp_path / "m.jsonl"
    _write_jsonl(p, [{"text": "ok"}, {"content": "no text"}])
    with pytest.raises(ValueError, match=r"m\.jsonl:2: record has no field 'text'"):
        read_jsonl([p])


@pytest.mark.parametrize("record", [1, "str", {"text": 5}])
def test_read_jsonl_wrong_types(tmp_path, record):
    """Non-object records and non-string texts are rejected."""
    p = tmp_path / "w.jsonl"
    _write_jsonl(p, [record])
    with pytest.raises(ValueError, match=r"^corpus: .*w\.jsonl:1: "):
        read_jsonl([p])


# ----------------------------------------------------------------------------- load_corpus


def test_load_corpus_none_is_embedded():
    """No paths (None or empty) means the embedded corpus."""
    assert load_corpus(None) == embedded_corpus()
    assert load_corpus([]) == embedded_corpus()


def test_load_corpus_directory_dispatches_on_suffix(tmp_path):
    """A directory is read recursively in sorted order, each file by its suffix."""
    (tmp_path / "sub").mkdir()
    _write_jsonl(tmp_path / "b.jsonl", [{"text": "from jsonl"}])
    (tmp_path / "a.txt").write_text("from text\n\nsecond", encoding="utf-8")
    _write_jsonl(tmp_path / "sub" / "c.json.gz", [{"text": "from gz"}], opener=gzip.open)
    (tmp_path / ".hidden.txt").write_text("hidden", encoding="utf-8")
    assert load_corpus([tmp_path]) == ["from text", "second", "from jsonl", "from gz"]
    assert load_corpus(str(tmp_path / "a.txt")) == ["from text", "second"]


def test_load_corpus_missing_file(tmp_path):
    """A missing path is reported as such."""
    with pytest.raises(ValueError, match=r"^corpus: no such file .*missing\.jsonl"):
        load_corpus([tmp_path / "missing.jsonl"])


def test_load_corpus_without_text(tmp_path):
    """Files that hold only whitespace are an error naming them."""
    p = tmp_path / "blank.txt"
    p.write_text("\n   \n\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^corpus: .*blank\.txt.* contains no text$"):
        load_corpus([p])


# ----------------------------------------------------------------------------- split


def test_split_is_deterministic_partition():
    """The split is a partition that keeps order, with round(fraction * n) held out."""
    docs = [f"document number {i}" for i in range(200)]
    train, evals = split_documents(docs, eval_fraction=0.1, seed=3)
    assert len(evals) == 20
    assert sorted(train + evals) == sorted(docs)
    assert train == [d for d in docs if d in set(train)]
    assert evals == [d for d in docs if d in set(evals)]
    assert split_documents(docs, eval_fraction=0.1, seed=3) == (train, evals)
    assert split_documents(docs, eval_fraction=0.1, seed=4)[1] != evals


def test_split_is_stable_under_appending():
    """A document's side depends on its own text: appending documents moves few across."""
    docs = [f"doc {i}" for i in range(1000)]
    _, eval_a = split_documents(docs, eval_fraction=0.05)
    _, eval_b = split_documents([*docs, *(f"new {i}" for i in range(10))], eval_fraction=0.05)
    assert len(set(eval_a) & set(eval_b)) >= 45


@given(st.lists(st.text(min_size=1), min_size=2, max_size=40), st.floats(0.01, 0.99))
def test_split_both_sides_nonempty(docs, frac):
    """Any corpus of >= 2 documents gives two non-empty parts that add up to it."""
    train, evals = split_documents(docs, eval_fraction=frac)
    assert train and evals
    assert Counter(train) + Counter(evals) == Counter(docs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eval_fraction": 0.0}, r"^eval_fraction must be in \(0, 1\)"),
        ({"eval_fraction": 1.0}, r"^eval_fraction must be in \(0, 1\)"),
        ({"eval_fraction": float("nan")}, r"^eval_fraction"),
        ({"eval_fraction": "x"}, r"^eval_fraction must be a number"),
        ({"seed": 1.5}, r"^seed must be an integer"),
    ],
)
def test_split_bad_arguments(kwargs, match):
    """Bad arguments raise a ValueError naming the parameter."""
    with pytest.raises(ValueError, match=match):
        split_documents(["a", "b", "c"], **kwargs)


def test_split_too_few_documents():
    """One document cannot be split."""
    with pytest.raises(ValueError, match=r"^corpus: 1 document"):
        split_documents(["only"])
