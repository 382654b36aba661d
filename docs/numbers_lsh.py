"""Derived numbers and tables of proofs/lsh_exponent.md (``docs/render_numbers.py``).

The equal-cost comparison's schemes (``amplification``, ``collision_vs_n``), p-stable's
calibration, and §3's measured gap of the orthogonal and Hadamard cross-polytopes
(``figures/rotation_gap.json``, written by ``experiments/rotation_gap.py``). Each derived number
is a function of a :class:`docs.number_sources.Sources` (and an optional text argument) that
reads the result files through ``sources.get``; each table returns Markdown. The names join
:mod:`docs.numbers_proofs`' ``DERIVED`` and ``TABLES`` (which import them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def signed(text: str) -> str:
    """A number's text with a typographic minus, as the proofs print negative numbers."""
    return "\u2212" + text[1:] if text.startswith("-") else text


AMPLIFICATION = "amplification.json"


def exact_p(sources: Any, family: str, n: int, cosine: float = 0.5) -> float:
    """A family's exact collision probability at cosine ``a = f`` (``collision_vs_n``)."""
    panel = f"/data/panels/{family}/exact/{cosine:g}"
    ns = sources.get("collision_vs_n.json", f"{panel}/n")
    if n not in ns:
        raise ValueError(f"figures/collision_vs_n.json: no n = {n} in {panel}")
    return sources.get("collision_vs_n.json", f"{panel}/p/{ns.index(n)}")


def proof_exact_p(sources: Any, arg: str) -> float:
    """``=proof_exact_p:FAMILY,N``: the exact probability at cosine 0.5 (``collision_vs_n``)."""
    family, n = arg.split(",")
    return exact_p(sources, family, int(n))


def proof_p1_gap(sources: Any) -> float:
    """How far (in %) the cross-polytope's ``p1`` lies below Voronoi's at n = 8 and 64, a = 0.5."""
    return max(
        100 * (1 - exact_p(sources, "crosspolytope", n) / exact_p(sources, "voronoi", n))
        for n in (8, 64)
    )


def proof_h1_scheme(sources: Any, arg: str) -> str:
    """Claim T1.h1's example: a family's best scheme at a = 0.5 and a budget of 2^12.

    Args:
        sources: the result files (the scheme from ``amplification``, ``p1`` from
            ``collision_vs_n``).
        arg: ``FAMILY,PART`` with PART ``n``, ``k``, ``L``, ``recall``, ``hashing`` (inner
            products to hash a query) or ``candidates`` (expected far candidates).

    Returns:
        The part, as text.
    """
    from lshsim.theory import amplified, hash_cost

    family, part = arg.split(",")
    i = sources.get(AMPLIFICATION, "/data/cosines").index(0.5)
    j = sources.get(AMPLIFICATION, "/data/budgets").index(2.0**12)
    n, k, tables = sources.get(AMPLIFICATION, f"/data/schemes/{family}/{i}/{j}")
    if part == "recall":
        return f"{amplified(exact_p(sources, family, n), k, tables):.3f}"
    if part == "hashing":
        return f"{tables * k * hash_cost(family, n):g}"
    if part == "candidates":  # p2 = P(n, 0) = 1/n for these families (claim T1.h2)
        return f"{tables * sources.get(AMPLIFICATION, '/data/points') / n**k:g}"
    return str({"n": n, "k": k, "L": tables}[part])


def proof_h1_margins(sources: Any) -> str:
    """Claim T1.h1's margins in ``ln(miss)`` as a percent range (``3 to 13%``)."""
    h1 = "/claims/id=T1.h1/evidence/min%20ln-miss%20ratio%20cross-polytope%20~1%20"
    ratios = [
        sources.get("results.json", h1 + "simhash%20where%20claimed%20best"),
        sources.get("results.json", h1 + "voronoi"),
    ]
    low, high = (round(100 * (r - 1)) for r in sorted(ratios))
    return f"{low} to {high}%"


