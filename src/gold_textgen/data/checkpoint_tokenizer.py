"""An imported checkpoint's tokenizer, checked on the run's own texts before anything is evaluated with it.

`AutoTokenizer` does not always load the tokenizer a folder holds: beside a `qwen2` config it builds Qwen's
byte-level BPE from the vocabulary whatever `tokenizer_config.json` names (a TRL `SFTTrainer` checkpoint of
a model built with this project's tokenizer is such a folder), which encodes the run's prompts as nothing
but EOS. The import (rule import_model) therefore encodes the test split's sources and references with
the tokenizer `AutoTokenizer` gives and with the folder's own `tokenizer.json` (the `tokenizers` library,
no transformers class in between):

* equal: `AutoTokenizer`'s class is used, as for any pretrained model;
* different, and transformers' plain `TokenizersBackend` (PreTrainedTokenizerFast) over `tokenizer.json`
  encodes as the file does: that class is used, and the log says so;
* different either way: the import is refused, naming the first text that differs and both encodings.

A folder without `tokenizer.json` (a sentencepiece model alone) has nothing to check against: its
tokenizer is used as `AutoTokenizer` loads it, and the log says so. A `gold-textgen export` of a workflow
model (model_exchange/export_tokenizer.py) records that the workflow's prompts ended with EOS: the import puts it
back, so the model is prompted as it was trained. The result is part of the import record
(`tokenizer`), which every evaluation of the imported model reads.
"""

from __future__ import annotations

import logging
from pathlib import Path

from tokenizers import Tokenizer
from transformers import AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

from ..model_exchange.export_tokenizer import read_export_record
from ..model_exchange.import_record import import_record, recorded_tokenizer_folder
from ..runtime.errors import ConfigError
from .tokenization import load_tokenizer, padding_right

log = logging.getLogger(__name__)

TOKENIZER_FILE = "tokenizer.json"
AUTO, FILE_CLASS = "AutoTokenizer", "TokenizersBackend"


def checked_tokenizer_settings(folder: Path, texts: list[str], key: str) -> dict:
    """How the tokenizer in `folder` is to be loaded (`class`: AUTO or FILE_CLASS, `add_eos_token`), after
    checking it on `texts` (see the module's docstring); `key` names the import in a refusal."""
    export = read_export_record(folder) or {}
    settings = {"class": AUTO, "add_eos_token": bool(export.get("prompt_add_eos_token", False)), "checked_texts": 0}
    file = Path(folder) / TOKENIZER_FILE
    if not file.is_file():
        log.info("%s has no %s: its tokenizer is used as AutoTokenizer loads it, unchecked", folder, TOKENIZER_FILE)
        return settings
    reference = Tokenizer.from_file(str(file))
    settings["checked_texts"] = len(texts)
    auto = _differs(AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False), reference, texts)
    if auto is None:
        return settings
    own = _differs(PreTrainedTokenizerFast.from_pretrained(str(folder)), reference, texts)
    if own is not None:
        raise ConfigError(f"config key {key}: no tokenizer class encodes as {file} does; AutoTokenizer: {auto}; TokenizersBackend: {own}")
    log.warning(
        "%s: AutoTokenizer's class encodes otherwise than its %s (%s); the tokenizer is loaded as TokenizersBackend, "
        "which encodes the test split as the file does",
        folder,
        TOKENIZER_FILE,
        auto,
    )
    return {**settings, "class": FILE_CLASS}


def model_tokenizer(model_dir: Path) -> PreTrainedTokenizerBase:
    """The tokenizer a workflow model folder's model reads: its own, or for an imported model the checkpoint's,
    loaded as its import record says."""
    record = import_record(model_dir)
    folder = Path(model_dir) if record is None else recorded_tokenizer_folder(record)
    settings = (record or {}).get("tokenizer")
    if settings is None:
        return load_tokenizer(folder)
    options = {"add_eos_token": True} if settings["add_eos_token"] else {}
    if settings["class"] == FILE_CLASS:
        return padding_right(PreTrainedTokenizerFast.from_pretrained(str(folder), **options))
    return padding_right(AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False, **options))


def _differs(loaded: PreTrainedTokenizerBase, reference: Tokenizer, texts: list[str]) -> str | None:
    """None where `loaded` encodes every text's words as `reference` does (special tokens left out: the
    record says which the workflow adds); else the first difference."""
    for text in texts:
        got = loaded(text, add_special_tokens=False)["input_ids"]
        want = reference.encode(text, add_special_tokens=False).ids
        if got != want:
            return f"{text[:60]!r} is {got[:10]} where the file gives {want[:10]}"
    return None
