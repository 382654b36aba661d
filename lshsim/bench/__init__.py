"""Benchmarks: lshsim's hot paths against their peers, and the T5 train step's time.

The scripts in ``experiments/`` run them; the code lives here, one module per benchmark:

* :mod:`~lshsim.bench.peers`: every hot path against what a user would otherwise run
  (``experiments/bench_peers.py``), with its cases in :mod:`~lshsim.bench.hashing`,
  :mod:`~lshsim.bench.spherical` and :mod:`~lshsim.bench.t5`;
* :mod:`~lshsim.bench.t5_step`: the JAX T5 train step against Hugging Face's PyTorch T5
  (``experiments/bench_t5.py``);
* :mod:`~lshsim.bench.memory_step`: memory-augmented T5 variants against the baseline step
  (``experiments/bench_memory.py``);
* :mod:`~lshsim.bench.profile_step`: XLA's per-operation profile of a train step, by model
  part (``experiments/profile_t5.py``);
* :mod:`~lshsim.bench.sweep`: a Monte-Carlo-bound ``lshsim sweep`` on 2 local Dask workers
  against 1 (``experiments/bench_sweep.py``);
* :mod:`~lshsim.bench.gpu`: the GPU check, the train step's time, MFU, memory and compile
  time on an accelerator (``python -m lshsim.bench.gpu``; a tiny smoke path on a CPU).

Shared by them: :mod:`~lshsim.bench.timing` (interleaved timing, medians, result rows),
:mod:`~lshsim.bench.machine` (what the numbers ran on) and :mod:`~lshsim.bench.report`
(progress on stderr, the table or the JSON on stdout; an ``experiments/`` script's JSON
record and the command that reruns it). The peers (faiss,
datasketch, ffht, torch, transformers) and JAX are imported inside the functions that use
them, so importing a module of this package needs none of them.
"""
