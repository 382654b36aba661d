"""The files the reader fuzzer (``tests/test_fuzz_readers.py``) feeds hostile versions of.

Each :class:`Reader` makes a valid file cheaply (a trimmed copy of a committed one, or a few
lines written here; no model is trained) and reads it the way lshsim does: through the command
in process where a command reads it before its work starts, else through the library
function. A read returns ``None`` on success, or the refusal's one line.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lshsim.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "figures"


@dataclass(frozen=True)
class Reader:
    """A file lshsim reads: how to make a valid one, how to read it, how to make it hostile.

    Attributes:
        name: the test id.
        make: writes a valid file (and what it needs beside it) into a folder; returns it.
        call: reads the file; returns ``None`` on success, else the refusal's one line.
        kind: ``json``, ``jsonl``, ``text`` or ``binary`` (the hostile versions).
        names: what a refusal must name (default: the file's path).
        examples: hypothesis examples (CI's budget is 25 s for the file).
        gz: the file is gzipped (hostile versions inside and outside the compression).
    """

    name: str
    make: Callable[[Path], Path]
    call: Callable[[Path], str | None]
    kind: str
    names: Callable[[Path], tuple[str, ...]] = field(default=lambda p: (str(p),))
    examples: int = 40
    gz: bool = False


def _cli(argv: list[str], ok: tuple[int, ...] = (0,)) -> tuple[str | None, str]:
    """``lshsim ARGV`` in process: ``(None, stdout)`` for an exit in ``ok``, else exit 2's line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    if rc in ok:
        return None, out.getvalue()
    text = err.getvalue()
    assert rc == 2, f"exit {rc}: {text}"
    assert text.startswith("lshsim: error: ") and text.count("\n") == 1, text
    return text.removeprefix("lshsim: error: ").rstrip("\n"), out.getvalue()


def _quiet(function: Callable[[], object]) -> str | None:
    """Call ``function`` (its stderr swallowed): ``None``, or the ``ValueError``'s message."""
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            function()
        except ValueError as exc:
            return str(exc)
    return None


# compare: a trimmed copy of the committed figures/results.json (one study, two claims)


def _results() -> dict:
    doc = json.loads((FIGURES / "results.json").read_text())
    doc["studies"] = {"rho_vs_f": doc["studies"]["rho_vs_f"]}
    doc["claims"] = doc["claims"][:2]
    doc["kinds"] = {
        k: v
        for k, v in doc["kinds"].items()
        if k.split("/")[0] not in ("studies", "claims")
        or k.split("/")[1:2] in (["rho_vs_f"], ["0"], ["1"])
    }
    return doc


def _make_pair(folder: Path, fuzzed: str) -> Path:
    for side in "ab":
        (folder / side).mkdir()
        (folder / side / "results.json").write_text(json.dumps(_results()))
    return folder / fuzzed / "results.json"


def _make_beside(folder: Path) -> Path:
    """A results.json without versions, and the manifest beside it that records them."""
    _make_pair(folder, "a")
    doc = _results()
    manifest = {"complete": True, "versions": doc.pop("versions"), "files": [], "owns": []}
    (folder / "a" / "results.json").write_text(json.dumps(doc))
    (folder / "a" / "manifest.json").write_text(json.dumps(manifest))
    return folder / "a" / "manifest.json"


def _compare(path: Path, *extra: str) -> str | None:
    folder = path.parent.parent
    return _cli(["compare", str(folder / "a" / "results.json"), str(folder / "b" / "results.json"),
                 *extra], ok=(0, 1))[0]  # fmt: skip


# reproduce --verify: a finished run of one study file and results.json


def _make_run(folder: Path, fuzzed: str) -> Path:
    from lshsim.studies import manifest

    run = folder / "run"
    run.mkdir()
    doc = _results()
    study = {"config": doc["config"], "seed": 0, "data": doc["studies"]["rho_vs_f"]}
    (run / "rho_vs_f.json").write_text(json.dumps(study))
    (run / "results.json").write_text(json.dumps(doc))
    head = {"format": 1, "writer": "lshsim reproduce", "seed": 0, "profile": "default"}
    head |= {"config": doc["config"], "versions": doc["versions"]}
    files = [run / "rho_vs_f.json", run / "results.json"]
    manifest.finish(run, head, files, ["*.json", "*.png", "REPORT.md"])
    return run / fuzzed


def _verify(path: Path) -> str | None:
    """``reproduce --verify``: exit 0, or exit 1 and a line per problem, each naming the folder
    (the first returned, the verdict on the hostile file), or exit 2 and its one line."""
    error, out = _cli(["reproduce", "--verify", str(path.parent)], ok=(0, 1))
    for line in out.splitlines():
        assert line.startswith(f"{path.parent}: "), out
    if error is None and not out.startswith(f"{path.parent}: complete ("):
        return out.splitlines()[0]
    return error


# the launcher's run directory


def _make_rundir(folder: Path, fuzzed: str) -> Path:
    from lshsim.launch import Job, write_job
    from lshsim.launch.rundir import FORMAT

    run = folder / "run"
    write_job(Job("k", run, "tests.launch.toy:run", {"n": 3, "fail": False}, "k3"))
    files = {
        "result.json": {"format": FORMAT, "key": "k", "row": {"square": 9, "n": 3}},
        "submitted.json": {"format": FORMAT, "job_id": 77},
        "failed.json": {"format": FORMAT, "key": "k", "error": "RuntimeError: boom",
                        "traceback": "Traceback ...\nRuntimeError: boom\n"},
    }  # fmt: skip
    for name, doc in files.items():  # a finished run has no failure, a failed one no row
        if (
            name == "submitted.json"
            or name == fuzzed
            or (name, fuzzed) == ("result.json", "job.json")
        ):
            (run / name).write_text(json.dumps(doc))
    return run / fuzzed


def _read_job(path: Path) -> str | None:
    from lshsim.launch.rundir import read_job

    try:
        job = read_job(path.parent)
    except ValueError as exc:
        return str(exc)
    assert isinstance(job.key, str) and isinstance(job.runner, str) and job.key
    assert isinstance(job.payload, dict) and isinstance(job.label, str)
    return None


def _collect(path: Path) -> str | None:
    """``--collect``'s reading: a damaged file fails the run, naming the file."""
    from lshsim.launch import Job, collect, read_result

    row = read_result(path.parent, "k")  # lenient: a damaged result reads as not finished
    assert row is None or isinstance(row, dict)
    found = collect([Job("k", path.parent, "m:f", {})])
    assert all(isinstance(v, str) for v in found.submitted.values())
    message = found.failed.get("k")
    if message is not None and path.name == "failed.json":
        try:  # the run's own error, as recorded: not a refusal of the file
            recorded = json.loads(path.read_bytes())["error"]
        except (ValueError, TypeError, KeyError, RecursionError):
            recorded = None
        if isinstance(recorded, str) and message == " ".join(recorded.split()):
            return None
    return message


# the memory studies' results document and the fine-tuning rows beside it


def _make_memory(folder: Path) -> Path:
    """A trimmed copy of figures/memory_studies.json: one study, two variants of two seeds."""
    doc = json.loads((FIGURES / "memory_studies.json").read_text())
    entry = doc["studies"]["smoke"]["lookups"]
    entry["variants"] = [dict(v, keys=v["keys"][:2]) for v in entry["variants"][:2]]
    keys = {k for v in entry["variants"] for k in v["keys"]}
    doc["studies"] = {"smoke": {"lookups": entry}}
    doc["runs"] = {k: v for k, v in doc["runs"].items() if k in keys}
    doc.pop("summary")
    path = folder / "memory_studies.json"
    path.write_text(json.dumps(doc))
    return path


def _memory(path: Path) -> str | None:
    from lshsim.studies.memory import FORMAT, load_doc, save_doc
    from lshsim.studies.memory.report import figure_data, format_summary
    from lshsim.studies.memory.variants import STUDIES

    def read() -> None:
        load_doc(path)
        save_doc(path, {"format": FORMAT, "runs": {}, "studies": {}}, STUDIES)  # merges the file
        doc = load_doc(path)
        for variant, studies in doc["studies"].items():
            format_summary(doc, variant, STUDIES)
            for study in studies:
                figure_data(doc, variant, study)

    return _quiet(read)


def _make_finetune(folder: Path) -> Path:
    from lshsim.studies.memory.finetune import FORMAT

    path = folder / "memory_studies_finetune.json"
    row = {"dev": {"rte": {"score": 0.61}}, "label": "baseline", "steps": 100}
    path.write_text(json.dumps({"format": FORMAT, "runs": {"c1": row}}))
    return path


def _finetune(path: Path) -> str | None:
    from lshsim.studies.memory.finetune import load_rows, save_row

    def read() -> None:
        rows = load_rows(path)
        assert all(isinstance(k, str) and isinstance(r, dict) for k, r in rows.items())
        save_row(path, "c2", {"dev": {}})

    return _quiet(read)


# a T5 run folder: run.json (written from the micro config), metrics.jsonl, checkpoint metadata


def _make_run_json(folder: Path) -> Path:
    from lshsim.t5.checkpoint import write_run
    from lshsim.t5.configs import T5Config, padded_vocab
    from lshsim.t5.options import TrainOptions

    config = T5Config(name="micro", vocab_size=padded_vocab(300), d_model=32, num_heads=2,
                      d_kv=16, d_ff=64, num_encoder_layers=1, num_decoder_layers=1,
                      num_pieces=300, input_length=32, batch_size=4, warmup_steps=10)  # fmt: skip
    opts = TrainOptions.from_config(
        config, corpus=["/data/c4.jsonl"], tokenizer="/data/spm.model", target_length=8
    )
    (folder / "run").mkdir()
    write_run(folder / "run", config, opts.to_dict())
    return folder / "run" / "run.json"


def _run_json(path: Path) -> str | None:
    from lshsim.t5.checkpoint import read_run
    from lshsim.t5.options import TrainOptions

    def read() -> None:
        config, recorded = read_run(path.parent)
        if recorded.get("kind") != "finetune":  # a pretraining run's, as eval and --resume
            TrainOptions.from_dict(recorded)
        config.to_dict()

    return _quiet(read)


METRICS = [
    {"step": 0, "split": "eval", "loss": 8.2, "accuracy": 0.0, "tokens": 896},
    {"step": 2, "split": "train", "loss": 7.9, "accuracy": 0.01, "seconds": 0.12},
    {"step": 4, "split": "train", "loss": 7.1, "accuracy": 0.05, "seconds": 0.11},
    {"step": 4, "split": "eval", "loss": 7.0, "accuracy": 0.06, "tokens": 896},
]


def _make_metrics(folder: Path) -> Path:
    (folder / "run").mkdir()
    path = folder / "run" / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in METRICS))
    return path


