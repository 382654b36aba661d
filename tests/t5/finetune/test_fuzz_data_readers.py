"""Reader fuzzing of the fine-tuning data files (issue 48): one line naming the file, or examples.

Each case writes a hostile version of a valid file of a task (``tests/t5/finetune/formats.py``:
GLUE TSV, SuperGLUE JSON lines, SQuAD v1.1 JSON, the user's JSON lines) and reads it with the
task's reader (:func:`lshsim.t5.finetune.tasks.read_examples`, as ``lshsim finetune`` reads
it): every JSON type at the top level and at every nested place, a key removed, strings where
numbers go and numbers where strings go, hostile TSV cells and rows, truncation, other
encodings, binary garbage. A case passes when the reader returns examples that the tokenizer
and the metrics can take (texts that are Unicode text, hashable groups) or raises a
:class:`ValueError` of one line that names the file; any other exception fails it. The inputs
that once broke a reader are kept as ``@example`` and regression cases.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lshsim.t5.finetune.tasks import TASKS, read_examples
from tests.fuzz_budget import examples
from tests.t5.finetune import formats

HEALTH = [HealthCheck.too_slow]

#: Each JSON task's valid document: a list of records (JSON lines) or one document (SQuAD).
USER = [{"input": "translate: cat", "target": "chat"}, {"input": "x", "target": "y"}]
JSON_DOCS = {
    **{task: records for task, (_, records) in formats.SG_RECORDS.items()},
    "squad": formats.SQUAD,
    "user": USER,
}
JSONL = set(JSON_DOCS) - {"squad"}


def _places(value, prefix=()):
    """Every path of keys and indices into ``value``, ``()`` included."""
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _places(inner, (*prefix, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _places(inner, (*prefix, i))


#: (task, place) for every place of every JSON task's document (a JSON lines file's places
#: start with the line's index: ``()`` is the whole file, ``(0,)`` its first line).
PLACES = [(task, place) for task, doc in JSON_DOCS.items() for place in _places(doc)]

TEXT = st.text(max_size=8)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**19, -(2**63), 10**400, 0, 1, -1, 2, 13, 5.5])
    | st.floats()
    | st.sampled_from(["0", "1", "13", "-1", "1e400", "nan", "", "True", "entailment"])
    | st.sampled_from(["\ud800", "a\udfffb", "\x00", "\u2028", "<br>", "@highlight"])
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
SPLITS = st.sampled_from(["train", "eval"])


def file_of(task: str, split: str) -> str:
    """The task's file name for ``split`` (the first evaluation file for ``eval``)."""
    t = TASKS[task]
    return t.train_file if split == "train" else next(iter(t.eval_files.values()))


def dump(task: str, doc) -> str:
    """The file text of ``doc``: one JSON value per line for a JSON lines task."""
    if task in JSONL and isinstance(doc, list):
        return "".join(json.dumps(r) + "\n" for r in doc)
    return json.dumps(doc) + ("\n" if task not in JSONL else "")


def replaced(doc, place: tuple, value, delete: bool = False):
    """A copy of ``doc`` with the value at ``place`` replaced (or its key deleted)."""
    if not place:
        return value
    doc = json.loads(json.dumps(doc))
    node = doc
    for key in place[:-1]:
        node = node[key]
    if delete:
        del node[place[-1]]
    else:
        node[place[-1]] = value
    return doc


def check(task: str, path: Path, split: str):
    """Read ``path`` as ``task``'s ``split``: examples the model can take, or one clean line."""
    try:
        examples = read_examples(TASKS[task], path, split)
    except ValueError as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message, message
        assert message.startswith("data: ") and str(path) in message, message
        return None
    assert examples
    for ex in examples:
        for text in (ex.inputs, ex.targets):
            assert isinstance(text, str)
            text.encode("utf-8")  # the tokenizer takes it
        hash(ex.group)  # MultiRC and ReCoRD group by it
        if ex.referent is not None:
            assert isinstance(ex.referent, str)
    return examples


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """One folder for every case (each case rewrites its file)."""
    return tmp_path_factory.mktemp("fuzz-data")


def write(folder: Path, task: str, split: str, data: bytes | str) -> Path:
    path = folder / file_of(task, split)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    return path


