"""The "(library)" numbers of ``proofs/theorem1.md``: calls to the library outside ``lshsim check``.

The proof of Theorem 1 quotes values that no claim's check records: p-stable's calibration,
``lambda_n`` against its limit, the exact ``rho / (1 - f)`` at fixed ``kappa``, the Laplace
form's gap, ``P'(0)`` against ``M_n^2 / (n - 1)``, the ties ``n f_n``, the slopes that order
Voronoi and SimHash near ``a = 0`` and ``a = 1``, the log gaps at negative cosines, and two
Monte-Carlo numbers of the cosine's moments (T1.g1). This script computes each from
:mod:`lshsim.theory` and :mod:`lshsim.theorems` (quadrature and root finding; the two
Monte-Carlo numbers seeded) and writes ``figures/theorem1_library.json``:

    python experiments/theorem1_library.py --out figures/theorem1_library.json

(about ten seconds). Without ``--out`` it prints the JSON.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from scipy import integrate
from scipy.special import gammaln, log_ndtr

from lshsim import theory
from lshsim.bench.report import command_line, write_record
from lshsim.sentences import sentence_sums
from lshsim.theorems.theorem1 import sentence
from lshsim.theorems.theorem1.ordering import tie_overlap
from lshsim.theorems.theorem1.rates import argmax_change_rate

#: n of the ties n f_n; the log2 n of the slopes' comparisons (k = 2, ..., 24).
TIES = (2, 3, 4, 5, 6, 8, 16, 64, 256, 4096, 2**16, 2**20)
SLOPE_KS = range(2, 25)


def expected_max(n: int) -> float:
    """``M_n = E max`` of ``n`` i.i.d. standard normals, by 1-D quadrature."""

    def density(z: float) -> float:
        return (
            z * n * math.exp(-0.5 * z * z + (n - 1) * float(log_ndtr(z))) / math.sqrt(2 * math.pi)
        )

    mode = math.sqrt(2 * math.log(n)) if n > 2 else 0.5
    val, _ = integrate.quad(
        density, -12.0, 12.0, points=[mode], epsabs=1e-14, epsrel=1e-12, limit=200
    )
    return val


def pstable() -> dict:
    """p-stable (``w = 4``, radix 2) against Voronoi and SimHash at ``n = 2^10``."""
    n = 2**10
    fams = ("pstable", "voronoi", "simhash")
    return {
        "rho(n, 0.5) at n = 2, 16, 2^20": [theory.rho("pstable", m, 0.5) for m in (2, 16, 2**20)],
        "rho(n, 0)": theory.rho("pstable", n, 0.0),
        "P(2^10, 0)": theory.probability("pstable", n, 0.0),
        "P(2^10, 0.5)": {f: theory.probability(f, n, 0.5) for f in fams},
        "rho(2^10, 0.5)": {f: theory.rho(f, n, 0.5) for f in fams},
        "rho_lsh(2^10, 0.5)": theory.rho_lsh("pstable", n, 0.5),
    }


def regime() -> dict:
    """T1.d2's heuristic: ``lambda_n`` against ``sqrt(2 ln n / pi)``; ``rho/(1-f)`` at ``kappa``."""
    lam = {
        str(k): [argmax_change_rate(2**k), math.sqrt(2 * k * math.log(2) / math.pi)]
        for k in (10, 24)
    }
    kappa = {}
    for kap in (0.01, 0.1, 1.0, 3.0):
        row = {}
        for k in (8, 16, 24):
            one_minus_f = kap / (k * math.log(2))
            row[str(k)] = theory.rho("voronoi", 2**k, 1 - one_minus_f) / one_minus_f
        kappa[f"{kap:g}"] = row
    return {
        "lambda_n, sqrt(2 ln n / pi) at log2 n": lam,
        "rho / (1 - f) at kappa = (1 - f) ln n, log2 n": kappa,
        "2 / sqrt(pi kappa) at kappa = 0.01": 2 / math.sqrt(math.pi * 0.01),
    }


