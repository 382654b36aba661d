"""The GPU check: lshsim's T5 train step on an accelerator: step time, MFU, memory, compiles.

Usage, on the GPU machine, from the repository root (nothing to install)::

    PYTHONPATH=. python3 -m lshsim.bench.gpu --out $OUT/GPU.md --json $OUT/gpu.json

It measures in priority order (:mod:`lshsim.bench.gpu.settings`) until ``--deadline-s``
(default 300 s) comes; then it writes what it has and exits 0:

1. ``base``'s baseline train step, then its AltUp K=2, product-key and Token-ID r5 steps;
2. the compile of every other paper variant of ``base`` (:mod:`lshsim.t5.paper_variants`:
   Sum, SameUp, AltUp K=4, Token-ID r0, the Softmax and LSH lookups), not run;
3. the same four steps of ``small``; 4. bf16 vs float32 loss at initialisation (``small``).

Per train-step row: the compiled step of :func:`lshsim.t5.steps.make_train_step` (T5's
Adafactor at the warmup rate 0.01, as ``lshsim.bench.t5_step``), layers scanned (the
default), with the state donated, on a seeded random span-corruption-shaped batch
(:func:`lshsim.bench.t5_step.make_batch`), bf16 compute (parameters and logits stay float32).
The compile time (tracing, lowering, XLA) and the initialisation's time
(:func:`lshsim.t5.steps.init_state`, compiled with the seed as an input) are recorded; then
``--warmup`` untimed steps and ``--steps`` timed ones, each to ``jax.block_until_ready``:
median and IQR. MFU is ``flops / median step time / peak`` with the device's dense bf16 peak
(:data:`lshsim.t5.hardware.HARDWARE`), where ``flops`` is the CPU compiler's cost analysis
of the same step (optimiser included): ``lshsim plan``'s ``flops_per_step`` from a background
planner (on the CPU fallback, the measured executable's own). XLA's GPU cost analysis misses
the work of the library (cuBLAS/cuDNN) custom calls (it reported 1.26 TFLOP/step for
``small`` at batch 64, 512/114, where the CPU compiler counts 5.83); it stays in the JSON as
``flops_gpu_cost_analysis``, unused. Without a plan (``--no-plan``, or not planned by the
deadline) the FLOPs are an analytic estimate of a dense T5 of the config's widths, which
leaves out the memory layers' own work; ``flops_source`` says which count MFU used. Memory:
``peak_bytes_in_use`` of the device after the timed steps, each row in a fresh process (the
peak only grows within a process), beside ``lshsim plan``'s ``per_device_bytes`` for the same
config, batch and lengths on a 1 x 1 mesh, and beside the GPU executable's own
``memory_analysis()``; a row whose executable needs more memory than the device gives the
process is reported as not fitting, without running.

Targets (``figures/GPU.md``, :data:`lshsim.bench.gpu.settings.TARGET_MFU` and
``TARGET_COMPILE_S``): ``base``'s baseline at >= 35 % MFU in bf16 on an H100-class device,
every paper variant compiled in <= 90 s. The report says which are met.

Compile times are cold: the check sets no persistent compilation cache (one set in the
environment by the user would make a rerun's compiles cache loads).

Without a GPU (``jax.default_backend() == "cpu"``) it prints ``no GPU: jax backend is cpu;
running the tiny CPU check`` and runs the same pipeline on ``tiny`` (baseline, batch 2,
lengths 32/8, all in this process): a smoke test, not a measurement.

Outputs (rewritten atomically after every measurement, so a killed run leaves a file):
Markdown (``--out``, default ``gpu-check/GPU.md`` in the current directory) and JSON
(``--json``, default ``gpu-check/gpu.json``). The committed ``figures/GPU.md`` is written only
when named. A SIGTERM writes them too, marking the unfinished rows, and exits 0.
"""
