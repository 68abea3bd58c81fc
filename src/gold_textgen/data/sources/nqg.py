"""NQG: the SQuAD question-generation split of Zhou et al. (2017), as the paper prepares it following
clovaai/FocusSeq2Seq: the `redistribute.zip` release, whose files per split are line-aligned

    <prefix>.source.txt   the tokenised sentence that contains the answer
    <prefix>.bio          one B/I/O tag per sentence token: the answer span
    <prefix>.target.txt   the tokenised question

(plus POS/NER/case features that a pretrained model does not use). The model input is the sentence with
the answer span between two marker tokens; FocusSeq2Seq drops training pairs whose sentence or question is
longer than 100 words, and so does `max_train_words`.
"""

from __future__ import annotations

from pathlib import Path

from ..records import DataFormatError, make_record
from .archive import Archive

PREFIXES = {"train": "train.txt", "valid": "dev.txt.shuffle.dev", "test": "dev.txt.shuffle.test"}
TAGS = {"B", "I", "O"}


def mark_answer(words: list[str], tags: list[str], markers: tuple[str, str], where: str) -> tuple[str, str]:
    """(sentence with every answer span between the markers, the answer words)."""
    if len(words) != len(tags):
        raise DataFormatError(f"{where}: {len(words)} words but {len(tags)} BIO tags")
    unknown = sorted(set(tags) - TAGS)
    if unknown:
        raise DataFormatError(f"{where}: unknown BIO tag '{unknown[0]}' (expected B, I or O)")
    if all(tag == "O" for tag in tags):
        raise DataFormatError(f"{where}: no answer span (every tag is O)")
    marked, answer, inside = [], [], False
    for word, tag in zip(words, tags, strict=True):
        if inside and tag != "I":  # a span ends at O or where the next one begins
            marked.append(markers[1])
            inside = False
        if tag != "O" and not inside:  # B, or an I that follows no B
            marked.append(markers[0])
            inside = True
        marked.append(word)
        if inside:
            answer.append(word)
    if inside:
        marked.append(markers[1])
    return " ".join(marked), " ".join(answer)


def release_tokens(line: str) -> list[str]:
    """The tokens of a release line: separated by plain spaces only. A token may hold a no-break space
    (the dev split writes "8\u00a01\u20442" as one token), which str.split() would cut in two."""
    return [token for token in line.split(" ") if token]


def load_split(archive: Archive, split: str, source: dict) -> list[dict]:
    prefix, under = PREFIXES[split], source["member_prefix"]
    members = {part: archive.find(f"{prefix}.{part}", under) for part in ("source.txt", "bio", "target.txt")}
    sentences, tags, questions = (archive.read_lines(members[part]) for part in ("source.txt", "bio", "target.txt"))
    for part, lines in (("bio", tags), ("target.txt", questions)):
        if len(lines) != len(sentences):
            raise DataFormatError(
                f"{archive.path}:{members[part]}:{min(len(lines), len(sentences)) + 1}: {len(lines)} lines, but "
                f"{members['source.txt']} has {len(sentences)}; the files of a split must be line-aligned"
            )
    limit = source["max_train_words"] if split == "train" else None
    markers = tuple(source["answer_markers"])
    records = []
    rows = zip(sentences, tags, questions, strict=True)
    for line, ((_, sentence), (tag_where, tag_line), (question_where, question)) in enumerate(rows, start=1):
        words, question_words = release_tokens(sentence), release_tokens(question)
        if limit is not None and (len(words) > limit or len(question_words) > limit):
            continue
        marked, answer = mark_answer(words, release_tokens(tag_line), markers, tag_where)
        records.append(make_record(f"{split}-{line}", marked, question, question_where, {"answer": answer}))
    return records


def load_splits(source: dict, splits: list[str], archive_path: str | Path) -> dict[str, list[dict]]:
    with Archive(archive_path) as archive:
        return {split: load_split(archive, split, source) for split in splits}
