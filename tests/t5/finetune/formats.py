"""Small files in each benchmark's official format, with the records T5 makes of them.

Each writer puts a task's folder (as the benchmark's download names it) under ``root`` with a
train and a dev file and returns it. ``EXPECTED[task]`` is the hand-checked first training
example: ``(inputs, targets, label)``.
"""

from __future__ import annotations

import json
from pathlib import Path

# ---------------------------------------------------------------------------- GLUE TSVs

GLUE_FILES = {
    # CoLA: no header, 4 columns (source, label, original label, sentence).
    "cola": (
        "CoLA",
        "gj04\t1\t\tOur friends won't buy this analysis.\ngj04\t0\t*\tThey drank the pub.\n",
    ),
    "sst2": ("SST-2", "sentence\tlabel\nhide new secretions \t0\na gorgeous film \t1\n"),
    "mrpc": (
        "MRPC",
        "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
        "1\t702876\t702977\tAmrozi accused his brother.\tHe accused his brother.\n"
        "0\t2108705\t2108831\tYucaipa owned Dominick's.\tShares fell.\n",
    ),
    "qqp": (
        "QQP",
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        "133273\t213221\t213222\tHow is the life?\tHow is life?\t1\n"
        "402555\t536040\t536041\tHow do I fix it?\tWhy not?\t0\n",
    ),
    "stsb": (
        "STS-B",
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n"
        "0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\tA plane is taking off.\t"
        "An air plane is taking off.\t5.000\n"
        "1\tmain-captions\tMSRvid\t2012test\t0004\tnone\tnone\tA man plays.\tA man sings.\t1.66\n",
    ),
    "mnli": (
        "MNLI",
        "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
        "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label\n"
        "0\t31193\t31193n\tgovernment\t( x )\t( y )\t(ROOT x)\t(ROOT y)\t"
        'Conceptually "cream" skimming has two dimensions.\tProduct and geography matter.\t'
        "neutral\tneutral\n"
        "1\t101457\t101457e\ttelephone\t( x )\t( y )\t(ROOT x)\t(ROOT y)\tyou know it.\t"
        "You know.\tentailment\tentailment\n",
    ),
    "qnli": (
        "QNLI",
        "index\tquestion\tsentence\tlabel\n"
        "0\tWhen did it open?\tIt opened in 1900.\tentailment\n"
        "1\tWho?\tNobody knows.\tnot_entailment\n",
    ),
    "rte": (
        "RTE",
        "index\tsentence1\tsentence2\tlabel\n"
        "0\tNo weapons were found.\tWeapons were found.\tnot_entailment\n"
        "1\tA cat sat.\tA cat sat.\tentailment\n",
    ),
    "wnli": (
        "WNLI",
        "index\tsentence1\tsentence2\tlabel\n"
        "0\tI stuck a pin through a carrot.\tThe carrot had a hole.\t1\n"
        "1\tJohn could not see.\tJohn could see.\t0\n",
    ),
}

# ---------------------------------------------------------------------------- SuperGLUE JSONL

SG_RECORDS = {
    "boolq": (
        "BoolQ",
        [
            {"question": "is it true", "passage": "It is.", "idx": 0, "label": True},
            {"question": "is it false", "passage": "No.", "idx": 1, "label": False},
        ],
    ),
    "cb": (
        "CB",
        [
            {"premise": "It rains.", "hypothesis": "It is wet.", "label": "entailment", "idx": 0},
            {"premise": "Dry.", "hypothesis": "Wet.", "label": "contradiction", "idx": 1},
        ],
    ),
    "copa": (
        "COPA",
        [
            {
                "premise": "My body cast a shadow over the grass.",
                "choice1": "The sun was rising.",
                "choice2": "The grass was cut.",
                "question": "cause",
                "label": 0,
                "idx": 0,
            }
        ],
    ),
    "multirc": (
        "MultiRC",
        [
            {
                "idx": 0,
                "version": 1.1,
                "passage": {
                    "text": "<b>Sent 1: </b>Joey woke up.<br><b>Sent 2: </b>He ate pie.<br>",
                    "questions": [
                        {
                            "question": "What did Joey eat?",
                            "idx": 0,
                            "answers": [
                                {"text": "Pie", "idx": 0, "label": 1},
                                {"text": "Cake", "idx": 1, "label": 0},
                            ],
                        }
                    ],
                },
            }
        ],
    ),
    "record": (
        "ReCoRD",
        [
            {
                "idx": 0,
                "source": "Daily mail",
                "passage": {
                    "text": "Paris is in France.\n@highlight\nBerlin is big\n@highlight\nRome",
                    "entities": [
                        {"start": 0, "end": 4},
                        {"start": 12, "end": 17},
                        {"start": 31, "end": 36},
                        {"start": 0, "end": 4},
                    ],
                },
                "qas": [
                    {
                        "query": "@placeholder is the capital of France.",
                        "answers": [{"start": 0, "end": 4, "text": "Paris"}],
                        "idx": 0,
                    }
                ],
            }
        ],
    ),
    "super_glue_rte": (
        "RTE",
        [{"premise": "A cat sat.", "hypothesis": "A cat.", "label": "entailment", "idx": 0}],
    ),
    "wic": (
        "WiC",
        [
            {
                "word": "place",
                "sentence1": "Do you want to come over to my place later?",
                "sentence2": "A political system with no place for the less prominent groups.",
                "idx": 0,
                "label": False,
                "start1": 31,
                "start2": 27,
                "end1": 36,
                "end2": 32,
            }
        ],
    ),
    "wsc": (
        "WSC",
        [
            {
                "text": "Mark told Pete many lies about himself, which Pete included in his "
                "book. He should have been more skeptical.",
                "target": {
                    "span2_index": 13,
                    "span1_index": 0,
                    "span1_text": "Mark",
                    "span2_text": "He",
                },
                "idx": 0,
                "label": False,
            },
            {
                "text": "Mark told Pete many lies about himself, which Pete included in his "
                "book. He should have been more truthful.",
                "target": {
                    "span2_index": 13,
                    "span1_index": 0,
                    "span1_text": "Mark",
                    "span2_text": "He",
                },
                "idx": 1,
                "label": True,
            },
        ],
    ),
}

