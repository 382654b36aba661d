"""Public peak figures of accelerators, for ``lshsim plan``'s fit check and roofline.

Each entry is one device (one GPU, one TPU chip): peak dense bf16 matrix FLOP/s (no
sparsity), high-bandwidth memory and its bandwidth, as the vendor's data sheet states them.
Memory is the nominal size in bytes; the runtime reserves some of it (XLA's GPU client takes
75% of it by default: set ``XLA_PYTHON_CLIENT_MEM_FRACTION`` near 0.95 for a plan that uses
nearly all of it), so a plan with a few percent of headroom is what fits in practice.

The roofline step time of a program that performs ``F`` FLOPs and moves ``M`` bytes per device
is ``max(F / peak, M / bandwidth)``; the MFU bound is ``(F / peak) / that``: the model-FLOPs
utilisation the device could reach at best (1 when compute-bound).

References:
    Williams, Waterman & Patterson 2009, "Roofline: an insightful visual performance model";
    the vendor pages cited on each entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

GB = 10**9
GIB = 2**30


@dataclasses.dataclass(frozen=True)
class Hardware:
    """One accelerator's public peak figures.

    Attributes:
        name: registry key (``h100``, ...).
        description: the part the figures are for.
        peak_flops: dense bf16 FLOP/s (no structured sparsity).
        hbm_bytes: high-bandwidth memory, bytes.
        hbm_bandwidth: its bandwidth, bytes/s.
        source: the vendor page the figures come from.
    """

    name: str
    description: str
    peak_flops: float
    hbm_bytes: int
    hbm_bandwidth: float
    source: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return dataclasses.asdict(self)


#: The devices ``lshsim plan --hardware`` knows.
HARDWARE: dict[str, Hardware] = {
    # https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM: BF16 Tensor Core 1,979
    # TFLOPS "with sparsity", so 989 dense; 80 GB HBM3; 3.35 TB/s)
    "h100": Hardware(
        "h100",
        "NVIDIA H100 SXM 80GB",
        989e12,
        80 * GB,
        3.35e12,
        "https://www.nvidia.com/en-us/data-center/h100/",
    ),
    # https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM: BF16 1,979 TFLOPS with
    # sparsity, 989 dense; 141 GB HBM3e; 4.8 TB/s)
    "h200": Hardware(
        "h200",
        "NVIDIA H200 SXM 141GB",
        989e12,
        141 * GB,
        4.8e12,
        "https://www.nvidia.com/en-us/data-center/h200/",
    ),
    # https://www.nvidia.com/en-us/data-center/a100/ (A100 80GB SXM: BF16 Tensor Core 312
    # TFLOPS dense; 80 GB HBM2e; 2,039 GB/s)
    "a100": Hardware(
        "a100",
        "NVIDIA A100 SXM 80GB",
        312e12,
        80 * GB,
        2.039e12,
        "https://www.nvidia.com/en-us/data-center/a100/",
    ),
    # https://cloud.google.com/tpu/docs/v5e (per chip: 197 TFLOPS bf16, 16 GiB HBM2,
    # 819 GB/s)
    "tpu-v5e": Hardware(
        "tpu-v5e",
        "Google Cloud TPU v5e chip",
        197e12,
        16 * GIB,
        819e9,
        "https://cloud.google.com/tpu/docs/v5e",
    ),
    # https://cloud.google.com/tpu/docs/v5p (per chip: 459 TFLOPS bf16, 95 GiB HBM2e,
    # 2,765 GB/s)
    "tpu-v5p": Hardware(
        "tpu-v5p",
        "Google Cloud TPU v5p chip",
        459e12,
        95 * GIB,
        2765e9,
        "https://cloud.google.com/tpu/docs/v5p",
    ),
}


def get_hardware(name: str | Hardware, table: Mapping[str, Hardware] | None = None) -> Hardware:
    """The named device of ``table`` (default :data:`HARDWARE`), or ``name`` if already one.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if isinstance(name, Hardware):
        return name
    table = HARDWARE if table is None else table
    if name not in table:
        raise ValueError(f"hardware: expected one of {', '.join(table)}, got {name!r}")
    return table[name]


def roofline(flops: float, bytes_accessed: float, hardware: Hardware) -> dict[str, float]:
    """Roofline step time and MFU bound of ``flops`` and ``bytes_accessed`` per device.

    Args:
        flops: floating-point operations one device performs per step.
        bytes_accessed: bytes one device reads and writes from its memory per step.
        hardware: the device.

    Returns:
        ``compute_seconds`` (``flops / peak``), ``memory_seconds`` (``bytes / bandwidth``),
        ``roofline_step_seconds`` (their maximum) and ``mfu_bound`` (``compute_seconds`` over
        the step time, 0 for an empty program).
    """
    compute = flops / hardware.peak_flops
    memory = bytes_accessed / hardware.hbm_bandwidth
    step = max(compute, memory)
    return {
        "compute_seconds": compute,
        "memory_seconds": memory,
        "roofline_step_seconds": step,
        "mfu_bound": compute / step if step > 0 else 0.0,
    }
