"""Extractive baselines for summarisation: lead-3, the first three sentences of the document.

Documents that come one sentence per line (XSum) are split at newlines. Running text (CNN/DailyMail
articles) is split after `.`, `!` or `?` (and any closing quotes or brackets) followed by whitespace and
an upper-case letter, digit or opening quote, except after a title such as "Mr.": a rule, where the
literature mostly uses NLTK's Punkt, whose model files need a separate download. The lead is written
one sentence per line, so ROUGE-Lsum sees its sentences.
"""

from __future__ import annotations

import re

from ..runtime.files import read_jsonl, write_jsonl

TITLES = ("Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Gen", "Gov", "Sen", "Rep", "Lt", "Col", "Sgt", "Capt", "Jr", "Sr", "No")
NOT_AFTER_TITLE = "".join(rf"(?<!\b{title}\.)" for title in TITLES)  # "Mr. Smith" is one sentence
SENTENCE_END = re.compile(NOT_AFTER_TITLE + r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        return lines
    return [part.strip() for part in SENTENCE_END.split(text.strip()) if part.strip()]


def lead(text: str, sentences: int = 3) -> str:
    return "\n".join(split_sentences(text)[:sentences])


def write_lead_generations(data_path: str, output_path: str, sentences: int = 3) -> int:
    """The lead of every document of a split, in the generation files' format."""
    name = f"lead{sentences}"
    rows = (
        {"id": r["id"], "source": r["source"], "reference": r["target"], "hypothesis": lead(r["source"], sentences), "decoder": name}
        for r in read_jsonl(data_path)
    )
    return write_jsonl(output_path, rows)
