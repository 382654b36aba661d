"""Several processes and checkpoints across meshes (lshsim.t5.distributed, checkpoint restore).

One test starts, side by side: a two-process ``lshsim train`` on 127.0.0.1 (two forced
CPU devices each; process 0 started by ``--coordinator``, process 1 by ``--distributed auto``
as SLURM task 1), one process with four forced devices that trains the same run uninterrupted
(the reference of both checks) and resumes a copy of it on other meshes, and a process that
meets a coordinator nobody runs. Every subprocess has a deadline and is killed when anything
fails, so a hung collective cannot hang the test session.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

pytest.importorskip("jax")

from lshsim.t5 import checkpoint as ckpt
from lshsim.t5.distributed import DEFAULT_TIMEOUT, Cluster, cluster_from_flags, parse_coordinator
from lshsim.t5.plan import host_device_flags

#: Wall-clock limit of all the subprocesses together (47-66 s measured on 2 busy shared cores).
DEADLINE = 300
#: The training run of every process: tiny, small batches, 4 steps.
RUN = ["--config", "tiny", "--steps", "4", "--batch", "8", "--input-length", "32"]
MESH = ["--mesh", "data=2,model=2"]
RUN_EVERY = ["--eval-every", "100", "--checkpoint-every", "100"]  # evals at 0 and 4, one save

# One process, 4 forced devices: the uninterrupted run, then copies of it cut back to its
# step-2 checkpoint and resumed on other meshes.
_ONE_PROCESS = textwrap.dedent(
    """
    import json, shutil, sys
    from pathlib import Path
    import jax
    from lshsim.t5.loop import train

    root, corpus = Path(sys.argv[1]), sys.argv[2]
    every = dict(eval_every=100, checkpoint_every=2, progress=False)
    train("tiny", root / "ref", steps=4, batch_size=8, input_length=32, corpus=[corpus],
          mesh="data=2,model=2", **every)
    res = {"devices": jax.device_count()}
    # --mesh takes all devices; --devices 1 is the 1x1 mesh of the first one.
    for name, where in (("1x1", {"devices": 1}), ("4x1", {"mesh": "data=4,model=1"})):
        run = root / name
        shutil.copytree(root / "ref", run)
        shutil.rmtree(run / "checkpoints" / "4")  # as if stopped after the step-2 checkpoint
        train("tiny", run, steps=4, resume=True, **where, **every)
        res[name] = json.loads((run / "run.json").read_text())["mesh"]
    print(json.dumps(res))
    """
)


# Outside any cluster: --distributed auto fails in one line (exit 2); then a coordinator that
# nobody runs: the watchdog ends the process after --init-timeout with one line (exit 2).
_LONE = textwrap.dedent(
    """
    import sys
    from lshsim.cli.main import main

    argv = sys.argv[1:-1]
    print(main(argv + ["--distributed", "auto"]), flush=True)
    main(argv + ["--coordinator", sys.argv[-1], "--num-processes", "2", "--process-id", "1",
                 "--init-timeout", "1"])
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: JAX's SLURM detection puts the coordinator on port 61440 + (SLURM_JOB_ID mod 4096).
SLURM_PORTS = 61440


def _free_slurm_job() -> int:
    """A SLURM job id whose coordinator port (see :data:`SLURM_PORTS`) is free here."""
    start = random.randrange(4096)
    for k in range(4096):
        job = (start + k) % 4096
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", SLURM_PORTS + job))
            except OSError:
                continue
            return job
    raise RuntimeError("no free port in 61440-65535")


def _slurm(job: int, task: int) -> dict:
    """The variables JAX's SLURM detection reads, for task ``task`` of 2 on this host."""
    return {
        "SLURM_JOB_ID": str(job),
        "SLURM_STEP_NODELIST": "localhost",
        "SLURM_NTASKS": "2",
        "SLURM_PROCID": str(task),
        "SLURM_LOCALID": "0",
    }


def _env(devices: int) -> dict:
    env = dict(os.environ, **host_device_flags(devices))  # keeps the session's XLA flags
    for key in list(env):  # no cluster for --distributed auto to detect
        if key.startswith(("SLURM_", "OMPI_", "PMI_")):
            del env[key]
    return env


