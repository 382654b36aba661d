"""What the GPU check measures, in what order, and the targets it reports against.

Rows come in priority order, most wanted first: ``base``'s baseline train step, ``base``'s
measured variants, the compile of every other paper variant of ``base``
(:mod:`lshsim.t5.paper_variants`), then ``small``'s rows, and the bf16-vs-float32 loss check
(measured already in the first GPU session; last, so a short call never spends its time
there).
"""

from __future__ import annotations

from typing import Any

from lshsim.t5.lookups.productkey import ProductKey

SCHEMA = "lshsim-gpu-check/2"
NO_GPU = "no GPU: jax backend is {}; running the tiny CPU check"

#: The measured variants: config-field changes on top of a named config.
VARIANTS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "tokenid-r5": {"lookup": "tokenid", "expert_rank": 5},
    "altup-k2": {"memory": "altup", "memory_k": 2},
    # lshsim cost --compare's product-key example: 1024 slots, top-2
    "product-keys": {"lookup": ProductKey.name, **ProductKey.cost_example[1]},
}
#: What each variant is (the Markdown's legend).
VARIANT_NOTES = {
    "baseline": "no external memory",
    "tokenid-r5": "Token-ID partial experts, rank 5, every layer (--lookup tokenid --rank 5)",
    "altup-k2": "AltUp, K = 2 (--memory altup --blocks 2)",
    "product-keys": "product keys, 1024 slots, top-2 (as lshsim cost --compare)",
}
#: Order in which the non-baseline variants are measured (cheapest, surest to fit, first).
RUN_ORDER = ("altup-k2", "product-keys", "tokenid-r5")
#: Per-step batch on an accelerator (the paper's 256 is reached with accumulation).
GPU_BATCH = {"tiny": 256, "small": 64, "base": 32, "large": 8}
PAPER_BATCH, PAPER_LENGTHS = 256, (512, 114)
#: The targets of the next GPU session (issue 47): the ``base`` baseline's MFU in bf16 on an
#: H100-class device, and the compile time of every paper variant.
TARGET_MFU, TARGET_COMPILE_S = 0.35, 90.0
#: Defaults by mode: configs (in priority order), variants, batch (None: GPU_BATCH), lengths,
#: timed steps, warm-up steps, the loss check's config and batch, rows to plan (None: all),
#: the configs whose other paper variants are compiled (not run).
MODES = {
    "gpu": {
        "configs": ("base", "small"),
        "variants": tuple(VARIANTS),
        "batch": None,
        "lengths": PAPER_LENGTHS,
        "steps": 15,
        "warmup": 2,
        "loss_config": "small",
        "loss_batch": 8,
        "plan_rows": None,
        "compile_configs": ("base",),
    },
    "cpu": {
        "configs": ("tiny",),
        "variants": ("baseline",),
        "batch": 2,
        "lengths": (32, 8),
        "steps": 3,
        "warmup": 1,
        "loss_config": "tiny",
        "loss_batch": 2,
        "plan_rows": 1,
        "compile_configs": (),
    },
}
#: The GPU memory fraction each row's process may take (JAX's default is 0.75).
MEM_FRACTION = "0.90"
#: A job is not started with fewer seconds than this left; a child gets the rest less MARGIN_S.
MIN_JOB_S, MARGIN_S = 3.0, 2.0
#: Dense bf16 peaks of parts :data:`lshsim.t5.hardware.HARDWARE` does not list (data sheets).
EXTRA_PEAKS = {"h100 pcie": 756e12, "h100 nvl": 835e12, "h200 nvl": 835e12}
GB = 1e9
#: The fields that name a step row (and its plan).
ROW_KEY = ("config", "variant", "dtype", "batch", "input_length", "target_length")


def variant_config(config: str, variant: str, dtype: str):
    """The named config with a variant's fields and the compute dtype.

    Args:
        config: a :data:`lshsim.t5.configs.CONFIGS` name.
        variant: a :data:`VARIANTS` key, or a paper variant's label
            (:mod:`lshsim.t5.paper_variants`, e.g. ``LSH r10 b1024``) of ``config``.
        dtype: the compute dtype (``bfloat16`` or ``float32``).

    Returns:
        The :class:`lshsim.t5.configs.T5Config`.

    Raises:
        ValueError: a variant that is neither.
    """
    from lshsim.t5.configs import get_config
    from lshsim.t5.paper_variants import paper_variants

    if variant in VARIANTS:
        return get_config(config).replace(dtype=dtype, **VARIANTS[variant])
    for row in paper_variants(config):
        if row.label == variant:
            return row.config(dtype=dtype)
    raise ValueError(f"variant: unknown {variant!r} for {config}")