def _metrics(path: Path) -> str | None:
    from lshsim.t5.checkpoint import read_metrics, truncate_metrics

    def read() -> None:
        for torn in (False, True):
            records = read_metrics(path.parent, torn_last_line=torn)
            assert all(isinstance(r, dict) for r in records)
        truncate_metrics(path.parent, 2)  # what --resume does

    return _quiet(read)


def _make_metadata(folder: Path) -> Path:
    """A checkpoint step's ``default/_METADATA`` (orbax's layout, its values made up)."""
    item = folder / "run" / "checkpoints" / "4" / "default"
    item.mkdir(parents=True)
    leaf = {"key_metadata": [{"key": "params", "key_type": 2}, {"key": "w", "key_type": 2}],
            "value_metadata": {"value_type": "jax.Array", "skip_deserialize": False}}  # fmt: skip
    doc = {"tree_metadata": {"('params', 'w')": leaf}, "use_zarr3": False}
    (item / "_METADATA").write_text(json.dumps(doc))
    (item / "manifest.ocdbt").write_bytes(b"\x01ocdbt")
    return item / "_METADATA"


def _metadata(path: Path) -> str | None:
    from lshsim.t5 import checkpoint as ckpt

    step = path.parent.parent
    reason = ckpt._damaged_files(step)  # what restore checks before orbax reads a step
    if reason is None:
        return None
    return str(ckpt.UnusableCheckpointError(step.parent.parent, 4, f"is unreadable ({reason})"))