# --- JSON: a hostile value anywhere, a key removed --------------------------------------------


@settings(derandomize=True, max_examples=examples(300), deadline=None, suppress_health_check=HEALTH)
@given(where=st.sampled_from(PLACES), value=VALUES, split=SPLITS)
@example(where=("squad", ("data", 0)), value=1, split="train")  # once a TypeError
@example(where=("squad", ("data", 0, "paragraphs", 0, "qas", 0)), value=[1], split="eval")
@example(where=("multirc", (0, "passage", "questions", 0)), value=[1], split="train")
@example(where=("multirc", (0, "passage", "questions")), value=[1], split="train")
@example(where=("multirc", (0, "idx")), value=[1], split="eval")  # an unhashable group
@example(where=("record", (0, "qas", 0, "answers")), value=5, split="train")
@example(where=("record", (0, "qas", 0, "idx")), value={}, split="eval")
@example(where=("user", (0, "input")), value="\ud800", split="train")  # a lone surrogate
@example(where=("cb", (0, "label")), value="1" * 5000, split="train")  # past int()'s digits
@example(where=("wsc", (1, "target", "span2_index")), value="13", split="train")
def test_a_hostile_value_anywhere_in_a_json_file(folder, where, value, split):
    task, place = where
    path = write(folder, task, split, dump(task, replaced(JSON_DOCS[task], place, value)))
    check(task, path, split)


#: The places that are a field of an object (a key to remove).
FIELDS = [(task, place) for task, place in PLACES if place and isinstance(place[-1], str)]


@settings(derandomize=True, max_examples=examples(60), deadline=None, suppress_health_check=HEALTH)
@given(where=st.sampled_from(FIELDS), split=SPLITS)
def test_a_key_removed_from_a_json_file(folder, where, split):
    task, place = where
    path = write(folder, task, split, dump(task, replaced(JSON_DOCS[task], place, None, True)))
    check(task, path, split)


# --- TSV: hostile cells and rows -------------------------------------------------------------

GLUE = sorted(formats.GLUE_FILES)
CELLS = (
    st.sampled_from(["", " ", "0", "1", "2", "-1", "5.000", "5.2", "-0.1", "nan", "inf", "1e400"])
    | st.sampled_from(["1_0", "\u0663", "high", "entailment", "neutral", "maybe", "1" * 5000])
    | st.sampled_from(["\ufeff", "\x00", "\r", "a\tb", "\u2028", "label", "sentence"])
    | st.integers().map(str)
    | st.floats().map(repr)
    | st.text(max_size=10)
)


@settings(derandomize=True, max_examples=examples(200), deadline=None, suppress_health_check=HEALTH)
@given(task=st.sampled_from(GLUE), split=SPLITS, data=st.data())
def test_a_hostile_cell_or_row_in_a_tsv(folder, task, split, data):
    lines = formats.GLUE_FILES[task][1].splitlines()
    row = data.draw(st.integers(0, len(lines) - 1), label="row")
    cells = lines[row].split("\t")
    op = data.draw(st.sampled_from(["cell", "drop", "add", "line"]), label="op")
    col = data.draw(st.integers(0, len(cells) - 1), label="col")
    if op == "cell":
        cells[col] = data.draw(CELLS, label="cell")
    elif op == "drop":
        del cells[col]
    elif op == "add":
        cells.insert(col, data.draw(CELLS, label="cell"))
    else:
        cells = [data.draw(CELLS, label="line")]
    lines[row] = "\t".join(cells)
    path = write(folder, task, split, "\n".join(lines) + "\n")
    check(task, path, split)


# --- any file: truncated, garbage, another encoding ------------------------------------------

ALL = sorted(TASKS)


def valid_text(task: str) -> str:
    """A valid file of ``task`` with a character that is not ASCII (so encodings differ)."""
    if task in formats.GLUE_FILES:
        lines = formats.GLUE_FILES[task][1].split("\n")
        row = 0 if task == "cola" else 1  # the first row of data: a space inside a text
        lines[row] = lines[row].replace(" ", " é ", 1)
        return "\n".join(lines)
    doc = JSON_DOCS[task]
    if task in JSONL:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in doc)
        return text.replace('": "', '": "é', 1)  # the first string value
    return json.dumps(doc, ensure_ascii=False).replace("Normandy", "Normändy")