def is_paper_variant(config: str, variant: str) -> bool:
    """Whether ``variant`` of ``config`` is one of the paper's configurations.

    Args:
        config: a config name.
        variant: a :data:`VARIANTS` key or a paper variant's label.

    Returns:
        True for a paper variant's label, or a measured variant whose config is one (the
        baseline, AltUp K=2, Token-ID r5; not product keys); False for other sizes.
    """
    from lshsim.t5.paper_variants import SIZES, paper_variants

    if config not in SIZES:
        return False
    rows = paper_variants(config)
    if variant not in VARIANTS:
        return any(r.label == variant for r in rows)
    return variant_config(config, variant, "float32") in {r.config(dtype="float32") for r in rows}


def compiled_variants(config: str) -> tuple[str, ...]:
    """The paper variants of ``config`` the check compiles without running.

    All but those whose config a measured variant already is (the baseline, AltUp K=2,
    Token-ID r5).

    Args:
        config: a paper size (:data:`lshsim.t5.paper_variants.SIZES`).

    Returns:
        The labels, in the paper variants' order.
    """
    from lshsim.t5.configs import get_config
    from lshsim.t5.paper_variants import paper_variants

    measured = {get_config(config).replace(**v) for v in VARIANTS.values()}
    return tuple(r.label for r in paper_variants(config) if r.config() not in measured)


def peak_flops(device_kind: str, override_tflops: float | None = None) -> tuple[float | None, str]:
    """The dense bf16 peak FLOP/s of a device, from its ``device_kind``.

    Args:
        device_kind: e.g. ``NVIDIA H100 80GB HBM3``.
        override_tflops: a peak given by hand (TFLOP/s), used as is.

    Returns:
        ``(flops_per_s or None, where it comes from)``.
    """
    from lshsim.t5.hardware import HARDWARE

    if override_tflops:
        return override_tflops * 1e12, "--peak-tflops"
    kind = device_kind.lower()
    for name, flops in EXTRA_PEAKS.items():
        part, form = name.split()
        if part in kind and form in kind:
            return flops, f"{name}, vendor data sheet"
    for name in ("h200", "h100", "a100"):
        if name in kind:
            return HARDWARE[name].peak_flops, f"{name}, lshsim/t5/hardware.py"
    return None, "unknown device"


def _row(s: dict[str, Any], kind: str, config: str, variant: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "config": config,
        "variant": variant,
        "dtype": s["dtype"],
        "batch": s["batch"] or GPU_BATCH.get(config, 8),
        "input_length": s["lengths"][0],
        "target_length": s["lengths"][1],
        "warmup": s["warmup"],
        "steps": s["steps"],
        "seed": 0,
        "status": "pending",
    }


def build_jobs(s: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs in priority order (see the module's docstring).

    Per config in ``s["configs"]`` order: its baseline, its other measured variants
    (:data:`RUN_ORDER`), then, for the configs of ``s["compile_configs"]``, a compile of
    each other paper variant; the loss check last.

    Args:
        s: the resolved settings.

    Returns:
        Job dicts (``kind`` ``step``, ``compile`` or ``loss``); each shares its dict with the
        report's row.
    """
    order = []
    for config in s["configs"]:
        for variant in ("baseline", *RUN_ORDER):
            if variant in s["variants"]:
                order.append(_row(s, "step", config, variant))
        if config in s.get("compile_configs", ()):
            order += [_row(s, "compile", config, v) for v in compiled_variants(config)]
    if s.get("loss", True):
        order.append(
            {
                "kind": "loss",
                "config": s["loss_config"],
                "batch": s["loss_batch"],
                "input_length": s["lengths"][0],
                "target_length": s["lengths"][1],
                "seed": 0,
                "status": "pending",
            }
        )
    return order