# corpus files, the tokenizer, tune's similarities, a Hugging Face config.json

DOCS = ["The first paragraph.\nIt has two lines.", "A second one.", "And a third, the last."]


def _make_corpus(name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        if ".jsonl" in name:
            text = "".join(json.dumps({"text": d, "id": i}) + "\n" for i, d in enumerate(DOCS))
        elif ".json" in name:
            text = json.dumps([{"text": d} for d in DOCS])
        else:
            text = "\n\n".join(DOCS) + "\n"
        raw = text.encode()
        path.write_bytes(gzip.compress(raw, mtime=0) if name.endswith(".gz") else raw)
        return path

    return make


def _corpus(path: Path) -> str | None:
    from lshsim.t5.data.corpus import load_corpus

    def read() -> None:
        docs = load_corpus([path])
        assert docs and all(isinstance(d, str) and d for d in docs)

    return _quiet(read)


def _make_tokenizer(folder: Path) -> Path:
    from lshsim.t5.data.tokenizer import train_tokenizer

    lines = [f"the quick brown fox {i} jumps over the lazy dog {i % 7}" for i in range(200)]
    path = folder / "spm.model"
    train_tokenizer(lines, 120, use_cache=False).save(path)
    return path


def _tokenizer(path: Path) -> str | None:
    from lshsim.t5.data.tokenizer import Tokenizer

    def read() -> None:
        tok = Tokenizer.load(path)
        ids = tok.encode("the lazy dog")
        tok.decode([*ids, tok.sentinel(0), tok.eos_id])

    return _quiet(read)


def _make_similarities(folder: Path) -> Path:
    path = folder / "similarities.txt"
    path.write_text("# sampled pairs\n0.2\n0.9 3\n0.5 1e3  # a histogram bin\n\n0.2\n")
    return path


def _similarities(path: Path) -> str | None:
    from lshsim.tune import read_similarities

    return _quiet(lambda: read_similarities(path, 0.0, 1.0))


def _make_hf(folder: Path) -> Path:
    (folder / "hf").mkdir()
    config = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
              "num_local_experts": 8, "num_experts_per_tok": 2, "hidden_size": 16}  # fmt: skip
    (folder / "hf" / "config.json").write_text(json.dumps(config))
    return folder / "hf" / "config.json"