def _lshsim(*argv) -> list[str]:
    return [sys.executable, "-m", "lshsim.cli", *argv]


def _start_and_wait(tmp_path_factory, small_corpus) -> dict:
    """Start all subprocesses, wait (each killed past the deadline), return their results."""
    from lshsim.t5.configs import get_config
    from lshsim.t5.loop import TrainOptions, held_out_tokenizer

    root = tmp_path_factory.mktemp("distributed")
    tiny = get_config("tiny")
    opts = TrainOptions.from_config(tiny, corpus=[str(small_corpus)], batch_size=8)
    held_out_tokenizer(tiny, opts, None)  # train (and cache) the tokenizer once, for all
    job = _free_slurm_job()
    mp = [
        *RUN,
        *MESH,
        *RUN_EVERY,
        "--corpus",
        str(small_corpus),
        "--out",
        str(root / "mp"),
        "--json",
    ]
    cluster = ["--coordinator", f"127.0.0.1:{SLURM_PORTS + job}", "--num-processes", "2"]
    lone = [*RUN, "--corpus", str(small_corpus), "--out", str(root / "lone")]
    specs = {
        # process 0 by the explicit flags; process 1 as SLURM task 1, by JAX's detection
        "p0": (_lshsim("train", *mp, *cluster, "--process-id", "0"), 2),
        "p1": (_lshsim("train", *mp, "--distributed", "auto"), 2),
        "one": ([sys.executable, "-c", _ONE_PROCESS, str(root), str(small_corpus)], 4),
        "lone": ([sys.executable, "-c", _LONE, "train", *lone, f"127.0.0.1:{_free_port()}"], 1),
    }
    envs = {name: _env(devices) for name, (_, devices) in specs.items()}
    envs["p1"].update(_slurm(job, 1))
    procs = {
        name: subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=envs[name]
        )
        for name, (argv, _) in specs.items()
    }
    results = {}
    try:
        deadline = time.monotonic() + DEADLINE
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            results[name] = (proc.returncode, out, err)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    results["root"] = root
    return results


def _ok(runs, name) -> str:
    code, out, err = runs[name]
    assert code == 0, f"{name} exited {code}: {err[-3000:]}"
    return out


def _train_losses(run) -> list[tuple[int, float]]:
    return [(r["step"], r["loss"]) for r in ckpt.read_metrics(run) if r["split"] == "train"]


@pytest.mark.slow
def test_processes_and_meshes(tmp_path_factory, small_corpus):
    """Two processes, checkpoints across meshes and the start-up failures, in one test.

    (One test, not a module fixture shared by several: pytest-xdist would start the
    subprocesses once per worker that runs one of them.)
    """
    runs = _start_and_wait(tmp_path_factory, small_corpus)
    _two_processes_train_as_one_process_with_all_devices(runs)
    _only_process_zero_writes_the_run_files(runs)
    _checkpoint_of_two_processes_evaluates_in_one(runs)
    _checkpoint_resumes_on_other_meshes_with_the_uninterrupted_losses(runs)
    _no_cluster_and_an_unreachable_coordinator_exit_2_with_one_line_each(runs)


def _two_processes_train_as_one_process_with_all_devices(runs):
    """Losses of 2 processes x 2 devices equal 1 process x 4 devices (mesh data=2,model=2)."""
    for name in ("p0", "p1", "one"):
        _ok(runs, name)
    root = runs["root"]
    two, one = _train_losses(root / "mp"), _train_losses(root / "ref")
    assert [s for s, _ in two] == [1, 2, 3, 4] == [s for s, _ in one]
    np.testing.assert_allclose([x for _, x in two], [x for _, x in one], rtol=2e-5)
    assert len({x for _, x in two}) == 4  # the steps trained: the losses moved


def _only_process_zero_writes_the_run_files(runs):
    root = runs["root"] / "mp"
    summary = [line for line in _ok(runs, "p0").splitlines() if line.startswith("{")]
    assert json.loads(summary[-1])["step"] == 4
    assert not [line for line in _ok(runs, "p1").splitlines() if line.startswith("{")]
    records = [(r["step"], r["split"]) for r in ckpt.read_metrics(root)]
    assert len(records) == len(set(records)) == 6  # eval 0, train 1-4, eval 4: written once
    run = json.loads((root / "run.json").read_text())
    assert run["processes"] == 2 and run["mesh"] == {"data": 2, "model": 2}
    assert sorted(p.name for p in (root / "checkpoints").iterdir()) == ["4"]


