"""The fuzzers' budget: CI's derandomised number of cases, or a longer hunt by hand.

``LSHSIM_FUZZ_EXAMPLES=N`` in the environment makes every fuzzer of bad input draw ``N``
cases per test instead of CI's (``docs/guide/install.md``).
"""

from __future__ import annotations

import os

#: The environment variable of a longer hunt.
VARIABLE = "LSHSIM_FUZZ_EXAMPLES"


def examples(ci: int) -> int:
    """Hypothesis' ``max_examples`` for a fuzzer whose CI budget is ``ci``.

    Args:
        ci: the cases CI draws (derandomised, so every run sees the same ones).

    Returns:
        ``ci``, or the value of :data:`VARIABLE` where it is set.
    """
    return int(os.environ.get(VARIABLE, ci))
