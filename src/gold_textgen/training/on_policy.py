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

from ..objectives.policy_gradient import RewardBaseline


@dataclass
class Samples:
    """S = inputs x samples_per_input outputs of one micro-batch."""

    encoder_inputs: dict  # input_ids and attention_mask, each input repeated samples_per_input times
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
        encoder_inputs = {key: inputs[key] for key in ("input_ids", "attention_mask")}
        generated = model.generate(**encoder_inputs, generation_config=self.generation)
        model.train(was_training)
        repeats = self.generation.num_return_sequences or 1
        labels = sampled_labels(generated[:, 1:], self.tokenizer.eos_token_id, self.tokenizer.pad_token_id)
        hypotheses = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
        gold = references.masked_fill(references.eq(-100), self.tokenizer.pad_token_id)
        texts = self.tokenizer.batch_decode(gold, skip_special_tokens=True)
        rewards = self.reward([h.strip() for h in hypotheses], [t.strip() for t in texts for _ in range(repeats)])
        return Samples(
            encoder_inputs={key: value.repeat_interleave(repeats, dim=0) for key, value in encoder_inputs.items()},
            decoder_input_ids=generated[:, :-1],
            labels=labels,
            rewards=torch.as_tensor(rewards, dtype=torch.float32, device=generated.device),
        )


def sampled_labels(tokens: torch.Tensor, eos_token_id: int, pad_token_id: int) -> torch.Tensor:
    """The sampled tokens as labels: up to and including the first EOS; -100 after it (generate pads
    finished sequences) and at padding of a sequence the length limit cut before its EOS."""
    is_eos = tokens.eq(eos_token_id).int()
    after_eos = (is_eos.cumsum(-1) - is_eos) > 0
    return tokens.masked_fill(after_eos | (tokens.eq(pad_token_id) & ~is_eos.bool()), -100)
