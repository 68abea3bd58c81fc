"""Training batches whose order depends only on the seed and the epoch: length-grouped batches of a fixed
number of sequences, or token-budget batches (fairseq's --max-tokens).

transformers' LengthGroupedSampler shuffles with torch's global random state, which training itself
advances (dropout). A run resumed mid-epoch from a checkpoint therefore draws a different batch order for
that epoch than the uninterrupted run did, and ends with a different model. Seeding each epoch's shuffle
with `seed + epoch` (the Trainer calls `set_epoch` at every epoch start) makes a resumed run replay the
same batches.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import datasets
import torch
from torch.utils.data import DataLoader, Sampler
from transformers.trainer_pt_utils import LengthGroupedSampler


class EpochSeededLengthGroupedSampler(LengthGroupedSampler):
    def __init__(self, batch_size: int, lengths: list[int], seed: int):
        super().__init__(batch_size, lengths=lengths)
        self.seed = seed
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        self.generator = torch.Generator().manual_seed(self.seed + int(epoch))


class TokenBudgetBatchSampler(Sampler[list[int]]):
    """Batches of whole examples whose padded size, examples x the longest source or target among them, stays
    within `max_tokens` (fairseq's --max-tokens, per device). Examples are sorted by length with random
    tie-breaks, cut into batches greedily, and the batches shuffled, all from `seed + epoch`.

    It has no fixed `batch_size`: under several processes accelerate's BatchSamplerShard hands every
    process whole batches in turn, so each device's batch keeps the budget.
    """

    def __init__(self, lengths: Sequence[int], max_tokens: int, seed: int):
        too_long = [(i, n) for i, n in enumerate(lengths) if n > max_tokens]
        if too_long:
            index, length = too_long[0]
            raise ValueError(
                f"training example {index} has {length} tokens, more than max_tokens {max_tokens} "
                f"({len(too_long)} such examples); raise max_tokens or lower max_source_length/max_target_length"
            )
        self.lengths = list(lengths)
        self.max_tokens = max_tokens
        self.seed = seed
        self.epoch = 0
        self._count = sum(1 for _ in self._cut(sorted(range(len(self.lengths)), key=self.lengths.__getitem__)))

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def _cut(self, order: list[int]) -> Iterator[list[int]]:
        batch, longest = [], 0
        for index in order:
            length = self.lengths[index]
            if batch and max(longest, length) * (len(batch) + 1) > self.max_tokens:
                yield batch
                batch, longest = [], 0
            batch.append(index)
            longest = max(longest, length)
        if batch:
            yield batch

    def __iter__(self) -> Iterator[list[int]]:
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        shuffled = torch.randperm(len(self.lengths), generator=generator).tolist()
        order = sorted(shuffled, key=self.lengths.__getitem__)  # stable: equal lengths keep the random order
        batches = list(self._cut(order))
        for position in torch.randperm(len(batches), generator=generator).tolist():
            yield batches[position]

    def __len__(self) -> int:
        return self._count


def example_lengths(dataset: datasets.Dataset) -> list[int]:
    """max(source tokens, target tokens) per example: the padded width it adds to a batch."""
    return [max(len(source), len(target)) for source, target in zip(dataset["input_ids"], dataset["labels"], strict=True)]


class EpochSeededSampling:
    """Trainer mixin: epoch-seeded length-grouped batches, or token-budget batches when `max_tokens` is set."""

    def __init__(self, *args, max_tokens: int | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_tokens = max_tokens

    def _seed(self) -> int:
        return self.args.data_seed if self.args.data_seed is not None else self.args.seed

    def _get_train_sampler(self, train_dataset=None):
        sampler = super()._get_train_sampler(train_dataset)
        if type(sampler) is LengthGroupedSampler:
            return EpochSeededLengthGroupedSampler(sampler.batch_size, sampler.lengths, self._seed())
        return sampler

    def get_train_dataloader(self) -> DataLoader:
        if not self.max_tokens:
            return super().get_train_dataloader()
        dataset = self.train_dataset
        if isinstance(dataset, datasets.Dataset):
            dataset = self._remove_unused_columns(dataset, description="Training")
        loader = DataLoader(
            dataset,
            batch_sampler=TokenBudgetBatchSampler(example_lengths(self.train_dataset), self.max_tokens, self._seed()),
            collate_fn=self.data_collator,
            num_workers=self.args.dataloader_num_workers,
            pin_memory=self.args.dataloader_pin_memory,
        )
        return self.accelerator.prepare(loader)