@settings(derandomize=True, max_examples=examples(80), deadline=None, suppress_health_check=HEALTH)
@given(task=st.sampled_from(ALL), split=SPLITS, data=st.data())
def test_a_truncated_file(folder, task, split, data):
    raw = valid_text(task).encode("utf-8")
    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    path = write(folder, task, split, raw[:cut])
    check(task, path, split)


@settings(derandomize=True, max_examples=examples(60), deadline=None, suppress_health_check=HEALTH)
@given(task=st.sampled_from(ALL), split=SPLITS, blob=st.binary(max_size=200))
@example(task="squad", split="train", blob=b"\xff\xfe{\x00")  # once a UnicodeDecodeError
@example(task="sst2", split="train", blob=b"sentence\tlabel\na\x00b\t1\n")
def test_binary_garbage_as_a_data_file(folder, task, split, blob):
    path = write(folder, task, split, blob)
    check(task, path, split)


@pytest.mark.parametrize("task", ["sst2", "cola", "boolq", "squad", "user"])
@pytest.mark.parametrize("encoding", ["latin-1", "utf-16", "utf-32", "utf-8-sig", "cp1252"])
def test_a_data_file_in_another_encoding(folder, task, encoding):
    text = valid_text(task)
    path = write(folder, task, "train", text.encode(encoding))
    examples = check(task, path, "train")
    assert (examples is not None) == (encoding == "utf-8-sig")


# --- regressions: what the fuzzer and the probe found ----------------------------------------


REGRESSIONS = [
    # (task, file text, what the one line holds)
    ("squad", '{"data": [1]}', "data[0]: expected an object with field 'paragraphs'"),
    ("squad", '{"data": [{"paragraphs": [[1]]}]}', "paragraphs[0]: expected an object"),
    ("squad", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("squad", '{"data": [' + "1" * 5000 + "]}", "not JSON this reader takes"),
    ("squad", b"\xff\xfe{\x00", "not UTF-8 text"),
    (
        "multirc",
        '{"idx": 0, "passage": {"text": "t", "questions": [[1]]}}\n',
        "line 1 passage.questions[0]: expected an object with field 'question'",
    ),
    (
        "multirc",
        '{"idx": [0], "passage": {"text": "t", "questions": [{"question": "q", "answers": '
        '[{"text": "a", "label": 1}]}]}}\n',
        "line 1: field 'idx' must be an integer or a string, got a list",
    ),
    (
        "record",
        '{"passage": {"text": "t", "entities": []}, "qas": [{"query": "q", "answers": 5}]}\n',
        "line 1 qas[0]: field 'answers' must be a list, got an integer",
    ),
    ("user", '{"input": "\\ud800", "target": "y"}\n', "field 'input' is not Unicode text"),
    ("cb", '{"premise": "a", "hypothesis": "b", "label": "' + "1" * 5000 + '"}\n', "label"),
    (
        "stsb",
        formats.GLUE_FILES["stsb"][1].replace("5.000", "7.5"),
        "line 2: score '7.5' outside [0, 5]",
    ),
    ("stsb", formats.GLUE_FILES["stsb"][1].replace("1.66", "-0.1"), "line 3: score '-0.1'"),
    ("sst2", "sentence\tlabel\na\x00b\t1\n", "NUL bytes"),
    ("multirc", '{"idx": 0, "passage": {"text": "t", "questions": []}}\n', "no examples"),
]


@pytest.mark.parametrize(("task", "text", "message"), REGRESSIONS)
def test_reader_regressions(folder, task, text, message):
    path = write(folder, task, "train", text)
    with pytest.raises(ValueError) as err:
        read_examples(TASKS[task], path, "train")
    assert check(task, path, "train") is None
    assert message in str(err.value) and str(path) in str(err.value)


def test_valid_files_still_read(folder):
    """The fuzzer's starting points are valid: every task reads its file (both splits)."""
    for task in ALL:
        for split in ("train", "eval"):
            path = write(folder, task, split, valid_text(task))
            assert check(task, path, split), (task, split)
