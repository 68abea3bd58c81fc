"""Length-grouped training batches whose order depends only on the seed and the epoch.

transformers' LengthGroupedSampler shuffles with torch's global random state, which training itself
advances (dropout). A run resumed mid-epoch from a checkpoint therefore draws a different batch order for
that epoch than the uninterrupted run did, and ends with a different model. Seeding each epoch's shuffle
with `seed + epoch` (the Trainer calls `set_epoch` at every epoch start) makes a resumed run replay the
same batches.
"""

from __future__ import annotations

import torch
from transformers.trainer_pt_utils import LengthGroupedSampler


class EpochSeededLengthGroupedSampler(LengthGroupedSampler):
    def __init__(self, batch_size: int, lengths: list[int], seed: int):
        super().__init__(batch_size, lengths=lengths)
        self.seed = seed
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        self.generator = torch.Generator().manual_seed(self.seed + int(epoch))


class EpochSeededSampling:
    """Trainer mixin: replaces the length-grouped training sampler with the epoch-seeded one."""

    def _get_train_sampler(self, train_dataset=None):
        sampler = super()._get_train_sampler(train_dataset)
        if type(sampler) is LengthGroupedSampler:
            seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
            return EpochSeededLengthGroupedSampler(sampler.batch_size, sampler.lengths, seed)
        return sampler
