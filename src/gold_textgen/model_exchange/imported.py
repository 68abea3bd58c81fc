"""Loading a model saved in a workflow model folder, trained there or imported (import_record.py).

A checkpoint is a local folder in Hugging Face format: a seq2seq model (`AutoModelForSeq2SeqLM` loads it,
this workflow's own model folders included), a causal LM (wrapped in the prompt -> completion contract of
prompt_completion.py, as the workflow's decoder-only models are), or a LoRA adapter (peft's
`adapter_config.json`), merged into its base for decoding. Its tokenizer is its own (the adapter's folder,
else the base's: import_record.tokenizer_folder).
"""

from __future__ import annotations

from pathlib import Path

from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedModel, PreTrainedTokenizerBase
from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING

from ..models import recurrent  # noqa: F401  registers the recurrent models with AutoModelForSeq2SeqLM
from ..models.prompt_completion import wrap_language_model
from ..models.transformer import load_pretrained_model
from .import_record import import_record


def load_saved_model(model_dir: Path, tokenizer: PreTrainedTokenizerBase) -> PreTrainedModel:
    """The model saved in a workflow model folder, trained or imported, in the seq2seq contract every
    decoder and scorer reads (`tokenizer`: the one from tokenizer_folder, which a causal LM's wrapper takes
    its special tokens from)."""
    record = import_record(model_dir)
    if record is None:
        return load_pretrained_model(model_dir)
    checkpoint = Path(record["checkpoint"])
    if not checkpoint.is_dir():
        raise FileNotFoundError(f"{model_dir} was imported from {checkpoint}, which is no longer there")
    if record["adapter"]:
        return _merged_adapter(checkpoint, record["base"], tokenizer)
    if _is_seq2seq(checkpoint):
        return load_pretrained_model(checkpoint)
    return wrap_language_model(_causal_lm(checkpoint), tokenizer)


def _merged_adapter(adapter: Path, base: str, tokenizer: PreTrainedTokenizerBase) -> PreTrainedModel:
    from peft import PeftModel

    seq2seq = _is_seq2seq(base)
    language_model = load_pretrained_model(base) if seq2seq else _causal_lm(base)
    merged = PeftModel.from_pretrained(language_model, str(adapter)).merge_and_unload()
    return merged if seq2seq else wrap_language_model(merged, tokenizer)


def _causal_lm(name_or_path: str | Path) -> PreTrainedModel:
    return AutoModelForCausalLM.from_pretrained(str(name_or_path), trust_remote_code=False, use_safetensors=True)


def _is_seq2seq(name_or_path: str | Path) -> bool:
    """Whether AutoModelForSeq2SeqLM has a class for the checkpoint's config (this workflow's models included)."""
    return type(AutoConfig.from_pretrained(str(name_or_path), trust_remote_code=False)) in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING
