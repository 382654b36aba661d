"""The fine-tuning tasks, read from the files users have and recast as T5 recasts them.

Each task reads its official distribution (the folder the benchmark's download unpacks to) and
turns every record into an :class:`Example`: the text-to-text ``inputs`` and ``targets`` of T5's
preprocessors, plus what the metrics need (``label``: the gold class id, score or answers;
``group``: the question a MultiRC answer or a ReCoRD query belongs to).

Formats (``train`` file, then the evaluation files):

========== ================================================ ==================================
task       files                                            columns / fields
========== ================================================ ==================================
cola       CoLA/train.tsv, dev.tsv                          no header: source, label (0/1),
                                                            original label, sentence
sst2       SST-2/train.tsv, dev.tsv                         ``sentence  label``
mrpc       MRPC/train.tsv, dev.tsv                          ``Quality  #1 ID  #2 ID  #1 String
                                                            #2 String``
qqp        QQP/train.tsv, dev.tsv                           ``id qid1 qid2 question1 question2
                                                            is_duplicate``
stsb       STS-B/train.tsv, dev.tsv                         ... ``sentence1 sentence2 score``
mnli       MNLI/train.tsv, dev_matched.tsv,                 ... ``sentence1 sentence2`` ...
           dev_mismatched.tsv                               ``gold_label`` (a word)
qnli       QNLI/train.tsv, dev.tsv                          ``index question sentence label``
rte        RTE/train.tsv, dev.tsv                           ``index sentence1 sentence2 label``
wnli       WNLI/train.tsv, dev.tsv                          ``index sentence1 sentence2 label``
boolq ...  SuperGLUE folders (BoolQ, CB, COPA, MultiRC,     JSON lines as distributed
           ReCoRD, RTE, WiC, WSC)/train.jsonl, val.jsonl
squad      SQuAD/train-v1.1.json, dev-v1.1.json             SQuAD v1.1 JSON
user       train.jsonl, dev.jsonl                           ``{"input": ..., "target": ...}``
========== ================================================ ==================================

Every file is read through :mod:`lshsim.t5.finetune.readers`: a file that cannot be read as
its format (missing, not UTF-8, binary, truncated, a value of the wrong type anywhere) is one
line naming the file, the line and the field; a file without an example is refused too
(:func:`read_examples`).

The recasts follow ``google-research/text-to-text-transfer-transformer``,
``t5/data/preprocessors.py`` (``glue``, ``stsb``, ``record``, ``wsc_simple``, ``squad``) and
``t5/data/glue_utils.py`` (``get_glue_text_preprocessor``: the feature order of MultiRC and
WiC; otherwise the features sorted by name), with the TFDS label classes:

* GLUE: ``"<task> <feature>: <text> <feature>: <text>"`` with the features sorted by name,
  e.g. ``"cola sentence: ..."``, ``"mnli hypothesis: ... premise: ..."``, ``"qnli question: ...
  sentence: ..."``; the target is the label word. STS-B's target is the score rounded to the
  nearest 0.2, written with one decimal (``"stsb sentence1: ... sentence2: ..."`` -> ``"3.8"``);
  a score outside STS-B's scale, 0 to 5, is refused (naming the file and line).
* SuperGLUE: the same rule with the SuperGLUE benchmark names (``boolq passage: ... question:
  ...``, ``cb hypothesis: ... premise: ...``, ``copa choice1: ... choice2: ... premise: ...
  question: cause``, ``rte hypothesis: ... premise: ...``, ``wic sentence1: ... sentence2: ...
  word: ...``); MultiRC is one example per answer, ``"multirc question: ... answer: ...
  paragraph: ..."`` with ``<br>`` made a space and ``<b>``/``</b>`` dropped; ReCoRD is
  ``"record query: ... entities: e1, e2 passage: ..."`` (``@highlight`` lines joined) with one
  training example per answer; WSC is T5's ``wsc_simple``: ``"wsc: ..."`` with the pronoun
  marked ``*he*`` and the referent's text as the target, trained on the examples whose
  referent is correct and evaluated by whether the prediction names the candidate.
* SQuAD: ``"question: <q> context: <c>"`` with spaces around punctuation (T5's
  ``_pad_punctuation``); the target is the first answer, evaluated against all of them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lshsim.t5.finetune.readers import (
    class_id,
    fail,
    field,
    items,
    place,
    read_json,
    read_jsonl,
    read_lines,
)

__all__ = [
    "BENCHMARK_TASKS",
    "TASKS",
    "Example",
    "Task",
    "get_task",
    "load_split",
    "read_examples",
    "task_folder",
]


@dataclasses.dataclass(frozen=True)
class Example:
    """One text-to-text example.

    Attributes:
        inputs: the encoder text.
        targets: the decoder text (what the model learns to generate).
        label: what the metric compares a prediction with: the class id, the STS-B score,
            the list of gold answers (SQuAD, ReCoRD), the WSC label, the target text.
        group: MultiRC's ``(paragraph, question)`` and ReCoRD's ``(passage, query)`` ids.
        referent: WSC's candidate referent (the text the prediction is checked against).
    """

    inputs: str
    targets: str
    label: Any = None
    group: Any = None
    referent: str | None = None


@dataclasses.dataclass(frozen=True)
class Task:
    """A fine-tuning task: its files, how a record becomes examples, how it is scored.

    Attributes:
        name: the task's name (``--task``).
        benchmark: ``glue``, ``super_glue``, ``squad`` or ``user``.
        folder: the benchmark download's folder name (``CoLA``, ``BoolQ``, ...).
        train_file: the training file in the folder.
        eval_files: evaluation name -> file (MNLI: matched and mismatched).
        read: ``(path, split) -> examples`` (``split`` is ``train`` or ``eval``).
        label_classes: the label words, by class id (classification tasks).
        metric: the metric set of :mod:`lshsim.t5.finetune.metrics` that scores it.
    """

    name: str
    benchmark: str
    folder: str
    train_file: str
    eval_files: dict[str, str]
    read: Callable[[Path, str], list[Example]]
    label_classes: tuple[str, ...] | None = None
    metric: str = "accuracy"


# ---------------------------------------------------------------------------- helpers


def _glue_input(benchmark: str, features: list[tuple[str, str]]) -> str:
    """T5's ``glue`` preprocessor: the benchmark name, then ``key: value`` pairs, space-joined."""
    parts = [benchmark]
    for key, value in features:
        parts += [f"{key}:", value]
    return " ".join(parts)


