"""Checkpoints of a training run, with orbax, and the run's metadata.

A run directory holds::

    run.json          the model config and the training options (written once, atomically;
                      the options are ``lshsim.t5.options.TrainOptions.to_dict()``)
    spm.model         the SentencePiece tokenizer the run uses
    metrics.jsonl     one JSON object per logged step (``split`` is ``train`` or ``eval``)
    checkpoints/<step>/  orbax checkpoints of {step, params, opt_state}

Orbax writes each checkpoint under a temporary name and renames it when complete, so a run
killed mid-save leaves the previous checkpoint as the latest one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic
from lshsim.t5.configs import T5Config

RUN_FILE = "run.json"
TOKENIZER_FILE = "spm.model"
METRICS_FILE = "metrics.jsonl"
CHECKPOINT_DIR = "checkpoints"


def write_run(out: Path, config: T5Config, options: dict[str, Any]) -> None:
    """Record the config and training options of the run in ``out/run.json``."""
    doc = {"config": config.to_dict(), "train": options}
    write_atomic(out / RUN_FILE, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def read_run(out: Path) -> tuple[T5Config, dict[str, Any]]:
    """The config and training options recorded in ``out/run.json``.

    Raises:
        ValueError: if ``out`` is not a run directory.
    """
    path = Path(out) / RUN_FILE
    if not path.is_file():
        raise ValueError(f"checkpoint: {out} is not a training run directory (no {RUN_FILE})")
    try:
        doc = json.loads(path.read_text())
        return T5Config.from_dict(doc["config"]), doc["train"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"checkpoint: {path} is not a valid run file ({e})") from None


def manager(out: Path, *, max_to_keep: int = 2, read_only: bool = False):
    """An orbax ``CheckpointManager`` over ``out/checkpoints`` (synchronous saves).

    ``read_only`` only means "do not create the directory"; callers do not save then.
    """
    import orbax.checkpoint as ocp

    # Not orbax's read_only mode, which logs warnings about the options it overrides.
    options = ocp.CheckpointManagerOptions(
        max_to_keep=max_to_keep, create=not read_only, enable_async_checkpointing=False
    )
    return ocp.CheckpointManager(Path(out).absolute() / CHECKPOINT_DIR, options=options)


def save(mngr, step: int, state: dict) -> None:
    """Save ``state`` (a pytree) as checkpoint ``step`` and wait until it is complete."""
    import orbax.checkpoint as ocp

    mngr.save(step, args=ocp.args.StandardSave(state), force=True)
    mngr.wait_until_finished()


def restore(mngr, abstract_state: dict, step: int | None = None) -> dict:
    """Restore checkpoint ``step`` (default: the latest) into the structure of ``abstract_state``.

    Raises:
        ValueError: if there is no checkpoint, or its shapes do not fit ``abstract_state``.
    """
    import orbax.checkpoint as ocp

    step = mngr.latest_step() if step is None else step
    if step is None:
        raise ValueError(f"checkpoint: no checkpoint under {mngr.directory}")
    _check_shapes(Path(mngr.directory) / str(step) / "default", abstract_state, step)
    try:
        return mngr.restore(step, args=ocp.args.StandardRestore(abstract_state))
    except (ValueError, KeyError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(
            f"checkpoint: step {step} in {mngr.directory} does not fit this model ({first})"
        ) from None


def _shapes(tree) -> dict[str, tuple]:
    import jax

    return {
        "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path): tuple(leaf.shape)
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
    }


def _check_shapes(item_dir: Path, abstract_state: dict, step: int) -> None:
    """Compare a checkpoint's parameter shapes with the model's before restoring anything.

    (Orbax's own failure on a mismatch leaves pending coroutines behind; this check gives a
    clear message instead.)
    """
    import logging

    import orbax.checkpoint as ocp

    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # orbax warns that this step has no separate metadata file
    try:
        meta = ocp.StandardCheckpointer().metadata(item_dir)
    except (OSError, ValueError):
        return  # let restore report it
    finally:
        absl.setLevel(level)
    tree = getattr(meta, "item_metadata", meta)
    if not isinstance(tree, dict) and hasattr(tree, "tree"):
        tree = tree.tree
    try:
        saved = _shapes(tree["params"])
    except (KeyError, TypeError):
        return
    want = _shapes(abstract_state["params"])
    for name in sorted(set(saved) | set(want)):
        if saved.get(name) != want.get(name):
            raise ValueError(
                f"checkpoint: step {step} in {item_dir.parent.parent} does not fit this model "
                f"(parameter {name}: saved {saved.get(name)}, model {want.get(name)})"
            )


def read_metrics(out: Path) -> list[dict]:
    """All records of ``out/metrics.jsonl`` (empty if there is none)."""
    path = Path(out) / METRICS_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def truncate_metrics(out: Path, step: int) -> None:
    """Drop metric records after ``step`` (used when resuming from checkpoint ``step``)."""
    keep = [r for r in read_metrics(out) if r["step"] <= step]
    write_atomic(Path(out) / METRICS_FILE, "".join(json.dumps(r) + "\n" for r in keep))
