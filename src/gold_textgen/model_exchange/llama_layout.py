"""A Qwen2 causal LM rewritten, weight for weight, as a Llama causal LM that computes the same logits.

Why: transformers' `AutoTokenizer` ignores the tokenizer class a folder names when its config is `qwen2`
and builds Qwen's byte-level BPE from the vocabulary instead (qwen2 is among the model types whose hub
tokenizer class it overrides). A model built from scratch with this project's word-level tokenizer
(`build_causal_model`) would then be read by every tool that loads tokenizers that way (lm-eval, vLLM,
`pipeline`) with the wrong tokenizer. Under a `llama` config, `AutoTokenizer` loads the tokenizer the
folder holds.

The two layouts are the same network (RMSNorm, rotary positions, SwiGLU, grouped-query attention) but for
one bias: Qwen2 adds one to the query, key and value projections, Llama's `attention_bias` to those and the
output projection. The output projection's bias is written as zeros, so the logits are equal.
"""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedModel

# Qwen2 settings with no Llama counterpart, and the values at which the two layouts agree.
_SAME_AT = {"use_sliding_window": False}
_CARRIED = (
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "hidden_act",
    "max_position_embeddings",
    "initializer_range",
    "rms_norm_eps",
    "rope_parameters",
    "attention_dropout",
    "tie_word_embeddings",
    "pad_token_id",
    "bos_token_id",
    "eos_token_id",
)


def is_qwen2(model: PreTrainedModel) -> bool:
    return model.config.model_type == "qwen2"


def llama_config_of(config) -> LlamaConfig:
    """The Llama config of a Qwen2 config (see the module's docstring); refused where a Qwen2 setting
    changes the network in a way Llama cannot (sliding-window attention)."""
    for key, value in _SAME_AT.items():
        if getattr(config, key, value) != value:
            raise ValueError(f"a Qwen2 model with {key}={getattr(config, key)} has no Llama layout to export to")
    carried = {key: getattr(config, key) for key in _CARRIED if hasattr(config, key)}
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return LlamaConfig(**carried, head_dim=head_dim, attention_bias=True, mlp_bias=False)


def as_llama(model: PreTrainedModel) -> LlamaForCausalLM:
    """`model` (a Qwen2ForCausalLM) as a LlamaForCausalLM holding the same weights and zero output-projection
    biases, in the same dtype; every other weight must find its place, or this refuses."""
    llama = LlamaForCausalLM(llama_config_of(model.config)).to(dtype=model.dtype)
    state = model.state_dict()
    missing, unexpected = llama.load_state_dict(state, strict=False)
    unplaced = [key for key in missing if not key.endswith("self_attn.o_proj.bias") and key not in _tied_keys(llama)]
    if unplaced or unexpected:
        raise ValueError(f"Qwen2 -> Llama: weights without a place: {unplaced or unexpected}")
    with torch.no_grad():
        for layer in llama.model.layers:
            layer.self_attn.o_proj.bias.zero_()
    if llama.config.tie_word_embeddings:
        llama.tie_weights()
    return llama.eval()


def _tied_keys(model: PreTrainedModel) -> set[str]:
    """The output embedding's key, which a tied model's state dict may leave out."""
    return {"lm_head.weight"} if model.config.tie_word_embeddings else set()
