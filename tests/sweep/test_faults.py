"""A sweep's folder under faults (issue 31): one owner, parts that say whose they are.

Two sweeps into one folder, a sweep and its own ``--resume`` at once, a foreign or copied part,
a truncated part, an altered ``_sweep.json``, the folder removed mid-sweep, a scheduler that
accepts and never answers, an address that is no address: each ends in one line naming the
problem (exit 2 from the CLI), with nothing half-written left looking complete. All in process
on a 4-cell theory grid (milliseconds a cell); the silent scheduler costs its timeout.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from lshsim.cli.main import main
from lshsim.sweep import parse_spec
from lshsim.sweep.execute import check_address, connect, run_sweep
from lshsim.sweep.spec import load_spec
from lshsim.sweep.store import LOCK, META, open_store, read_table

GRID = {"command": "theory", "family": ["simhash"], "buckets": [4, 16], "cosine": [0.5, 0.9]}


def spec(seed: int = 0):
    return parse_spec({"seed": seed, "grids": [GRID]})


@pytest.fixture
def swept(tmp_path):
    """A finished 4-cell sweep in 2 parts."""
    out = tmp_path / "s"
    run_sweep(spec(), out, batch=2)
    return out


def test_a_second_sweep_into_a_running_sweeps_folder_is_refused(tmp_path):
    out = tmp_path / "s"
    first = open_store(out, spec(), resume=False)  # a sweep running into out
    try:
        with pytest.raises(ValueError, match=r"^--out: .* is in use by a running sweep \(pid \d+"):
            run_sweep(spec(seed=1), out)  # another sweep (another seed)
        with pytest.raises(ValueError, match="is in use by a running sweep"):
            run_sweep(spec(), out, resume=True)  # the same sweep's --resume
    finally:
        first.unlock()
    assert not out.exists()  # the first wrote nothing: its folder is gone with its lock
    run_sweep(spec(), out)  # the folder is free again
    assert len(read_table(out)) == 4


def test_the_lock_holds_across_processes_and_dies_with_its_holder(swept):
    """Another process holding the folder (a sweep running elsewhere) refuses this one; once
    that process is gone (killed: the kernel drops its flock), ``--resume`` goes on."""
    code = (
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(swept / LOCK)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ValueError, match="is in use by a running sweep"):
            run_sweep(spec(), swept, resume=True)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert run_sweep(spec(), swept, resume=True).skipped == 4


def test_a_foreign_part_is_refused_by_resume_and_plot(swept, tmp_path):
    other = tmp_path / "other"
    run_sweep(spec(), other)  # the same grid and seed, another sweep
    shutil.copy(next(other.glob("part-*.parquet")), swept / "part-00007.parquet")
    message = r"part-00007\.parquet: written by sweep [0-9a-f]{16}, not by the sweep of this"
    with pytest.raises(ValueError, match=message):
        run_sweep(spec(), swept, resume=True)
    with pytest.raises(ValueError, match=message):
        read_table(swept)  # what --plot reads
    assert main(["sweep", "--plot", str(swept)]) == 2


def test_a_copied_part_is_refused_by_resume_and_plot(swept, capsys):
    shutil.copy(swept / "part-00000.parquet", swept / "part-00005.parquet")
    with pytest.raises(ValueError, match=r"part-00005\.parquet: cell .* is already in another"):
        run_sweep(spec(), swept, resume=True)
    assert main(["sweep", "--plot", str(swept)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is already in another part" in err


def test_a_truncated_part_and_an_altered_spec_file_are_named(swept):
    part = swept / "part-00001.parquet"
    part.write_bytes(part.read_bytes()[:100])
    with pytest.raises(ValueError, match=r"part-00001\.parquet: not a readable Parquet part"):
        run_sweep(spec(), swept, resume=True)
    part.unlink()
    meta = json.loads((swept / META).read_text())
    (swept / META).write_text(json.dumps({**meta, "cells": 5})[:-3])
    with pytest.raises(ValueError, match=r"_sweep\.json is not a sweep's spec file"):
        run_sweep(spec(), swept, resume=True)


def test_a_folder_removed_mid_sweep_is_an_error_not_exit_0(tmp_path, capsys):
    out = tmp_path / "s"

    def remove(done, total):
        if done == 1:
            shutil.rmtree(out)

    with pytest.raises(ValueError, match=r"^--out: .* was removed while the sweep ran"):
        run_sweep(spec(), out, batch=1, progress=remove)
    assert not out.exists()  # no re-created folder of orphan parts


def test_a_silent_scheduler_is_abandoned_at_the_timeout():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"^--scheduler tcp://.*: no answer within 0\.5 s"):
        connect(address, 0.5)
    assert time.monotonic() - start < 10
    server.close()


def test_a_server_that_is_not_a_scheduler_is_named_as_such():
    """An HTTP server answering 400 was "input too large (Unable to allocate 3.07 EiB)"."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def answer():
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    with pytest.raises(ValueError, match=r"^--scheduler tcp://.*: what answered is not a Dask"):
        connect(address, 5)
    server.close()


