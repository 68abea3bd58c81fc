"""A standard model built from a task's `model` settings; importing it registers the standard models with
transformers' Auto classes (recurrent.py), so a saved one loads by name."""

from __future__ import annotations

from .copy_slots import copy_slots
from .recurrent import RecurrentSeq2SeqModel
from .recurrent_config import RecurrentSeq2SeqConfig


def build_recurrent_model(model_config: dict, tokenizer, feature_sizes: dict[str, int]) -> RecurrentSeq2SeqModel:
    """A freshly initialised NQG++ or pointer-generator for the tokenizer's words and copy placeholders
    (`model_config`: a task's `model` settings). Initialisation draws from torch's global RNG."""
    slots = copy_slots(tokenizer)
    if bool(slots) != model_config["copy"]:
        raise ValueError(
            f"a {model_config['architecture']} model {'with' if model_config['copy'] else 'without'} copying needs a tokenizer "
            f"{'with' if model_config['copy'] else 'without'} copy placeholders (this one has {slots})"
        )
    config = RecurrentSeq2SeqConfig(
        architecture=model_config["architecture"],
        vocab_size=len(tokenizer) - slots,
        copy_slots=slots,
        embedding_dim=model_config["embedding_dim"],
        encoder_hidden=model_config["encoder_hidden"],
        decoder_hidden=model_config["decoder_hidden"],
        attention_dim=model_config["attention_dim"],
        encoder_layers=model_config["encoder_rnn_layers"],
        feature_sizes=feature_sizes,
        feature_dim=model_config["feature_dim"],
        dropout=model_config["dropout"],
        copy=model_config["copy"],
        coverage=model_config["coverage"],
        coverage_loss_weight=model_config["coverage_loss_weight"],
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        unk_token_id=tokenizer.unk_token_id,
        decoder_start_token_id=tokenizer.bos_token_id,
    )
    return RecurrentSeq2SeqModel(config)
