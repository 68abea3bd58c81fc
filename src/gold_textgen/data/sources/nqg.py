"""NQG: the SQuAD question-generation split of Zhou et al. (2017), as the paper prepares it following
clovaai/FocusSeq2Seq: the `redistribute.zip` release, whose files per split are line-aligned

    <prefix>.source.txt   the tokenised sentence that contains the answer
    <prefix>.bio          one B/I/O tag per sentence token: the answer span
    <prefix>.target.txt   the tokenised question

plus `<prefix>.case`, `.pos` and `.ner`, one tag per word. The transformers' input is the sentence with
the answer span between two marker tokens; NQG++ reads the plain sentence and, with `token_features`,
the answer's BIO tags and whichever of case/POS/NER the release has, one per word (`token_features` of the
record). FocusSeq2Seq drops training pairs whose sentence or question is longer than 100 words, and so does
`max_train_words`.
"""

from __future__ import annotations

from pathlib import Path

from ..records import DataFormatError, make_record
from .archive import Archive
from .grouped_split import grouped_split

TAGS = {"B", "I", "O"}
TAG_FEATURES = ("case", "pos", "ner")  # each in <prefix>.<feature>, beside the BIO tags


def mark_answer(words: list[str], tags: list[str], markers: tuple[str, str] | None, where: str) -> tuple[str, str]:
    """(sentence with every answer span between the markers (no markers: the plain sentence), the answer
    words)."""
    if len(words) != len(tags):
        raise DataFormatError(f"{where}: {len(words)} words but {len(tags)} BIO tags")
    unknown = sorted(set(tags) - TAGS)
    if unknown:
        raise DataFormatError(f"{where}: unknown BIO tag '{unknown[0]}' (expected B, I or O)")
    if all(tag == "O" for tag in tags):
        raise DataFormatError(f"{where}: no answer span (every tag is O)")
    opening, closing = ([markers[0]], [markers[1]]) if markers else ([], [])
    marked, answer, inside = [], [], False
    for word, tag in zip(words, tags, strict=True):
        if inside and tag != "I":  # a span ends at O or where the next one begins
            marked.extend(closing)
            inside = False
        if tag != "O" and not inside:  # B, or an I that follows no B
            marked.extend(opening)
            inside = True
        marked.append(word)
        if inside:
            answer.append(word)
    if inside:
        marked.extend(closing)
    return " ".join(marked), " ".join(answer)


def release_tokens(line: str) -> list[str]:
    """The tokens of a release line: separated by plain spaces only. A token may hold a no-break space
    (the dev split writes "8\u00a01\u20442" as one token), which str.split() would cut in two."""
    return [token for token in line.split(" ") if token]


def load_split(archive: Archive, split: str, source: dict) -> list[dict]:
    prefix, under = source["prefixes"][split], source["member_prefix"]
    members = {part: archive.find(f"{prefix}.{part}", under) for part in ("source.txt", "bio", "target.txt")}
    sentences, tags, questions = (archive.read_lines(members[part]) for part in ("source.txt", "bio", "target.txt"))
    for part, lines in (("bio", tags), ("target.txt", questions)):
        if len(lines) != len(sentences):
            raise DataFormatError(
                f"{archive.path}:{members[part]}:{min(len(lines), len(sentences)) + 1}: {len(lines)} lines, but "
                f"{members['source.txt']} has {len(sentences)}; the files of a split must be line-aligned"
            )
    limit = source["max_train_words"] if split == "train" else None
    kept = kept_lines(source, split, [sentence for _, sentence in sentences])
    markers = tuple(source["answer_markers"]) if source["answer_markers"] else None
    features = word_tags(archive, prefix, under, len(sentences)) if source["token_features"] else {}
    records = []
    rows = zip(sentences, tags, questions, strict=True)
    for line, ((_, sentence), (tag_where, tag_line), (question_where, question)) in enumerate(rows, start=1):
        if not kept(line):
            continue
        words, question_words = release_tokens(sentence), release_tokens(question)
        if limit is not None and (len(words) > limit or len(question_words) > limit):
            continue
        bio = release_tokens(tag_line)
        marked, answer = mark_answer(words, bio, markers, tag_where)
        extra = {"answer": answer}
        if source["token_features"]:
            extra["token_features"] = {"answer": bio, **{name: aligned(lines[line - 1], len(words)) for name, lines in features.items()}}
        records.append(make_record(f"{split}-{line}", marked, question, question_where, extra))
    return records


def kept_lines(source: dict, split: str, sentences: list[str]):
    """Which lines (1-based) of the split's files it keeps: those of its `line_ranges` entry, or with
    `sentence_split` its share of whole sentence groups (no dev or test sentence occurs in train)."""
    held_out = source.get("sentence_split")
    if held_out:
        keys = [" ".join(release_tokens(sentence)) for sentence in sentences]
        chosen = grouped_split(keys, held_out, held_out["seed"])[split]
        return lambda line: line - 1 in chosen
    first, last = source["line_ranges"].get(split, (1, len(sentences)))
    return lambda line: first <= line <= last


def word_tags(archive: Archive, prefix: str, under: str, count: int) -> dict[str, list[tuple[str, str]]]:
    """The case/POS/NER lines of a split, for each tag file the release has (all three in Zhou et al.'s)."""
    found = {}
    for name in TAG_FEATURES:
        basename = f"{prefix}.{name}"
        if not archive.named(basename):
            continue
        member = archive.find(basename, under)
        found[name] = archive.read_lines(member)
        if len(found[name]) != count:
            raise DataFormatError(f"{archive.path}:{member}: {len(found[name])} lines, but the split has {count} sentences")
    return found


def aligned(line: tuple[str, str], words: int) -> list[str]:
    where, text = line
    tags = release_tokens(text)
    if len(tags) != words:
        raise DataFormatError(f"{where}: {words} words but {len(tags)} tags")
    return tags


def load_splits(source: dict, splits: list[str], archive_path: str | Path) -> dict[str, list[dict]]:
    """Every split from the release at `archive_path` (the zip, or a folder of its files)."""
    with Archive(archive_path) as archive:
        return {split: load_split(archive, split, source) for split in splits}
