"""Input validation shared by the library and the CLI.

Every check raises :class:`ValueError` with a one-line message that names the parameter and the
allowed range, so the CLI can print it as-is and exit 2.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

#: Largest bucket count: bucket ids are int64 in ``[0, n)``.
MAX_BUCKETS = 2**62
#: Types that ``float()`` or NumPy would turn into numbers but that are not numbers here.
NOT_NUMBERS = (str, bytes, bytearray, bool, np.bool_)


def check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    """Return ``value`` as an ``int`` in ``[lo, hi]``, else raise ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f"in [{lo}, {_fmt(hi)}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer {rng}, got {value}")
    return value


def _fmt(v: int) -> str:
    """Large powers of two read better as ``2^k``."""
    return f"2^{v.bit_length() - 1}" if v >= 2**32 and not v & (v - 1) else str(v)


def check_float(
    name: str, value, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False
) -> float:
    """Return ``value`` as a finite ``float`` in the interval, else raise ``ValueError``.

    Only numbers are numbers: a ``str``/``bytes`` (``"0.5"``) or a ``bool`` is refused, as
    :func:`check_int` refuses them, even where ``float()`` would convert it.
    """
    if isinstance(value, NOT_NUMBERS):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    except OverflowError:  # an integer beyond the floats
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], got an integer too large") from None
    bad = (
        not math.isfinite(x)
        or (x < lo or (lo_open and x == lo))
        or (x > hi or (hi_open and x == hi))
    )
    if bad:
        left = "(" if lo_open or math.isinf(lo) else "["  # an infinite end is never allowed
        right = ")" if hi_open or math.isinf(hi) else "]"
        raise ValueError(f"{name} must be in {left}{lo:g}, {hi:g}{right}, got {value!r}")
    return x


def as_floats(name: str, values) -> np.ndarray:
    """Validate an array of numbers (any shape) and return it as float64.

    Unlike ``np.asarray(values, dtype=float)``, strings (``["0.5"]``), bytes, booleans and
    objects are refused with a one-line ``ValueError`` naming ``name``.
    """
    x = np.asarray(values)
    if x.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numbers, got an array of dtype {x.dtype}")
    return x.astype(np.float64, copy=False)


def check_buckets(n, *, power_of_two: bool = False, even: bool = False, family: str = "") -> int:
    """Validate a bucket count: an integer in ``[2, 2^62]``, optionally a power of two or even."""
    n = check_int("n (buckets)", n, 2, MAX_BUCKETS)
    who = f" for family '{family}'" if family else ""
    if power_of_two and n & (n - 1):
        raise ValueError(f"n (buckets) must be a power of two{who}, got {n}")
    if even and n % 2:
        raise ValueError(f"n (buckets) must be even (n = 2 * coordinates){who}, got {n}")
    return n


def as_vectors(batch, d: int, name: str = "batch", *, check_values: bool = True) -> np.ndarray:
    """Validate a batch of vectors: a finite float32/float64 array of shape ``(m, d)``.

    Returns a C-contiguous, native-byte-order array of the same floating dtype (no copy when
    already so), except that a float32 batch with entries of magnitude ``>= 2^64`` comes back
    as float64, so that its projections cannot overflow float32. With ``check_values=False``
    only dtype and shape are checked (for callers that validate their projections instead).
    """
    x = np.asarray(batch)
    if x.dtype.kind != "f" or x.dtype.itemsize not in (4, 8):
        raise ValueError(f"{name} must have dtype float32 or float64, got {x.dtype}")
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"{name} must have shape (m, {d}), got {x.shape}")
    x = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("="))
    if x.size and check_values:
        lo, hi = x.min(), x.max()  # NaN propagates; two passes, no temporary array
        finite = np.isfinite(lo) and np.isfinite(hi)
        x = vectors_in_range(x, max(-float(lo), float(hi)) if finite else math.inf, name)
    return x


def vectors_in_range(x: np.ndarray, abs_max: float, name: str = "batch") -> np.ndarray:
    """:func:`as_vectors`' value rule, given the batch's largest magnitude.

    For callers that find it themselves (``topk_sets``: one part per thread, one pass).

    Args:
        x: the batch, as :func:`as_vectors` returns it with ``check_values=False``.
        abs_max: its largest ``|entry|``: not finite where it holds a NaN or an infinity.
        name: the parameter named in the error.

    Returns:
        ``x``, or its float64 copy where a float32 batch has an entry of magnitude
        ``>= 2^64`` (its projections could overflow float32).

    Raises:
        ValueError: a NaN or an infinity.
    """
    if not math.isfinite(abs_max):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    if not vectors_fit(x.dtype, abs_max):
        return x.astype(np.float64)
    return x


def vectors_fit(dtype, abs_max: float) -> bool:
    """Whether :func:`as_vectors` keeps a batch of ``dtype`` and largest ``|entry|`` as it is.

    Args:
        dtype: float32 or float64.
        abs_max: the batch's largest magnitude (not finite: it holds a NaN or an infinity).

    Returns:
        True when ``abs_max`` is finite and, for float32, below ``2^64``.
    """
    return math.isfinite(abs_max) and (np.dtype(dtype) != np.float32 or abs_max < 2.0**64)


def as_token_ids(batch, name: str = "batch", *, ndim: int | None = None) -> np.ndarray:
    """Validate token ids: an integer array (``ndim`` dims if given), ids ``< 2^61 - 1``.

    Negative ids are allowed only where the caller documents them as padding.
    """
    x = np.asarray(batch)
    if x.dtype.kind not in "iu":
        raise ValueError(f"{name} must be an integer array of token ids, got dtype {x.dtype}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {x.shape}")
    if x.dtype.kind == "u" and x.size and x.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} token ids must be < 2^61 - 1")
    x = np.ascontiguousarray(x, dtype=np.int64)
    if x.size and x.max() >= 2**61 - 1:
        raise ValueError(f"{name} token ids must be < 2^61 - 1, got {int(x.max())}")
    return x


def as_seed(seed) -> np.random.SeedSequence:
    """Turn an int or ``SeedSequence`` into a ``SeedSequence`` (no global state involved)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(check_int("seed", seed, 0))