# ---------------------------------------------------------------------------- GLUE (TSV)


@dataclasses.dataclass(frozen=True)
class _GlueLayout:
    """Where a GLUE TSV keeps its texts and label.

    ``columns``: (T5 feature name, TSV column) pairs, a column given by header name or, for a
    file without a header, by index; ``label``: the label column.
    """

    columns: tuple[tuple[str, str | int], ...]
    label: str | int
    header: bool = True


_GLUE_LAYOUTS = {
    "cola": _GlueLayout((("sentence", 3),), 1, header=False),
    "sst2": _GlueLayout((("sentence", "sentence"),), "label"),
    "mrpc": _GlueLayout((("sentence1", "#1 String"), ("sentence2", "#2 String")), "Quality"),
    "qqp": _GlueLayout((("question1", "question1"), ("question2", "question2")), "is_duplicate"),
    "stsb": _GlueLayout((("sentence1", "sentence1"), ("sentence2", "sentence2")), "score"),
    "mnli": _GlueLayout((("hypothesis", "sentence2"), ("premise", "sentence1")), "gold_label"),
    "qnli": _GlueLayout((("question", "question"), ("sentence", "sentence")), "label"),
    "rte": _GlueLayout((("sentence1", "sentence1"), ("sentence2", "sentence2")), "label"),
    "wnli": _GlueLayout((("sentence1", "sentence1"), ("sentence2", "sentence2")), "label"),
}

