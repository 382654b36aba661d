"""Fine-tuning on GLUE, SuperGLUE, SQuAD and users' own text-to-text data (issue 35).

``tasks`` reads the files users have (GLUE TSV, SuperGLUE JSONL, SQuAD v1.1 JSON, JSON lines of
``{"input", "target"}``, each through ``readers``: a bad file is one line naming it) and
recasts them as T5 does; ``mixture`` mixes tasks by example count;
``metrics`` scores predictions as the benchmarks define; ``decode`` is greedy generation; ``run``
fine-tunes a pretrained run (``lshsim finetune``).
"""
