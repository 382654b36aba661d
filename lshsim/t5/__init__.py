"""The JAX side: T5 v1.1 model, data, training, checkpoints, sharding and HF interop.

Submodules import JAX lazily where they can; ``lshsim.t5.configs`` and the data modules do
not need JAX at all.
"""


class NonFiniteLossError(RuntimeError):
    """The training loss became NaN or infinite (the last good checkpoint is kept)."""
