"""The accelerator table and the roofline arithmetic, against hand computation."""

from __future__ import annotations

import pytest

from lshsim.t5.hardware import GB, HARDWARE, Hardware, get_hardware, roofline
from lshsim.t5.plan import fit

TOY = Hardware("toy", "a toy device", 100.0, 1000, 10.0, "test")


def test_table_has_the_issue_devices_with_sources():
    assert set(HARDWARE) == {"h100", "h200", "a100", "tpu-v5e", "tpu-v5p"}
    for hw in HARDWARE.values():
        assert hw.source.startswith("https://")
        assert 1e14 < hw.peak_flops < 2e15 and 1e10 < hw.hbm_bytes < 2e11
    assert HARDWARE["h100"].hbm_bytes == 80 * GB and HARDWARE["h100"].peak_flops == 989e12


def test_roofline_compute_bound():
    """2000 FLOPs at 100 FLOP/s: 20 s; 50 bytes at 10 B/s: 5 s -> 20 s, MFU bound 1."""
    r = roofline(2000.0, 50.0, TOY)
    assert r == {
        "compute_seconds": 20.0,
        "memory_seconds": 5.0,
        "roofline_step_seconds": 20.0,
        "mfu_bound": 1.0,
    }


def test_roofline_memory_bound():
    """100 FLOPs: 1 s of compute; 400 bytes: 40 s of memory -> 40 s, MFU bound 1/40."""
    r = roofline(100.0, 400.0, TOY)
    assert r["roofline_step_seconds"] == 40.0
    assert r["mfu_bound"] == pytest.approx(1 / 40)
    assert roofline(0.0, 0.0, TOY)["mfu_bound"] == 0.0


def test_fit_compares_per_device_bytes_with_the_memory():
    row = {"bytes_accessed_per_step": 30.0}
    at = fit(1000, 500.0, row, TOY)
    assert at["fits"] and at["headroom_bytes"] == 0 and at["hardware"]["name"] == "toy"
    assert at["roofline_step_seconds"] == 5.0  # max(500/100, 30/10)
    over = fit(1001, 500.0, row, TOY)
    assert not over["fits"] and over["headroom_bytes"] == -1


def test_unknown_hardware_is_one_line():
    with pytest.raises(ValueError, match="hardware: expected one of h100, h200"):
        get_hardware("v100")
    assert get_hardware("toy", {"toy": TOY}) is TOY