def proof_pstable_far(sources: Any) -> float:
    """p-stable's ``P(n, 0)`` at n = 2^10 (exact theory; ``1/n`` for the other families)."""
    from lshsim.theory import probability

    return probability("pstable", 2**10, 0.0)


ROTATION = "rotation_gap.json"
#: The rotations rotation_gap.json compares with the Gaussian projection.
ROTATIONS = ("orthogonal", "hadamard")


def _rotation_row(sources: Any, d: str, n: str, a: str, rotation: str, run: str = "rows") -> str:
    """The pointer of one row of rotation_gap.json (``run``: ``rows`` or ``rerun``)."""
    keys = zip(
        sources.get(ROTATION, f"/{run}/*/d"),
        sources.get(ROTATION, f"/{run}/*/n"),
        sources.get(ROTATION, f"/{run}/*/cosine"),
        sources.get(ROTATION, f"/{run}/*/rotation"),
        strict=True,
    )
    want = (int(d), int(n), float(a), rotation)
    hits = [i for i, key in enumerate(keys) if key == want]
    if len(hits) != 1:
        raise ValueError(f"figures/{ROTATION}: {len(hits)} {run} at {want}, not one")
    return f"/{run}/{hits[0]}"


def _rotation_cell(row: dict) -> str:
    """A row's estimate and 95% interval: ``0.3317 [0.3252, 0.3383]``."""
    low, high = row["ci"]
    return f"{row['estimate']:.4f} [{low:.4f}, {high:.4f}]"


def _percent(value: float, digits: int) -> str:
    """A signed percentage of a fraction, as the proofs print it: ``−25.4%``, ``+0.3%``."""
    return signed(f"{100 * value:+.{digits}f}%")


def proof_rotation(sources: Any, arg: str) -> Any:
    """A rotation_gap.json row's field: ``D,N,A,ROTATION,FIELD[,RUN]``.

    Args:
        sources: the result files.
        arg: the row's ``d``, ``n``, cosine and rotation; FIELD ``estimate``, ``ms`` (wall
            time per pair, milliseconds), ``cell`` (``0.3317 [0.3252, 0.3383]``) or ``gapN``
            (the relative gap in percent with N decimals, signed: ``−25.4%``); RUN ``rows``
            (default) or ``rerun``.

    Returns:
        The number, or the text of ``cell`` and ``gapN``.
    """
    d, n, a, rotation, field, *run = arg.split(",")
    row = _rotation_row(sources, d, n, a, rotation, *run)
    if field == "ms":
        seconds = sources.get(ROTATION, f"{row}/seconds")
        return 1e3 * seconds / sources.get(ROTATION, f"{row}/samples")
    if field == "cell":
        return _rotation_cell(sources.get(ROTATION, row))
    if field.startswith("gap"):
        return _percent(sources.get(ROTATION, f"{row}/relative_gap"), int(field[3:]))
    return sources.get(ROTATION, f"{row}/{field}")


