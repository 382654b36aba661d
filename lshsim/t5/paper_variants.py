"""The configurations of the paper's tables: every memory method and lookup, per model size.

One entry per row of the paper's Tables 1-8 that lshsim can build: the S, B and L baselines,
Sum, SameUp, AltUp K=2 and K=4, and the lookups' best points (Table 6's Token-ID rank 5
among them). ``figures/PLAN.md`` plans each on H100-sized devices
(``experiments/plan_table.py``) and the GPU check (:mod:`lshsim.bench.gpu`) compiles them.

Table numbers are this repository's: 1/7 memory methods, 2 quality, 3 sizes, 4 lookups at
2^15 parameters, 5/8 memory sizes, 6 the final comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lshsim.t5.configs import T5Config, get_config

__all__ = ["PAPER_VARIANTS", "SIZES", "PaperVariant", "paper_variants"]

#: The model sizes of the paper's tables, smallest first.
SIZES = ("small", "base", "large")


@dataclass(frozen=True)
class PaperVariant:
    """One configuration of the paper's tables.

    Attributes:
        size: the model size (:data:`SIZES`).
        label: the row's name (``AltUp K=2``, ``LSH r10 b1024``).
        changes: the :class:`~lshsim.t5.configs.T5Config` fields on top of ``size``.
        tables: the paper's tables that report it.
    """

    size: str
    label: str
    changes: tuple[tuple[str, Any], ...]
    tables: str

    @property
    def name(self) -> str:
        """``small Baseline``: the size and the label."""
        return f"{self.size} {self.label}"

    def config(self, **more: Any) -> T5Config:
        """The config: ``size`` with :attr:`changes` (and ``more``, e.g. the dtype).

        Args:
            **more: further :class:`~lshsim.t5.configs.T5Config` fields.

        Returns:
            The config.
        """
        return get_config(self.size).replace(**dict(self.changes), **more)


_MEMORY = {
    "Sum K=2": {"memory": "sum", "memory_k": 2},
    "SameUp K=2": {"memory": "sameup", "memory_k": 2},
    "AltUp K=2": {"memory": "altup", "memory_k": 2},
    "AltUp K=4": {"memory": "altup", "memory_k": 4},
}
#: Per size, each memory method's tables (Table 1 is ``base``'s, 7 the others').
_MEMORY_TABLES = {
    "Sum K=2": ("7", "1", "7"),
    "SameUp K=2": ("7", "1", "7"),
    "AltUp K=2": ("2, 3, 6-8", "1-3, 5, 6", "2, 3, 6-8"),
    "AltUp K=4": ("8", "5", "8"),
}
_BASELINE_TABLES = ("2-4, 6-8", "1-6", "2, 3, 6-8")
#: (size, label, lookup, rank, buckets, tables) of the lookups' rows.
_LOOKUPS = (
    ("small", "Token-ID r0", "tokenid", 0, 0, "4, 6"),
    ("small", "Softmax r256 b128", "softmax", 256, 128, "4"),
    ("small", "Softmax r128 b64", "softmax", 128, 64, "6"),
    ("small", "LSH r128 b128", "lsh", 128, 128, "4, 6"),
    ("base", "Token-ID r0", "tokenid", 0, 0, "4"),
    ("base", "Token-ID r5", "tokenid", 5, 0, "6"),
    ("base", "Softmax r256 b128", "softmax", 256, 128, "4"),
    ("base", "Softmax r128 b64", "softmax", 128, 64, "6"),
    ("base", "LSH r128 b128", "lsh", 128, 128, "4"),
    ("base", "LSH r10 b1024", "lsh", 10, 1024, "6"),
    ("large", "Token-ID r0", "tokenid", 0, 0, "6"),
    ("large", "Softmax r16 b32", "softmax", 16, 32, "6"),
    ("large", "LSH r10 b1024", "lsh", 10, 1024, "6"),
)


def _rows() -> tuple[PaperVariant, ...]:
    rows = [
        PaperVariant(s, "Baseline", (), t) for s, t in zip(SIZES, _BASELINE_TABLES, strict=True)
    ]
    for i, size in enumerate(SIZES):
        for label, changes in _MEMORY.items():
            rows.append(PaperVariant(size, label, tuple(changes.items()), _MEMORY_TABLES[label][i]))
    for size, label, lookup, rank, buckets, tables in _LOOKUPS:
        changes = {"lookup": lookup, "expert_rank": rank}
        changes |= {"buckets": buckets} if buckets else {}
        rows.append(PaperVariant(size, label, tuple(changes.items()), tables))
    return tuple(sorted(rows, key=lambda r: SIZES.index(r.size)))


#: Every row, grouped by size, small first (the cheapest to compile); within a size the
#: baseline, the memory methods, then the lookups.
PAPER_VARIANTS: tuple[PaperVariant, ...] = _rows()


def paper_variants(size: str | None = None) -> tuple[PaperVariant, ...]:
    """The rows of one size (all rows for ``None``).

    Args:
        size: a :data:`SIZES` name, or ``None``.

    Returns:
        The rows, in :data:`PAPER_VARIANTS`' order.

    Raises:
        ValueError: a size that is not in :data:`SIZES`.
    """
    if size is None:
        return PAPER_VARIANTS
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    return tuple(r for r in PAPER_VARIANTS if r.size == size)
