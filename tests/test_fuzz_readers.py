"""Every file lshsim reads, fed hostile content: it reads, or one line names the file (issue 48).

For each reader of :data:`tests.readers.READERS` (``compare``'s results files and the
manifest beside them, the folder ``reproduce --verify`` checks, the launcher's run files, the
memory studies' results, a T5 run's ``run.json``, ``metrics.jsonl`` and checkpoint metadata,
corpus files, the tokenizer, ``tune``'s similarity file, a Hugging Face ``config.json``) the
test takes a valid file (made cheaply, no model trained) and hypothesis (derandomised, so CI
sees the same cases) feeds hostile versions of it: every JSON type at the top and in place of
a nested value, strings for numbers and numbers for strings, a field removed, a repeated key,
``NaN``, ``Infinity``, huge and deeply nested values, a cut at any point, Latin-1 and UTF-16
bytes, binary garbage. A case passes when the reader returns (the command exits 0, or 1 with
its verdict), or refuses with one line that names the file (``ValueError``; exit 2 through
the CLI); any other exception (exit 70 through the CLI) fails it. :data:`FOUND` keeps each
case the fuzzer found as an explicit regression. ``LSHSIM_FUZZ_EXAMPLES=N`` draws ``N``
cases per reader instead of CI's few (a longer search by hand).
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_budget import examples
from tests.readers import BY_NAME, READERS, Reader

#: A failing case's report may be the 100 kB of a deeply nested file: say it all the same.
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

# --------------------------------------------------------------------------- hostile versions

SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6)
)
#: Any JSON value, small.
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)
#: Raw JSON text put in place of a value: what ``json.dumps`` never writes.
FRAGMENTS = (
    "NaN",
    "-Infinity",
    "1e999",
    "1" + "0" * 400,
    "9" * 5000,
    "-0",
    "[" * 990 + "]" * 990,
    "[" * 100_000,
    '"\\ud800"',
    '"\\u0000"',
    '"line\\nbreak"',
    "{}",
    "[]",
    '""',
)
#: Encodings a file may come in.
ENCODINGS = ("utf-16", "utf-16-le", "utf-32", "utf-8-sig")
#: The sentinel a value is replaced by before a raw fragment is put in its place.
SENTINEL = "\x00lshsim-fuzz\x00"


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    """The path (keys and indices) of every value inside ``doc``."""
    items = (
        doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    )
    out = []
    for key, value in items:
        out.append((*prefix, key))
        out += _paths(value, (*prefix, key))
    return out


def _at(doc: object, path: tuple) -> object:
    for key in path:
        doc = doc[key]
    return doc


def _dumps(doc: object, raw: str | None = None) -> str:
    """``doc`` as JSON text, the :data:`SENTINEL` value replaced by the text ``raw``."""
    text = json.dumps(doc, ensure_ascii=False)
    return text if raw is None else text.replace(json.dumps(SENTINEL, ensure_ascii=False), raw, 1)


@st.composite
def _hostile_doc(draw, doc: object) -> str:
    """``doc`` made hostile at the JSON level, as text."""
    paths = _paths(doc)
    how = draw(st.sampled_from(["top", "nested", "swap", "drop", "fragment", "repeat"]))
    if how == "top" or not paths:
        return _dumps(draw(VALUES))
    doc = copy.deepcopy(doc)
    path = draw(st.sampled_from(paths))
    parent, key = _at(doc, path[:-1]), path[-1]
    if how == "nested":
        parent[key] = draw(VALUES)
    elif how == "swap":  # a number where a string goes, a string where a number goes
        old = parent[key]
        number = st.integers(-5, 5) | st.floats(-1e3, 1e3)
        parent[key] = str(old) if isinstance(old, int | float) else draw(number)
    elif how == "drop":
        del parent[key]
    elif how == "fragment":
        parent[key] = SENTINEL
        return _dumps(doc, draw(st.sampled_from(FRAGMENTS)))
    elif isinstance(parent, dict):  # repeat: the key twice, another value first
        old = parent[key]
        parent[key] = SENTINEL
        return _dumps(doc, f"{_dumps(draw(VALUES))}, {json.dumps(key)}: {_dumps(old)}")
    return _dumps(doc)


@st.composite
def _bytes(draw, valid: bytes, text: Callable[[], st.SearchStrategy[str]]) -> bytes:
    """The byte-level hostile versions of a file: ``text()`` draws its hostile text."""
    how = draw(st.sampled_from(["text", "text", "text", "cut", "latin-1", "encoding", "garbage"]))
    if how == "cut":
        return valid[: draw(st.integers(0, max(len(valid) - 1, 0)))]
    if how == "garbage":
        return draw(st.binary(max_size=80))
    body = draw(text())
    if how == "latin-1":
        return ("\u00e9" + body).encode("latin-1", errors="replace")
    if how == "encoding":
        return body.encode(draw(st.sampled_from(ENCODINGS)))
    return body.encode("utf-8", errors="surrogatepass")


#: Words of a hostile text file: numbers of every spelling, comments, control characters.
WORDS = ("0.5", "3", "nan", "-inf", "1e999", "1e308", "-1", "0x10", "1_0", "\u0663", "#", "",
         "\x00", "\x0c", "\u2028", "é", "[", '{"text": 1}', "2 3 4")  # fmt: skip


def hostile(reader: Reader, valid: bytes) -> st.SearchStrategy[bytes]:
    """The hostile versions of ``valid``, a valid file of ``reader``."""
    if reader.gz:  # hostile text compressed, a damaged stream, hostile bytes uncompressed
        inner = _hostile_text(reader.kind, gzip.decompress(valid))
        damaged = st.tuples(st.integers(10, len(valid) - 9), st.integers(1, 255)).map(
            lambda f: valid[: f[0]] + bytes([valid[f[0]] ^ f[1]]) + valid[f[0] + 1 :]
        )
        return inner.map(lambda b: gzip.compress(b, mtime=0)) | damaged | _bytes(valid, st.text)
    if reader.kind == "binary":
        flip = st.tuples(st.integers(0, len(valid) - 1), st.integers(1, 255)).map(
            lambda f: valid[: f[0]] + bytes([valid[f[0]] ^ f[1]]) + valid[f[0] + 1 :]
        )
        cut = st.integers(0, len(valid) - 1).map(lambda n: valid[:n])
        return flip | cut | st.binary(max_size=80)
    return _hostile_text(reader.kind, valid)


def _hostile_text(kind: str, valid: bytes) -> st.SearchStrategy[bytes]:
    """Hostile versions of a ``json``, ``jsonl`` or ``text`` file."""
    if kind == "json":
        doc = json.loads(valid)
        return _bytes(valid, lambda: _hostile_doc(doc))
    if kind == "jsonl":
        records = [json.loads(line) for line in valid.decode().splitlines() if line.strip()]

        @st.composite
        def lines(draw) -> str:
            out = [json.dumps(r) for r in records]
            i = draw(st.integers(0, len(out) - 1))
            out[i] = draw(_hostile_doc(records[i])).replace("\n", " ")
            return "\n".join(out) + draw(st.sampled_from(["\n", "", "\n\n  \n"]))

        return _bytes(valid, lines)
    words = st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join)
    return _bytes(valid, lambda: st.lists(words, max_size=6).map("\n".join) | st.text(max_size=60))


# --------------------------------------------------------------------------- the test


def _set(path: str, value: object) -> Callable[[dict], dict]:
    """An edit of a valid document: the value at ``path`` (``a/b/0``) set, or removed (DROP)."""

    def edit(doc: dict) -> dict:
        *parents, last = path.split("/")
        node = doc
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is DROP:
            del node[last]
        else:
            node[int(last) if isinstance(node, list) else last] = value
        return doc

    return edit


#: :func:`_set`'s value that removes the field.
DROP = object()
#: A field nested deeper than the JSON parser goes.
DEEP = "[" * 100_000


def _raw(path: str, text: str) -> Callable[[dict], bytes]:
    """An edit of a valid document: the value at ``path`` replaced by the JSON text ``text``."""

    def edit(doc: dict) -> bytes:
        return _dumps(_set(path, SENTINEL)(doc), text).encode()

    return edit


def _gzip_damaged(valid: bytes) -> bytes:
    """The valid gzip file with one byte of its deflate stream changed."""
    return valid[:10] + bytes([valid[10] ^ 1]) + valid[11:]


def _both(*edits: Callable[[dict], dict]) -> Callable[[dict], dict]:
    """Several edits of a valid document, in order."""

    def edit(doc: dict) -> dict:
        for one in edits:
            doc = one(doc)
        return doc

    return edit


#: What a fixed reader does with a found case: refuse it in one line naming the file, or read it.
REFUSED, READS = "refused", "reads"
#: The cases the fuzzer found (at CI's budget or at ``LSHSIM_FUZZ_EXAMPLES=400``), and a few
#: found while fixing them (marked "by hand"), each kept as a regression: ``(reader, content
#: or an edit of the valid file, what the fixed reader does, what it did before issue 48)``.
FOUND: list[tuple[str, bytes | Callable, str, str]] = [
    ("job.json", _set("key", None), REFUSED, "a Job whose key is None"),
    ("job.json", _set("key", DROP), REFUSED, "KeyError: 'key'"),
    ("job.json", _raw("key", "1" + "0" * 400), REFUSED, "a Job whose key is an int"),
    ("failed.json", _set("error", []), REFUSED, "the run 'failed' with the error '[]'"),
    ("result.json", _set("key", DROP), REFUSED, "an unfinished run, the damage unnamed"),
    ("memory-studies", b"null", REFUSED, "AttributeError: 'NoneType' ... 'get'"),
    ("memory-studies", b"", REFUSED, "ValueError 'Expecting value: line 1', no file named"),
    ("memory-studies", _set("runs/fbd8c6d1d2309ff2/extra_params", {}), REFUSED, "KeyError"),
    ("memory-studies", _set("runs/fbd8c6d1d2309ff2/seed", [0]), REFUSED, "TypeError"),
    ("memory-finetune", _set("runs", None), REFUSED, "load_rows returned None"),
    ("memory-finetune", _set("runs", DROP), REFUSED, "KeyError: 'runs'"),
    ("memory-finetune", b"null", REFUSED, "AttributeError: 'NoneType' ... 'get'"),
    ("run.json", _set("train", {}), REFUSED, "TypeError: TrainOptions() missing 3 arguments"),
    ("run.json", _raw("train", "NaN"), REFUSED, "TypeError: 'float' is not iterable"),
    ("run.json", _raw("config", DEEP), REFUSED, "RecursionError"),
    ("run.json", _set("config/buckets", "0"), REFUSED, "ValueError, no file named"),
    ("run.json", _raw("config/router_z_loss", "1" + "0" * 400), REFUSED, "OverflowError"),
    ("run.json", _set("train/learning_rate", "1.0"), REFUSED, "read: a string learning rate"),
    ("run.json", _set("train/corpus", "/data/c4"), REFUSED, "read: 8 corpus paths of 1 char"),
    ("corpus.txt.gz", _gzip_damaged, REFUSED, "zlib.error: invalid stored block lengths"),
    ("corpus.jsonl.gz", _gzip_damaged, REFUSED, "zlib.error: invalid stored block lengths"),
    (
        "corpus.jsonl",
        b'{"text": ' + b"1" * 5000 + b"}\n",
        REFUSED,
        "ValueError 'Exceeds the limit (4300 digits)', no file named (by hand)",
    ),
    ("corpus.jsonl", b'{"text": ' + DEEP.encode() + b"\n", REFUSED, "RecursionError (by hand)"),
    (
        "corpus.jsonl",
        '{"text": "a\u2028b"}\n'.encode(),
        READS,
        "refused: U+2028 inside a string split the line (by hand)",
    ),
    ("verify-manifest", _raw("format", DEEP), REFUSED, "traceback: RecursionError"),
    (
        "verify-manifest",
        _raw("files/0/bytes", "Infinity"),
        REFUSED,
        "exit 2 'input too large for this machine', no file named",
    ),
    ("verify-manifest", _set("owns", ["."]), REFUSED, "traceback: IndexError (by hand)"),
    ("verify-manifest", _set("owns", ["/etc/*"]), REFUSED, "traceback: NotImplementedError"),
    ("verify-manifest", _set("profile", "a\nb"), READS, "'complete' on two lines (by hand)"),
    ("verify-study", _raw("seed", DEEP), REFUSED, "traceback: RecursionError (by hand)"),
    (
        "compare-A",
        _both(_set("kinds", {"config": "exact"}), _set("claims/0/id", [])),
        READS,
        "traceback: TypeError: unhashable type: 'list' (by hand)",
    ),
    (
        "compare-A",
        _set("kinds/config", {"kind": []}),
        REFUSED,
        "traceback: TypeError: unhashable list (by hand)",
    ),
    ("compare-B", _set("seed", "0"), REFUSED, "'A has seed 0 and B seed 0', no file named"),
    ("checkpoint-metadata", _raw("use_zarr3", DEEP), REFUSED, "RecursionError"),
    ("hf-config.json", _set("model_type", ["mixtral"]), REFUSED, "TypeError: unhashable list"),
    ("hf-config.json", DEEP.encode(), REFUSED, "RecursionError"),
    (
        "similarities",
        b"0.9 1e308\n0.2 1e308\n",
        REFUSED,
        "read: counts summing to inf, tune then finds 0 candidates (by hand)",
    ),
]


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """Each reader's valid folder (made once): ``name -> (folder, fuzzed file)``."""
    out = {}
    for reader in READERS:
        folder = tmp_path_factory.mktemp(reader.name.replace(".", "-"))
        out[reader.name] = (folder, reader.make(folder))
    return out


