"""Every metric on hand-computed cases, then against scikit-learn and SciPy where installed."""

from __future__ import annotations

import numpy as np
import pytest

from lshsim.t5.finetune import metrics as M
from lshsim.t5.finetune.tasks import Example, get_task


def test_accuracy():
    assert M.accuracy([0, 1, 1, 0], [0, 1, 0, -1]) == 50.0
    with pytest.raises(ValueError, match="2 targets but 1 predictions"):
        M.accuracy([0, 1], [0])


def test_f1_counts_invalid_predictions_wrong():
    # -1 at a 0 target becomes 1 (a false positive), at a 1 target 0 (a false negative):
    # p = [1, 0, 1, 1, 0]: tp 1, fp 2, fn 2 -> 2 / 6.
    assert M.f1_with_invalid([1, 1, 0, 0, 1], [1, 0, 1, -1, -1]) == pytest.approx(100 / 3)
    assert M.f1_with_invalid([0, 0], [0, 0]) == 0.0


def test_matthews():
    # TP 2, TN 2, FP 1, FN 1: (4 - 1) / sqrt(3^4) = 1/3.
    assert M.matthews([1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1]) == pytest.approx(100 / 3)
    # A -1 prediction is a class of its own: cov 3, (9 - 3)(9 - 5) = 24.
    assert M.matthews([0, 1, 1], [0, 1, -1]) == pytest.approx(100 * 3 / np.sqrt(24))
    assert M.matthews([1, 0], [1, 1]) == 0.0  # constant prediction


def test_pearson_spearman():
    assert M.pearson([1, 2, 3], [1, 2, 4]) == pytest.approx(100 * 3 / np.sqrt(2 * 42 / 9))
    # ties take average ranks: [1, 2.5, 2.5, 4] and [1, 2, 3.5, 3.5] -> 3.75 / 4.5
    assert M.spearman([1, 2, 2, 3], [10, 20, 30, 30]) == pytest.approx(100 * 3.75 / 4.5)
    assert M.pearson([1, 2, 3], [2, 2, 2]) == 0.0


def test_macro_f1():
    # each class: tp 1 and one error -> 2/3
    assert M.macro_f1([0, 0, 1, 2, 2], [0, 1, 1, 2, -1], 3) == pytest.approx(200 / 3)
    # class 1 missed, class 2 absent from both: (2/3 + 0 + 0) / 3
    assert M.macro_f1([0, 1], [0, 0], 3) == pytest.approx(100 * (2 / 3) / 3)


def test_multirc():
    out = M.multirc([1, 0, 1, 1], [1, 0, 0, 1], ["a", "a", "b", "b"])
    assert out == {"f1a": pytest.approx(80.0), "exact_match": 50.0}


def test_squad_normalisation_and_max_over_answers():
    assert M.normalize_answer("The  Normans, Inc.!") == "normans inc"
    assert M.normalize_answer("an apple a day") == "apple day"
    out = M.squad(
        [["Normandy , ", "the Normandy"], ["Normandy"]], ["normandy", "in Normandy France"]
    )
    assert out == {"em": 50.0, "f1": pytest.approx(75.0)}


def test_wsc_prediction():
    assert M.wsc_prediction("the dog", "Dog") == 1
    assert M.wsc_prediction("fuzzy bunny", "bunny") == 1
    assert M.wsc_prediction("Bob's hat", "Bob") == 0
    assert M.wsc_prediction("cat", "dog") == 0
    assert M.wsc_prediction("", "dog") == -1


def test_postprocess_maps_unknown_to_minus_one():
    sst2, stsb = get_task("sst2"), get_task("stsb")
    ex = Example("x", "positive", 1)
    assert M.postprocess(sst2, "positive", ex) == 1
    assert M.postprocess(sst2, "Positive", ex) == -1
    assert M.postprocess(stsb, "3.4", ex) == 3.4
    assert M.postprocess(stsb, "high", ex) == -1.0


def test_evaluate_task_metric_sets():
    ex = [Example("a", "positive", 1), Example("b", "negative", 0)]
    assert M.evaluate_task(get_task("mrpc"), ex, ["equivalent", "nonsense"]) == {
        "f1": pytest.approx(200 / 3),  # -1 at target 0 -> a false positive: tp 1, fp 1
        "accuracy": 50.0,
        "score": pytest.approx((200 / 3 + 50) / 2),
    }
    sts = [Example("a", "1.0", 1.0), Example("b", "2.0", 2.0), Example("c", "3.0", 3.0)]
    out = M.evaluate_task(get_task("stsb"), sts, ["1.2", "2.0", "3.4"])
    assert set(out) == {"pearson_corrcoef", "spearman_corrcoef", "score"}
    assert out["spearman_corrcoef"] == pytest.approx(100.0)
    rec = [Example("q", "Paris", ["Paris", "Paris, France"], (0, 0))]
    assert M.evaluate_task(get_task("record"), rec, ["paris"])["em"] == 100.0
    cb = [Example("q", "neutral", 2), Example("q", "entailment", 0)]
    assert M.evaluate_task(get_task("cb"), cb, ["neutral", "maybe"])["accuracy"] == 50.0


def test_benchmark_averages():
    """GLUE: MNLI m/mm averaged into one task, WNLI left out; SuperGLUE: 8 tasks, WSC in."""
    s = {k: {"score": 80.0} for k in ("cola", "sst2", "mrpc", "stsb", "qqp", "qnli", "rte")}
    assert M.glue_average(s) is None  # no MNLI
    s |= {"mnli_matched": {"score": 60.0}, "mnli_mismatched": {"score": 70.0}, "wnli": {"score": 0}}
    assert M.glue_average(s) == pytest.approx((7 * 80 + 65) / 8)
    assert M.glue_average(s, include_wnli=True) == pytest.approx((7 * 80 + 65) / 9)
    sg = {k: {"score": float(i)} for i, k in enumerate(M._SUPER_GLUE_AVERAGE)}
    assert M.super_glue_average(sg) == pytest.approx(3.5)
    del sg["wsc"]
    assert M.super_glue_average(sg) is None


def test_against_scipy():
    """Random cases: SciPy's Pearson and Spearman (average ranks of ties)."""
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.integers(0, 6, 40) / 1.0
        y = x + rng.integers(0, 4, 40)
        assert M.pearson(x, y) == pytest.approx(100 * stats.pearsonr(x, y)[0])
        assert M.spearman(x, y) == pytest.approx(100 * stats.spearmanr(x, y)[0])
