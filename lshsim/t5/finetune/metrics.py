"""Fine-tuning metrics as GLUE, SuperGLUE and SQuAD define them, in T5's units (x100).

Written from the benchmarks' rules, with no scikit-learn or SciPy (the tests compare with both
where installed):

* accuracy; binary F1 of the positive class (MRPC, QQP, MultiRC's F1a), where a prediction
  that is no class counts as wrong (T5's ``f1_score_with_invalid``: flipped to ``1 - target``);
* Matthews correlation (CoLA), from the confusion matrix (a non-class prediction is a class of
  its own, as scikit-learn counts it);
* Pearson and Spearman correlation (STS-B; Spearman on average ranks of ties); a constant
  vector has no correlation: reported as 0 (SciPy: NaN);
* CB's macro F1: the mean over the 3 classes of each class's F1 (0 for a class never gold nor
  predicted), and accuracy;
* MultiRC: F1a over all answers and exact match, the mean over questions of "every answer of
  the question right";
* SQuAD and ReCoRD: exact match and token F1 after the official answer normalisation
  (lowercase, punctuation removed, the articles a/an/the removed, whitespace collapsed), the
  maximum over the gold answers, averaged over questions (ReCoRD: one prediction per query).

Decoded predictions are mapped back as T5's postprocessors do (``t5/data/postprocessors.py``):
a label word to its class id and anything else to -1 (a class no target has, so always wrong);
an STS-B string to its float, or -1; a WSC prediction to whether it names the candidate
referent (determiners and case ignored; an empty one -1).

Benchmark averages (:func:`glue_average`, :func:`super_glue_average`): each task's score is the
mean of its metrics (MRPC and QQP: F1 and accuracy; STS-B: Pearson and Spearman; CB: macro F1
and accuracy; MultiRC: F1a and EM; ReCoRD: F1 and EM), as the GLUE and SuperGLUE papers define
the benchmark score and T5 reports it (Raffel et al. 2020, Table 14: "GLUE Average",
"SuperGLUE Average"). MNLI is one task whose score is the mean of its matched and mismatched
accuracy (GLUE lists MNLI-m and MNLI-mm as one task's two results). WNLI is left out of the
GLUE average: T5 never trains on WNLI (``glue_utils.GLUE_WEIGHT_MAPPING``: "We omit WNLI
because we train on WSC/DPR simple instead"), so a validation WNLI score says nothing of the
model (our reading of how T5's validation averages treat it; the official test-server average
counts WNLI); pass ``include_wnli=True`` to count it. WSC is in the SuperGLUE average (accuracy of
``wsc_simple``'s postprocessed predictions, T5's ``super_glue_wsc_v102_simple_eval``).
"""

from __future__ import annotations

import collections
import math
import re
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "accuracy",
    "evaluate_task",
    "f1_with_invalid",
    "glue_average",
    "macro_f1",
    "matthews",
    "multirc",
    "normalize_answer",
    "pearson",
    "postprocess",
    "spearman",
    "squad",
    "super_glue_average",
]


def accuracy(targets: Sequence, predictions: Sequence) -> float:
    """Percentage of predictions equal to their target."""
    _same_length(targets, predictions)
    return 100.0 * float(np.mean([t == p for t, p in zip(targets, predictions, strict=True)]))


def _same_length(targets, predictions) -> None:
    if len(targets) != len(predictions):
        raise ValueError(f"{len(targets)} targets but {len(predictions)} predictions")
    if not len(targets):
        raise ValueError("no examples to score")


def f1_with_invalid(targets: Sequence[int], predictions: Sequence[int]) -> float:
    """F1 (x100) of class 1; a prediction that is neither 0 nor 1 counts as wrong."""
    _same_length(targets, predictions)
    t = np.asarray(targets, np.int64)
    p = np.asarray(predictions, np.int64).copy()
    invalid = (p != 0) & (p != 1)
    p[invalid] = 1 - t[invalid]
    tp = int(np.sum((p == 1) & (t == 1)))
    fp = int(np.sum((p == 1) & (t == 0)))
    fn = int(np.sum((p == 0) & (t == 1)))
    return 100.0 * _f1(tp, fp, fn)


def _f1(tp: int, fp: int, fn: int) -> float:
    denom = 2 * tp + fp + fn
    return 0.0 if denom == 0 else 2 * tp / denom


