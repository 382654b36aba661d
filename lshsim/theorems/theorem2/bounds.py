"""Parameter counts of the students and the pigeonhole lower bound on their width (no JAX)."""

from __future__ import annotations

from lshsim.theorems.theorem2.architectures import check_arch


def param_counts(arch: str, d: int, width: int, depth: int, n_categories: int) -> dict[str, int]:
    """Parameter counts of a student, tables and the rest separately.

    Non-table: ``P`` (``w d``), ``D`` ReGLU layers (``2 w^2 + 2 w`` each), ``a`` and ``beta``.
    Tables: ``E`` (``N w``), and for B also ``D - 1`` upper tables and ``E_out`` (``N w`` each).
    ``table_used_by_construction`` counts the table entries the exact construction needs
    (A: ``N d`` of ``E``; B: ``N d`` of ``E_out``).

    Args:
        arch: ``"A"`` or ``"B"``.
        d: Dimension of ``q``.
        width: ``w``.
        depth: ``D``.
        n_categories: ``N``.

    Returns:
        ``{"non_table", "table", "total", "table_used_by_construction"}``.
    """
    check_arch(arch)
    non_table = width * d + depth * (2 * width * width + 2 * width) + width + 1
    table = (1 + (depth if arch == "B" else 0)) * n_categories * width
    used = n_categories * d
    return {
        "non_table": non_table,
        "table": table,
        "total": non_table + table,
        "table_used_by_construction": used,
    }


def min_width_bits(n_values: int, bits: int) -> int:
    """Smallest ``w`` with ``(2^bits)^w >= n_values``: ``ceil(log2(n_values) / bits)``.

    A ``w``-unit vector whose units take at most ``2^bits`` values each takes at most
    ``2^(bits w)`` values, so it can be injective on a set of ``n_values`` points only if
    ``w >= min_width_bits(n_values, bits)`` (pigeonhole).

    Args:
        n_values: ``>= 1`` distinct values to carry.
        bits: ``>= 1`` bits per unit.

    Returns:
        The width (exact integer arithmetic).
    """
    if n_values < 1 or bits < 1:
        raise ValueError(f"n_values, bits: must be >= 1, got {n_values}, {bits}")
    width = 0
    while (1 << (bits * width)) < n_values:
        width += 1
    return width


def lower_bound_width(arch: str, n_categories: int, n_queries: int, bits: int) -> int:
    """Pigeonhole lower bound on the width of an exact ``b``-bit student (Theorem 2, part 2).

    A: every layer input is injective on ``S = U x Q``, so ``w >= log2(N M) / b``.
    B: for each fixed ``u`` every layer input is injective on ``Q``, so ``w >= log2(M) / b``.

    Args:
        arch: ``"A"`` or ``"B"``.
        n_categories: ``N = |U|``.
        n_queries: ``M = |Q|``.
        bits: ``b``.

    Returns:
        The smallest width the bound allows.
    """
    check_arch(arch)
    carried = n_categories * n_queries if arch == "A" else n_queries
    return min_width_bits(carried, bits)
