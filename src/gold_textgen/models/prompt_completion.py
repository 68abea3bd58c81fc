"""Decoder-only language models in the seq2seq contract: the source is the prompt, the reference the
completion.

`PromptCompletionLM` wraps any transformers causal LM (a tiny Qwen2 built from config sizes, or a
pretrained one) so that it takes what a seq2seq model takes (`input_ids`: the prompt; `labels` or
`decoder_input_ids`: the completion) and returns what a seq2seq model returns (`logits[:, t]`: the
distribution of completion token t). Every objective, the reward cache, token NLL and the decoders then
work on it unchanged, and no loss, reward or metric ever sees a prompt token.

Inside, each batch becomes one causal sequence per example: the prompt, left-aligned so that every prompt
ends at the same position, then the completion. The logits of the last prompt position predict the first
completion token; those of completion token t predict token t + 1. Prompt padding is masked; completion
padding needs no mask (it comes after everything that is scored, and attention is causal).
"""

from __future__ import annotations

import torch
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    GenerationConfig,
    GenerationMixin,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Qwen2Config,
)
from transformers.modeling_outputs import Seq2SeqLMOutput

from .decoder_inputs import ShiftedLabels
from .generation_settings import token_conventions_only
from .label_nll import target_nll, token_mean
from .lora import with_lora


class PromptCompletionConfig(PretrainedConfig):
    model_type = "prompt_completion_lm"

    def __init__(self, language_model: dict | PretrainedConfig | None = None, lora: dict | None = None, **kwargs):
        """`lora`: the config's `model.lora` block (the language model trains a LoRA adapter), or None."""
        if isinstance(language_model, dict):
            language_model = AutoConfig.for_model(**language_model)
        self.language_model = language_model
        self.lora = lora
        super().__init__(**kwargs)


