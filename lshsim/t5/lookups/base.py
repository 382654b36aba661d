"""A model lookup as one object: its name, the flags it reads, its checks, sizes, layer, theory.

Every lookup of :data:`lshsim.t5.lookups.LOOKUPS` is an instance of a :class:`Lookup`
subclass in its own module. The config (:mod:`lshsim.t5.configs`) asks it for its table size
and its checks, the closed-form counts (:mod:`lshsim.t5.budget`) for its parameters, the
command line (:mod:`lshsim.cli.checks`) for the flags that tune it, the model
(:class:`lshsim.t5.memory.PartialExpert`) for its layer, the training step
(:mod:`lshsim.t5.steps`) for its losses and randomness, and the routing probe
(:mod:`lshsim.t5.probe`) for its theory. Modules of this package import neither the config
nor JAX at import: the layers and the probe theory are imported when first used.

``cfg`` below is a :class:`lshsim.t5.configs.T5Config` (not imported: the config imports the
lookups).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["DEFAULT_BUCKETS", "Lookup"]

#: The table size of a lookup whose ``buckets`` is 0 (the config's "default").
DEFAULT_BUCKETS = 64


class Lookup:
    """One lookup of the partial experts (subclass per lookup; one instance each).

    Attributes:
        name: the config's ``lookup`` value.
        label: the name in tables and figures (``Token-ID``).
        help: one line for the ``--lookup`` help.
        flags: the memory flags (argparse dests of :func:`lshsim.cli.model_flags.add_memory_flags`)
            that tune this lookup; the others have no effect with it.
        cost_example: ``(row label, config changes)`` of its row in ``lshsim cost --compare``.
        fixed_table: whether the table size is fixed by the model (Token-ID: the vocabulary),
            not set by ``buckets``.
        in_routing_study: whether the routing study (:mod:`lshsim.studies.routing`) probes it
            at initialisation (``lshsim probe`` takes every lookup).
        scannable: whether a stack's layers can run as one scanned layer (``scan_layers``):
            what differs from layer to layer is :meth:`layer_constants` (fixed arrays the
            scan feeds each layer) and :meth:`ragged_params` (parameters of another shape in
            each layer, kept per layer beside the scan).
    """

    name: str = ""
    label: str = ""
    help: str = ""
    flags: tuple[str, ...] = ("rank", "buckets")
    cost_example: tuple[str, dict[str, Any]] = ("", {})
    fixed_table: bool = False
    in_routing_study: bool = True
    scannable: bool = True

    def __repr__(self) -> str:
        return f"<lookup {self.name}>"

    # -- the config ----------------------------------------------------------------------

    def table_size(self, cfg) -> int:
        """Each layer's table size: ``buckets``, or :data:`DEFAULT_BUCKETS` when it is 0."""
        return cfg.buckets or DEFAULT_BUCKETS

    def validate(self, cfg, n: int) -> None:
        """Check the config's fields for this lookup at table size ``n`` (one-line errors).

        The base rule: only product keys read ``k > 1`` slots.
        """
        if cfg.topk != 1:
            raise ValueError(f"topk: only the productkey lookup reads k > 1 slots, got {cfg.topk}")

    def expert_params(self, cfg) -> int:
        """Parameters of one layer's expert: a row per bucket (rank 0) or ``U, V`` pairs."""
        n, d, r = cfg.num_buckets, cfg.d_model, cfg.expert_rank
        return n * d if r == 0 else 2 * n * d * r

    def stack_params(self, cfg) -> int:
        """Parameters of every layer's expert, encoder and decoder (equal layers by default)."""
        return (cfg.num_encoder_layers + cfg.num_decoder_layers) * self.expert_params(cfg)

    # -- the model -----------------------------------------------------------------------

    def layer_constants(self, cfg, stack: int, layer: int) -> dict[str, np.ndarray]:
        """The fixed arrays one layer reads beside its parameters (hash draws); ``{}``: none.

        Every layer's arrays have the same shapes: a scanned stack feeds layer ``i`` the
        ``i``-th slice of their stack (:func:`lshsim.t5.layer_stack.layer_data`), an unrolled
        one reads them here.

        Args:
            cfg: the model config.
            stack: 0 (encoder) or 1 (decoder).
            layer: the layer's index within its stack.
        """
        return {}

    def ragged_params(self, cfg, stack: int, layer: int) -> dict[str, tuple]:
        """The expert parameters whose shape differs from layer to layer; ``{}``: none.

        ``name -> (shape, initialiser, logical axis names)``. A scanned stack creates them
        per layer beside the scan (``{stack}/ragged/layers_{i}/expert/{name}``) and the layer
        reads its own through :meth:`ragged_param`.
        """
        return {}

    def ragged_param(self, module, name: str, read):
        """``read(p)`` of the layer's ragged parameter ``name`` (:meth:`ragged_params`).

        Unrolled, ``p`` is the layer's own parameter; in a scanned stack the layer's index is
        traced, so ``read`` runs on each layer's ``p`` in a ``lax.switch`` on it (every
        result must have one shape).
        """
        import jax

        from lshsim.t5.lookups.tables import param

        if module.ragged is None:
            shape, init, names = self.ragged_params(module.config, module.stack, module.layer)[name]
            return read(param(module, name, init, shape, names))
        branches = [lambda p=p: read(p[name]) for p in module.ragged]
        return jax.lax.switch(module.constants["local"], branches)

    def constants(self, module) -> dict[str, Any]:
        """The :meth:`layer_constants` of ``module``'s layer (a PartialExpert).

        The scan's slice when it has one, else drawn for its ``(stack, layer)``.
        """
        given = module.constants
        if given is not None:
            return given
        return self.layer_constants(module.config, module.stack, module.layer)

    def apply(self, module, x, token_ids, deterministic: bool = True):
        """The layer's ``w(x) f_i(x)`` for ``x [..., d]`` inside ``module``'s scope."""
        raise NotImplementedError

    def sows_aux_losses(self, cfg) -> bool:
        """Whether the layer sows auxiliary losses (``aux_loss``) to add to the training loss."""
        return False

    def needs_rng(self, cfg) -> bool:
        """Whether a training step of the layer draws random numbers (the ``dropout`` stream)."""
        return False

    # -- the routing probe (:mod:`lshsim.t5.probe`) --------------------------------------------

    def probe_family(self, cfg) -> tuple[str | None, dict]:
        """The :mod:`lshsim.hashing` family (and parameters) whose theory predicts the lookup.

        ``None``: the collision is exact token equality.
        """
        raise NotImplementedError

    def check_probe(self, cfg, router_draws: int) -> None:
        """Refuse a probe the theory cannot predict (before any work)."""

    def probe_record(self, cfg, expert: dict) -> tuple[Any, Any]:
        """``(ids, vectors)`` one layer's sown ``intermediates`` give the probe."""
        return expert["bucket"][0], expert["layer_input"][0]

    def probe_weights(self, cfg, expert: dict) -> Any:
        """The weights of :meth:`probe_record`'s ids (the sown ``weight``; ``None``: all 1)."""
        weight = expert.get("weight")
        return None if weight is None else weight[0]

    def probe_stats(
        self,
        name: str,
        overlap: float,
        cfg,
        rec_a: tuple[np.ndarray, np.ndarray],
        rec_b: tuple[np.ndarray, np.ndarray],
        tok_a: np.ndarray,
        tok_b: np.ndarray,
        *,
        router_draws: int,
        seed,
    ) -> dict[str, Any]:
        """One (layer, overlap) row's measurements (:func:`lshsim.t5.probe.layer_stats`)."""
        raise NotImplementedError

    def probe_predictions(self, cfg, stats: Sequence[dict]) -> list[np.ndarray]:
        """Per-position predictions of every row's stats (one theory call for all)."""
        raise NotImplementedError

    def probe_at_overlap(self, cfg, f: float, length: int) -> float:
        """The ``at f`` column: the prediction with every cosine (or sharing) at ``f``."""
        raise NotImplementedError
