"""The memory studies' definitions: training sizes, model variants, budgets, the registry.

:data:`STUDIES` names the four studies (Tables 1/7, 4/6, 5/8 and Figure 2 of the paper); each has
a ``smoke`` :class:`Setup` that runs on 2 CPU cores and the paper's ``real`` one, and a function
listing its :class:`Variant` models (the baseline first). To add a memory study, add a
:class:`MemoryStudy` to :data:`STUDIES`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from lshsim.t5.configs import T5Config, get_config
from lshsim.t5.lookups import get_lookup
from lshsim.t5.memory_methods import get_method

#: Steps and warmup of every smoke run (calibrated: ~25 min for all four studies x 3 seeds).
SMOKE_STEPS = 200
SMOKE_WARMUP = 100


@dataclasses.dataclass(frozen=True)
class Setup:
    """Training size shared by the runs of a study variant.

    Attributes:
        config: name of the base config (``tiny``, ``small``, ...).
        steps: training steps.
        batch_size: examples per step.
        input_length: encoder tokens per example.
        warmup_steps: constant-rate steps of the rsqrt schedule.
        checkpoint_every: checkpoint interval (a killed run resumes from the last one).
        eval_examples: held-out examples of the evaluation after training.
        eval_batch: batch size of that evaluation.
        overrides: ``(field, value)`` pairs applied to the base config (tests shrink it).
        corpus: corpus files (None: the embedded corpus).
    """

    config: str
    steps: int
    batch_size: int
    input_length: int
    warmup_steps: int
    checkpoint_every: int
    eval_examples: int
    eval_batch: int
    overrides: tuple[tuple[str, Any], ...] = ()
    corpus: tuple[str, ...] | None = None

    def base_config(self) -> T5Config:
        """The base config with the overrides applied (memory and lookup off)."""
        return get_config(self.config).replace(**dict(self.overrides))

    def options(self) -> dict[str, Any]:
        """Training and evaluation options recorded with (and hashed into) every run."""
        return {
            "steps": self.steps,
            "batch_size": self.batch_size,
            "input_length": self.input_length,
            "warmup_steps": self.warmup_steps,
            "eval_examples": self.eval_examples,
            "corpus": list(self.corpus) if self.corpus else None,
        }


@dataclasses.dataclass(frozen=True)
class Variant:
    """One model of a study: config changes relative to the base config.

    Attributes:
        label: the name in tables and figures.
        changes: ``(field, value)`` pairs of :class:`T5Config` (empty: the baseline).
        series: the family the variant belongs to (lookup method, bucket count), for colours.
    """

    label: str
    changes: tuple[tuple[str, Any], ...] = ()
    series: str = ""

    def config(self, base: T5Config) -> T5Config:
        """The variant's config (validated by :class:`T5Config`)."""
        return base.replace(**dict(self.changes))

    @property
    def is_baseline(self) -> bool:
        """Whether this is the model without memory or lookup."""
        return not self.changes


BASELINE = Variant("Baseline", (), "Baseline")


@dataclasses.dataclass(frozen=True)
class MemoryStudy:
    """A named memory study: what the paper reports, its sizes and its variants.

    Attributes:
        name: registry key.
        title: figure title.
        paper: the paper's tables or figure and the ordering it reports.
        setups: ``{"smoke": Setup, "real": Setup}``.
        variants: ``(variant name, base config) -> variants`` (the baseline first).
        layout: ``groups`` (one column per variant) or ``sweep`` (Figure 2).
    """

    name: str
    title: str
    paper: str
    setups: dict[str, Setup]
    variants: Callable[[str, T5Config], tuple[Variant, ...]]
    layout: str = "groups"


SMOKE = Setup(
    "tiny",
    steps=SMOKE_STEPS,
    batch_size=16,
    input_length=64,
    warmup_steps=SMOKE_WARMUP,
    checkpoint_every=SMOKE_STEPS,
    eval_examples=1024,
    eval_batch=64,
)
REAL_100K = Setup(
    "small",
    steps=100_000,
    batch_size=256,
    input_length=512,
    warmup_steps=10_000,
    checkpoint_every=10_000,
    eval_examples=4096,
    eval_batch=256,
)
REAL_500K = dataclasses.replace(REAL_100K, steps=500_000)


def memory_variant(method: str, k: int) -> Variant:
    """Wide-embedding memory consumed by ``method`` (sum, sameup, altup) with ``K = k``."""
    label = get_method(method).label
    return Variant(f"{label} K={k}", (("memory", method), ("memory_k", k)), label)


