"""Per-word input features of NQG++ (Zhou et al. 2017): the answer position (BIO) and the word case, POS
and NER tags that Zhou et al.'s release ships beside every sentence.

Each feature has a fixed inventory (the tags of the release; id 0 is padding, and the EOS position reads
padding), so a model's feature embeddings have the same size whatever the data: 4, 3, 46 and 13 rows, as
FocusSeq2Seq's NQG++ (which the paper's 10,372,565 parameters count).
"""

from __future__ import annotations

from collections.abc import Sequence

from .records import DataFormatError

FEATURE_TAGS = {
    "answer": ("O", "B", "I"),
    "case": ("LOW", "UP"),
    # Stanford CoreNLP's NER classes in the release.
    "ner": ("O", "PERSON", "ORGANIZATION", "LOCATION", "MISC", "DATE", "NUMBER", "DURATION", "ORDINAL", "PERCENT", "MONEY", "TIME"),
    # The Penn Treebank tags (CoreNLP's spelling of brackets).
    "pos": (
        "NN", "IN", "NNP", "DT", "JJ", "NNS", ",", "CC", "CD", ".", "VBD", "VBN", "RB", "TO", "VB", "VBZ", "VBG", "VBP",
        "PRP", "-RRB-", "-LRB-", "PRP$", ":", "POS", "WDT", "MD", "''", "``", "NNPS", "JJR", "JJS", "WP", "WRB", "RP",
        "RBR", "EX", "FW", "RBS", "$", "PDT", "WP$", "LS", "#", "UH", "SYM",
    ),
}  # fmt: skip
FEATURES = tuple(FEATURE_TAGS)
FEATURE_COLUMNS = {name: f"{name}_tags" for name in FEATURES}  # the batch fields the models read
_IDS = {name: {tag: index + 1 for index, tag in enumerate(tags)} for name, tags in FEATURE_TAGS.items()}


def input_features(model: dict) -> tuple[str, ...]:
    """The token features a task's model reads (its `model.features`; none for the transformers)."""
    return tuple(model["features"])


def feature_sizes(names: Sequence[str]) -> dict[str, int]:
    """Embedding rows per feature: its tags plus padding."""
    return {name: len(FEATURE_TAGS[name]) + 1 for name in names}


def feature_ids(record: dict, name: str, words: int, length: int) -> list[int]:
    """The ids of feature `name` for the first `words` source words of `record`, padded (0) to `length`
    (the encoded source, EOS included)."""
    tags = (record.get("token_features") or {}).get(name)
    if tags is None:
        raise DataFormatError(f"record {record.get('id')}: the model reads the token feature '{name}', which the data does not have")
    ids = _IDS[name]
    unknown = next((tag for tag in tags[:words] if tag not in ids), None)
    if unknown is not None:
        raise DataFormatError(
            f"record {record.get('id')}: unknown {name} tag '{unknown}' (expected one of {', '.join(FEATURE_TAGS[name])})"
        )
    if len(tags) < words:
        raise DataFormatError(f"record {record.get('id')}: {len(tags)} {name} tags for {words} source words")
    return [ids[tag] for tag in tags[:words]] + [0] * (length - words)
