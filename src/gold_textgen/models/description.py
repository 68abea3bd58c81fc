"""How tables name a task's model: a short label and the model family the paper's tables group by."""

from __future__ import annotations


def model_label(model: dict) -> str:
    """A short description of a model (a task's `model` settings): the checkpoint name, or the
    from-scratch shape."""
    if model["kind"] == "pretrained":
        return str(model["name_or_path"])
    return (
        f"{model['architecture']} {model['encoder_layers']}+{model['decoder_layers']} layers, d {model['d_model']}, "
        f"{model['attention_heads']} heads, FFN {model['ffn_dim']} (from scratch)"
    )


def model_family(model: dict) -> str:
    """The model family, as the paper's tables group them: every architecture this project builds or
    loads today is a transformer (the paper's Tables 1 and 2 use recurrent models)."""
    return "transformer"