#: TFDS ``glue`` label classes, by class id (T5 generates the word).
GLUE_LABELS = {
    "cola": ("unacceptable", "acceptable"),
    "sst2": ("negative", "positive"),
    "mrpc": ("not_equivalent", "equivalent"),
    "qqp": ("not_duplicate", "duplicate"),
    "mnli": ("entailment", "neutral", "contradiction"),
    "qnli": ("entailment", "not_entailment"),
    "rte": ("entailment", "not_entailment"),
    "wnli": ("not_entailment", "entailment"),
}


def stsb_target(score: float) -> str:
    """T5's STS-B target: the score rounded to the nearest 0.2, one decimal (``1.66`` -> ``1.6``).

    As ``tf.as_string(tf.round(x * 5) / 5, precision=1)``: ``tf.round`` rounds half to even.
    """
    return f"{round(score * 5) / 5:.1f}"


#: STS-B's similarity scale: 0 (unrelated) to 5 (equivalent).
STSB_RANGE = (0.0, 5.0)


def _stsb_score(path: Path, where: str, raw: str) -> float:
    """An STS-B score: a finite number in :data:`STSB_RANGE`."""
    shown = repr(raw) if len(raw) <= 40 else repr(raw[:37] + "...")
    try:
        score = float(raw)
    except ValueError:
        raise fail(path, where, f"unknown label {shown} (expected a score)") from None
    lo, hi = STSB_RANGE
    if not math.isfinite(score) or not lo <= score <= hi:
        raise fail(path, where, f"score {shown} outside [{lo:g}, {hi:g}] (STS-B's scale)")
    return score


def _read_glue(name: str) -> Callable[[Path, str], list[Example]]:
    layout = _GLUE_LAYOUTS[name]
    classes = GLUE_LABELS.get(name)

    def read(path: Path, split: str) -> list[Example]:
        lines = read_lines(path)
        if layout.header:
            header = lines[0].split("\t")
            need = [c for _, c in layout.columns] + [layout.label]
            missing = [str(c) for c in need if c not in header]
            if missing:
                raise fail(
                    path,
                    "",
                    f"missing column {', '.join(map(repr, missing))} "
                    f"(header has {', '.join(header)})",
                )
            index = {c: header.index(c) for c in need}
            rows, first = lines[1:], 2
        else:
            index = {c: c for c in [c for _, c in layout.columns] + [layout.label]}
            rows, first = lines, 1
        width = max(index.values()) + 1
        out = []
        for n, line in enumerate(rows, first):
            if not line.strip():
                continue
            cells = line.split("\t")
            where = f" line {n}"
            if len(cells) < width:
                raise fail(
                    path,
                    where,
                    f"expected at least {width} tab-separated columns, got {len(cells)}",
                )
            feats = [(key, cells[index[col]]) for key, col in layout.columns]
            raw = cells[index[layout.label]].strip()
            if name == "stsb":
                score = _stsb_score(path, where, raw)
                out.append(Example(_glue_input(name, feats), stsb_target(score), score))
            else:
                label = class_id(path, where, raw, classes)
                out.append(Example(_glue_input(name, feats), classes[label], label))
        if not out:
            raise fail(path, "", "empty file (no examples)")
        return out

    return read


# ---------------------------------------------------------------------------- SuperGLUE


#: TFDS ``super_glue`` label classes (the default ``False``/``True`` where none are named).
SUPER_GLUE_LABELS = {
    "boolq": ("False", "True"),
    "cb": ("entailment", "contradiction", "neutral"),
    "copa": ("choice1", "choice2"),
    "multirc": ("False", "True"),
    "super_glue_rte": ("entailment", "not_entailment"),
    "wic": ("False", "True"),
    "wsc": ("False", "True"),
}

