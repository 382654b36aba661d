"""Bounds from memory: available memory, byte estimates, refusals, and flat memory in samples."""

from __future__ import annotations

import os
import tracemalloc

import numpy as np
import pytest

from lshsim import _memory, estimate
from lshsim._memory import available_bytes, check_fits, format_bytes
from lshsim.t5 import budget
from lshsim.t5.configs import get_config

GB = 10**9


def test_available_bytes_reads_meminfo(tmp_path):
    """``MemAvailable`` (kB) of ``/proc/meminfo``; without the file, ``sysconf`` or ``None``."""
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:  4000 kB\nMemFree: 10 kB\nMemAvailable:    2048 kB\n")
    assert available_bytes(str(info)) == 2048 * 1024
    fallback = available_bytes(str(tmp_path / "missing"))
    assert fallback is None or fallback > 0
    if os.path.exists("/proc/meminfo"):
        assert available_bytes() > 0


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (999, "999 B"), (1000, "1 kB"), (21.3e9, "21.3 GB"), (1.234e12, "1.23 TB")],
)
def test_format_bytes(n, text):
    """Decimal units, three significant digits."""
    assert format_bytes(n) == text


def test_check_fits_refuses_in_one_line_naming_the_option(monkeypatch):
    """Over the available memory: one line with the option, the estimate and the memory."""
    check_fits("--batch", "8 examples", 10, "one step", available=100)
    monkeypatch.setattr(_memory, "available_bytes", lambda: None)  # unknown: nothing refused
    check_fits("--batch", "8 examples", 10**30, "one step")
    with pytest.raises(ValueError) as info:
        check_fits("--batch", "100000000 examples", 1.2e12, "activations", available=21_300_000_000)
    msg = str(info.value)
    assert msg == (
        "--batch: 100000000 examples need about 1.2 TB for activations; "
        "this machine has 21.3 GB available"
    )


def test_lazy_seed_blocks_keep_memory_flat():
    """Submitting 20000 blocks holds only a few seeds and futures at a time.

    Spawning every block up front cost 432 bytes a seed plus a future each (tens of MB
    here); made lazily, the peak does not grow with the number of blocks.
    """

    def run_block(i, child):
        return 0, 1, 1

    root = np.random.SeedSequence(0)
    estimate._run_blocks(run_block, root, 100, 100 * 1024, 2, False, "")  # warm up the pool
    tracemalloc.start()
    try:
        small = estimate._run_blocks(run_block, root, 200, 200 * 1024, 2, False, "")
        _, peak_small = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        big = estimate._run_blocks(run_block, root, 20_000, 20_000 * 1024, 2, False, "")
        _, peak_big = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert small == (0, 200) and big == (0, 20_000)
    assert peak_big < 2 * peak_small + 200_000


def test_closed_form_count_refuses_huge_k_before_tracing():
    """``--blocks 10^9``: refused from the closed form in one line naming ``--blocks``."""
    cfg = get_config("tiny").replace(memory="altup", memory_k=10**9)
    with pytest.raises(
        ValueError, match=r"^--blocks: the .* parameters of blocks = 1000000000 need about"
    ):
        budget.check_params_fit(cfg, available=20 * GB)
    wide = get_config("tiny").replace(memory="sum", memory_k=10**8)
    with pytest.raises(ValueError, match=r"^--blocks: .* for holding them; this machine has 20 GB"):
        budget.check_params_fit(wide, available=20 * GB)
    rank = get_config("tiny").replace(lookup="softmax", expert_rank=10**5, buckets=10**5)
    with pytest.raises(ValueError, match=r"^--rank: "):
        budget.check_params_fit(rank, available=20 * GB)
    with pytest.raises(ValueError, match=r"^--config: .* of 'large'"):
        budget.check_params_fit("large", available=10**8)
    assert budget.check_params_fit("tiny", available=20 * GB) == 4 * 1738496


def test_train_step_refusals_name_batch_or_input_length():
    """``--batch 10^8`` names --batch; a huge length names --input-length (before spans)."""
    with pytest.raises(ValueError) as info:
        budget.check_train_fits("tiny", 100_000_000, 128, available=21 * GB)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("--batch: 100000000 examples of 128 + 29 tokens need about ")
    assert msg.endswith("for one training step of config 'tiny'; this machine has 21 GB available")
    with pytest.raises(ValueError, match=r"^--input-length: 100000000 tokens need about"):
        budget.check_train_fits("tiny", 32, 100_000_000, available=21 * GB)
    with pytest.raises(ValueError, match=r"^--batch must be an integer >= 1, got 0"):
        budget.check_train_fits("tiny", 0, 128)
    assert budget.check_train_fits("tiny", 32, 128, available=21 * GB) < GB


def test_model_bytes_grow_with_batch_and_training():
    """More examples, more bytes; a forward pass needs less than a training step."""
    one = budget.model_bytes("tiny", 1, 128, 29)
    assert budget.model_bytes("tiny", 64, 128, 29) > 30 * (
        one - budget.model_bytes("tiny", 1, 1, 1)
    )
    assert budget.model_bytes("tiny", 8, 128, 29, training=False) < budget.model_bytes(
        "tiny", 8, 128, 29
    )
    with pytest.raises(ValueError, match=r"^batch must be an integer"):
        budget.model_bytes("tiny", "8", 128, 29)
