"""How tables name a task's model: a short label and the model family the paper's tables group by."""

from __future__ import annotations

from ..config.views import is_causal, is_recurrent

RECURRENT_NAMES = {"nqg_pp": "NQG++", "pointer_generator": "pointer-generator"}


def model_label(model: dict) -> str:
    """A short description of a model (a task's `model` settings): the checkpoint name, or the
    from-scratch shape."""
    if model["kind"] == "pretrained":
        return str(model["name_or_path"])
    if is_recurrent(model):
        return (
            f"{RECURRENT_NAMES[model['architecture']]}, embeddings {model['embedding_dim']}, encoder {model['encoder_hidden']}, "
            f"decoder {model['decoder_hidden']} (from scratch)"
        )
    if is_causal(model):
        shape = f"{model['decoder_layers']} layers, d {model['d_model']}, {model['attention_heads']} heads, FFN {model['ffn_dim']}"
        return f"causal LM {shape} (from scratch)"
    return (
        f"{model['architecture']} {model['encoder_layers']}+{model['decoder_layers']} layers, d {model['d_model']}, "
        f"{model['attention_heads']} heads, FFN {model['ffn_dim']} (from scratch)"
    )


def model_family(model: dict) -> str:
    """The model family, as the paper's tables group them: `recurrent` for the standard models of its
    Tables 1 and 2 (NQG++, the pointer-generator), `causal` for decoder-only language models (which the
    paper did not train), `transformer` for the rest (Table 3)."""
    if is_causal(model):
        return "causal"
    return "recurrent" if is_recurrent(model) else "transformer"