_SG_FEATURES = {  # T5's order: MultiRC and WiC given, the others sorted by name
    "boolq": ("passage", "question"),
    "cb": ("hypothesis", "premise"),
    "copa": ("choice1", "choice2", "premise", "question"),
    "super_glue_rte": ("hypothesis", "premise"),
    "wic": ("sentence1", "sentence2", "word"),
}


def _read_super_glue(name: str) -> Callable[[Path, str], list[Example]]:
    classes = SUPER_GLUE_LABELS[name]
    benchmark = "rte" if name == "super_glue_rte" else name

    def read(path: Path, split: str) -> list[Example]:
        out = []
        for where, rec in read_jsonl(path):
            feats = [(k, field(path, where, rec, k)) for k in _SG_FEATURES[name]]
            label = class_id(path, where, field(path, where, rec, "label", (str, int)), classes)
            out.append(Example(_glue_input(benchmark, feats), classes[label], label))
        return out

    return read


def _multirc_text(text: str) -> str:
    text = text.replace("<br>", " ")
    return re.sub(r"<(/)?b>", "", text)


def _idx(path: Path, where: str, rec: dict, default: Any) -> Any:
    """A record's ``idx`` (an integer or a string; ``default`` when it has none): a group id."""
    if "idx" not in rec:
        return default
    return field(path, where, rec, "idx", (int, str))


def _read_multirc(path: Path, split: str) -> list[Example]:
    classes = SUPER_GLUE_LABELS["multirc"]
    out = []
    for where, rec in read_jsonl(path):
        at = place(where, "passage")
        passage = field(path, where, rec, "passage", dict)
        text = field(path, at, passage, "text")
        for i, (wq, q) in enumerate(items(path, at, passage, "questions")):
            question = field(path, wq, q, "question")
            group = (_idx(path, where, rec, where.strip()), _idx(path, wq, q, i))
            for wa, a in items(path, wq, q, "answers"):
                feats = [
                    ("question", question),
                    ("answer", field(path, wa, a, "text")),
                    ("paragraph", text),
                ]
                label = class_id(path, wa, field(path, wa, a, "label", (int, str)), classes)
                inputs = _multirc_text(_glue_input("multirc", feats))
                out.append(Example(inputs, classes[label], label, group))
    return out


def _record_passage(text: str) -> str:
    text = re.sub(r"(\.|\?|\!|\"|\')\n@highlight\n", r"\1 ", text)
    return re.sub(r"\n@highlight\n", ". ", text)


def _read_record(path: Path, split: str) -> list[Example]:
    """ReCoRD, one training example per answer and one evaluation example per query.

    The entities are the passage's ``[start, end]`` spans (end inclusive), unique and sorted
    (as TFDS builds them).
    """
    out = []
    for where, rec in read_jsonl(path):
        at = place(where, "passage")
        passage = field(path, where, rec, "passage", dict)
        text = field(path, at, passage, "text")
        entities = sorted(
            {
                text[field(path, we, e, "start", int) : field(path, we, e, "end", int) + 1]
                for we, e in items(path, at, passage, "entities")
            }
        )
        for i, (wq, qa) in enumerate(items(path, where, rec, "qas")):
            query = field(path, wq, qa, "query")
            found = items(path, wq, qa, "answers", optional=True)
            answers = sorted({field(path, wa, a, "text") for wa, a in found})
            inputs = " ".join(
                [
                    "record query:",
                    query,
                    "entities:",
                    ", ".join(entities),
                    "passage:",
                    _record_passage(text),
                ]
            )
            group = (_idx(path, where, rec, where.strip()), _idx(path, wq, qa, i))
            targets = answers or ["<unk>"]
            if split != "train":
                targets = targets[:1]
            out.extend(Example(inputs, t, answers, group) for t in targets)
    return out