def matthews(targets: Sequence[int], predictions: Sequence[int]) -> float:
    """Matthews correlation (x100) of the multiclass confusion matrix (Gorodkin's R_K).

    ``(c s - sum_k p_k t_k) / sqrt((s^2 - sum_k p_k^2)(s^2 - sum_k t_k^2))`` with ``c`` the
    correct predictions, ``s`` the examples, ``t_k`` and ``p_k`` the gold and predicted counts
    of class ``k``; 0 when a factor of the denominator is 0.
    """
    _same_length(targets, predictions)
    classes = sorted(set(targets) | set(predictions))
    index = {c: i for i, c in enumerate(classes)}
    cm = np.zeros((len(classes), len(classes)), np.float64)
    for t, p in zip(targets, predictions, strict=True):
        cm[index[t], index[p]] += 1
    t_k, p_k = cm.sum(axis=1), cm.sum(axis=0)
    c, s = np.trace(cm), cm.sum()
    cov_tp = c * s - float(p_k @ t_k)
    cov_pp = s * s - float(p_k @ p_k)
    cov_tt = s * s - float(t_k @ t_k)
    if cov_pp == 0 or cov_tt == 0:
        return 0.0
    return 100.0 * cov_tp / math.sqrt(cov_pp * cov_tt)


def pearson(targets: Sequence[float], predictions: Sequence[float]) -> float:
    """Pearson correlation (x100); 0 if either vector is constant."""
    _same_length(targets, predictions)
    x = np.asarray(targets, np.float64) - np.mean(targets)
    y = np.asarray(predictions, np.float64) - np.mean(predictions)
    denom = math.sqrt(float(x @ x) * float(y @ y))
    return 0.0 if denom == 0 else 100.0 * float(x @ y) / denom


def _ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n, ties given the mean of the ranks they span."""
    v = np.asarray(values, np.float64)
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v), np.float64)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(targets: Sequence[float], predictions: Sequence[float]) -> float:
    """Spearman correlation (x100): Pearson of the average ranks; 0 if either is constant."""
    _same_length(targets, predictions)
    return pearson(_ranks(targets), _ranks(predictions))


def macro_f1(targets: Sequence[int], predictions: Sequence[int], num_classes: int) -> float:
    """Mean over classes ``0 .. num_classes-1`` of each class's F1 (x100)."""
    _same_length(targets, predictions)
    t, p = np.asarray(targets), np.asarray(predictions)
    scores = []
    for k in range(num_classes):
        tp = int(np.sum((t == k) & (p == k)))
        fp = int(np.sum((t != k) & (p == k)))
        fn = int(np.sum((t == k) & (p != k)))
        scores.append(_f1(tp, fp, fn))
    return 100.0 * float(np.mean(scores))


def multirc(targets: Sequence[int], predictions: Sequence[int], groups: Sequence) -> dict:
    """MultiRC's ``f1a`` over all answers and ``exact_match`` (x100).

    ``exact_match`` is the mean over questions (``groups``) of "all its answers are right".
    """
    _same_length(targets, predictions)
    by_group: dict[Any, list[bool]] = collections.defaultdict(list)
    for t, p, g in zip(targets, predictions, groups, strict=True):
        by_group[g].append(t == p)
    em = 100.0 * float(np.mean([all(v) for v in by_group.values()]))
    return {"f1a": f1_with_invalid(targets, predictions), "exact_match": em}


