"""The embedded `demo` task: a synthetic "translation" language made from a seed, no network needed.

It reproduces the conditions GOLD is about, small enough to train on a laptop CPU in minutes:

* **Many valid outputs, skewed.** Every source word has several target synonyms, drawn with skewed
  probabilities (default 0.75 / 0.20 / 0.05). An MLE model learns to spread mass over all of them.
* **Local reordering.** Sentences are chunks: an adjective-noun pair `A N` is emitted as `N' A'` in the
  target (like French), verbs and function words translate in place.
* **Lengths** drawn uniformly between `min_length` and `max_length` source words (default 4..30), so
  length effects (exposure bias) are visible.
* **Demonstrations of uneven quality.** Exactly `round(sloppy_share * n)` training references (default 35%)
  come from a "sloppy annotator" who, after translating, edits the reference: each target token is hit
  with probability `sloppy_edit_rate` (at least one edit per sloppy reference) by a random substitution
  (any target word), a drop, or a repetition, chosen uniformly.
* **Clean evaluation.** Validation and test references come from the clean annotator by default
  (`eval_sloppy_share: 0`): the dev metric that picks checkpoints and the test metric both measure
  translation quality, not agreement with annotator noise. Set `eval_sloppy_share` to study noisy
  references instead.

Every record carries `sloppy` (bool) and `num_edits` so analyses can split by annotator. Each split uses
its own random stream derived from (seed, split), so changing the size of one split leaves the others
unchanged; the lexicon depends only on the seed and the vocabulary settings; sentences and their clean
translations do not depend on the sloppy-annotator settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

SOURCE_SYLLABLES = ([*"kmtnpsr"], [*"aiou"])
TARGET_SYLLABLES = ([*"bdfglvz"], [*"aeiouy"])
WORD_CLASSES = ("noun", "adjective", "verb", "function")
EDIT_KINDS = ("substitute", "drop", "repeat")
_SPLIT_STREAM = {"train": 1, "valid": 2, "test": 3}
_LEXICON_STREAM = 0


@dataclass(frozen=True)
class DemoTaskSpec:
    """Settings of the synthetic language: a typed view of a validated `synthetic` source (defaults and
    ranges are the schema's, `config.schema.defaults("synthetic_source", ...)` completes a partial one)."""

    seed: int
    num_train: int
    num_valid: int
    num_test: int
    vocab_size: int  # source words; each has len(synonym_probs) target synonyms
    class_shares: tuple[float, ...]  # noun, adjective, verb, function word
    synonym_probs: tuple[float, ...]
    zipf_exponent: float  # word frequencies within a class follow 1 / rank**exponent
    adjective_prob: float  # chance that a noun phrase carries an adjective (A N -> N' A')
    chunk_probs: tuple[float, ...]  # noun phrase, verb, function word
    min_length: int
    max_length: int
    sloppy_share: float
    sloppy_edit_rate: float
    eval_sloppy_share: float

    @classmethod
    def from_config(cls, source_config: dict) -> DemoTaskSpec:
        names = set(cls.__dataclass_fields__)
        missing = sorted(names - set(source_config))
        if missing:
            raise ValueError(f"synthetic source lacks {', '.join(missing)}: pass the validated config (schema defaults filled in)")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in source_config.items() if k in names})

    def split_size(self, split: str) -> int:
        return {"train": self.num_train, "valid": self.num_valid, "test": self.num_test}[split]

    def split_sloppy_share(self, split: str) -> float:
        return self.sloppy_share if split == "train" else self.eval_sloppy_share

    @cached_property
    def chunk_cdf(self) -> np.ndarray:
        return cumulative(self.chunk_probs)

    @cached_property
    def synonym_cdf(self) -> np.ndarray:
        return cumulative(self.synonym_probs)


@dataclass
class Lexicon:
    """Source words by class, each with its ordered target synonyms (most probable first)."""

    words_by_class: dict[str, list[str]]
    synonyms: dict[str, list[str]]
    class_probs: dict[str, np.ndarray]
    target_words: list[str] = field(default_factory=list)

    @cached_property
    def class_cdfs(self) -> dict[str, np.ndarray]:
        return {word_class: cumulative(probs) for word_class, probs in self.class_probs.items()}


def cumulative(probs) -> np.ndarray:
    """The normalised cumulative distribution that numpy's `Generator.choice(n, p=probs)` searches."""
    cdf = np.asarray(probs, dtype=np.float64).cumsum()
    return cdf / cdf[-1]


def draw(rng: np.random.Generator, cdf: np.ndarray) -> int:
    """`rng.choice(len(cdf), p=probs)` for a precomputed `cdf`: the same single uniform draw and the same
    index, without validating `probs` on every call (which took most of a split's generation time)."""
    return int(cdf.searchsorted(rng.random(), side="right"))


