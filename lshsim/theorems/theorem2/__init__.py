"""Theorem 2 (embedding lookups at upper layers): teacher, students, constructions, width sweep.

Task (paper Sec. 4.2): ``u in {0..N-1}``, ``q ~ N(0, I_d)``, ``y = <Psi(u), Phi(q)>`` with ``Psi``
an ``N x d`` table and ``Phi >= 0`` a ReLU teacher of width ``d``, depth ``D_t``; ``Var y = 1``.
Students: ``D`` ReGLU layers of width ``w``, ``h_l = relu(W_l x_l + b_l) * (V_l x_l + c_l)``.
``"A"`` (input-only lookup): ``x_1 = P q + E(u)``, ``x_l = h_{l-1}``, ``y_hat = a.h_D + beta``.
``"B"``: as A, plus ``x_l = h_{l-1} + E_l(u)`` (``l >= 2``), ``y_hat = (a + E_out(u)).h_D + beta``.

One module per idea:

* :mod:`~lshsim.theorems.theorem2.architectures`: ``ARCHITECTURES`` and the ``Params`` type;
* :mod:`~lshsim.theorems.theorem2.task`: :class:`Task`, the teacher, :func:`target`, the seeded
  streams (:func:`rng_for`, :func:`sample_inputs`), :func:`make_task`, :func:`grid_instance`;
* :mod:`~lshsim.theorems.theorem2.students`: :func:`init_student`, :func:`student_apply`,
  :func:`student_interfaces`;
* :mod:`~lshsim.theorems.theorem2.constructions`: :func:`construct_b` (width ``d``) and
  :func:`construct_a` (``2d``), the exact constructions of ``proofs/theorem2.md``;
* :mod:`~lshsim.theorems.theorem2.bounds`: :func:`param_counts` and the pigeonhole bound
  :func:`lower_bound_width` (no JAX);
* :mod:`~lshsim.theorems.theorem2.readout`: :func:`minimal_width`, :func:`median_width`,
  :func:`summarise` (no JAX);
* :mod:`~lshsim.theorems.theorem2.sweep`: :class:`Theorem2Config` (``DEFAULT``, ``QUICK``,
  ``SMOKE``) and :func:`run_sweep`, the trained-width experiment.

Every public name is re-exported here, loaded on first use (PEP 562), so
``from lshsim.theorems import theorem2; theorem2.run_sweep`` works as before the split, and
importing the JAX-free modules (``bounds``, ``readout``) does not import JAX.

References:
    Paper, Theorem ``embeddinglookup`` and its proof. Shazeer (2020), "GLU Variants Improve
    Transformer" (ReGLU).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the submodule that defines it
_EXPORTS: dict[str, str] = {
    "ARCHITECTURES": "architectures",
    "Params": "architectures",
    "Task": "task",
    "grid_instance": "task",
    "make_task": "task",
    "rng_for": "task",
    "sample_inputs": "task",
    "target": "task",
    "teacher_features": "task",
    "init_student": "students",
    "student_apply": "students",
    "student_interfaces": "students",
    "construct_a": "constructions",
    "construct_b": "constructions",
    "lower_bound_width": "bounds",
    "min_width_bits": "bounds",
    "param_counts": "bounds",
    "median_width": "readout",
    "minimal_width": "readout",
    "summarise": "readout",
    "DEFAULT": "sweep",
    "QUICK": "sweep",
    "SMOKE": "sweep",
    "SUMMARY_TARGETS": "sweep",
    "Theorem2Config": "sweep",
    "run_sweep": "sweep",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Load a re-exported name from its submodule on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
