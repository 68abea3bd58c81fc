"""The tokenizer an exported causal LM carries, in the form lm-eval, vLLM and `pipeline` expect.

This project's word-level and BPE tokenizers (data/tokenization.py) end every encoding with `</s>`: the
workflow's causal prompt is the source and that EOS, its completion the reference and another. Outside
tools expect a tokenizer that adds nothing to a prompt and ends a generation at the model's EOS: lm-eval
scores a continuation as the tokens of `context + continuation` past those of `context`, so an EOS
appended to the context would take the continuation's first token's place. The export's tokenizer
therefore adds no EOS (`add_eos_token: false` in its tokenizer_config.json), and the prompt format lives
where outside tools look for one:

* its chat template writes each message followed by EOS, so `apply_chat_template` (lm-eval's
  `--apply_chat_template`, vLLM's chat endpoint, `pipeline` with messages) gives the workflow's prompt;
* as plain text, a prompt is the source followed by the EOS token's text (`"... </s>"`), which the
  tokenizer reads as the EOS token;
* EXPORT_RECORD (export_record.json) says the workflow appended EOS, so an import of the export
  (data/checkpoint_tokenizer.py) encodes as the workflow did.

A pretrained model's own tokenizer (Qwen's, Llama's) appends nothing and is exported as it is.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from transformers import PreTrainedTokenizerBase

EXPORT_RECORD = "export_record.json"
# Each message, whatever its role, followed by EOS: the workflow's prompt (source + EOS) and completion.
EOS_AFTER_EACH_MESSAGE = "{% for message in messages %}{{ message['content'] }}{{ eos_token }}{% endfor %}"
PROBE_WORDS = 200  # vocabulary entries the read-back check encodes (model_exchange/export.py)


def appends_eos(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether `tokenizer` ends a plain encoding with its EOS token (this project's tokenizers do)."""
    ids = tokenizer("a")["input_ids"]
    return tokenizer.eos_token_id is not None and len(ids) > 0 and ids[-1] == tokenizer.eos_token_id


def tools_tokenizer(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    """A copy of `tokenizer` that appends no EOS, with the EOS-after-each-message chat template where it has
    no template of its own (see the module's docstring); `tokenizer` itself where it appends nothing."""
    if not appends_eos(tokenizer):
        return tokenizer
    exported = copy.deepcopy(tokenizer)
    exported.add_eos_token = False  # rewrites the post-processor: the text's tokens alone
    if exported.add_bos_token:
        exported.add_bos_token = False
    if not exported.chat_template:
        exported.chat_template = EOS_AFTER_EACH_MESSAGE
    if appends_eos(exported):
        raise ValueError(f"{type(tokenizer).__name__}: its EOS could not be taken off a plain encoding for the export")
    return exported


def write_export_record(folder: Path, model_dir: Path, eos_appended: bool, layout: str | None) -> None:
    """What an import needs to encode as the workflow did, and where the export came from."""
    record = {
        "exported_from": str(Path(model_dir).resolve()),
        "prompt_add_eos_token": eos_appended,  # the workflow's tokenizer appended EOS to every encoding
        "written_as": layout,  # the model type the export was rewritten to, or null (model_exchange/llama_layout.py)
    }
    (folder / EXPORT_RECORD).write_text(json.dumps(record, indent=2) + "\n")


def read_export_record(folder: Path) -> dict | None:
    file = Path(folder) / EXPORT_RECORD
    return json.loads(file.read_text()) if file.is_file() else None


def probe_texts(tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """Texts that cover the vocabulary evenly, for checking that another tokenizer object encodes alike:
    its entries (specials left out) decoded in runs of ten."""
    special = set(tokenizer.all_special_ids)
    ids = [index for index in range(len(tokenizer)) if index not in special]
    step = max(1, len(ids) // PROBE_WORDS)
    sample = ids[::step][:PROBE_WORDS]
    return [tokenizer.decode(sample[start : start + 10]) for start in range(0, len(sample), 10)]


def encodes_alike(loaded: PreTrainedTokenizerBase, expected: PreTrainedTokenizerBase, texts: list[str]) -> str | None:
    """None where `loaded` encodes every text as `expected` does; else what differs on the first that
    differs (text, both id lists and both classes)."""
    for text in texts:
        got, want = loaded(text)["input_ids"], expected(text)["input_ids"]
        if got != want:
            return f"{text!r}: {type(loaded).__name__} gives {got[:12]}, {type(expected).__name__} {want[:12]}"
    return None