def left_aligned(input_ids: torch.Tensor, attention_mask: torch.Tensor | None, pad_token_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded prompts [B, S] moved to the right end of their row (padding first), with their mask, however
    they came padded (right, as this project's collators pad, or left, as Llama-family tokenizers do): a
    stable sort of each row by its mask puts the padding first and keeps the tokens in order."""
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    order = torch.sort(attention_mask.long(), dim=1, stable=True).indices
    mask = attention_mask.long().gather(1, order)
    ids = input_ids.gather(1, order).masked_fill(mask == 0, pad_token_id)
    return ids, mask


class PromptCompletionLM(ShiftedLabels, PreTrainedModel, GenerationMixin):
    config_class = PromptCompletionConfig
    base_model_prefix = "language_model"
    main_input_name = "input_ids"
    _supports_cache_class = False

    def __init__(self, config: PromptCompletionConfig, language_model: PreTrainedModel | None = None):
        super().__init__(config)
        self.language_model = language_model if language_model is not None else AutoModelForCausalLM.from_config(config.language_model)
        self.post_init()
        if config.lora:  # after post_init, which ties the language model's weights by their unwrapped names
            self.language_model = with_lora(self.language_model, config.lora)
            # the tied pairs (embeddings and output layer) by the names they have inside the adapter's wrapper
            inner = self.language_model.get_base_model()
            prefix = "language_model.base_model.model."
            self.all_tied_weights_keys = {prefix + target: prefix + source for target, source in inner.all_tied_weights_keys.items()}

    def tie_weights(self, missing_keys: set[str] | None = None, recompute_mapping: bool = True):
        # With an adapter, transformers would recompute the tied pairs by the names of the language model's
        # own modules, which the adapter's wrapper moved: tie by the mapping kept in __init__.
        super().tie_weights(missing_keys, recompute_mapping=recompute_mapping and not self.config.lora)

    def get_input_embeddings(self) -> torch.nn.Module:
        return self.language_model.get_input_embeddings()

    def get_output_embeddings(self) -> torch.nn.Module:
        return self.language_model.get_output_embeddings()

    def _init_weights(self, module: torch.nn.Module) -> None:
        self.language_model._init_weights(module)

    def causal_inputs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, completion: torch.Tensor) -> dict:
        """The causal sequences of left-aligned prompts and their completions, with mask and positions."""
        prompt, prompt_mask = left_aligned(input_ids, attention_mask, self.config.pad_token_id)
        ids = torch.cat([prompt, completion], dim=1)
        mask = torch.cat([prompt_mask, torch.ones_like(completion)], dim=1)
        positions = (mask.cumsum(dim=1) - 1).clamp_min(0)
        return {"input_ids": ids, "attention_mask": mask, "position_ids": positions}

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        adapter_names: list[str] | None = None,
        **unused,
    ) -> Seq2SeqLMOutput:
        """Teacher-forced logits [B, T, V] of each completion token given the prompt and the tokens before
        it (`decoder_input_ids`: the start token, then the completion so far, as a seq2seq decoder reads
        them); with `labels`, the token-mean NLL as `loss`. `adapter_names` (a LoRA model in eval mode): the
        adapter each example runs with (peft's mixed-batch inference), instead of the active one."""
        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("forward needs decoder_input_ids or labels")
            decoder_input_ids = self.shift_right(labels)
        prompt_width, steps = input_ids.shape[1], decoder_input_ids.shape[1]
        # The start token stands for "the prompt has ended": its logits are those of the last prompt position.
        adapters = {} if adapter_names is None else {"adapter_names": adapter_names}
        inputs = self.causal_inputs(input_ids, attention_mask, decoder_input_ids[:, 1:])
        outputs = self.language_model(**inputs, use_cache=False, **adapters)
        logits = outputs.logits[:, prompt_width - 1 : prompt_width - 1 + steps]
        loss = None
        if labels is not None:
            loss = token_mean(target_nll(logits, labels), labels)
        return Seq2SeqLMOutput(loss=loss, logits=logits)

    @torch.no_grad()
    def generate(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        generation_config: GenerationConfig | None = None,
        **kwargs,
    ) -> torch.Tensor:
        """Completions [B * num_return_sequences, L] that start with the decoder start token, as a seq2seq
        model's generate() returns them: the language model's own search (greedy, beam, sampling) on the
        left-padded prompts, with the seq2seq length limits (start token and EOS counted) turned into
        limits on new tokens."""
        config = GenerationConfig.from_dict((generation_config or self.generation_config).to_dict())
        if config.max_new_tokens is None:
            config.max_new_tokens = config.max_length - 1
        if config.min_new_tokens is None:
            config.min_new_tokens = max(config.min_length - 1, 0)
        config.max_length, config.min_length = None, None
        config.pad_token_id, config.eos_token_id = self.config.pad_token_id, self.config.eos_token_id
        config.bos_token_id = None
        config.forced_eos_token_id = None
        prompt, prompt_mask = left_aligned(input_ids, attention_mask, self.config.pad_token_id)
        with token_conventions_only(self.language_model):  # nothing of a hub model's own search settings
            generated = self.language_model.generate(input_ids=prompt, attention_mask=prompt_mask, generation_config=config, **kwargs)
        new_tokens = generated[:, prompt.shape[1] :]
        start = new_tokens.new_full((new_tokens.shape[0], 1), self.config.decoder_start_token_id)
        return torch.cat([start, new_tokens], dim=1)


AutoConfig.register(PromptCompletionConfig.model_type, PromptCompletionConfig)
AutoModelForSeq2SeqLM.register(PromptCompletionConfig, PromptCompletionLM)


def wrap_language_model(
    language_model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, lora: dict | None = None
) -> PromptCompletionLM:
    """A causal LM (built or loaded) in the seq2seq contract, with the tokenizer's special tokens; with
    `lora` (the config's `model.lora`), a LoRA adapter over its frozen weights."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    config = PromptCompletionConfig(
        language_model=language_model.config,
        pad_token_id=pad,
        bos_token_id=start,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=start,
        tie_word_embeddings=False,  # the language model ties its own
        lora=lora,
    )
    return PromptCompletionLM(config, language_model)


def build_causal_model(model_config: dict, tokenizer: PreTrainedTokenizerBase) -> PromptCompletionLM:
    """A freshly initialised decoder-only transformer (Qwen2's layout: RMSNorm, rotary positions, SwiGLU)
    with the config sizes (`decoder_layers` layers of `d_model`) and the tokenizer's vocabulary.
    Initialisation draws from torch's global RNG."""
    language_model = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=model_config["d_model"],
        intermediate_size=model_config["ffn_dim"],
        num_hidden_layers=model_config["decoder_layers"],
        num_attention_heads=model_config["attention_heads"],
        num_key_value_heads=model_config["attention_heads"],
        max_position_embeddings=model_config["max_position_embeddings"],
        attention_dropout=model_config["dropout"],
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return wrap_language_model(AutoModelForCausalLM.from_config(language_model), tokenizer, model_config.get("lora"))


def load_pretrained_causal_model(
    name_or_path: str, tokenizer: PreTrainedTokenizerBase, revision: str | None = None, lora: dict | None = None
) -> PromptCompletionLM:
    """A pretrained causal LM from a hub name or a local directory (safetensors; no remote code)."""
    language_model = AutoModelForCausalLM.from_pretrained(name_or_path, revision=revision, trust_remote_code=False, use_safetensors=True)
    return wrap_language_model(language_model, tokenizer, lora)
