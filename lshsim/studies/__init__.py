"""The studies: one :class:`~lshsim.studies.base.Study` record each, and the memory studies.

A study records its config, compute, figure and caption; ``lshsim reproduce``
(:mod:`lshsim.studies.reproduce`) runs them all. The paper's memory studies
(:mod:`lshsim.studies.memory`) train T5 variants with their own runner and resume logic.

:data:`STUDIES` collects the studies of each module, in run order. To add a study, write its
``compute(config, seed) -> data`` and its config dataclass in the module of its group (or a new
module), and append a ``Study(name, compute, figure, caption, {"default": ..., "quick": ...})``
to that module's ``STUDIES`` tuple; the figure function goes in the matching
:mod:`lshsim.plots` module. That is all: ``lshsim reproduce``, ``experiments/run_studies.py``,
``experiments/plot_studies.py`` and ``REPORT.md`` read the registry. (A new module is added
once to the list below.)
"""

from __future__ import annotations

from lshsim.studies import (
    amplification,
    collision,
    frequency,
    hf_router,
    lookups,
    routing,
    sentences,
    theorem2,
)
from lshsim.studies.base import PROFILES, Study, registry

#: every study of ``lshsim reproduce``, by name, in run order
STUDIES: dict[str, Study] = registry(
    collision.STUDIES,
    sentences.STUDIES,
    routing.STUDIES,
    hf_router.STUDIES,
    theorem2.STUDIES,
    amplification.STUDIES,
    lookups.STUDIES,
    frequency.STUDIES,
)

__all__ = ["PROFILES", "STUDIES", "Study"]
