"""Dividing one file of pairs into train / dev / test so that no input occurs in two splits.

A file that asks several questions of one sentence (NQG's dev file: 8,965 pairs over 5,194 sentences)
cut by line ranges puts most held-out sentences in training too, and dev/test BLEU then rewards
memorising training pairs. Here the pairs are grouped by their input, the groups are shuffled with a
fixed seed, and whole groups are taken for test until it holds its share of pairs, then for dev; every
other group is training data.
"""

from __future__ import annotations

import random

HELD_OUT = ("test", "valid")  # drawn in this order; train keeps the rest


def grouped_split(keys: list[str], sizes: dict[str, int], seed: int) -> dict[str, set[int]]:
    """The indices of `keys` each split keeps: `sizes['test']` and `sizes['valid']` pairs at least (whole
    groups of equal keys, so a split may hold a few more), the rest in 'train'."""
    groups: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    order = list(groups)  # first-occurrence order: independent of hashing, the same on every machine
    random.Random(seed).shuffle(order)
    chosen: dict[str, set[int]] = {split: set() for split in HELD_OUT}
    position = 0
    for split in HELD_OUT:
        while len(chosen[split]) < sizes[split]:
            if position == len(order):
                raise ValueError(
                    f"the {len(keys)} pairs ({len(order)} distinct inputs) cannot give test {sizes['test']} and valid "
                    f"{sizes['valid']} pairs and leave any for training"
                )
            chosen[split].update(groups[order[position]])
            position += 1
    if position == len(order):
        raise ValueError(
            f"test {sizes['test']} and valid {sizes['valid']} pairs take all {len(order)} distinct inputs; none is left for training"
        )
    held_out = chosen["test"] | chosen["valid"]
    chosen["train"] = {index for index in range(len(keys)) if index not in held_out}
    return chosen