def lookup_variant(lookup: str, rank: int, buckets: int, label: str | None = None) -> Variant:
    """Partial experts of ``lookup`` (tokenid: ``buckets`` must be the vocabulary)."""
    spec = get_lookup(lookup)
    changes: tuple[tuple[str, Any], ...] = (("lookup", lookup), ("expert_rank", rank))
    if not spec.fixed_table:
        changes += (("buckets", buckets),)
    text = label or f"{spec.label} r{rank} b{buckets}"
    return Variant(text, changes, spec.label)


def budget_units(rank: int, buckets: int) -> int:
    """The paper's extra-parameter measure per layer and per ``d``: ``max(2 rank, 1) * buckets``."""
    return max(2 * rank, 1) * buckets


def within_budget(rank: int, buckets: int, budget: int) -> bool:
    """Whether ``budget_units(rank, buckets)`` is within a factor sqrt(2) of ``budget``.

    With power-of-two ranks and bucket counts this keeps exactly one bucket count per rank,
    the one closest to Token-ID's rank-0 table (``budget`` = the vocabulary size).
    """
    units = budget_units(rank, buckets)
    return budget / math.sqrt(2) <= units <= budget * math.sqrt(2)


#: Real grid of the lookup comparison (the paper: ranks {0, 2, 4, ..., 128, 256}, buckets
#: 2^3..2^15, read as powers of two).
REAL_RANKS = (0, 2, 4, 8, 16, 32, 64, 128, 256)
REAL_BUCKETS = tuple(2**j for j in range(3, 16))
#: Smoke points of the lookup comparison: (rank, buckets), each meeting the tiny budget (2176).
SMOKE_POINTS = ((0, 2048), (16, 64))


def budget_grid(budget: int) -> list[tuple[int, int]]:
    """(rank, buckets) of the real grid that meet ``budget`` (see :func:`within_budget`)."""
    return [(r, b) for r in REAL_RANKS for b in REAL_BUCKETS if within_budget(r, b, budget)]


def _table1(variant: str, base: T5Config) -> tuple[Variant, ...]:
    return (BASELINE, *(memory_variant(m, 2) for m in ("sum", "sameup", "altup")))


def _table5(variant: str, base: T5Config) -> tuple[Variant, ...]:
    return (BASELINE, memory_variant("altup", 2), memory_variant("altup", 4))


def _lookups(variant: str, base: T5Config) -> tuple[Variant, ...]:
    budget = base.vocab_size
    points = budget_grid(budget) if variant == "real" else list(SMOKE_POINTS)
    out = [BASELINE, lookup_variant("tokenid", 0, budget)]
    for lookup in ("softmax", "lsh"):
        out += [lookup_variant(lookup, r, b) for r, b in points]
    return tuple(out)


SWEEP_RANKS = {"real": (0, 4, 16, 64, 128), "smoke": (0, 16)}
SWEEP_BUCKETS = {"real": (8, 32, 64, 128, 512), "smoke": (8, 64)}


def _softmax_sweep(variant: str, base: T5Config) -> tuple[Variant, ...]:
    cells = [
        lookup_variant("softmax", r, b)
        for b in SWEEP_BUCKETS[variant]
        for r in SWEEP_RANKS[variant]
    ]
    return (BASELINE, *[dataclasses.replace(v, series=v.label.split()[-1]) for v in cells])


STUDIES: dict[str, MemoryStudy] = {
    "table1": MemoryStudy(
        "table1",
        "Memory consumption (Tables 1, 7): token-ID wide embedding, K=2",
        "B: baseline 66.42 < Sum 66.82 = SameUp 66.82 < AltUp 66.96 (S: SameUp 61.91 best, "
        "AltUp 61.86, Sum 61.67, baseline 61.21), 500k steps",
        {"smoke": SMOKE, "real": REAL_500K},
        _table1,
    ),
    "lookups": MemoryStudy(
        "lookups",
        "Lookup functions at Token-ID's parameter budget (Tables 4, 6)",
        "S: Token-ID 59.44 > Softmax 59.35 > LSH 59.12 > baseline 59.10 (best point of each), "
        "100k steps",
        {"smoke": SMOKE, "real": REAL_100K},
        _lookups,
    ),
    "softmax_sweep": MemoryStudy(
        "softmax_sweep",
        "Softmax lookup: rank x buckets (Figure 2)",
        "S, baseline 59.1: higher rank helps; accuracy rises with buckets up to 64, then falls; "
        "best rank 128 x 64 buckets, 100k steps",
        {"smoke": SMOKE, "real": REAL_100K},
        _softmax_sweep,
        layout="sweep",
    ),
    "table5": MemoryStudy(
        "table5",
        "Memory size (Tables 5, 8): AltUp K=2 vs K=4",
        "B: baseline 66.42 < K=2 66.96 < K=4 67.18 (S: 61.21 < 61.86 < 62.00), 500k steps",
        {"smoke": SMOKE, "real": REAL_500K},
        _table5,
    ),
}
