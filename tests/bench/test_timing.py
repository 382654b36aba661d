"""lshsim.bench.timing: result rows and their verdicts, interleaved timing, speed-up rows."""

from __future__ import annotations

import json

import pytest

from lshsim.bench import timing
from tests.bench import demo_row


@pytest.mark.parametrize(
    ("ratio", "goal", "op", "checks", "meets"),
    [
        (1.2, 1.0, ">=", None, True),
        (1.0, 1.0, ">=", None, True),
        (0.99, 1.0, ">=", None, False),
        (1.05, 1.10, "<=", None, True),
        (1.11, 1.10, "<=", None, False),
        (2.0, 1.0, ">=", {"same_ids": False}, False),
        (2.0, 1.0, ">=", {"same_ids": True, "o_m_memory": True}, True),
    ],
)
def test_meets_is_the_goal_and_every_check(ratio, goal, op, checks, meets):
    r = demo_row(ratio, goal, op, checks)
    assert r["meets"] is meets
    assert r["goal"] == f"{op} {goal:g}"
    assert json.loads(json.dumps(r)) == r


def test_bad_goal_operator_is_refused():
    with pytest.raises(ValueError, match="op must be"):
        demo_row(1.0, op=">")


def test_interleaved_times_every_callable_per_round():
    calls = []
    fns = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    got = timing.interleaved(fns, rounds=4, warmup=1, paired=False)
    assert calls.count("a") == calls.count("b") == 5
    # the order rotates: round 0 a then b, round 1 b then a, ...
    assert calls[2:] == ["a", "b", "b", "a", "a", "b", "b", "a"]
    calls.clear()
    got = timing.interleaved(fns, rounds=2, warmup=0)
    # paired (the default): each timed call right after an untimed one of the same callable
    assert calls == ["a", "a", "b", "b", "b", "b", "a", "a"]
    for stats in got.values():
        assert len(stats["times"]) == 2
        assert 0 <= stats["min"] <= stats["median"]
    with pytest.raises(ValueError, match="rounds"):
        timing.interleaved({"a": lambda: None}, rounds=0)


def test_speedup_row_is_peer_over_ours():
    timings = {
        "ours": {"median": 0.5, "iqr": 0.01},
        "peer": {"median": 2.0, "iqr": 0.02},
    }
    r = timing.speedup_row(
        "x", timings, "ours", "peer", goal=3.0, ours="o", peer="p", checks={"ok": True}
    )
    assert r["ratio"] == 4.0 and r["meets"]
    assert (r["ours_s"], r["peer_s"]) == (0.5, 2.0)
