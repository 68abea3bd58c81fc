"""IWSLT14 De-En as fairseq's `examples/translation/prepare-iwslt14.sh` prepares it, step for step:

* training pairs from `train.tags.de-en.{de,en}`: metadata lines (<url>, <talkid>, <keywords>) dropped,
  <title>/<description> tags removed, Moses-tokenised (sacremoses, the Python port of tokenizer.perl, with
  its default escaping), cleaned as `clean-corpus-n.perl -ratio 1.5 ... 1 175` does, then lowercased;
* every 23rd cleaned training pair becomes the dev set (awk `NR % 23 == 0`), the rest the training set;
* the test set is the concatenation of the TED dev2010, TEDX dev2012 and TED tst2010-2012 <seg> lines,
  tokenised and lowercased (not cleaned).

The joint BPE of the script is the task's tokenizer here (`tokenizer: {kind: bpe}`, trained on the
training split's German and English together), so the data files keep whole Moses tokens and BLEU is
computed on them, as fairseq's `--remove-bpe` tokenised BLEU is.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path

from tqdm.auto import tqdm

from ..records import DataFormatError, make_record
from .archive import Archive

log = logging.getLogger(__name__)
METADATA = ("<url>", "<talkid>", "<keywords>")
REMOVED_TAGS = re.compile(r"</?(title|description)>")
SEGMENT_OPEN = re.compile(r'<seg id="[0-9]*">\s*')
SEGMENT_CLOSE = re.compile(r"\s*</seg>\s*")
TEST_SETS = ("IWSLT14.TED.dev2010", "IWSLT14.TEDX.dev2012", "IWSLT14.TED.tst2010", "IWSLT14.TED.tst2011", "IWSLT14.TED.tst2012")


def training_lines(lines: Iterable[tuple[str, str]]) -> list[str]:
    """The text lines of a train.tags file (metadata lines dropped, title/description tags removed)."""
    return [REMOVED_TAGS.sub("", text) for _, text in lines if not any(tag in text for tag in METADATA)]


def segment_lines(lines: Iterable[tuple[str, str]]) -> list[str]:
    """The sentences of an IWSLT xml file: its `<seg id="n">` lines without the tags, curly apostrophes straightened."""
    segments = []
    for where, text in lines:
        if "<seg id" not in text:
            continue
        if "</seg>" not in text:
            raise DataFormatError(f"{where}: <seg> without a closing </seg> on the same line")
        segments.append(SEGMENT_CLOSE.sub("", SEGMENT_OPEN.sub("", text)).replace("\u2019", "'"))
    return segments


def squeeze(text: str) -> str:
    """Whitespace as clean-corpus-n.perl leaves it: runs collapsed to one space, none at either end."""
    return re.sub(r"\s+", " ", text.replace("|", "")).strip()


def keep_pair(source: str, target: str, min_words: int, max_words: int, ratio: float, max_word_chars: int = 1000) -> bool:
    """clean-corpus-n.perl's test for one (already squeezed) pair."""
    if not source or not target:
        return False
    source_words, target_words = source.split(" "), target.split(" ")
    counts = (len(source_words), len(target_words))
    if max(counts) > max_words or min(counts) < min_words:
        return False
    if counts[0] / counts[1] > ratio or counts[1] / counts[0] > ratio:
        return False
    return all(len(word) <= max_word_chars for word in (*source_words, *target_words))


class MosesPipeline:
    """tokenizer.perl -l <lang> (default escaping, no aggressive hyphen splitting), then lowercase.perl."""

    def __init__(self, lang: str):
        from sacremoses import MosesTokenizer

        self.tokenizer = MosesTokenizer(lang=lang)

    def tokenize(self, text: str) -> str:
        return self.tokenizer.tokenize(text, return_str=True, escape=True, aggressive_dash_splits=False)


def tokenize_all(lines: list[str], pipeline: MosesPipeline, label: str) -> list[str]:
    return [pipeline.tokenize(line) for line in tqdm(lines, desc=f"moses {label}", mininterval=10)]


def load_splits(source: dict, splits: list[str], archive_path: str | Path) -> dict[str, list[dict]]:
    src, tgt = source["source_lang"], source["target_lang"]
    pair = f"{src}-{tgt}"
    pipelines = {lang: MosesPipeline(lang) for lang in (src, tgt)}
    with Archive(archive_path) as archive:
        train_members = {lang: archive.find(f"train.tags.{pair}.{lang}") for lang in (src, tgt)}
        train_text = {lang: training_lines(archive.lines(member)) for lang, member in train_members.items()}
        if len(train_text[src]) != len(train_text[tgt]):
            raise DataFormatError(
                f"{archive.path}: {train_members[src]} has {len(train_text[src])} text lines but {train_members[tgt]} "
                f"has {len(train_text[tgt])}; the training files must be line-aligned"
            )
        test_text = {
            lang: [line for name in TEST_SETS for line in segment_lines(archive.lines(archive.find(f"{name}.{pair}.{lang}.xml")))]
            for lang in (src, tgt)
        }
    if len(test_text[src]) != len(test_text[tgt]):
        raise DataFormatError(f"{archive_path}: the test sets have {len(test_text[src])} {src} but {len(test_text[tgt])} {tgt} segments")

    tokenized = {lang: tokenize_all(train_text[lang], pipelines[lang], f"train.{lang}") for lang in (src, tgt)}
    cleaned = []
    for source_line, target_line in zip(tokenized[src], tokenized[tgt], strict=True):
        source_line, target_line = squeeze(source_line), squeeze(target_line)
        if keep_pair(source_line, target_line, source["min_words"], source["max_words"], source["length_ratio"]):
            cleaned.append((source_line.lower(), target_line.lower()))
    log.info("clean-corpus: %d of %d training pairs kept", len(cleaned), len(tokenized[src]))

    every = source["valid_every"]
    numbered = list(enumerate(cleaned, start=1))
    pairs = {
        "train": [(n, pair_) for n, pair_ in numbered if n % every != 0],
        "valid": [(n, pair_) for n, pair_ in numbered if n % every == 0],
    }
    if "test" in splits:
        test_tokens = {lang: tokenize_all(test_text[lang], pipelines[lang], f"test.{lang}") for lang in (src, tgt)}
        pairs["test"] = list(enumerate(((s.lower(), t.lower()) for s, t in zip(test_tokens[src], test_tokens[tgt], strict=True)), start=1))
    where = str(archive_path)
    return {split: [make_record(f"{split}-{n}", s, t, f"{where} ({split} pair {n})") for n, (s, t) in pairs[split]] for split in splits}
