"""A trained model in the form every Hugging Face tool loads (`gold-textgen export MODEL_DIR OUT`).

The workflow saves a decoder-only model inside `PromptCompletionLM` (the prompt -> completion contract its
objectives, caches and decoders share), whose config class transformers alone does not know. The export
writes the causal LM inside it with the model folder's tokenizer, so `AutoModelForCausalLM.from_pretrained`,
lm-eval's `HFLM`, vLLM and `pipeline` load it:

* a full model: OUT holds the language model;
* a LoRA model: OUT holds the adapter merged into the base (a plain causal LM), OUT/adapter the adapter as
  peft saves it and OUT/base the base weights it sits on, so
  `PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(OUT / "base"), OUT / "adapter")` is the
  trained model too;
* a seq2seq transformer (BART, Marian, a model built from scratch): already a transformers model; OUT is a
  copy `AutoModelForSeq2SeqLM` loads.

A causal LM's export is read back before it is written: `AutoTokenizer.from_pretrained(OUT)` must encode as
the workflow's tokenizer (the tokenizer the export carries adds no EOS to a prompt: export_tokenizer.py).
Beside a `qwen2` config it would not (transformers builds Qwen's byte-level tokenizer there, whatever the
folder's tokenizer is), so a Qwen2 model with this project's tokenizer is written as the Llama model that
computes the same logits (llama_layout.py). OUT/export_record.json says where the export came from and how
the workflow encoded prompts, which an import of OUT reads.

The recurrent NQG++ and pointer-generator models have no class in transformers: they load with
`AutoModelForSeq2SeqLM.from_pretrained(MODEL_DIR)` once `gold_textgen.models.recurrent` is imported.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
from pathlib import Path

from transformers import AutoTokenizer, PreTrainedModel

from ..models.lora import peft_model_in
from ..models.prompt_completion import PromptCompletionLM
from ..models.recurrent import RecurrentSeq2SeqModel
from ..models.transformer import load_pretrained_model
from .export_tokenizer import encodes_alike, probe_texts, tools_tokenizer, write_export_record
from .import_record import import_record
from .llama_layout import as_llama, is_qwen2, llama_config_of


def save(model: PreTrainedModel, tokenizer, folder: Path) -> Path:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def export_model(model_dir: Path, out: Path) -> dict[str, Path]:
    """Write the model saved in `model_dir` under `out` (see the module's docstring), which must not exist
    yet; returns what was written: `model` (always), and `adapter` and `base` for a LoRA model. Written
    beside `out` first and moved there when complete: `out` never holds half an export."""
    if out.exists():
        raise ValueError(f"{out} exists: export to a new folder")
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    written = write_export(model_dir, partial, final=out)
    partial.rename(out)
    return {what: out / folder.relative_to(partial) for what, folder in written.items()}


def write_export(model_dir: Path, out: Path, final: Path | None = None) -> dict[str, Path]:
    """The export of `model_dir` written to `out`; `final` is the folder `out` will be renamed to (a LoRA
    adapter's config names its base there)."""
    record = import_record(model_dir)
    if record is not None:
        raise ValueError(f"{model_dir} is a model imported from {record['checkpoint']}: that folder is the model, in the form tools load")
    model = load_pretrained_model(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if isinstance(model, RecurrentSeq2SeqModel):
        raise ValueError(
            f"{model_dir}: a recurrent {model.config.architecture} model has no transformers class to export to; load it with "
            "AutoModelForSeq2SeqLM.from_pretrained after `import gold_textgen.models.recurrent`"
        )
    if not isinstance(model, PromptCompletionLM):
        return {"model": save(model, tokenizer, out)}
    exported = tools_tokenizer(tokenizer)
    layout = _layout_tools_read(model.language_model, exported)
    adapters = peft_model_in(model)
    if adapters is None:
        written = {"model": save(_in_layout(model.language_model, layout), exported, out)}
    else:
        base = (final or out) / "base"
        for settings in adapters.peft_config.values():
            settings.base_model_name_or_path = str(base.resolve())  # AutoPeftModelForCausalLM finds it there
        written = {"adapter": save(adapters, exported, out / "adapter")}
        written["base"] = save(_in_layout(copy.deepcopy(adapters).unload(), layout), exported, out / "base")
        written["model"] = save(_in_layout(adapters.merge_and_unload(), layout), exported, out)
    for folder in written.values():  # an import of any of them prompts the model as the workflow did
        write_export_record(folder, model_dir, exported is not tokenizer, layout)
    return written


def _layout_tools_read(language_model: PreTrainedModel, tokenizer) -> str | None:
    """None where `AutoTokenizer` reads `tokenizer` back as it is beside the model's own config; "llama"
    where it does only beside a Llama config (a Qwen2 model with this project's tokenizer:
    model_exchange/llama_layout.py); refused where neither holds."""
    texts = probe_texts(tokenizer)
    for layout in (None, "llama"):
        if layout == "llama" and not is_qwen2(language_model):
            break
        config = llama_config_of(language_model.config) if layout else language_model.config
        with tempfile.TemporaryDirectory() as folder:
            config.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
            difference = encodes_alike(AutoTokenizer.from_pretrained(folder), tokenizer, texts)
        if difference is None:
            return layout
    raise ValueError(f"AutoTokenizer would read the exported tokenizer otherwise than the workflow's: {difference}")


def _in_layout(language_model: PreTrainedModel, layout: str | None) -> PreTrainedModel:
    return as_llama(language_model) if layout == "llama" else language_model