SQUAD = {
    "version": "1.1",
    "data": [
        {
            "title": "Normans",
            "paragraphs": [
                {
                    "context": "The Normans (French: Normands) gave their name to Normandy.",
                    "qas": [
                        {
                            "id": "56ddde6b9a695914005b9628",
                            "question": "In what country is Normandy located?",
                            "answers": [
                                {"text": "Normandy,", "answer_start": 50},
                                {"text": "Normandy", "answer_start": 50},
                            ],
                        }
                    ],
                }
            ],
        }
    ],
}

#: The first training example of each task, checked by hand against T5's preprocessors.
EXPECTED = {
    "cola": ("cola sentence: Our friends won't buy this analysis.", "acceptable", 1),
    "sst2": ("sst2 sentence: hide new secretions ", "negative", 0),
    "mrpc": (
        "mrpc sentence1: Amrozi accused his brother. sentence2: He accused his brother.",
        "equivalent",
        1,
    ),
    "qqp": ("qqp question1: How is the life? question2: How is life?", "duplicate", 1),
    "stsb": (
        "stsb sentence1: A plane is taking off. sentence2: An air plane is taking off.",
        "5.0",
        5.0,
    ),
    "mnli": (
        'mnli hypothesis: Product and geography matter. premise: Conceptually "cream" '
        "skimming has two dimensions.",
        "neutral",
        1,
    ),
    "qnli": ("qnli question: When did it open? sentence: It opened in 1900.", "entailment", 0),
    "rte": (
        "rte sentence1: No weapons were found. sentence2: Weapons were found.",
        "not_entailment",
        1,
    ),
    "wnli": (
        "wnli sentence1: I stuck a pin through a carrot. sentence2: The carrot had a hole.",
        "entailment",
        1,
    ),
    "boolq": ("boolq passage: It is. question: is it true", "True", 1),
    "cb": ("cb hypothesis: It is wet. premise: It rains.", "entailment", 0),
    "copa": (
        "copa choice1: The sun was rising. choice2: The grass was cut. premise: My body cast a "
        "shadow over the grass. question: cause",
        "choice1",
        0,
    ),
    "multirc": (
        "multirc question: What did Joey eat? answer: Pie paragraph: Sent 1: Joey woke up. "
        "Sent 2: He ate pie. ",
        "True",
        1,
    ),
    "record": (
        "record query: @placeholder is the capital of France. entities: Berlin, France, Paris "
        "passage: Paris is in France. Berlin is big. Rome",
        "Paris",
        ["Paris"],
    ),
    "super_glue_rte": ("rte hypothesis: A cat. premise: A cat sat.", "entailment", 0),
    "wic": (
        "wic sentence1: Do you want to come over to my place later? sentence2: A political "
        "system with no place for the less prominent groups. word: place",
        "False",
        0,
    ),
    "wsc": (
        "wsc: Mark told Pete many lies about himself, which Pete included in his book. *He* "
        "should have been more truthful.",
        "Mark",
        1,
    ),
    "squad": (
        "question: In what country is Normandy located ? context: The Normans ( French : "
        "Normands ) gave their name to Normandy . ",
        "Normandy , ",
        ["Normandy , ", "Normandy"],
    ),
}


def write_glue(root: Path, task: str, train: str | None = None, dev: str | None = None) -> Path:
    """``root/<folder>/train.tsv`` and the dev file(s) of a GLUE task."""
    folder, text = GLUE_FILES[task]
    d = Path(root) / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "train.tsv").write_text(text if train is None else train)
    devs = ["dev_matched.tsv", "dev_mismatched.tsv"] if task == "mnli" else ["dev.tsv"]
    for name in devs:
        (d / name).write_text(text if dev is None else dev)
    return d


def write_super_glue(root: Path, task: str) -> Path:
    """``root/<folder>/train.jsonl`` and ``val.jsonl`` of a SuperGLUE task."""
    folder, records = SG_RECORDS[task]
    d = Path(root) / folder
    d.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in records)
    (d / "train.jsonl").write_text(text)
    (d / "val.jsonl").write_text(text)
    return d


def write_squad(root: Path) -> Path:
    """``root/SQuAD/train-v1.1.json`` and ``dev-v1.1.json``."""
    d = Path(root) / "SQuAD"
    d.mkdir(parents=True, exist_ok=True)
    for name in ("train-v1.1.json", "dev-v1.1.json"):
        (d / name).write_text(json.dumps(SQUAD))
    return d


def write_all(root: Path) -> Path:
    """Every GLUE, SuperGLUE and SQuAD folder under ``root``."""
    for task in GLUE_FILES:
        write_glue(root, task)
    for task in SG_RECORDS:
        write_super_glue(root, task)
    write_squad(root)
    return Path(root)
