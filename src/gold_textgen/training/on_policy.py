"""Sampling inside training for the on-policy objectives: outputs drawn from the current policy with the
task's length limits (the decoding code's generation config, without gradient), each scored against its
reference with the task metric in this process, then handed back as labels for one teacher-forced pass
with gradient."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from transformers import GenerationConfig, PreTrainedModel, PreTrainedTokenizerBase

from ..data.copy_vocabulary import CopyVocabulary
from ..data.seq2seq_batches import OOV_WORDS
from ..data.token_features import FEATURE_COLUMNS
from ..objectives.policy_gradient import RewardBaseline


@dataclass
class Samples:
    """S = inputs x samples_per_input outputs of one micro-batch."""

    encoder_inputs: dict  # input_ids, attention_mask (and token features), each input repeated samples_per_input times
    decoder_input_ids: torch.Tensor  # [S, L]: the decoder's start token, then the sampled tokens
    labels: torch.Tensor  # [S, L]: the sampled tokens, EOS included; -100 after it
    rewards: torch.Tensor  # [S] in [0, 1]


@dataclass
class OnPolicySampling:
    generation: GenerationConfig  # do_sample, the task's lengths, num_return_sequences = samples per input
    tokenizer: PreTrainedTokenizerBase
    reward: Callable[[list[str], list[str]], np.ndarray]  # (hypotheses, references) -> rewards in [0, 1]
    baseline: RewardBaseline

    @torch.no_grad()
    def draw(self, model: PreTrainedModel, inputs: dict, references: torch.Tensor) -> Samples:
        """Sample from `model` (in eval mode: no dropout while sampling) for the batch's inputs and score
        each sample against its reference (`references`: the batch's labels, -100 at padding)."""
        was_training = model.training
        model.eval()
        # the source and, for NQG++, its token features
        encoder_inputs = {key: inputs[key] for key in ("input_ids", "attention_mask", *FEATURE_COLUMNS.values()) if key in inputs}
        generated = model.generate(**encoder_inputs, generation_config=self.generation)
        model.train(was_training)
        repeats = self.generation.num_return_sequences or 1
        labels = sampled_labels(generated[:, 1:], self.tokenizer.eos_token_id, self.tokenizer.pad_token_id)
        gold = references.masked_fill(references.eq(-100), self.tokenizer.pad_token_id)
        oov_words = inputs.get(OOV_WORDS)
        sample_words = None if oov_words is None else [words for words in oov_words for _ in range(repeats)]
        hypotheses = restored_texts(self.tokenizer, generated, sample_words)
        texts = [text for text in restored_texts(self.tokenizer, gold, oov_words) for _ in range(repeats)]
        rewards = self.reward(hypotheses, texts)
        return Samples(
            encoder_inputs={key: value.repeat_interleave(repeats, dim=0) for key, value in encoder_inputs.items()},
            decoder_input_ids=generated[:, :-1],
            labels=labels,
            rewards=torch.as_tensor(rewards, dtype=torch.float32, device=generated.device),
        )


def restored_texts(tokenizer: PreTrainedTokenizerBase, ids: torch.Tensor, oov_words: list[list[str]] | None) -> list[str]:
    """Decoded texts; a copy model's placeholders replaced by the source words they stand for."""
    texts = tokenizer.batch_decode(ids, skip_special_tokens=True)
    if oov_words is not None:
        copying = CopyVocabulary(tokenizer)
        texts = [copying.restore(text, words) for text, words in zip(texts, oov_words, strict=True)]
    return [text.strip() for text in texts]


def sampled_labels(tokens: torch.Tensor, eos_token_id: int, pad_token_id: int) -> torch.Tensor:
    """The sampled tokens as labels: up to and including the first EOS; -100 after it (generate pads
    finished sequences) and at padding of a sequence the length limit cut before its EOS."""
    is_eos = tokens.eq(eos_token_id).int()
    after_eos = (is_eos.cumsum(-1) - is_eos) > 0
    return tokens.masked_fill(after_eos | (tokens.eq(pad_token_id) & ~is_eos.bool()), -100)
