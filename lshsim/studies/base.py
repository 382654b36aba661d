"""The :class:`Study` record, and what the theory studies share (seeds, the sentence length).

A study is plain data in a chain: ``compute(config, seed) -> data`` (JSON-ready dicts and
lists), ``figure(data) -> Figure``, a caption for ``REPORT.md``, and optionally a report
``section(data) -> lines``. It carries one config per run profile (:data:`PROFILES`): the
committed run (``default``) and the smoke run (``quick``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lshsim.hashing import COSINE_FAMILIES, FamilyView
from lshsim.studies.kinds import check_kinds

#: Run profiles: the committed run and the smoke run (``lshsim reproduce --quick``).
PROFILES = ("default", "quick")
#: 40 tokens: every overlap on the studies' grids (multiples of 1/40) is a whole token count,
#: so the realised s/l equals the plotted f
LENGTH = 40
#: Families the collision studies run on sentence pairs sharing ``round(f l)`` tokens: those
#: that hash a sentence's token set or each of its tokens (min-hash, Token-ID), whose exact
#: rate depends on the tokens only. The cosine families (:data:`COSINE_FAMILIES`) run at
#: cosine ``a = f`` instead, in the idealised model of the paper's proof.
TOKEN_FAMILIES = FamilyView(
    lambda c: c.input_kind in ("token_sets", "tokens"),
    "families the studies run on sentence pairs (token sets or per-token ids)",
)


def collision_families() -> tuple[str, ...]:
    """Every family of the collision studies, in registry order: cosine, then token families."""
    return (*COSINE_FAMILIES, *TOKEN_FAMILIES)


@dataclass(frozen=True)
class Study:
    """One study of ``lshsim reproduce``: how to compute it, draw it and describe it.

    Attributes:
        name: registry key; the study writes ``<name>.json`` and ``<name>.png``/``.svg``.
        compute: ``(config, seed) -> data``, plain JSON data; same config and seed, same data.
        figure: ``data -> matplotlib.figure.Figure``.
        caption: the figure's caption in ``REPORT.md``.
        configs: the config of each profile of :data:`PROFILES` (a small frozen dataclass).
        section: ``data -> lines`` of an optional ``REPORT.md`` section (None: none).
        kinds: the reproducibility kind of each part of the data (:mod:`lshsim.studies.kinds`):
            ``{pattern: kind}``, a pattern a ``/``-separated path into the data (``*`` one
            key or list index, ``""`` the whole study), the longest matching pattern wins;
            ``lshsim compare`` checks each number by its kind. Required.
    """

    name: str
    compute: Callable[[Any, int], dict]
    figure: Callable[[Mapping[str, Any]], Any]
    caption: str
    configs: Mapping[str, Any]
    section: Callable[[dict], list[str]] | None = None
    kinds: Mapping[str, str] | None = None

    def config(self, profile: str) -> Any:
        """The study's config of run profile ``profile`` (``default`` or ``quick``).

        Raises:
            ValueError: If the profile is unknown.
        """
        if profile not in self.configs:
            raise ValueError(f"profile: unknown {profile!r}; choose one of {', '.join(PROFILES)}")
        return self.configs[profile]

    def __call__(self, profile: str, seed: int) -> dict:
        """Compute the study at run profile ``profile`` with ``seed``; return its data."""
        return self.compute(self.config(profile), seed)


def registry(*groups: Iterable[Study]) -> dict[str, Study]:
    """Name -> study over ``groups`` (each a module's studies), in order.

    Raises:
        ValueError: If two studies share a name, or a study lacks a profile's config or has
            no valid ``kinds``.
    """
    out: dict[str, Study] = {}
    for study in (s for group in groups for s in group):
        if study.name in out:
            raise ValueError(f"name: study {study.name!r} is registered twice")
        missing = set(PROFILES) - set(study.configs)
        if missing:
            raise ValueError(f"configs: study {study.name!r} lacks {sorted(missing)}")
        check_kinds(study.name, study.kinds)
        out[study.name] = study
    return out


def spawn_seeds(seed: int, count: int) -> list[int]:
    """``count`` independent 32-bit seeds derived from ``seed`` (NumPy ``SeedSequence``)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(count, dtype=np.uint32)]


def append_estimate(rows: dict, e: Any) -> None:
    """Append an estimate's value and 95% CI to column lists.

    Args:
        rows: column name -> list.
        e: an :class:`~lshsim.estimate.Estimate`, or a sweep row (a mapping with the same
            names, :func:`lshsim.sweep.run_grid`).
    """
    for name in ("estimate", "ci_low", "ci_high"):
        rows.setdefault(name, []).append(e[name] if isinstance(e, Mapping) else getattr(e, name))
