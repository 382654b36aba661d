"""A runner that trains nothing, for launcher tests: it squares ``payload["x"]``.

Each call appends to ``calls`` in the run directory, so a test can see whether a job ran
again; ``payload["fail"]`` makes it raise.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The runner name of the toy jobs.
RUNNER = "tests.launch.toy:run"


def run(payload: dict, run_dir: Path, progress: bool = False) -> dict:
    if payload.get("fail"):
        raise RuntimeError("toy failure\non two lines")
    with open(Path(run_dir) / "calls", "a") as f:
        f.write(f"{os.getpid()}\n")
    return {"square": payload["x"] ** 2, "pid": os.getpid(), "progress": progress}


def jobs(root: Path, xs, fail=()):
    from lshsim.launch import Job

    return [
        Job(f"k{x}", Path(root) / f"k{x}", RUNNER, {"x": x, "fail": x in fail}, f"toy {x}")
        for x in xs
    ]


def calls(job) -> int:
    path = Path(job.run_dir) / "calls"
    return len(path.read_text().splitlines()) if path.exists() else 0
