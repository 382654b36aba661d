"""The fine-tuning step for ``lshsim plan --finetune BENCHMARK``.

A fine-tuning step is the pretraining step's program (:func:`lshsim.t5.steps.make_train_step`)
with dropout on (0.1) at the benchmark's lengths and the paper's batch of 256; its Adafactor
state is the same (the constant rate only drops the schedule's step counter, one int32). The
lengths are T5's for its fine-tuning mixtures (``t5/models/gin/sequence_lengths/``):
``glue_v002_proportional.gin`` inputs 512 / targets 84, ``super_glue_v102_proportional.gin``
512 / 62, ``squad_v010_allanswers.gin`` 512 / 97.
"""

from __future__ import annotations

import argparse
import dataclasses

from lshsim.t5.configs import T5Config

__all__ = ["FINETUNE_BATCH", "FINETUNE_DROPOUT", "FINETUNE_LENGTHS", "finetune_step"]

#: ``(inputs, targets)`` tokens of T5's fine-tuning runs, by benchmark.
FINETUNE_LENGTHS = {"glue": (512, 84), "super_glue": (512, 62), "squad": (512, 97)}
#: The paper's fine-tuning batch and dropout (appendix, "Details of the T5 experiments").
FINETUNE_BATCH = 256
FINETUNE_DROPOUT = 0.1


def finetune_step(config: T5Config, args: argparse.Namespace) -> T5Config:
    """The fine-tuning config (dropout 0.1); fills ``args``' unset batch and lengths.

    Args:
        config: the model's config (from the model flags).
        args: ``plan``'s arguments with ``finetune`` set to a key of :data:`FINETUNE_LENGTHS`;
            ``batch``, ``input_length`` and ``target_length`` are set where ``None``.

    Returns:
        ``config`` with ``dropout_rate`` 0.1.
    """
    inputs, targets = FINETUNE_LENGTHS[args.finetune]
    if args.batch is None:
        args.batch = FINETUNE_BATCH
    if args.input_length is None:
        args.input_length = inputs
    if args.target_length is None:
        args.target_length = targets
    return dataclasses.replace(config, dropout_rate=FINETUNE_DROPOUT)
