"""The paper's memory studies: pretrain T5 variants with several seeds, compare held-out accuracy.

Usage::

    python experiments/memory_studies.py --study all --variant smoke          # run (resumes)
    python experiments/memory_studies.py --study lookups --variant real --dry-run
    python experiments/memory_studies.py --plot                               # figures only

Studies (:data:`STUDIES`, in :mod:`~lshsim.studies.memory.variants`; each has a ``smoke`` size
that runs on 2 CPU cores and the paper's ``real`` size):

``table1``  Tables 1 and 7: baseline vs Sum vs SameUp vs AltUp, K=2 (a second embedding table
            looked up by token id, consumed three ways).
``lookups`` Tables 4 and 6: baseline vs Token-ID vs Softmax vs LSH (SimHash) partial experts
            with ``max(2 rank, 1) * buckets`` within a factor sqrt(2) of Token-ID's rank-0
            budget (the vocabulary size): the paper's grid of ranks {0, 2, 4, ..., 256} and
            buckets 2^3..2^15 in ``real``, two points per method in ``smoke``.
``softmax_sweep``  Figure 2: softmax lookup, rank x buckets.
``table5``  Tables 5 and 8: baseline vs AltUp K=2 vs AltUp K=4.

Every run is keyed by a hash of its full config, its training options and its seed; the JSON
(``--json``) holds one row per key, so runs that several studies share (the baseline is in
all four) are trained once, and a rerun skips finished runs (a killed run's directory is
resumed from its last checkpoint). The JSON is rewritten atomically after every run. Each run
is a job in its own directory ``OUT/<key>`` (``job.json``, the training files, ``result.json``
written last), launched here one after another (``--launcher local``, the default), on a Dask
cluster (``--launcher dask --workers N`` or ``--scheduler tcp://...``) or as one SLURM job per
run (``--launcher slurm``, resources from ``--partition``, ``--gpus-per-node``, ``--nodes``,
``--time``, ``--mem``, ``--cpus-per-task``; ``--dry-run`` prints the sbatch scripts; then
``--collect`` reads the finished runs into the JSON and names the missing and failed ones);
see :mod:`lshsim.launch`. Modules:
:mod:`~lshsim.studies.memory.variants` (sizes, variants, registry),
:mod:`~lshsim.studies.memory.runner` (plans, training, resume),
:mod:`~lshsim.studies.memory.jobs` (runs as launcher jobs, execute, collect),
:mod:`~lshsim.studies.memory.document` (the JSON), :mod:`~lshsim.studies.memory.report`
(summaries, figures) and :mod:`~lshsim.studies.memory.cli` (the command line).

Metrics: train's own final evaluation (4 held-out batches, ``final_eval``) and a larger one
of the same held-out split after training (``heldout``: ``eval_examples`` examples, by
``lshsim.t5.loop.evaluate_run``, i.e. ``lshsim eval --examples``; its first ``4 * batch``
examples are exactly train's), which the figures and summaries use. The held-out
split, the tokenizer and the initialisation all depend on the seed, so comparisons are paired
by seed (``diff_vs_baseline`` in the summary).

Sizes: ``real`` is T5 "small" (the paper's S), batch 256, input length 512, warmup 10k,
100k steps for the lookup studies (the paper reports their 100k-step accuracy) and 500k for
the AltUp tables; it needs accelerators and a real corpus (``--corpus``). ``smoke`` is "tiny"
with batch 16, input length 64, :data:`SMOKE_STEPS` steps and warmup
:data:`SMOKE_WARMUP` (all four studies, 3 seeds: 13 distinct configs, 39 runs of 20-80 s,
about 22 min on 2 quiet CPU cores, 30 min measured on a busy shared machine). At that size
the models have learnt the span structure (sentinels and EOS, about 4 of the 14 target
tokens, nearly all right) and little else, so span accuracy barely moves; the held-out loss
and the span-content accuracy (``heldout.content_accuracy``) show the differences.
"""

from lshsim.studies.memory.cli import DEFAULT_JSON, REPO, build_parser, console, dry_run, main
from lshsim.studies.memory.document import FORMAT, finite, load_doc, save_doc
from lshsim.studies.memory.jobs import (
    collect_runs,
    execute,
    launch_runs,
    make_jobs,
    parse_train_args,
)
from lshsim.studies.memory.report import (
    METRICS,
    figure_data,
    format_summary,
    make_figure,
    summarize,
    write_figures,
)
from lshsim.studies.memory.runner import (
    RunSpec,
    heldout_eval,
    param_counts,
    plan,
    reeval,
    run_key,
    study_entry,
    train_one,
    unique_runs,
)
from lshsim.studies.memory.variants import (
    BASELINE,
    REAL_100K,
    REAL_500K,
    REAL_BUCKETS,
    REAL_RANKS,
    SMOKE,
    SMOKE_POINTS,
    SMOKE_STEPS,
    SMOKE_WARMUP,
    STUDIES,
    SWEEP_BUCKETS,
    SWEEP_RANKS,
    MemoryStudy,
    Setup,
    Variant,
    budget_grid,
    budget_units,
    lookup_variant,
    memory_variant,
    within_budget,
)

__all__ = [
    "BASELINE",
    "DEFAULT_JSON",
    "FORMAT",
    "METRICS",
    "REAL_100K",
    "REAL_500K",
    "REAL_BUCKETS",
    "REAL_RANKS",
    "REPO",
    "SMOKE",
    "SMOKE_POINTS",
    "SMOKE_STEPS",
    "SMOKE_WARMUP",
    "STUDIES",
    "SWEEP_BUCKETS",
    "SWEEP_RANKS",
    "MemoryStudy",
    "RunSpec",
    "Setup",
    "Variant",
    "budget_grid",
    "budget_units",
    "build_parser",
    "collect_runs",
    "console",
    "dry_run",
    "execute",
    "figure_data",
    "finite",
    "format_summary",
    "heldout_eval",
    "launch_runs",
    "load_doc",
    "lookup_variant",
    "main",
    "make_figure",
    "make_jobs",
    "memory_variant",
    "param_counts",
    "parse_train_args",
    "plan",
    "reeval",
    "run_key",
    "save_doc",
    "study_entry",
    "summarize",
    "train_one",
    "unique_runs",
    "within_budget",
    "write_figures",
]
