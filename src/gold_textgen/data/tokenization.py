"""Tokenizers for models built from scratch: trained with `tokenizers` on the training split, source and
target jointly (one vocabulary, so encoder and decoder embeddings can be tied, as in BART and fairseq's
joint-BPE IWSLT setup), and saved as a transformers `PreTrainedTokenizerFast`.

Every encoded sequence ends with `</s>`; there is no leading `<s>` in the text: the decoder starts from
`decoder_start_token_id = <s>` (see models.py), so the labels are exactly the reference tokens plus EOS.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

from ..models.copy_slots import placeholders

log = logging.getLogger(__name__)
SPECIAL_TOKENS = {"bos_token": "<s>", "pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>"}
# Fixed ids 0..3 in BART's order, so a config built from scratch matches BART's conventions.
SPECIAL_ORDER = ["<s>", "<pad>", "</s>", "<unk>"]


def train_tokenizer(
    texts: Iterable[str],
    kind: str = "wordlevel",
    vocab_size: int = 8000,
    min_frequency: int = 1,
    lowercase: bool = False,
    split_punctuation: bool = False,
    copy_slots: int = 0,
) -> PreTrainedTokenizerFast:
    """Train a word-level or BPE tokenizer on `texts` and wrap it for transformers; a word-level one may
    split punctuation off words, and hold `copy_slots` copy placeholders after its words (the copy
    models' extended vocabulary, copy_vocabulary.py)."""
    if copy_slots and kind != "wordlevel":
        raise ValueError("copy placeholders need a word-level tokenizer (one token per word)")
    if kind == "wordlevel":
        tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
        trainer = trainers.WordLevelTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIAL_ORDER)
        # Words end at ASCII white space only: a released token may hold a no-break space (NQG's dev split
        # writes "8\u00a01\u20442" as one token), and per-word features must line up with the words.
        words = pre_tokenizers.Split(Regex(r"[ \t\n\r\f\v]+"), behavior="removed")
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence([words, pre_tokenizers.Punctuation()]) if split_punctuation else words
        tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins words with single spaces
    elif kind == "bpe":
        tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIAL_ORDER)
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
    else:
        raise ValueError(f"unknown tokenizer kind '{kind}' (expected wordlevel or bpe)")
    if lowercase:
        tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.train_from_iterator(texts, trainer=trainer)
    if tokenizer.get_vocab_size() <= len(SPECIAL_ORDER):
        raise ValueError(
            f"the trained vocabulary holds no word, only the {len(SPECIAL_ORDER)} special tokens: min_frequency {min_frequency} "
            "is above every word's count in the training split (or the split is empty); lower tokenizer.min_frequency"
        )
    eos_id = tokenizer.token_to_id("</s>")
    tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos_id)])
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tokenizer, **SPECIAL_TOKENS)
    if copy_slots:
        wrapped.add_tokens(placeholders(copy_slots))
    return wrapped


def leading_target_specials(tokenizer: PreTrainedTokenizerBase) -> int:
    """How many label positions precede the first reference token: 1 for BART's pretrained tokenizers,
    which encode a target as `<s> ... </s>` (the decoder then learns to emit `<s>` after the start token
    `</s>`, a near-certain step), 0 for this project's tokenizers (`... </s>`). fairseq's targets, whose
    perplexities the paper reports, have no such position."""
    probe = tokenizer(text_target="a")["input_ids"]
    count = 0
    while count < len(probe) - 1 and probe[count] == tokenizer.bos_token_id:
        count += 1
    return count


def training_texts(records: list[dict]) -> Iterable[str]:
    for record in records:
        yield record["source"]
        yield record["target"]


def load_tokenizer(path: str | Path, revision: str | None = None) -> PreTrainedTokenizerBase:
    """A tokenizer saved by this project or a pretrained model's own; remote code is never run. It pads on
    the right whatever its own default (Llama-, Gemma- and Cohere-family tokenizers pad on the left): the
    batches of training, token NLL and the reward cache align labels and rewards from the left; a causal
    model's prompts are moved to the right end for generation wherever they were padded
    (models/prompt_completion.py)."""
    return padding_right(AutoTokenizer.from_pretrained(str(path), revision=revision, trust_remote_code=False))


def padding_right(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    """`tokenizer` if it pads on the right with a pad token of its own; otherwise a copy that does (the
    caller's object is left as it is), with EOS as the pad token where it has none (Llama- and
    Qwen-family base tokenizers). The project's collators align labels, cached rewards and token features
    from the left of each row, so a left-padding tokenizer object would shift them against each other."""
    if tokenizer.padding_side == "right" and tokenizer.pad_token is not None:
        return tokenizer
    tokenizer = copy.deepcopy(tokenizer)
    if tokenizer.padding_side != "right":
        log.info("the tokenizer pads on the %s: batches are padded on the right", tokenizer.padding_side)
        tokenizer.padding_side = "right"
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ValueError("the tokenizer has neither a pad token nor an EOS token: set tokenizer.pad_token")
        log.info("the tokenizer has no pad token: padding with its EOS token %r", tokenizer.eos_token)
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer
