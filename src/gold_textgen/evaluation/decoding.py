"""Batched decoding with the model's generate() (transformers' own, or the recurrent models' search), inputs
grouped by length."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch
from tqdm.auto import tqdm
from transformers import DataCollatorForSeq2Seq, GenerationConfig, PreTrainedModel, PreTrainedTokenizerBase

from ..data.copy_vocabulary import copy_vocabulary_of
from ..data.seq2seq_batches import PaddedFieldsCollator, encode_records, length_sorted_batches
from ..models.generation_settings import token_conventions, token_conventions_only
from .stop_sequences import text_before_stop, with_stop_strings

log = logging.getLogger(__name__)


# Length settings a decoder may set for itself (FocusSeq2Seq: a minimum length inside beam search only).
DECODER_LENGTH_KEYS = ("min_new_tokens", "length_penalty")


def apply_length_settings(config: GenerationConfig, generation: dict) -> None:
    """Limit output lengths to the task's settings, counted as fairseq counts `max_len_b` and `min_len`.

    fairseq's search emits at most `max_len_b` tokens before EOS and none of its EOS before `min_len`
    tokens; for BART, whose hub interface forces `<s>` as the first output token, that `<s>` is one of
    them. transformers' `max_length`/`min_length` count the sequence generate() returns: the decoder's
    start token, then the outputs (BART's forced `<s>` included), then EOS. So `max_length` is
    max_new_tokens + 2 (start token and EOS) and `min_length` is min_new_tokens + 1 (start token): the
    same limits as fairseq with and without a forced `<s>`. Setting only the `*_length` pair avoids
    generate() warning on every call that both pairs are set.
    """
    config.max_new_tokens = None
    config.min_new_tokens = None
    config.max_length = generation["max_new_tokens"] + 2
    config.min_length = generation["min_new_tokens"] + 1
    config.no_repeat_ngram_size = generation["no_repeat_ngram_size"]


# The search settings a decoder may leave unset, at their neutral values. generate() fills an unset (None)
# field from the model's generation config, which decoding sets aside (models/generation_settings.py), and
# then from its own defaults (top-k 50), so sampling "at temperature 1" would silently be top-k 50
# sampling. transformers refuses sampling settings in a config that does not sample, so those are set for
# sampling decoders only.
NEUTRAL = {"num_beams": 1, "do_sample": False, "repetition_penalty": 1.0, "num_return_sequences": 1}
NEUTRAL_SAMPLING = {"top_k": 0, "top_p": 1.0, "temperature": 1.0, "typical_p": 1.0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0}


def clean_generation_config(model: PreTrainedModel) -> GenerationConfig:
    """A generation config with the model's token conventions and neutral search settings, nothing else."""
    return token_conventions(model, **NEUTRAL)


def generation_config(model: PreTrainedModel, generation: dict, decoder: dict) -> GenerationConfig:
    """A generation config from the experiment's config alone: the model's token conventions, the task's
    length settings and the decoder's search settings, every other setting neutral (never the model's
    generation_config.json); a decoder's own length settings (a task's `decoder_overrides`) replace the
    task's for it. `generation` may leave out the length penalty (a training job's view has none: it
    samples, and only a beam reads it)."""
    config = clean_generation_config(model)
    generation = {**generation, **{key: decoder[key] for key in DECODER_LENGTH_KEYS if key in decoder}}
    apply_length_settings(config, generation)
    if "length_penalty" in generation:
        config.length_penalty = generation["length_penalty"]
    config.num_beams = decoder.get("num_beams", 1)
    if config.num_beams > 1:
        config.early_stopping = decoder.get("early_stopping", False)
    config.do_sample = decoder.get("do_sample", False)
    if config.do_sample:
        for key, neutral in NEUTRAL_SAMPLING.items():
            setattr(config, key, decoder.get(key, neutral))
    return config


@torch.inference_mode()
def generate_texts(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[dict],
    config: GenerationConfig,
    batch_size: int,
    max_source_length: int,
    sample_seed: int = 0,
    group_by_length: bool = True,
    features: Sequence[str] = (),
    stop_sequences: Sequence[str] = (),
) -> list[str]:
    """Decode every record's source; outputs come back in input order whatever the batching. Batches group
    inputs of similar length (less padding) unless `group_by_length` is off (input order, for comparison).
    A copy model's placeholders come back as the source words they stand for; each output ends before the
    first of `stop_sequences` (the task's `generation.stop_sequences`, lm-eval's `until`): generation stops
    at the token that completes one, and the text is cut there before special tokens are stripped. Only
    `config` sets the search: the model's own generation config is set aside while it runs."""
    device = next(model.parameters()).device
    model.eval()
    torch.manual_seed(sample_seed)  # sampling decoders draw from torch's RNG
    encoded = encode_records(records, tokenizer, max_source_length, None, features)
    copying = copy_vocabulary_of(tokenizer)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer))
    outputs: list[str | None] = [None] * len(records)
    config = with_stop_strings(config, stop_sequences)
    stopping = {"tokenizer": tokenizer} if stop_sequences else {}  # what finds the stop strings
    if group_by_length:
        batches = list(length_sorted_batches([len(example["input_ids"]) for example in encoded], batch_size))
    else:
        batches = [list(range(start, min(start + batch_size, len(encoded)))) for start in range(0, len(encoded), batch_size)]
    for batch in tqdm(batches, desc="decoding", unit="batch", mininterval=5.0):
        inputs = collate([{k: v for k, v in encoded[i].items() if k != "oov_words"} for i in batch]).to(device)
        with token_conventions_only(model):
            generated = model.generate(**inputs, generation_config=config, **stopping)
        for index, ids in zip(batch, generated.tolist(), strict=True):
            text = text_before_stop(tokenizer, ids, stop_sequences)
            if copying is not None:
                text = copying.restore(text, encoded[index]["oov_words"])
            outputs[index] = text.strip()
    return outputs  # type: ignore[return-value]
