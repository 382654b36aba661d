"""The command line's vocabulary: one name per idea, one meaning per name, written down once.

:data:`TERMS` is the table: each option of every ``lshsim`` command (and of the launcher
script ``experiments/memory_studies.py``) with its meaning, its kind and its default. The
parsers define the options; ``tests/cli/test_vocabulary.py`` walks every sub-parser and checks
them against this table (every option is in it, one default per option unless the table says
why, ``--seed`` wherever random numbers are drawn, ``--json`` with one help text, no two names
that differ only by case, no retired synonym), and :func:`render_markdown` writes the table to
``docs/cli/vocabulary.md`` (``python -m lshsim.cli.vocabulary_doc``; a test checks that the
file is current).

Retired spellings (:data:`DEPRECATED`) still parse, as aliases of the new name that print one
warning per process on stderr (:func:`install_aliases`); the help lists only the new name.
Output keys (JSON and sweep columns) keep their names: committed results read them.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

__all__ = [
    "DEPRECATED",
    "JSON_HELP",
    "RANDOM_COMMANDS",
    "SYNONYMS",
    "TERMS",
    "Term",
    "float_list",
    "install_aliases",
    "render_markdown",
]

#: The help of ``--json`` on every command.
JSON_HELP = "print one JSON object instead of the text (no progress bar)"

#: The commands that draw random numbers, so each has ``--seed`` (a sweep's seed is also
#: its spec's ``seed``; ``theory`` draws only with ``--overlap``, its Monte-Carlo cosines).
#: Not ``check``: each claim's Monte-Carlo evidence uses the fixed seeds the claim states (a
#: claim is checked as written); not ``eval``: its held-out batches are the run's own.
RANDOM_COMMANDS = (
    "simulate",
    "theory",
    "reproduce",
    "train",
    "finetune",
    "probe",
    "sweep",
)

#: ``(command, old spelling) -> new spelling``: retired names kept as aliases that warn once.
DEPRECATED: dict[tuple[str, str], str] = {
    ("sweep", "--batch"): "--part-rows",
    ("eval", "--checkpoint"): "--run",
    ("probe", "--checkpoint"): "--run",
    ("probe", "--overlaps"): "--overlap",
    ("launch", "--scheduler-timeout"): "--timeout",
    ("memory", "--K"): "--blocks",
    ("memory_studies", "--json"): "--results",
}
#: argparse dests whose option is not ``--`` + the dest with dashes (messages name the option).
DEST_FLAGS = {"K": "--blocks", "scheduler_timeout": "--timeout"}

#: Names that must not come back as options (one name per idea): old name -> the one used.
SYNONYMS = {
    "--checkpoint": "--run (a run folder a command reads)",
    "--overlaps": "--overlap (a list option takes its scalar's name and a comma list)",
    "--scheduler-timeout": "--timeout",
    "--part-size": "--part-rows",
    "--nthreads": "--threads",
    "--processes": "--workers",
    "--gpus": "--devices",
    "--output-dir": "--out",
    "--random-seed": "--seed",
}


@dataclass(frozen=True)
class Term:
    """One option of the vocabulary.

    Attributes:
        name: the option, e.g. ``--batch``.
        meaning: what it configures, the same in every command that has it.
        kind: its value: ``int``, ``float``, ``text``, ``choice``, ``flag``, ``list``,
            ``folder``, ``file``.
        default: the default, as ``--help`` states it (empty: none, or the option is required).
        short: a one-letter spelling, where one is unambiguous (``-n``, ``-o``).
        varies: why the default differs between commands (empty: one default everywhere).
    """

    name: str
    meaning: str
    kind: str
    default: str = ""
    short: str = ""
    varies: str = ""


def _t(*args, **kw) -> Term:
    return Term(*args, **kw)


#: The vocabulary, grouped as the help groups them.
TERMS: tuple[Term, ...] = (
    # what to compute (simulate, theory)
    _t("--family", "lookup (hash) family, from the registry (`lshsim families`)", "choice"),
    _t(
        "--buckets",
        "number of buckets n of a lookup (simulate/theory) or of a model's lookup table",
        "int",
        short="-n",
        varies="simulate/theory: required; model commands: the config's (64)",
    ),
    _t(
        "--overlap",
        "sentence-model overlap f in [0, 1]: the fraction of shared tokens; probe takes a "
        "comma list",
        "float or list",
        varies="probe: 0.1,0.3,0.5,0.7,0.9; simulate/theory: required (or --cosine)",
    ),
    _t("--cosine", "exact cosine a in [-1, 1] of two unit vectors", "float"),
    _t("--half-cosines", "product keys: the cosines of the two halves", "list"),
    _t("--dim", "embedding dimension d", "int", "64"),
    _t(
        "--length",
        "sentence length l in tokens (sentence model, probe's sentences)",
        "int",
        "32",
        varies="probe: 64 (a T5 input's length)",
    ),
    _t("--vocab", "sentence-model vocabulary size V", "int", "32128"),
    _t("--compressed-vocab", "n-grams: the compressed vocabulary size", "int"),
    _t(
        "--topk",
        "top-k: slots (buckets) read per query; the top-k overlap instead of top-1",
        "int",
        "1",
    ),
    _t("--rotation", "cross-polytope rotation", "choice"),
    _t("--k", "p-stable / min-hash: hashes per bucket index", "int"),
    _t("--width", "p-stable: bucket width w", "float"),
    _t("--heads", "hash heads (n-grams) or product-key heads", "int", "1"),
    _t("--ngram", "tokens per hashed n-gram", "int", "2"),
    _t("--cosines", "theory --overlap: cosines sampled for the average", "int"),
    _t(
        "--far",
        "the far pairs' similarity: theory's far cosine a2 of rho_lsh; tune's s2",
        "float",
        varies="theory: 0; tune: required in the sensitivity form",
    ),
    # tune
    _t("--near", "tune: the near pairs' similarity s1 (recall is asked there)", "float"),
    _t("--recall", "tune: the recall target R at --near, in (0, 1]", "float"),
    _t("--false-positive", "tune: the largest candidate probability P at --far", "float"),
    _t("--points", "tune: far points per query, for the query cost", "int", "1000000"),
    _t("--minimise", "tune: what the optimum minimises, cost or tables", "choice", "cost"),
    _t("--threshold", "tune: the similarity threshold t of datasketch's form", "float"),
    _t(
        "--weights",
        "tune: the weights w_fp,w_fn of false positives and negatives",
        "list",
        "0.5,0.5",
    ),
    _t(
        "--similarities", "tune: a file of pair similarities (one per line, or value count)", "file"
    ),
    _t(
        "--budget",
        "tune: at most this many hash functions k L (datasketch's num_perm)",
        "int",
        varies="threshold form: 128; sensitivity form: no limit",
    ),
    _t("--probes", "tune: buckets probed per table (multi-probe has no exact law: 1)", "int", "1"),
    _t("--figure", "a figure file to draw (.png, .svg or .pdf)", "file"),
    _t("--tables", "amplification: L independent tables", "int", "1"),
    _t("--concat", "amplification: k hashes concatenated per table", "int", "1"),
    # how to compute
    _t(
        "--samples",
        "sentence or vector pairs drawn (probe: per overlap)",
        "int",
        varies="simulate 10000 (a CI of +-0.01); probe 128 (each pair runs the model)",
    ),
    _t(
        "--mode",
        "simulate: full (real vectors), reduced (sufficient statistics) or auto (reduced where "
        "it exists)",
        "choice",
        "auto",
    ),
    _t(
        "--seed",
        "seed of every random number the command draws; same seed, same numbers",
        "int",
        "0",
    ),
    _t("--threads", "threads in this process (Numba); the numbers do not depend on it", "int"),
    _t(
        "--workers",
        "processes (a local Dask cluster); 0: in this process",
        "int",
        varies="sweep: one per core; memory_studies: 1",
    ),
    _t("--devices", "accelerators, data-parallel: --mesh data=D,model=1", "int"),
    _t("--scheduler", "address of a running Dask scheduler, tcp://HOST:PORT", "text"),
    _t(
        "--timeout",
        "seconds to wait for a scheduler (and a worker) to answer; then one line, exit 2",
        "float",
        varies="sweep: 30; memory_studies: 10",
    ),
    # folders and files
    _t(
        "--out",
        "the folder a command writes",
        "folder",
        short="-o",
        varies="reproduce: figures/ (the committed figures); memory_studies: a cache folder",
    ),
    _t("--run", "a `lshsim train` run folder a command reads", "folder"),
    _t("--hf", "a local Hugging Face MoE model folder to probe (never downloaded)", "folder"),
    _t("--tap", "a router of your own: module:factory returning a lshsim.probe.RouterTap", "text"),
    _t("--bf16", "load a Hugging Face model's weights in bfloat16", "flag"),
    _t("--step", "a checkpoint step of --run (default: the latest good one)", "int"),
    _t("--resume", "continue the run (sweep) in --out", "flag"),
    _t("--corpus", "text files, JSON lines or folders to train or probe on", "list"),
    _t("--tokenizer", "a SentencePiece .model to use", "file"),
    _t("--data", "a fine-tuning task's data folder", "folder"),
    _t("--verify", "reproduce: check a folder against its manifest; runs nothing", "folder"),
    _t("--plot", "draw figures from stored results; runs nothing", "folder or flag"),
    _t("--figures", "sweep --plot: where the figures go", "folder", "DIR/_figures"),
    _t("--part-rows", "sweep: most rows per Parquet part", "int", "500"),
    # model
    _t("--config", "model config (tiny, small, base, ...)", "choice"),
    _t("--memory", "wide-embedding method (sum, sameup, altup)", "choice"),
    _t("--blocks", "K: a wide embedding's blocks of width d", "int", "2"),
    _t("--extra", "extra embedding width", "int"),
    _t("--cross", "decoder cross-attention reads the K blocks wide or summed", "choice"),
    _t("--output", "logits from the wide or the summed blocks", "choice"),
    _t("--lookup", "the partial experts' lookup", "choice"),
    _t("--rank", "expert rank", "int", "0"),
    _t("--lsh-family", "the LSH lookup's family", "choice"),
    _t("--lookup-seed", "seed of the model's LSH projections (part of the model)", "int", "0"),
    _t("--router-jitter", "softmax router jitter", "float", "0.01"),
    _t("--router-balance-loss", "load-balance loss weight", "float", "0"),
    _t("--router-z-loss", "router z-loss weight", "float", "0"),
    _t("--mesh", "device mesh data=A,model=B", "text", "data=all devices,model=1"),
    _t(
        "--dtype",
        "compute dtype; parameters stay float32",
        "choice",
        "float32 on CPU, bfloat16 on GPU/TPU",
    ),
    _t("--input-length", "encoder tokens", "int"),
    _t("--target-length", "decoder tokens", "int"),
    # training
    _t("--steps", "training steps", "int"),
    _t("--batch", "examples per step", "int"),
    _t("--accumulate", "micro-batches per step (one optimiser update)", "int", "1"),
    _t("--lr", "learning rate", "float"),
    _t("--warmup", "rsqrt schedule warmup steps", "int"),
    _t("--dropout", "dropout rate", "float", "0.1"),
    _t("--eval-every", "evaluate every K steps", "int"),
    _t("--checkpoint-every", "checkpoint every K steps", "int"),
    _t("--keep-checkpoints", "newest checkpoints kept", "int", "3"),
    _t("--examples", "eval: held-out examples evaluated", "int"),
    _t("--bands", "eval: the span-content loss by target-token frequency band", "flag"),
    _t(
        "--expert-impl",
        "how the partial experts are computed (the numbers do not change)",
        "choice",
    ),
    _t("--scan-layers", "each stack's layers as one scan over stacked parameters", "flag"),
    _t("--no-scan-layers", "each stack's layers unrolled (layers_{i})", "flag"),
    _t(
        "--engram-tokenizer",
        "engram lookup: the SentencePiece model of its compressing map",
        "file",
    ),
    _t("--eval-examples", "finetune: held-out examples per evaluation", "int"),
    _t("--task", "a fine-tuning task or mixture", "choice"),
    _t("--cap", "mixture examples cap", "int"),
    _t("--router-draws", "probe: fresh random lookups per row for the interval", "int", "32"),
    _t("--coordinator", "process 0's HOST:PORT (several processes)", "text"),
    _t("--num-processes", "processes in the run", "int"),
    _t("--process-id", "this process's index", "int"),
    _t("--distributed", "auto: JAX detects the processes", "choice"),
    _t("--init-timeout", "seconds for every process to reach the coordinator", "int", "300"),
    # plan, cost
    _t("--hardware", "plan: the accelerator planned for", "choice", "h100"),
    _t("--minimal", "plan: search the smallest mesh that fits", "flag"),
    _t("--max-devices", "plan --minimal: most devices tried", "int", "64"),
    _t("--finetune", "plan the fine-tuning step (plan) / chain fine-tuning (studies)", "choice"),
    _t("--compare", "cost: price the paper's variants", "flag"),
    # check, reproduce
    _t("--claim", "check: only this claim (repeatable)", "text"),
    _t("--row", "calibrate: only this row (repeatable)", "text"),
    _t("--mutate", "check: also run each check under its mutation", "flag"),
    _t("--quick", "reproduce: small versions of every study", "flag"),
    # output
    _t("--json", "print one JSON object instead of the text", "flag"),
    # experiments/memory_studies.py
    _t("--study", "memory_studies: which study", "choice", "all"),
    _t("--variant", "memory_studies: smoke or real", "choice", "smoke"),
    _t("--seeds", "memory_studies: seeds per variant", "int", "3"),
    _t("--dry-run", "memory_studies: list the runs, train nothing", "flag"),
    _t("--reeval", "memory_studies: recompute the held-out evaluation", "flag"),
    _t("--progress", "memory_studies: a progress bar per run", "flag"),
    _t("--finetune-data", "memory_studies: the fine-tuning task's data folder", "folder"),
    _t("--finetune-steps", "memory_studies: fine-tuning steps", "int"),
    _t("--finetune-batch", "memory_studies: fine-tuning examples per step", "int"),
    _t("--launcher", "memory_studies: local, dask or slurm", "choice", "local"),
    _t("--collect", "memory_studies: read the run folders, launch nothing", "flag"),
    _t("--train-args", "memory_studies: `lshsim train` flags for every run", "text"),
    _t("--partition", "slurm: partition", "text"),
    _t("--nodes", "slurm: nodes per run", "int", "1"),
    _t("--gpus-per-node", "slurm: GPUs per node", "int"),
    _t("--cpus-per-task", "slurm: cores per task", "int"),
    _t("--mem", "slurm: memory per node", "text"),
    _t("--time", "slurm: time limit per run", "text", "1-00:00:00"),
    _t("--resubmit", "slurm: submit unfinished runs again", "flag"),
    _t(
        "--results",
        "memory_studies: the studies' results file, read and written",
        "path",
        varies="memory_studies: the checkout's figures/memory_studies.json (an absolute path)",
    ),
)

#: Commands whose ``--json`` is not the output switch, with the reason (none since
#: ``memory_studies.py``'s results file became ``--results``; its ``--json PATH`` warns).
JSON_EXCEPTIONS: dict[str, str] = {}


def float_list(text: str) -> list[float]:
    """A list option's value: its scalar's floats as a comma list (``--overlap 0.1,0.5``).

    Args:
        text: the option's text.

    Returns:
        The floats, in order.

    Raises:
        ValueError: an item is not a number (argparse reports it as an invalid value).
    """
    return [float(v) for v in str(text).split(",") if v.strip()]


_warned: set[str] = set()


def _warn_once(old: str, new: str, prog: str) -> None:
    """Print ``PROG: warning: OLD is now NEW`` once per process and spelling."""
    if (prog, old) in _warned:
        return
    _warned.add((prog, old))
    print(f"{prog}: warning: {old} is now {new} (the old spelling will go)", file=sys.stderr)


def install_aliases(parser: argparse.ArgumentParser, command: str) -> None:
    """Accept the :data:`DEPRECATED` spellings of ``command`` as warning aliases of the new.

    Each retired spelling is added to the new option's action for parsing only: the help and
    :attr:`argparse.Action.option_strings` show the new name alone, and using the old one prints
    one warning per process.

    Args:
        parser: the command's parser (its options already added).
        command: its name, as :data:`DEPRECATED` keys it (``launch``: the launch flags of a
            study script; ``memory``: the model commands' external-memory flags).

    Raises:
        KeyError: a new spelling is not an option of ``parser`` (a bug in :data:`DEPRECATED`).
    """
    for (cmd, old), new in DEPRECATED.items():
        if cmd != command:
            continue
        action = parser._option_string_actions[new]
        parser._option_string_actions[old] = action
        if not getattr(type(action), "_warns", False):
            base = type(action)
            action.__class__ = type(
                "Aliased" + base.__name__,
                (base,),
                {"_warns": True, "__call__": _aliased_call(base, parser.prog)},
            )
        action.aliases = (*getattr(action, "aliases", ()), old)


def _aliased_call(base, prog: str):
    def __call__(self, parser, namespace, values, option_string=None):
        if option_string in getattr(self, "aliases", ()):
            _warn_once(option_string, self.option_strings[-1], prog)
        return base.__call__(self, parser, namespace, values, option_string)

    return __call__


def render_markdown(uses: dict[str, list[str]]) -> str:
    """The vocabulary as a Markdown page (``docs/cli/vocabulary.md``).

    Args:
        uses: option -> the commands that have it (from walking the parsers).

    Returns:
        The page's text.
    """
    lines = [
        "# The command line's vocabulary",
        "",
        "<!-- generated by `python -m lshsim.cli.vocabulary_doc > docs/cli/vocabulary.md` from "
        "lshsim/cli/vocabulary.py; tests/cli/test_vocabulary.py checks that it is current -->",
        "",
        "One name per idea, one meaning per name. `--batch` is examples per step everywhere; "
        "a folder a command reads is `--run DIR` (with `--step`), a folder it writes `--out "
        "DIR`; a list option has its scalar's name and takes a comma list (`--overlap "
        "0.1,0.5`); `--threads` (in a process), `--workers` (processes) and `--devices` "
        "(accelerators) are three ideas; every command that draws random numbers takes "
        "`--seed`; `--json` prints one JSON object. Output keys (JSON, sweep columns) keep "
        "their names.",
        "",
        "| option | meaning | kind | default | commands |",
        "| --- | --- | --- | --- | --- |",
    ]
    for t in TERMS:
        name = f"`{t.name}`" + (f", `{t.short}`" if t.short else "")
        default = t.default + (f" ({t.varies})" if t.varies else "")
        cmds = ", ".join(uses.get(t.name, []))
        lines.append(f"| {name} | {t.meaning} | {t.kind} | {default} | {cmds} |")
    lines += [
        "",
        "## Retired spellings",
        "",
        "Still accepted, with one warning per process:",
        "",
        "| command | old | new |",
        "| --- | --- | --- |",
    ]
    for (cmd, old), new in DEPRECATED.items():
        lines.append(f"| {cmd} | `{old}` | `{new}` |")
    lines += ["", "## Exceptions", ""]
    for cmd, why in JSON_EXCEPTIONS.items():
        lines.append(f"- {cmd}: {why}.")
    return "\n".join(lines) + "\n"