def normalize_answer(text: str) -> str:
    """The official SQuAD v1.1 answer normalisation.

    Lowercase, drop punctuation, drop the articles a/an/the, collapse whitespace.
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _token_f1(gold: str, prediction: str) -> float:
    p, g = prediction.split(), gold.split()
    same = sum((collections.Counter(p) & collections.Counter(g)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def squad(answers: Sequence[Sequence[str]], predictions: Sequence[str]) -> dict:
    """``em`` and ``f1`` (x100): per question the best over its gold answers, then the mean."""
    _same_length(answers, predictions)
    em, f1 = [], []
    for golds, pred in zip(answers, predictions, strict=True):
        golds = [normalize_answer(g) for g in golds] or [""]
        pred = normalize_answer(pred)
        em.append(max(float(g == pred) for g in golds))
        f1.append(max(_token_f1(g, pred) for g in golds))
    return {"em": 100.0 * float(np.mean(em)), "f1": 100.0 * float(np.mean(f1))}


_DETERMINERS = frozenset(
    "a an few her his each every many much my our some that the their these this those which "
    "whose your".split()
)


def _wsc_clean(text: str) -> str:
    return " ".join(w for w in text.strip().lower().split(" ") if w not in _DETERMINERS)


def wsc_prediction(prediction: str, referent: str) -> int:
    """T5's ``wsc_simple`` postprocessor: whether the prediction names the candidate referent.

    1 if one word set lies inside the other (determiners and case ignored, possessives kept
    apart), 0 if not, -1 for an empty prediction.
    """
    pred, ref = _wsc_clean(prediction), _wsc_clean(referent)
    if not pred:
        return -1
    if ("'" in pred) != ("'" in ref):
        return 0
    pw, rw = set(pred.split(" ")), set(ref.split(" "))
    return int(pw <= rw or rw <= pw)


def postprocess(task, text: str, example) -> Any:
    """A decoded prediction as the value its metric compares (T5's postprocessors)."""
    if task.name == "stsb":
        try:
            return float(text)
        except ValueError:
            return -1.0
    if task.name == "wsc":
        return wsc_prediction(text, example.referent or "")
    if task.label_classes is not None:
        return task.label_classes.index(text) if text in task.label_classes else -1
    return text


def evaluate_task(task, examples: Sequence, texts: Sequence[str]) -> dict[str, float]:
    """The metrics of ``task`` for decoded ``texts`` of ``examples``, and their mean ``score``.

    Raises:
        ValueError: as many texts as examples are needed, at least one.
    """
    _same_length(examples, texts)
    preds = [postprocess(task, t, ex) for t, ex in zip(texts, examples, strict=True)]
    gold = [ex.label for ex in examples]
    kind = task.metric
    if kind == "accuracy" or kind == "wsc":
        out = {"accuracy": accuracy(gold, preds)}
    elif kind == "exact":
        out = {"accuracy": accuracy([ex.targets for ex in examples], texts)}
    elif kind == "matthews":
        out = {"matthews_corrcoef": matthews(gold, preds)}
    elif kind == "f1_accuracy":
        out = {"f1": f1_with_invalid(gold, preds), "accuracy": accuracy(gold, preds)}
    elif kind == "correlation":
        out = {"pearson_corrcoef": pearson(gold, preds), "spearman_corrcoef": spearman(gold, preds)}
    elif kind == "cb":
        out = {"mean_3class_f1": macro_f1(gold, preds, 3), "accuracy": accuracy(gold, preds)}
    elif kind == "multirc":
        out = multirc(gold, preds, [ex.group for ex in examples])
    elif kind == "squad":
        out = squad(gold, preds)
    else:
        raise ValueError(f"metric: unknown metric set {kind!r}")
    return {**out, "score": float(np.mean(list(out.values())))}


_GLUE_AVERAGE = ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte")
_SUPER_GLUE_AVERAGE = ("boolq", "cb", "copa", "multirc", "record", "super_glue_rte", "wic", "wsc")


def glue_average(scores: dict[str, dict], include_wnli: bool = False) -> float | None:
    """The GLUE average of per-evaluation results (``evaluate_task`` outputs by name).

    ``None`` if a task is missing. MNLI: the mean of ``mnli_matched`` and ``mnli_mismatched``.
    """
    per_task = {}
    for name in (*_GLUE_AVERAGE, "wnli") if include_wnli else _GLUE_AVERAGE:
        if name == "mnli":
            if "mnli_matched" not in scores or "mnli_mismatched" not in scores:
                return None
            per_task[name] = (
                scores["mnli_matched"]["score"] + scores["mnli_mismatched"]["score"]
            ) / 2
        elif name in scores:
            per_task[name] = scores[name]["score"]
        else:
            return None
    return float(np.mean(list(per_task.values())))


def super_glue_average(scores: dict[str, dict]) -> float | None:
    """The SuperGLUE average of per-task results, or ``None`` if a task is missing."""
    if any(name not in scores for name in _SUPER_GLUE_AVERAGE):
        return None
    return float(np.mean([scores[name]["score"] for name in _SUPER_GLUE_AVERAGE]))
