"""GSM8K (Cobbe et al. 2021; `openai/gsm8k` on the hub, config `main`): grade-school math word problems,
each with a worked solution that ends in a line `#### <final number>`. The hub has train (7,473) and test
(1,319); the dev split that selects checkpoints is carved from train: `valid_size` problems drawn with
`valid_seed` and removed from train, so no dev problem is trained on and the test set is never looked at.

Records: the source is the problem in the task's `prompt_template` (`{question}` stands for it); the
target is the worked solution, the model's completion. The solutions hold calculator annotations
(`<<48/2=24>>`: the expression and its value, which the dataset's authors had a calculator fill in at
sampling time); `calculator_annotations: strip` (the default) removes them, since a model decoding
without a calculator would have to compute the value inside the annotation it writes. `keep` trains on
them as written. Either way the final answer after `####` is untouched, and exact match is scored on it.
"""

from __future__ import annotations

import random
import re

from ..records import make_record
from . import hub

CALCULATOR_ANNOTATION = re.compile(r"<<[^<>]*>>")


def solution_text(answer: str, annotations: str) -> str:
    """A GSM8K answer as the target of the completion: its calculator annotations stripped or kept."""
    if annotations == "keep":
        return answer
    return CALCULATOR_ANNOTATION.sub("", answer)


def carve_valid(size: int, count: int, seed: int) -> set[int]:
    """The train rows (of `count`) that form the dev split: `size` of them, drawn with `seed`."""
    if not 0 < size < count:
        raise ValueError(f"valid_size must be between 1 and the {count - 1} training problems, not {size}")
    return set(random.Random(seed).sample(range(count), size))


def to_record(row: dict, record_id: str, source: dict, where: str) -> dict:
    prompt = source["prompt_template"].format(question=row["question"].strip())
    return make_record(record_id, prompt, solution_text(row["answer"], source["calculator_annotations"]), where)


def load_splits(source: dict, splits: list[str]) -> dict[str, list[dict]]:
    hub_source = {**source, "splits": {"train": "train", "test": "test"}}
    loaded: dict[str, list[dict]] = {}
    if {"train", "valid"} & set(splits):
        rows = hub.load_split(hub_source, "train")
        dev = carve_valid(source["valid_size"], len(rows), source["valid_seed"])
        for split, keep in (("train", lambda i: i not in dev), ("valid", lambda i: i in dev)):
            if split in splits:
                loaded[split] = [
                    to_record(row, f"train-{index}", source, f"{hub.describe(source)} train row {index}")
                    for index, row in enumerate(rows)
                    if keep(index)
                ]
    if "test" in splits:
        rows = hub.load_split(hub_source, "test")
        loaded["test"] = [
            to_record(row, f"test-{index}", source, f"{hub.describe(source)} test row {index}") for index, row in enumerate(rows)
        ]
    return {split: loaded[split] for split in splits}
