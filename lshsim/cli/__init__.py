"""The ``lshsim`` command line; :func:`lshsim.cli.main.main` is the console script's entry point.

Where each command lives:

- ``main``: ``main()``, the entry point (checks the environment, parses, runs the handler);
- ``parser``: the root parser and ``build_parser()``, which imports the command modules;
- ``formatting``: the help formatter and ``wrap``, shared by the command modules;
- ``errors``: the one error handler (``run_command``): usage errors (bad values, impossible
  combinations) print one line ``lshsim: error: ...`` on stderr and exit with status 2,
  without a traceback;
- ``environment``: the environment variables read at import (``NUMBA_NUM_THREADS``), checked
  before the parser's command modules import Numba (``import lshsim.cli`` does not);
- ``checks``: the numeric options' ranges and the options that have no effect, checked with
  the CLI's spelling before any work;
- ``simulate``: ``simulate`` and ``theory`` (estimated and exact collision probabilities);
- ``check``: ``check`` (Theorem 1's claims); ``reproduce``: ``reproduce`` (every study);
- ``families``: ``families`` (the hash family registry);
- ``model``: ``params`` and ``cost``; ``train``: ``train`` and ``eval`` (T5; JAX imported lazily);
- ``probe``: ``probe`` (a model's routing collisions against the theory);
- ``sweep``: ``sweep`` (grids of simulate/theory cells on Dask into Parquet; ``--plot``);
- ``model_flags``: ``--config`` and the external-memory flags shared by the model commands;
- ``output``: the aligned table and the progress bar shared by the commands;
- ``vocabulary``: the options' one table (name, meaning, kind, default), the ``--json`` help,
  and the retired spellings kept as aliases that warn once; ``vocabulary_doc`` renders it to
  ``docs/cli/vocabulary.md`` (``tests/cli/test_vocabulary.py`` walks every parser against it).

This ``__init__`` imports nothing: a library module that reads one command's parser (the
sweep spec reads ``simulate``'s) does not load the whole command tree.
"""