def _m_over_d(n: float, d: float) -> str:
    """``m/d`` with ``m = n/2`` as a fraction (``1/8``), or a decimal for non-integer inputs."""
    from fractions import Fraction

    if isinstance(n, int) and isinstance(d, int) and d > 0:
        return str(Fraction(n // 2, d))
    return f"{n / 2 / d:g}"


def proof_rotation_table(sources: Any) -> str:
    """proofs/lsh_exponent.md's table of the rotations' measured gaps (rotation_gap.json)."""
    lines = [
        "| d | n | m/d | a | rotation | estimate [95% CI] | gaussian-projection (exact) "
        "| gap | z |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for i, _ in enumerate(sources.get(ROTATION, "/rows")):
        row = sources.get(ROTATION, f"/rows/{i}")
        lines.append(
            f"| {row['d']} | {row['n']} | {_m_over_d(row['n'], row['d'])} | {row['cosine']:g} | "
            f"{row['rotation']} | {_rotation_cell(row)} | {row['gaussian_projection']:.4f} | "
            f"{_percent(row['relative_gap'], 1)} | {signed(format(row['z'], '+.1f'))} |"
        )
    return "\n".join(lines) + "\n"


def proof_rotation_both(sources: Any, arg: str) -> str:
    """Both rotations' estimates at ``D,N,A`` to 3 decimals: one number where they agree."""
    shown = {f"{proof_rotation(sources, f'{arg},{r},estimate'):.3f}" for r in ROTATIONS}
    return " and ".join(sorted(shown))


def proof_rotation_gap_range(sources: Any, arg: str) -> str:
    """The range of both rotations' ``|gap|`` at ``D,N,A[,RUN]`` in whole percent (``28-31%``)."""
    d, n, a, *run = arg.split(",")
    gaps = [
        abs(100 * sources.get(ROTATION, _rotation_row(sources, d, n, a, r, *run) + "/relative_gap"))
        for r in ROTATIONS
    ]
    low, high = (f"{g:.0f}" for g in sorted(gaps))
    return f"{low}%" if low == high else f"{low}-{high}%"


def proof_rotation_max_gap(sources: Any, ratio: str) -> float:
    """The largest ``|gap|`` (percent) of the main table's rows at ``m/d`` = RATIO (``1/8``)."""
    rows = sources.get(ROTATION, "/rows")
    return max(
        abs(100 * sources.get(ROTATION, f"/rows/{i}/relative_gap"))
        for i, r in enumerate(rows)
        if _m_over_d(r["n"], r["d"]) == ratio
    )


def proof_rotation_excursion(sources: Any, arg: str) -> float:
    """How far apart the first run and the rerun of ``D,N,A,ROTATION`` are, in standard errors.

    The difference of the two estimates over its standard error, both estimates' binomial
    variances taken at their pooled value (a two-sample z).
    """
    d, n, a, rotation = arg.split(",")
    first = sources.get(ROTATION, _rotation_row(sources, d, n, a, rotation))
    again = sources.get(ROTATION, _rotation_row(sources, d, n, a, rotation, "rerun"))
    n1, n2 = first["samples"], again["samples"]
    pooled = (first["estimate"] * n1 + again["estimate"] * n2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return (first["estimate"] - again["estimate"]) / se


def proof_pstable_q0(sources: Any) -> float:
    """p-stable's per-direction probability at distance sqrt 2 (a = 0), w = 4, radix 2."""
    from lshsim.laws.closed_forms import pstable_direction_probability

    return pstable_direction_probability(math.sqrt(2.0), 4.0, 2)


def proof_hash_cost(sources: Any, arg: str) -> float:
    """Inner products per cross-polytope hash: ``N,D,ROTATION`` (``lshsim.theory.hash_cost``)."""
    from lshsim.theory import hash_cost

    n, d, rotation = arg.split(",")
    return hash_cost("crosspolytope", int(n), dim=int(d), rotation=rotation)


#: name -> function(sources[, arg]) -> number or text.
DERIVED: dict[str, Callable[..., Any]] = {
    "proof_exact_p": proof_exact_p,
    "proof_p1_gap": proof_p1_gap,
    "proof_h1_scheme": proof_h1_scheme,
    "proof_h1_margins": proof_h1_margins,
    "proof_pstable_far": proof_pstable_far,
    "proof_rotation": proof_rotation,
    "proof_rotation_both": proof_rotation_both,
    "proof_rotation_gap_range": proof_rotation_gap_range,
    "proof_rotation_max_gap": proof_rotation_max_gap,
    "proof_rotation_excursion": proof_rotation_excursion,
    "proof_pstable_q0": proof_pstable_q0,
    "proof_hash_cost": proof_hash_cost,
}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {"proof_rotation_table": proof_rotation_table}
