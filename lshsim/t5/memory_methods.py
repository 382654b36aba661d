"""The memory methods (wide representations, section 6), one object each: :data:`METHODS`.

``sum`` adds the ``K`` blocks of a ``K d`` embedding at the bottom and runs the plain model;
``sameup`` and ``altup`` keep the ``K`` blocks through the layers (the representation is
*widened*), each layer computing one block ``j*`` and predicting/correcting the others
(Algorithm 2, :mod:`lshsim.t5.memory`): ``sameup`` always ``j* = 0``, ``altup``
``j* = i mod K``; ``gemma3n`` is AltUp as Gemma 3n runs it (:mod:`lshsim.t5.altup_gemma3n`:
token-dependent coefficients, ``j* = 0``, blocks made by learned projections). Each method
owns its name, label, the memory flags that tune it (the command line derives which apply)
and its block rule. This module imports nothing of the package (the config imports it).
"""

from __future__ import annotations

import dataclasses

__all__ = ["METHODS", "NO_MEMORY", "MemoryMethod", "get_method"]

#: The config's ``memory`` for a model without wide representations.
NO_MEMORY = "none"


@dataclasses.dataclass(frozen=True)
class MemoryMethod:
    """One memory method.

    Attributes:
        name: the config's ``memory`` value.
        label: the name in tables and figures (``AltUp``).
        widened: whether the ``K`` blocks stay separate through the layers (Algorithm 2).
        flags: the memory flags (argparse dests) that tune it; the others have no effect.
        alternating: whether layer ``i`` computes block ``i mod K`` (else block 0).
        coefficients: ``constant`` (the paper's per-layer scalars ``p``, ``g``; the ``K``
            blocks read from a ``K d`` wide embedding) or ``input`` (Gemma 3n's AltUp,
            :mod:`lshsim.t5.altup_gemma3n`: coefficients from a router on the active block,
            the layer run on the predicted block, the extra blocks made and removed by learned
            projections; the embedding stays ``d`` wide).
    """

    name: str
    label: str
    widened: bool
    flags: tuple[str, ...]
    alternating: bool = False
    coefficients: str = "constant"

    @property
    def wide_embedding(self) -> bool:
        """Whether the token embedding is ``d + e`` wide (else ``d``: blocks are projected)."""
        return self.coefficients == "constant"

    def compute_block(self, layer: int, k: int) -> int:
        """The block ``j*`` that layer ``layer`` (within its stack) computes."""
        return layer % k if self.alternating else 0


#: Every memory method by its config name, in the order the command line lists them.
METHODS: dict[str, MemoryMethod] = {
    m.name: m
    for m in (
        MemoryMethod("sum", "Sum", widened=False, flags=("K", "extra")),
        MemoryMethod("sameup", "SameUp", widened=True, flags=("K", "extra", "cross", "output")),
        MemoryMethod("altup", "AltUp", True, ("K", "extra", "cross", "output"), alternating=True),
        MemoryMethod("gemma3n", "AltUp (Gemma 3n)", True, ("K",), coefficients="input"),
    )
}


def get_method(name: str) -> MemoryMethod:
    """The memory method called ``name`` (``none`` is none: a ``ValueError`` listing them)."""
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"memory: unknown method {name!r}; choose one of {', '.join(METHODS)}"
        ) from None