#: The two WSC texts whose pronoun index T5 corrects by hand (``_wsc_inputs``).
_WSC_SPECIAL = {
    "The boy continued to whip the pony , and eventually the pony threw him over. John laughed "
    'out quite loud. "Good for him," he said. ': (
        "The boy continued to whip the pony , and eventually the pony threw him over. John "
        'laughed out quite loud. "Good for X ," he said.'
    ),
    "When they had eventually calmed down a bit , and had gotten home, Mr. Farley put the magic "
    "pebble in an iron safe . Some day they might want to use it , but really for now, what "
    "more could they wish for?": (
        "When they had eventually calmed down a bit , and had gotten home, Mr. Farley put the "
        "magic pebble in an iron safe . Some day they might want to use X , but really for now, "
        "what more could they wish for?"
    ),
}


def _read_wsc(path: Path, split: str) -> list[Example]:
    """T5's ``wsc_simple``: training keeps the examples whose candidate is the referent."""
    out = []
    for where, rec in read_jsonl(path):
        text = field(path, where, rec, "text")
        target = field(path, where, rec, "target", dict)
        at = place(where, "target")
        span1 = field(path, at, target, "span1_text")
        span2 = field(path, at, target, "span2_text")
        index = field(path, at, target, "span2_index", int)
        label = class_id(
            path, where, field(path, where, rec, "label", (int, str)), ("False", "True")
        )
        if text in _WSC_SPECIAL:
            blanked = _WSC_SPECIAL[text]
        else:
            words = text.split(" ")
            if not 0 < index < len(words) or words[index] != span2:
                raise fail(path, where, f"span2_index {index} is not the word {span2!r}")
            blanked = " ".join([*words[:index], "X", *words[index + 1 :]])
        inputs = "wsc: " + blanked.replace(" X ", f" *{span2}* ")
        if split == "train" and not label:
            continue
        out.append(Example(inputs, span1, label, referent=span1))
    if not out:
        raise fail(path, "", "empty file (no examples)")
    return out


# ---------------------------------------------------------------------------- SQuAD, user


def pad_punctuation(text: str) -> str:
    """T5's ``_pad_punctuation``: spaces around ASCII punctuation, whitespace runs collapsed."""
    text = re.sub(r"([!-/:-@\[-`{-~])", r" \1 ", text)
    return re.sub(r"\s+", " ", text)


def _read_squad(path: Path, split: str) -> list[Example]:
    doc = read_json(path)
    out = []
    for wa, article in items(path, "", doc, "data"):
        for wp, para in items(path, wa, article, "paragraphs"):
            context = pad_punctuation(field(path, wp, para, "context"))
            for wq, qa in items(path, wp, para, "qas"):
                question = pad_punctuation(field(path, wq, qa, "question"))
                answers = [
                    pad_punctuation(field(path, wx, a, "text"))
                    for wx, a in items(path, wq, qa, "answers")
                ]
                if not answers:
                    raise fail(path, wq, "no answers")
                inputs = re.sub(r"\s+", " ", f"question: {question} context: {context}")
                out.append(Example(inputs, answers[0], answers))
    if not out:
        raise fail(path, "", "empty file (no questions)")
    return out


def _read_user(path: Path, split: str) -> list[Example]:
    out = []
    for where, rec in read_jsonl(path):
        inputs = field(path, where, rec, "input")
        target = field(path, where, rec, "target")
        out.append(Example(inputs, target, target))
    return out


# ---------------------------------------------------------------------------- registry


def _glue(name: str, folder: str, metric: str, evals: dict[str, str] | None = None) -> Task:
    return Task(
        name,
        "glue",
        folder,
        "train.tsv",
        evals or {name: "dev.tsv"},
        _read_glue(name),
        GLUE_LABELS.get(name),
        metric,
    )


