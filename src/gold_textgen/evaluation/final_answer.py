"""The final answer of a worked solution, for exact-match accuracy (GSM8K and tasks like it), three ways:

* `strict_match` and `flexible_extract`, lm-evaluation-harness's two GSM8K scores (its `exact_match` under
  the `strict-match` and `flexible-extract` filters), the numbers GSM8K papers and leaderboards report;
* `exact_match`, this project's comparison of values (below), kindest to outputs that write the number
  differently: not comparable with published numbers.

For `exact_match`:
GSM8K's references end with a line `#### <number>`; a model trained on them writes the same. The answer is
the first number after the last `####`; a text without `####` (a model that never learnt the format) is
judged by its last number, as the usual GSM8K evaluations do, and one without any number has no answer.
Numbers compare by value: thousands separators, a currency sign, a trailing period and trailing zeros
after the decimal point do not count (`1,000` = `1000`, `$5.50` = `5.5`, `72.` = `72`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from ..data.answer_format import ANSWER_MARK
from ..data.answer_format import NUMBER as _NUMBER


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


# lm-evaluation-harness's gsm8k task (lm_eval/tasks/gsm8k/gsm8k.yaml, version 3), the scoring published
# GSM8K numbers use: a regex filter picks the answer from the output, then `exact_match` compares it with
# the whole reference after both are stripped of the ignored patterns and lowercased.
STRICT_MATCH = re.compile(r"#### (\-?[0-9\.\,]+)")  # the first "#### <number>"
FLEXIBLE_EXTRACT = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")  # the last number-like run
IGNORED = (re.compile(","), re.compile(r"\$"), re.compile(r"(?s).*#### "), re.compile(r"\.$"))
INVALID = "[invalid]"  # what the filter yields when nothing matches (never equal to a reference)


def lm_eval_extract(text: str, pattern: re.Pattern, which: int) -> str:
    """lm-eval's RegexFilter: match number `which` of findall (0 first, -1 last); of a match with several
    groups, the first non-empty group; stripped; INVALID without a match."""
    found = pattern.findall(text)
    if not found:
        return INVALID
    match = found[which]
    if isinstance(match, tuple):
        groups = [group for group in match if group]
        match = groups[0] if groups else INVALID
    return match.strip()


def lm_eval_normalised(text: str) -> str:
    """lm-eval's exact_match preprocessing for gsm8k: each ignored pattern removed in turn, then lowercase."""
    for pattern in IGNORED:
        text = pattern.sub("", text)
    return text.lower()


def strict_match(hypothesis: str, reference: str) -> bool:
    """lm-eval's `exact_match,strict-match`: the number after the output's first `#### `."""
    return lm_eval_normalised(lm_eval_extract(hypothesis, STRICT_MATCH, 0)) == lm_eval_normalised(reference)


def flexible_extract(hypothesis: str, reference: str) -> bool:
    """lm-eval's `exact_match,flexible-extract`: the output's last number."""
    return lm_eval_normalised(lm_eval_extract(hypothesis, FLEXIBLE_EXTRACT, -1)) == lm_eval_normalised(reference)