def _pseudo_words(rng: np.random.Generator, syllables: tuple[list[str], list[str]], count: int) -> list[str]:
    """`count` distinct pronounceable words of 2-3 consonant-vowel syllables, in random order."""
    consonants, vowels = syllables
    units = [c + v for c in consonants for v in vowels]
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < count:
        word = "".join(rng.choice(units, size=int(rng.integers(2, 4))))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def build_lexicon(spec: DemoTaskSpec) -> Lexicon:
    rng = np.random.default_rng([spec.seed, _LEXICON_STREAM])
    source_words = _pseudo_words(rng, SOURCE_SYLLABLES, spec.vocab_size)
    target_words = _pseudo_words(rng, TARGET_SYLLABLES, spec.vocab_size * len(spec.synonym_probs))
    counts = np.floor(np.array(spec.class_shares) * spec.vocab_size).astype(int)
    counts[0] += spec.vocab_size - counts.sum()
    words_by_class, class_probs, start = {}, {}, 0
    for word_class, count in zip(WORD_CLASSES, counts, strict=True):
        words = source_words[start : start + count]
        start += count
        words_by_class[word_class] = words
        weights = 1.0 / np.arange(1, len(words) + 1) ** spec.zipf_exponent
        class_probs[word_class] = weights / weights.sum()
    k = len(spec.synonym_probs)
    synonyms = {word: target_words[i * k : (i + 1) * k] for i, word in enumerate(source_words)}
    return Lexicon(words_by_class, synonyms, class_probs, target_words)


def _sample_source(rng: np.random.Generator, spec: DemoTaskSpec, lexicon: Lexicon) -> list[list[tuple[str, str]]]:
    """A sentence as chunks of (class, word); its length is uniform in [min_length, max_length]."""
    length = int(rng.integers(spec.min_length, spec.max_length + 1))
    chunks: list[list[tuple[str, str]]] = []
    used = 0

    def word(word_class: str) -> tuple[str, str]:
        return word_class, lexicon.words_by_class[word_class][draw(rng, lexicon.class_cdfs[word_class])]

    while used < length:
        kind = draw(rng, spec.chunk_cdf)
        if kind == 0:
            with_adjective = used + 2 <= length and rng.random() < spec.adjective_prob
            chunk = [word("adjective"), word("noun")] if with_adjective else [word("noun")]
        else:
            chunk = [word("verb" if kind == 1 else "function")]
        chunks.append(chunk)
        used += len(chunk)
    return chunks


def _translate(rng: np.random.Generator, spec: DemoTaskSpec, lexicon: Lexicon, chunks) -> list[str]:
    """The clean annotator: synonyms drawn with `synonym_probs`, adjective-noun pairs swapped."""
    target = []
    for chunk in chunks:
        ordered = chunk[::-1] if len(chunk) == 2 else chunk
        for _, source_word in ordered:
            choice = draw(rng, spec.synonym_cdf)
            target.append(lexicon.synonyms[source_word][choice])
    return target


def _sloppy_edit(rng: np.random.Generator, spec: DemoTaskSpec, lexicon: Lexicon, target: list[str]) -> tuple[list[str], int]:
    """The sloppy annotator: at least one edit, otherwise each token edited with `sloppy_edit_rate`."""
    num_edits = max(1, int(rng.binomial(len(target), spec.sloppy_edit_rate)))
    positions = set(rng.choice(len(target), size=min(num_edits, len(target)), replace=False).tolist())
    edited: list[str] = []
    for position, token in enumerate(target):
        if position not in positions:
            edited.append(token)
            continue
        edit = EDIT_KINDS[int(rng.integers(len(EDIT_KINDS)))]
        if edit == "substitute":
            edited.append(lexicon.target_words[int(rng.integers(len(lexicon.target_words)))])
        elif edit == "repeat":
            edited.extend([token, token])
        # "drop" appends nothing
    if not edited:  # every token dropped: keep one so the reference is never empty
        edited.append(target[0])
    return edited, len(positions)


def generate_split(spec: DemoTaskSpec, split: str, lexicon: Lexicon | None = None) -> list[dict]:
    """The records of one split, deterministic in (spec, split)."""
    lexicon = lexicon or build_lexicon(spec)
    # Two streams: sentences and clean translations never depend on the sloppy settings, so changing
    # `sloppy_share` changes which references are corrupted and nothing else.
    content_rng = np.random.default_rng([spec.seed, _SPLIT_STREAM[split], 0])
    annotator_rng = np.random.default_rng([spec.seed, _SPLIT_STREAM[split], 1])
    size = spec.split_size(split)
    num_sloppy = round(spec.split_sloppy_share(split) * size)
    sloppy_ids = set(annotator_rng.permutation(size)[:num_sloppy].tolist())
    records = []
    for index in range(size):
        chunks = _sample_source(content_rng, spec, lexicon)
        target = _translate(content_rng, spec, lexicon, chunks)
        num_edits = 0
        if index in sloppy_ids:
            target, num_edits = _sloppy_edit(annotator_rng, spec, lexicon, target)
        records.append(
            {
                "id": f"demo-{split}-{index:06d}",
                "source": " ".join(w for chunk in chunks for _, w in chunk),
                "target": " ".join(target),
                "sloppy": index in sloppy_ids,
                "num_edits": num_edits,
            }
        )
    return records