@pytest.mark.parametrize("option", ["tables", "concat", "far"])
def test_amplification_options_are_not_sweep_axes(option):
    """``lshsim theory`` takes them, a sweep's theory cell cannot: refused by name, and
    ``sweep --help`` does not list them as a grid's options."""
    grid = {**GRID, option: [2]}
    with pytest.raises(ValueError, match=rf"'{option}' is not a sweep option: rho_lsh"):
        parse_spec({"grids": [grid]})
    from lshsim.cli.sweep import _options_text

    theory_line = next(line for line in _options_text().splitlines() if "theory:" in line)
    assert option not in theory_line.split(": ", 1)[1].split(", ")


@pytest.mark.parametrize("address", ["garbage", "tcp://host", "tcp://h:99999", "http://x y:1"])
def test_a_scheduler_address_is_checked_before_any_connection(address):
    with pytest.raises(ValueError, match=r"^--scheduler: expected an address like tcp://"):
        check_address(address)
    assert check_address("tcp://10.0.0.5:8786") and check_address("[::1]:8786")


def test_a_json_spec_with_a_duplicated_key_or_deep_nesting_is_refused(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"seed": 1, "seed": 2, "grids": []}')
    with pytest.raises(ValueError, match="key 'seed' is given twice"):
        load_spec(path)
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_spec(path)


def test_sweep_options_without_effect_are_errors(tmp_path, capsys):
    spec_file = tmp_path / "s.json"
    spec_file.write_text(json.dumps({"grids": [GRID]}))
    base = ["sweep", str(spec_file), "-o", str(tmp_path / "o")]
    cases = [
        ([*base, "--workers", "0", "--timeout", "5"], "--timeout has no effect with --workers 0"),
        (["sweep", "--plot", str(tmp_path), "--part-rows", "3"], "--part-rows has no effect"),
        (["sweep", "--plot", str(tmp_path), "--timeout", "3"], "--timeout has no effect"),
        ([*base, "--workers", "100000"], "--workers: 100000 processes on"),
        ([*base, "--scheduler", "garbage"], "--scheduler: expected an address"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, (argv, err)
    assert not (tmp_path / "o").exists()


def test_the_seed_option_replaces_the_specs(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"seed": 3, "grids": [GRID]}))
    assert load_spec(path).seed == 3 and load_spec(path, seed=7).seed == 7
    with pytest.raises(ValueError, match="--seed must be an integer >= 0"):
        load_spec(path, seed=-1)


def test_the_lock_file_is_left_alone_by_parquet_readers(swept):
    import pyarrow.parquet as pq

    assert (swept / LOCK).exists()
    assert pq.read_table(swept).num_rows == 4  # _sweep.lock and _sweep.json are skipped