def _hf(path: Path) -> str | None:
    from lshsim.probe.hf import read_config

    return _quiet(lambda: read_config(path.parent))


def _folder(path: Path) -> tuple[str, ...]:
    """A verdict on a folder names the folder (``reproduce --verify``)."""
    return (str(path.parent),)


def _named(*parts: str) -> Callable[[Path], tuple[str, ...]]:
    """A refusal that names the file by its folder and its name (``metrics.jsonl line 3 in``)."""
    return lambda p: (str(p.parent), *(parts or (p.name,)))


READERS = [
    Reader("compare-A", lambda f: _make_pair(f, "a"), lambda p: _compare(p, "--json"), "json"),
    Reader("compare-B", lambda f: _make_pair(f, "b"), _compare, "json"),
    Reader("compare-manifest", _make_beside, _compare, "json", examples=25),
    Reader("verify-manifest", lambda f: _make_run(f, "manifest.json"), _verify, "json", _folder),
    Reader(
        "verify-study",
        lambda f: _make_run(f, "rho_vs_f.json"),
        _verify,
        "json",
        _folder,
        examples=25,
    ),
    Reader("job.json", lambda f: _make_rundir(f, "job.json"), _read_job, "json", _named()),
    Reader("result.json", lambda f: _make_rundir(f, "result.json"), _collect, "json"),
    Reader("failed.json", lambda f: _make_rundir(f, "failed.json"), _collect, "json"),
    Reader("submitted.json", lambda f: _make_rundir(f, "submitted.json"), _collect, "json"),
    Reader("memory-studies", _make_memory, _memory, "json"),
    Reader("memory-finetune", _make_finetune, _finetune, "json", examples=25),
    Reader("run.json", _make_run_json, _run_json, "json"),
    Reader("metrics.jsonl", _make_metrics, _metrics, "jsonl", _named()),
    Reader(
        "checkpoint-metadata",
        _make_metadata,
        _metadata,
        "json",
        lambda p: (str(p.parents[3]), "default/_METADATA"),
    ),
    Reader("corpus.txt", _make_corpus("docs.txt"), _corpus, "text"),
    Reader("corpus.txt.gz", _make_corpus("docs.txt.gz"), _corpus, "text", examples=25, gz=True),
    Reader("corpus.jsonl", _make_corpus("docs.jsonl"), _corpus, "jsonl"),
    Reader("corpus.json", _make_corpus("docs.json"), _corpus, "json"),
    Reader(
        "corpus.jsonl.gz", _make_corpus("docs.jsonl.gz"), _corpus, "jsonl", examples=25, gz=True
    ),
    Reader("spm.model", _make_tokenizer, _tokenizer, "binary", examples=25),
    Reader("similarities", _make_similarities, _similarities, "text"),
    Reader("hf-config.json", _make_hf, _hf, "json"),
]
BY_NAME = {r.name: r for r in READERS}
