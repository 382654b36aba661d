"""What the numbers ran on: CPU, cores, SIMD flags, library versions, commit and load."""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

#: The repository (or installed tree) root, where ``git rev-parse`` is asked for the commit.
ROOT = Path(__file__).resolve().parents[2]
#: Distributions whose versions the machine block records.
PACKAGES = (
    "numpy",
    "numba",
    "scipy",
    "jax",
    "jaxlib",
    "flax",
    "optax",
    "torch",
    "transformers",
    "faiss-cpu",
    "datasketch",
    "ffht-unofficial",
)


def loadavg() -> list[float] | None:
    """1, 5 and 15 minute load averages (other processes compete for the cores).

    Returns:
        The three averages rounded to 0.01, or None where the platform has none.
    """
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def cpu_info() -> tuple[str, list[str]]:
    """The CPU model and its SIMD flags among avx, fma, avx2, avx512f and avx512_bf16.

    Returns:
        ``(model, flags)`` from ``/proc/cpuinfo``, or the platform's processor and no flags.
    """
    model, flags = platform.processor() or platform.machine(), []
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                have = set(line.split(":", 1)[1].split())
                flags = [f for f in ("avx", "fma", "avx2", "avx512f", "avx512_bf16") if f in have]
    return model, flags


def machine_info() -> dict[str, Any]:
    """CPU, cores, SIMD flags, library versions, commit and load: what the numbers ran on.

    Returns:
        The machine block of :mod:`lshsim.bench.peers`' JSON.
    """
    model, flags = cpu_info()
    versions = {}
    for pkg in PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    commit = None
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    return {
        "cpu": model,
        "simd": flags,
        "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else None,
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
        if hasattr(os, "sysconf")
        else None,
        "python": platform.python_version(),
        "versions": versions,
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg_at_start": loadavg(),
        "env": {
            k: os.environ.get(k)
            for k in ("OPENBLAS_THREAD_TIMEOUT", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS")
            if os.environ.get(k) is not None
        },
    }
