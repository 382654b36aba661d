"""Loaders: each official format read into T5's text-to-text records; bad files; mixtures."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from lshsim.t5.finetune.mixture import DEFAULT_CAP, mixing_rates, sample_tasks
from lshsim.t5.finetune.tasks import (
    BENCHMARK_TASKS,
    TASKS,
    get_task,
    load_split,
    pad_punctuation,
    stsb_target,
)
from tests.t5.finetune import formats


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Every benchmark's folder, in the official formats."""
    return formats.write_all(tmp_path_factory.mktemp("benchmarks"))


@pytest.mark.parametrize("name", sorted(formats.EXPECTED))
def test_first_training_example_is_t5s(data, name):
    """The first training record as T5's preprocessor makes it (inputs, target, gold label)."""
    (examples,) = load_split(name, data, "train").values()
    ex = examples[0]
    assert (ex.inputs, ex.targets, ex.label) == formats.EXPECTED[name]


def test_task_folder_itself_or_its_parent(data):
    """``--data`` may be the task's own folder or the folder holding it."""
    a = load_split("cola", data, "train")
    b = load_split("cola", data / "CoLA", "train")
    assert a == b and len(a["cola"]) == 2
    assert a["cola"][1].targets == "unacceptable"


def test_byte_order_mark_is_dropped(tmp_path):
    """MRPC's files start with a UTF-8 BOM: the header still names ``Quality``."""
    formats.write_glue(tmp_path, "mrpc", train="\ufeff" + formats.GLUE_FILES["mrpc"][1])
    ex = load_split("mrpc", tmp_path, "train")["mrpc"][0]
    assert (ex.inputs, ex.targets, ex.label) == formats.EXPECTED["mrpc"]


def test_mnli_evaluates_matched_and_mismatched(data):
    ev = load_split("mnli", data, "eval")
    assert list(ev) == ["mnli_matched", "mnli_mismatched"]
    assert [e.targets for e in ev["mnli_matched"]] == ["neutral", "entailment"]


def test_stsb_rounds_to_the_nearest_fifth():
    """T5: ``round(score * 5) / 5`` with one decimal (its test: 1.66 -> "1.6", 2.8 -> "2.8")."""
    cases = {1.66: "1.6", 2.8: "2.8", 3.0: "3.0", 0.0: "0.0", 4.95: "5.0", 0.25: "0.2"}
    assert {s: stsb_target(s) for s in cases} == cases


def test_wsc_trains_on_correct_referents_and_evaluates_all(data):
    train = load_split("wsc", data, "train")["wsc"]
    ev = load_split("wsc", data, "eval")["wsc"]
    assert len(train) == 1 and train[0].label == 1
    assert [e.label for e in ev] == [0, 1]
    assert ev[0].inputs.endswith("*He* should have been more skeptical.")
    assert ev[0].referent == "Mark"


def test_record_one_training_example_per_answer(tmp_path):
    rec = json.loads(json.dumps(formats.SG_RECORDS["record"][1][0]))
    rec["qas"][0]["answers"].append({"start": 12, "end": 17, "text": "France"})
    d = tmp_path / "ReCoRD"
    d.mkdir()
    for name in ("train.jsonl", "val.jsonl"):
        (d / name).write_text(json.dumps(rec) + "\n")
    train = load_split("record", tmp_path, "train")["record"]
    ev = load_split("record", tmp_path, "eval")["record"]
    assert [e.targets for e in train] == ["France", "Paris"]
    assert len(ev) == 1 and ev[0].label == ["France", "Paris"] and ev[0].group == (0, 0)


def test_multirc_one_example_per_answer_grouped_by_question(data):
    ev = load_split("multirc", data, "eval")["multirc"]
    assert [(e.targets, e.label, e.group) for e in ev] == [
        ("True", 1, (0, 0)),
        ("False", 0, (0, 0)),
    ]


def test_squad_pads_punctuation():
    assert pad_punctuation("Hi, there (you).") == "Hi , there ( you ) . "


def test_user_json_lines(tmp_path):
    rows = [{"input": "translate: cat", "target": "chat"}, {"input": "x", "target": "y"}]
    for name in ("train.jsonl", "dev.jsonl"):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    ex = load_split("user", tmp_path, "train")["user"]
    assert [(e.inputs, e.targets) for e in ex] == [("translate: cat", "chat"), ("x", "y")]


BAD = [
    ("sst2", "sentence\tlab\nfine\t1\n", "missing column 'label'"),
    ("sst2", "sentence\tlabel\nfine\t2\n", "line 2: unknown label '2'"),
    ("mnli", formats.GLUE_FILES["mnli"][1].replace("\tneutral\n", "\tmaybe\n"), "unknown label"),
    ("stsb", formats.GLUE_FILES["stsb"][1].replace("5.000", "high"), "unknown label 'high'"),
    ("sst2", "", "empty file"),
    ("sst2", "sentence\tlabel\n", "empty file (no examples)"),
    ("cola", "gj04\t1\tOur friends.\n", "line 1: expected at least 4 tab-separated columns"),
]


@pytest.mark.parametrize(("task", "text", "message"), BAD)
def test_bad_tsv_one_line(tmp_path, task, text, message):
    formats.write_glue(tmp_path, task, train=text)
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_split(task, tmp_path, "train")
    assert "\n" not in str(err.value) and "train.tsv" in str(err.value)


def test_bad_jsonl_and_missing_files(tmp_path):
    d = formats.write_super_glue(tmp_path, "cb")
    (d / "train.jsonl").write_text('{"premise": "a", "hypothesis": "b", "label": "maybe"}\n')
    with pytest.raises(ValueError, match="line 1: unknown label 'maybe'"):
        load_split("cb", tmp_path, "train")
    (d / "train.jsonl").write_text('{"premise": "a", "label": "neutral"}\n')
    with pytest.raises(ValueError, match="missing field 'hypothesis'"):
        load_split("cb", tmp_path, "train")
    (d / "train.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match="line 1: not JSON"):
        load_split("cb", tmp_path, "train")
    with pytest.raises(ValueError, match="no such file"):
        load_split("boolq", tmp_path, "train")
    with pytest.raises(ValueError, match="unknown task 'colaa'"):
        get_task("colaa")


def test_mixtures_and_rates():
    """T5's GLUE example counts (``glue_utils.GLUE_WEIGHT_MAPPING``): uncapped proportional."""
    counts = {
        "cola": 8551,
        "sst2": 67349,
        "mrpc": 3668,
        "qqp": 363849,
        "stsb": 5749,
        "mnli": 392702,
        "qnli": 104743,
        "rte": 2490,
    }
    assert set(counts) == set(BENCHMARK_TASKS["glue"])
    rates = mixing_rates(counts)
    total = sum(counts.values())
    assert rates == pytest.approx({k: v / total for k, v in counts.items()})
    assert DEFAULT_CAP == 10**6
    capped = mixing_rates(counts, cap=10000)  # min(n, K): 4 tasks at K, 4 below it
    assert capped["mnli"] == pytest.approx(10000 / (4 * 10000 + 8551 + 3668 + 5749 + 2490))
    assert capped["mnli"] == capped["qqp"] == capped["sst2"]
    draws = sample_tasks(capped, step=7, batch=20000, seed=3)
    assert draws[:50] == sample_tasks(capped, step=7, batch=20000, seed=3)[:50]
    freq = Counter(draws)
    assert all(abs(freq[k] / 20000 - capped[k]) < 0.02 for k in counts)
    with pytest.raises(ValueError, match="no tasks"):
        mixing_rates({})
    assert set(BENCHMARK_TASKS["super_glue"]) <= set(TASKS)
