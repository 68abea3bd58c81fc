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

The recurrent NQG++ and pointer-generator models have no class in transformers: they load with
`AutoModelForSeq2SeqLM.from_pretrained(MODEL_DIR)` once `gold_textgen.models.recurrent` is imported.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

from transformers import AutoTokenizer, PreTrainedModel

from .import_record import import_record
from .lora import peft_model_in
from .prompt_completion import PromptCompletionLM
from .recurrent import RecurrentSeq2SeqModel
from .transformer import load_pretrained_model


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
    written = write_export(model_dir, partial)
    partial.rename(out)
    return {what: out / folder.relative_to(partial) for what, folder in written.items()}


def write_export(model_dir: Path, out: Path) -> dict[str, Path]:
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
    adapters = peft_model_in(model)
    if adapters is None:
        return {"model": save(model.language_model, tokenizer, out)}
    written = {"adapter": save(adapters, tokenizer, out / "adapter")}
    written["base"] = save(copy.deepcopy(adapters).unload(), tokenizer, out / "base")  # the base without the adapter
    written["model"] = save(adapters.merge_and_unload(), tokenizer, out)
    return written