def _read(reader: Reader, template: tuple[Path, Path], content: bytes) -> str | None:
    """Read ``content`` as ``reader``'s file (in a fresh copy of its folder) and judge it.

    Returns:
        The refusal's message, or None.
    """
    folder, file = template
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "case"
        shutil.copytree(folder, work)
        path = work / file.relative_to(folder)
        path.write_bytes(content)
        message = reader.call(path)
        if message is not None:
            assert "\n" not in message, message
            for name in reader.names(path):
                assert name in message, (name, message)
        return message


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_a_valid_file_reads(reader, templates):
    """The valid file each reader's fuzzing starts from reads (not a refusal)."""
    template = templates[reader.name]
    assert _read(reader, template, template[1].read_bytes()) is None


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_hostile_files_read_or_are_one_line_naming_the_file(reader, templates):
    """Hostile versions of each reader's file: read, or refused in one line naming it."""
    template = templates[reader.name]
    valid = template[1].read_bytes()

    budget = examples(reader.examples)

    @settings(derandomize=True, deadline=None, max_examples=budget, database=None)
    @given(hostile(reader, valid))
    def fuzz(content: bytes) -> None:
        _read(reader, template, content)

    fuzz()


def _found(name: str, edit: bytes | Callable, valid: bytes) -> bytes:
    """A :data:`FOUND` case's content: given, or ``edit`` of the valid file (its document)."""
    if isinstance(edit, bytes):
        return edit
    if BY_NAME[name].gz:
        return edit(valid)
    out = edit(json.loads(valid))
    return out if isinstance(out, bytes) else json.dumps(out).encode()


@pytest.mark.parametrize(
    ("name", "edit", "outcome"),
    [(name, edit, outcome) for name, edit, outcome, _ in FOUND],
    ids=[f"{name}-{i}" for i, (name, *_) in enumerate(FOUND)],
)
def test_found_cases(name, edit, outcome, templates):
    """Each case found, kept: refused in one line naming the file, or (a valid file) read."""
    template = templates[name]
    message = _read(BY_NAME[name], template, _found(name, edit, template[1].read_bytes()))
    assert (message is None) == (outcome == READS), message
