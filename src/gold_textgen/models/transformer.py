"""Seq2seq models: a transformer built from config sizes, or a pretrained checkpoint. `initial_model` builds
any of the three families a task may name: these transformers, the recurrent copy models of the paper's
Tables 1 and 2 (recurrent.py) and decoder-only models (prompt_completion.py).

Two from-scratch layouts, both plain post-LayerNorm encoder-decoders with tied embeddings:

* `transformer`: fairseq's transformer (the paper's `transformer_iwslt_de_en` family): sinusoidal
  positions and embeddings scaled by sqrt(d_model). transformers implements exactly this layout as
  `MarianMTModel`. The default: with fixed sinusoidal positions a small model learns to align source
  and target positions within a few hundred updates.
* `bart`: BART's layout with learned positions and an embedding LayerNorm. Small BART models trained
  from scratch sit on a unigram plateau for much longer before they learn alignment.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import (
    AutoModelForSeq2SeqLM,
    BartConfig,
    BartForConditionalGeneration,
    MarianConfig,
    MarianMTModel,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from ..config.views import is_causal, is_recurrent
from .prompt_completion import build_causal_model, load_pretrained_causal_model  # registers the wrapper too
from .recurrent_builder import build_recurrent_model  # also registers the recurrent models with the Auto classes

ARCHITECTURES = {"transformer": (MarianConfig, MarianMTModel), "bart": (BartConfig, BartForConditionalGeneration)}


def build_scratch_model(model_config: dict, tokenizer: PreTrainedTokenizerBase) -> PreTrainedModel:
    """A freshly initialised encoder-decoder with the given sizes and the tokenizer's vocabulary.

    Initialisation draws from torch's global RNG: seed it first (see runtime.seed_everything).
    """
    architecture = model_config.get("architecture", "transformer")
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture '{architecture}' (expected {' or '.join(ARCHITECTURES)})")
    config_class, model_class = ARCHITECTURES[architecture]
    config = config_class(
        vocab_size=len(tokenizer),
        d_model=model_config["d_model"],
        encoder_layers=model_config["encoder_layers"],
        decoder_layers=model_config["decoder_layers"],
        encoder_attention_heads=model_config["attention_heads"],
        decoder_attention_heads=model_config["attention_heads"],
        encoder_ffn_dim=model_config["ffn_dim"],
        decoder_ffn_dim=model_config["ffn_dim"],
        dropout=model_config["dropout"],
        attention_dropout=model_config["dropout"],
        activation_function="relu" if architecture == "transformer" else "gelu",
        max_position_embeddings=model_config["max_position_embeddings"],
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.bos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
        # fairseq scales token embeddings by sqrt(d_model) next to sinusoidal positions; BART-large does not.
        scale_embedding=architecture == "transformer",
    )
    model = model_class(config)
    if architecture == "transformer":
        fairseq_initialisation(model)
    return model


def fairseq_initialisation(model: PreTrainedModel) -> None:
    """fairseq's transformer initialisation, which transformers' Marian port does not reproduce.

    fairseq draws token embeddings from N(0, d_model^-1/2), so that after the sqrt(d_model) scaling they
    have unit variance beside the unit-amplitude sinusoidal positions, and every linear layer from
    Xavier-uniform with zero bias. transformers initialises both from N(0, 0.02): a small model then starts
    with almost uniform attention and token embeddings drowned by the positions, and can sit on the
    unigram plateau for thousands of updates, for as long as float rounding decides (the demo's MLE
    escaped after 1,100 updates for one seed and not within 3,000 for another, on the same machine).
    """
    embedding_std = model.config.d_model**-0.5
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                torch.nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    module.bias.zero_()
        shared = model.get_input_embeddings()
        torch.nn.init.normal_(shared.weight, mean=0.0, std=embedding_std)
        if shared.padding_idx is not None:
            shared.weight[shared.padding_idx].zero_()


def load_pretrained_model(name_or_path: str | Path, revision: str | None = None) -> PreTrainedModel:
    """A pretrained seq2seq model from a hub name or a local directory (safetensors; no remote code)."""
    model = AutoModelForSeq2SeqLM.from_pretrained(str(name_or_path), revision=revision, trust_remote_code=False, use_safetensors=True)
    return freeze_fixed_positions(model)


def freeze_fixed_positions(model: PreTrainedModel) -> PreTrainedModel:
    """Keep sinusoidal position tables fixed, as they are in a model built from scratch.

    transformers' `from_pretrained` hands them back trainable (seen with MarianMTModel in transformers 5),
    while checkpoints do not store them (they are recomputed at load time). Fine-tuning a loaded model would
    then train them, the Trainer's own checkpoints would drop what it learnt, a resumed run would continue
    from other positions than the uninterrupted one, and the saved model would differ from the one that was
    evaluated. Frozen, they are the same in every one of those places.
    """
    for module in model.modules():
        if "Sinusoidal" in type(module).__name__:
            module.requires_grad_(False)
    return model


def initial_model(model_config: dict, tokenizer: PreTrainedTokenizerBase, feature_sizes: dict[str, int] | None = None) -> PreTrainedModel:
    """The model a task's MLE training starts from; `feature_sizes`: the token features a recurrent model
    embeds (name -> inventory size)."""
    if is_recurrent(model_config):
        return build_recurrent_model(model_config, tokenizer, feature_sizes or {})
    if is_causal(model_config):
        if model_config["kind"] == "scratch":
            return build_causal_model(model_config, tokenizer)
        return load_pretrained_causal_model(model_config["name_or_path"], tokenizer, model_config.get("revision"), model_config.get("lora"))
    if model_config["kind"] == "scratch":
        return build_scratch_model(model_config, tokenizer)
    return load_pretrained_model(model_config["name_or_path"], model_config.get("revision"))


def count_parameters(model: torch.nn.Module) -> int:
    """Distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