def laplace() -> dict:
    """T1.d4's heuristic: the gap ``rho - (1-a)/(1+a)``, exact and by the closed form."""
    out = {}
    for a in (0.1, 0.5):
        row = {}
        for k in (8, 24):
            ln = k * math.log(2)
            closed = a / (1 + a) * math.log(4 * math.pi * ln) - 2 * gammaln(1 / (1 + a))
            closed = (closed + 0.5 * math.log1p(-a * a)) / ln
            row[str(k)] = [theory.rho("voronoi", 2**k, a) - (1 - a) / (1 + a), closed]
        out[f"{a:g}"] = row
    return {
        "gap: exact, closed form (a, log2 n)": out,
        "n^-((1-a)/(1+a)) at a = 0.9, n = 2^24": 2.0 ** (-24 * (1 - 0.9) / (1 + 0.9)),
    }


def ties() -> dict:
    """T1.f1: ``P'(0)`` against ``M_n^2/(n-1)``, ``n f_n``, and ``1/(1 - W_1)``."""
    h = 1e-4
    slope = {}
    for n in (2, 16, 1024):
        numeric = (theory.probability("voronoi", n, h) - theory.probability("voronoi", n, -h)) / (
            2 * h
        )
        slope[str(n)] = [numeric, expected_max(n) ** 2 / (n - 1)]
    return {
        "P'(0) numerical, M_n^2/(n-1) at n": slope,
        "n f_n at n": {str(n): n * tie_overlap(n) for n in TIES},
        "1/(1 - W_1) at n": {
            str(n): 1 / (1 - expected_max(n) ** 2 / (n - 1)) for n in (4096, 2**16, 2**20)
        },
    }


def slopes() -> dict:
    """T1.f2: Voronoi against SimHash near ``a = 0`` (``W_1``) and near ``a = 1`` (``lambda_n``)."""
    near0 = {k: (2**k * expected_max(2**k) ** 2 / (2**k - 1), 2 * k / math.pi) for k in SLOPE_KS}
    near1 = {k: (argmax_change_rate(2**k), k / math.pi) for k in SLOPE_KS}
    out = {}
    for name, pairs in (("n M_n^2/(n-1), 2k/pi", near0), ("lambda_n, k/pi", near1)):
        ratios = {
            k: (v[0] / v[1] if name.startswith("n M") else v[1] / v[0]) for k, v in pairs.items()
        }
        low = min(ratios, key=ratios.get)
        out[name] = {
            "min ratio": ratios[low],
            "at k": low,
            **{f"k = {k}": list(pairs[k]) for k in (2, 10, 24)},
        }
    gap = {
        "k = 24, a = -0.999": theory.log_probability("voronoi", 2**24, -0.999)
        - theory.log_probability("simhash", 2**24, -0.999),
        "k = 2, a = -1e-4": theory.log_probability("voronoi", 4, -1e-4)
        - theory.log_probability("simhash", 4, -1e-4),
    }
    return {**out, "log P_vor - log P_sh": gap}


def moments() -> dict:
    """T1.g1: the variance's relative error at ``d = 8``, and the plain average's standard error."""
    rng = np.random.default_rng(np.random.SeedSequence([sentence.SEED, 100]))
    var_error = sentence.moment_errors(31 / 32, 32, 8, 2**17, rng)["var"]
    # the check's draws at (f, l, d) = (0.5, 32, 64): point 4 of G1_POINTS, its seed
    i = sentence.G1_POINTS.index((0.5, 32, 64))
    rng = np.random.default_rng(np.random.SeedSequence([sentence.SEED, i]))
    sums = sentence_sums(2**17, 0.5, length=32, dim=64, rng=rng)
    cos = np.clip(sums[:, 2] / np.sqrt(sums[:, 0] * sums[:, 1]), -1.0, 1.0)
    return {
        "var relative error at f = 31/32, l = 32, d = 8 (2^17 pairs), se": list(var_error),
        "plain average's se of the mean x d^2 at f = 0.5, l = 32, d = 64 (2^17 pairs)": float(
            cos.std() / math.sqrt(2**17) * 64**2
        ),
    }


def main() -> None:
    """Print the JSON, or write it (``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the JSON here instead of printing it")
    args = ap.parse_args()
    doc = {
        "command": command_line("experiments/theorem1_library.py"),
        "pstable": pstable(),
        "regime": regime(),
        "laplace": laplace(),
        "ties": ties(),
        "slopes": slopes(),
        "moments": moments(),
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
