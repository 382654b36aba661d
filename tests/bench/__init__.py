"""Tests of lshsim.bench; :func:`demo_row` is the result row both harness test files build."""

from lshsim.bench import timing


def demo_row(ratio, goal=1.0, op=">=", checks=None, **extra):
    """A ``timing.row`` of a made-up case "demo" with the given ratio, goal and checks."""
    return timing.row(
        "demo",
        ratio=ratio,
        goal=goal,
        op=op,
        measure="peer / ours",
        ours="a",
        peer="b",
        ours_s=0.5,
        peer_s=1.0,
        checks=checks,
        **extra,
    )
