"""``lshsim tune`` against datasketch's ``MinHashLSH._optimal_param``: answers and speed.

* :func:`datasketch_comparison`: at datasketch's common settings (threshold 0.5 / 0.8 / 0.9,
  ``num_perm`` 128 / 256, weights 0.5 / 0.5), datasketch's ``(b, r)`` with the numbers it
  minimises (areas, ``_false_positive_probability`` and ``_false_negative_probability``), the
  true probabilities of that choice (the areas over the intervals' lengths, its issue #129),
  and lshsim's choice with its probabilities; ``experiments/tune_table.py`` writes the table to
  ``figures/TUNE.md`` (the tune guide renders its table from the JSON: docs/numbers_guide.py).
* :func:`tune_case` (``experiments/bench_peers.py --only tune``): the same searches timed,
  interleaved; each row checks that lshsim's rates are datasketch's areas normalised (at its
  optimum) and that its objective is no worse than that of datasketch's choice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from lshsim.bench.timing import interleaved, speedup_row
from lshsim.hashing import MinHash
from lshsim.tune import tune

__all__ = [
    "CASES",
    "SETTINGS",
    "comparison_markdown",
    "comparison_page",
    "datasketch_comparison",
    "tune_case",
]

#: The head of ``figures/TUNE.md``.
PAGE_HEAD = """\
# datasketch's MinHashLSH tuner against lshsim tune

Written by `python experiments/tune_table.py` (exact numbers; weights 0.5 / 0.5). datasketch
minimises the *areas* `int_0^t P` and `int_t^1 (1 - P)` (its issue #129); the true
probabilities under a uniform law of similarities are those areas over `t` and `1 - t`.
lshsim minimises the probabilities (`lshsim tune --family minhash --threshold t --budget
num_perm`); b = L bands, r = k rows.

"""

#: datasketch's common settings: (threshold, num_perm)
SETTINGS = ((0.5, 128), (0.8, 128), (0.9, 128), (0.5, 256), (0.8, 256), (0.9, 256))
#: weights (w_fp, w_fn): datasketch's default
WEIGHTS = (0.5, 0.5)


def _datasketch():
    try:
        from datasketch import lsh
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            "the peer library 'datasketch' is missing: pip install datasketch", name="datasketch"
        ) from err
    return lsh


def datasketch_comparison(settings=SETTINGS, weights=WEIGHTS) -> list[dict[str, Any]]:
    """One row per setting: datasketch's choice and numbers beside the true ones and lshsim's.

    Returns:
        Rows with ``threshold``, ``num_perm``, ``datasketch`` (``b``, ``r``, ``fp_area``,
        ``fn_area``, ``false_positive``, ``false_negative``, ``objective``: the last three
        the probabilities of its choice) and ``lshsim`` (``b``, ``r``, ``false_positive``,
        ``false_negative``, ``objective``, ``unused``).
    """
    lsh = _datasketch()
    rows = []
    for t, num_perm in settings:
        b, r = lsh._optimal_param(t, num_perm, *weights)
        fp_area = lsh._false_positive_probability(t, b, r)
        fn_area = lsh._false_negative_probability(t, b, r)
        got = tune(MinHash.name, threshold=t, budget=num_perm, weights=weights)
        theirs = next(
            i
            for i, (k, big_l) in enumerate(
                zip(got.candidates["k"], got.candidates["L"], strict=True)
            )
            if (k, big_l) == (r, b)
        )
        fp, fn = (
            float(got.candidates[key][theirs]) for key in ("false_positive", "false_negative")
        )
        best = got.best
        rows.append(
            {
                "threshold": t,
                "num_perm": num_perm,
                "datasketch": {
                    "b": int(b),
                    "r": int(r),
                    "fp_area": fp_area,
                    "fn_area": fn_area,
                    "false_positive": fp,
                    "false_negative": fn,
                    "objective": weights[0] * fp + weights[1] * fn,
                },
                "lshsim": {
                    "b": best.L,
                    "r": best.k,
                    "false_positive": best.false_positive,
                    "false_negative": best.false_negative,
                    "objective": got.inputs["objective"],
                    "unused": got.inputs["unused"],
                },
            }
        )
    return rows


def comparison_markdown(rows: list[dict[str, Any]]) -> str:
    """The comparison as a Markdown table (the block of ``figures/TUNE.md``)."""
    lines = [
        "| threshold | num_perm | datasketch (b, r) | its FP, FN (areas) | their true FP, FN "
        "| lshsim (b, r) | lshsim FP, FN | objective: datasketch's choice / lshsim's |",
        "| ---: | ---: | :---: | :---: | :---: | :---: | :---: | :---: |",
    ]
    for row in rows:
        d, o = row["datasketch"], row["lshsim"]
        lines.append(
            f"| {row['threshold']:g} | {row['num_perm']} | ({d['b']}, {d['r']}) | "
            f"{d['fp_area']:.4f}, {d['fn_area']:.4f} | {d['false_positive']:.4f}, "
            f"{d['false_negative']:.4f} | ({o['b']}, {o['r']}) | {o['false_positive']:.4f}, "
            f"{o['false_negative']:.4f} | {d['objective']:.4f} / {o['objective']:.4f} |"
        )
    return "\n".join(lines)


def comparison_page() -> tuple[str, str]:
    """``figures/TUNE.md`` and ``figures/tune_datasketch.json``, as written."""
    rows = datasketch_comparison()
    return PAGE_HEAD + comparison_markdown(rows) + "\n", json.dumps(rows, indent=1) + "\n"


def tune_case(quick: bool) -> list[dict[str, Any]]:
    """The threshold-form search against ``_optimal_param`` on the same inputs, per setting."""
    lsh = _datasketch()
    rows = []
    rounds = 5 if quick else 15
    compared = {(r["threshold"], r["num_perm"]): r for r in datasketch_comparison()}
    for t, num_perm in SETTINGS:
        fns: dict[str, Callable[[], Any]] = {
            "ours": lambda t=t, n=num_perm: tune(MinHash.name, threshold=t, budget=n),
            "datasketch": lambda t=t, n=num_perm: lsh._optimal_param(t, n, *WEIGHTS),
        }
        t0 = time.perf_counter()
        timings = interleaved(fns, rounds=rounds, warmup=1)
        row = compared[(t, num_perm)]
        d, o = row["datasketch"], row["lshsim"]
        b, r = d["b"], d["r"]
        normalised = (
            abs(d["false_positive"] - d["fp_area"] / t) <= 1e-10 * d["false_positive"]
            and abs(d["false_negative"] - d["fn_area"] / (1 - t)) <= 1e-12
        )
        rows.append(
            speedup_row(
                f"tune minhash threshold={t:g} num_perm={num_perm} vs datasketch",
                timings,
                "ours",
                "datasketch",
                goal=20.0,
                ours=f"lshsim.tune.tune('minhash', threshold={t:g}, budget={num_perm}): "
                "closed-form areas (incomplete beta) over every k L <= num_perm",
                peer=f"datasketch._optimal_param({t:g}, {num_perm}, 0.5, 0.5): scipy quad, 2 "
                f"per (b, r); chose ({b}, {r}), lshsim ({o['b']}, {o['r']})",
                checks={
                    "rates_are_normalised_areas": normalised,
                    "objective_no_worse": o["objective"] <= d["objective"] + 1e-12,
                },
                timing_wall_s=time.perf_counter() - t0,
            )
        )
    return rows


#: Case name -> function(quick) -> result rows.
CASES: dict[str, Callable[[bool], list[dict[str, Any]]]] = {"tune": tune_case}