def _checkpoint_of_two_processes_evaluates_in_one(runs):
    """Their shards make one checkpoint: restored here (one device), the held-out loss is the
    one the two processes logged at its step."""
    from lshsim.t5.loop import evaluate_run

    run = runs["root"] / "mp"
    logged = [r for r in ckpt.read_metrics(run) if r["split"] == "eval" and r["step"] == 4]
    ev = evaluate_run(run)
    assert ev["step"] == 4
    np.testing.assert_allclose(ev["loss"], logged[0]["loss"], rtol=1e-5)
    assert ev["tokens"] == logged[0]["tokens"]


def _checkpoint_resumes_on_other_meshes_with_the_uninterrupted_losses(runs):
    """Saved on mesh 2x2 at step 2, resumed on 1x1 and 4x1: steps 3-4 as if never stopped."""
    res = json.loads(_ok(runs, "one").strip().splitlines()[-1])
    assert res["devices"] == 4
    assert res["1x1"] == {"data": 1, "model": 1}  # recorded on resume
    assert res["4x1"] == {"data": 4, "model": 1}
    ref = dict(_train_losses(runs["root"] / "ref"))
    for name in ("1x1", "4x1"):
        got = dict(_train_losses(runs["root"] / name))
        assert sorted(got) == [1, 2, 3, 4]
        np.testing.assert_allclose([got[3], got[4]], [ref[3], ref[4]], rtol=2e-5)
    _, _, err = runs["one"]
    assert "saved on mesh data=2,model=2; it continues on mesh data=1,model=1" in err


def _no_cluster_and_an_unreachable_coordinator_exit_2_with_one_line_each(runs):
    code, out, err = runs["lone"]
    assert out.strip() == "2"  # --distributed auto outside SLURM / Open MPI
    assert code == 2  # the coordinator's time-out
    auto, late = err.strip().splitlines()
    assert auto.startswith("lshsim: error: --distributed auto: jax.distributed.initialize() fail")
    assert late.startswith("lshsim: error: --coordinator: not all 2 processes reached 127.0.0.1:")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"coordinator": "h:1"}, "--coordinator: needs --num-processes and --process-id too"),
        ({"num_processes": 2, "process_id": 0}, "--num-processes: needs --coordinator too"),
        ({"coordinator": "h:1", "num_processes": 2, "process_id": 2}, r"in \[0, 1\], got 2"),
        ({"coordinator": "h:1", "num_processes": 0, "process_id": 0}, "--num-processes must"),
        ({"coordinator": "h:x", "num_processes": 1, "process_id": 0}, "port must be an integer"),
        ({"coordinator": "h:0", "num_processes": 1, "process_id": 0}, r"in \[1, 65535\]"),
        ({"coordinator": "h", "num_processes": 1, "process_id": 0}, "must be HOST:PORT"),
        ({"distributed": "auto", "process_id": 0}, "auto: JAX detects .* leave out --process-id"),
        ({"distributed": "yes"}, "--distributed must be 'auto'"),
        ({"timeout": 5}, "--init-timeout: needs --coordinator or --distributed auto"),
        ({"distributed": "auto", "timeout": 0}, "--init-timeout must be an integer >= 1"),
    ],
)
def test_bad_flags_raise_one_line(flags, message):
    args = {"coordinator": None, "num_processes": None, "process_id": None}
    with pytest.raises(ValueError, match=message) as info:
        cluster_from_flags(**{**args, **flags})
    assert "\n" not in str(info.value)


def test_flags_make_a_cluster_or_none():
    assert cluster_from_flags(None, None, None) is None
    assert cluster_from_flags("10.0.0.1:1234", 4, 3) == Cluster("10.0.0.1:1234", 4, 3)
    auto = cluster_from_flags(None, None, None, "auto", 60)
    assert auto.detected and auto.timeout == 60
    assert cluster_from_flags("h:1", 1, 0).timeout == DEFAULT_TIMEOUT
    assert parse_coordinator("[::1]:8476") == ("::1", 8476)