def _sg(name: str, folder: str, read, metric: str = "accuracy") -> Task:
    return Task(
        name,
        "super_glue",
        folder,
        "train.jsonl",
        {name: "val.jsonl"},
        read,
        SUPER_GLUE_LABELS.get(name),
        metric,
    )


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        _glue("cola", "CoLA", "matthews"),
        _glue("sst2", "SST-2", "accuracy"),
        _glue("mrpc", "MRPC", "f1_accuracy"),
        _glue("qqp", "QQP", "f1_accuracy"),
        _glue("stsb", "STS-B", "correlation"),
        _glue(
            "mnli",
            "MNLI",
            "accuracy",
            {"mnli_matched": "dev_matched.tsv", "mnli_mismatched": "dev_mismatched.tsv"},
        ),
        _glue("qnli", "QNLI", "accuracy"),
        _glue("rte", "RTE", "accuracy"),
        _glue("wnli", "WNLI", "accuracy"),
        _sg("boolq", "BoolQ", _read_super_glue("boolq")),
        _sg("cb", "CB", _read_super_glue("cb"), "cb"),
        _sg("copa", "COPA", _read_super_glue("copa")),
        _sg("multirc", "MultiRC", _read_multirc, "multirc"),
        _sg("record", "ReCoRD", _read_record, "squad"),
        _sg("super_glue_rte", "RTE", _read_super_glue("super_glue_rte")),
        _sg("wic", "WiC", _read_super_glue("wic")),
        _sg("wsc", "WSC", _read_wsc, "wsc"),
        Task(
            "squad",
            "squad",
            "SQuAD",
            "train-v1.1.json",
            {"squad": "dev-v1.1.json"},
            _read_squad,
            None,
            "squad",
        ),
        Task("user", "user", ".", "train.jsonl", {"user": "dev.jsonl"}, _read_user, None, "exact"),
    )
}

#: The mixtures: T5's ``glue_v002_proportional`` (WNLI left out: T5 trains on WSC/DPR
#: instead) and ``super_glue_v102_proportional`` (without DPR, which has no SuperGLUE file).
BENCHMARK_TASKS = {
    "glue": ("cola", "sst2", "mrpc", "qqp", "stsb", "mnli", "qnli", "rte"),
    "super_glue": ("boolq", "cb", "copa", "multirc", "record", "super_glue_rte", "wic", "wsc"),
}


def get_task(name: str) -> Task:
    """The task called ``name``.

    Raises:
        ValueError: an unknown task (the message lists the known ones).
    """
    if name not in TASKS:
        known = ", ".join([*TASKS, *BENCHMARK_TASKS])
        raise ValueError(f"task: unknown task {name!r} (known: {known})")
    return TASKS[name]


def task_folder(task: Task, data: str | Path) -> Path:
    """The folder of ``task``'s files: ``data`` itself, or ``data/<task.folder>`` if present.

    Raises:
        ValueError: ``data`` is not a directory.
    """
    data = Path(data)
    if not data.is_dir():
        raise ValueError(f"data: no such directory {data}")
    sub = data / task.folder
    if task.folder != "." and sub.is_dir() and not (data / task.train_file).is_file():
        return sub
    return data


def load_split(task: Task | str, data: str | Path, split: str) -> dict[str, list[Example]]:
    """``{name: examples}`` of ``task``'s ``train`` split or its evaluation splits.

    Raises:
        ValueError: a missing file, an empty one, a missing column or field, an unknown label.
    """
    task = get_task(task) if isinstance(task, str) else task
    folder = task_folder(task, data)
    if split == "train":
        return {task.name: read_examples(task, folder / task.train_file, "train")}
    if split != "eval":
        raise ValueError(f"split: expected 'train' or 'eval', got {split!r}")
    return {name: read_examples(task, folder / f, "eval") for name, f in task.eval_files.items()}


def read_examples(task: Task, path: Path, split: str) -> list[Example]:
    """The examples of one of ``task``'s files (``split``: ``train`` or ``eval``).

    Raises:
        ValueError: one line naming the file (and the line and field): missing, unreadable,
            not UTF-8, not in the task's format, or without an example.
    """
    examples = task.read(Path(path), split)
    if not examples:
        raise fail(Path(path), "", "no examples")
    return examples
