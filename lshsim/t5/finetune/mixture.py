"""Examples-proportional mixing of tasks, with a cap, as T5's mixtures.

T5 (Raffel et al. 2020, section 3.5.2) samples task ``m`` with rate ``r_m = min(e_m, K) /
sum_n min(e_n, K)``, ``e_m`` its number of training examples and ``K`` an artificial limit.
In T5's code this is ``seqio.mixing_rate_num_examples(task, maximum=K)`` (wrapped as
``t5.data.rate_num_examples``); ``glue_v002_proportional`` and ``super_glue_v102_proportional``
(``t5/data/mixtures.py``) use the training-set sizes of ``t5/data/glue_utils.py``
(``GLUE_WEIGHT_MAPPING``: CoLA 8,551 ... MNLI 392,702) as the rates, uncapped, and the
mixtures that add C4 ask for ``t5.data.rate_num_examples.maximum = 1e6`` (the comment above
``all_mix`` in ``t5/data/mixtures.py``). :data:`DEFAULT_CAP` is that 1e6: no GLUE or SuperGLUE
training set reaches it (the largest, MNLI, has 392,702 examples), so the rates are T5's.
"""

from __future__ import annotations

import numpy as np

from lshsim._validate import check_int

__all__ = ["DEFAULT_CAP", "mixing_rates", "sample_tasks"]

#: ``K`` of examples-proportional mixing: ``t5.data.rate_num_examples.maximum = 1e6``.
DEFAULT_CAP = 1_000_000


def mixing_rates(counts: dict[str, int], cap: int | None = DEFAULT_CAP) -> dict[str, float]:
    """``{task: min(count, cap) / sum}`` (``cap=None``: proportional to the counts).

    Raises:
        ValueError: no tasks, a count below 1 or a cap below 1.
    """
    if not counts:
        raise ValueError("mixture: no tasks")
    if cap is not None:
        cap = check_int("cap", cap, 1)
    for name, n in counts.items():
        check_int(f"examples of {name}", n, 1)
    capped = {k: float(n if cap is None else min(n, cap)) for k, n in counts.items()}
    total = sum(capped.values())
    return {k: v / total for k, v in capped.items()}


def sample_tasks(rates: dict[str, float], step: int, batch: int, seed: int) -> list[str]:
    """The task of each of the ``batch`` examples of step ``step``.

    A pure function of ``(seed, step)``: a resumed run draws the same tasks.
    """
    names = list(rates)
    p = np.asarray([rates[k] for k in names], np.float64)
    rng = np.random.default_rng([seed, 1, step])
    return [names[i] for i in rng.choice(len(names), size=batch, p=p / p.sum())]
