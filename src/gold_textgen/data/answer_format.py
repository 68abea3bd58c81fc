"""How a worked solution states its final answer (GSM8K and tasks like it): a number after `####`. The
data checks ask it of a task scored by final answers; evaluation.final_answer reads answers this way."""

from __future__ import annotations

import re

ANSWER_MARK = "####"
NUMBER = re.compile(r"-?\$?\s?\d[\d,]*(?:\.\d+)?")


def states_answer(reference: str) -> bool:
    """Whether a reference states its final answer: a number after its last `####`."""
    return ANSWER_MARK in reference and bool(NUMBER.search(reference.rsplit(ANSWER_MARK, 1)[1]))
