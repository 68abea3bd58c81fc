"""The final answer of a worked solution, for exact-match accuracy (GSM8K and tasks like it).

GSM8K's references end with a line `#### <number>`; a model trained on them writes the same. The answer is
the first number after the last `####`; a text without `####` (a model that never learnt the format) is
judged by its last number, as the usual GSM8K evaluations do, and one without any number has no answer.
Numbers compare by value: thousands separators, a currency sign, a trailing period and trailing zeros
after the decimal point do not count (`1,000` = `1000`, `$5.50` = `5.5`, `72.` = `72`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

ANSWER_MARK = "####"
_NUMBER = re.compile(r"-?\$?\s?\d[\d,]*(?:\.\d+)?")


def canonical_number(text: str) -> str | None:
    """`text` (one number as written) as a canonical decimal string, or None if it is not a number."""
    cleaned = text.replace(",", "").replace("$", "").replace(" ", "").rstrip(".")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    if value == value.to_integral_value():
        return str(value.to_integral_value())
    return format(value.normalize(), "f")


def final_answer(text: str) -> str | None:
    """The canonical final number of a solution (see the module docstring), None when it has none."""
    if ANSWER_MARK in text:
        numbers = _NUMBER.findall(text.rsplit(ANSWER_MARK, 1)[1])
        return canonical_number(numbers[0]) if numbers else None
    numbers = _NUMBER.findall(text)
    return canonical_number(numbers[-1]) if numbers else None


def answers_match(hypothesis: str, reference: str) -> bool:
    """Whether the hypothesis's final answer equals the reference's (never when either has none)."""
    expected = final_answer(reference)
    return expected is not None and final_answer(hypothesis) == expected
