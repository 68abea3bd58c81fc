"""An imported checkpoint's tokenizer is checked on the run's texts (data/checkpoint_tokenizer.py): a folder
whose class `AutoTokenizer` would read otherwise than its tokenizer.json (a Qwen2 config beside this
project's word-level tokenizer, as a TRL SFTTrainer checkpoint saves it) is loaded as the file encodes and
the log says so; an export's recorded prompt format (EOS after the prompt) comes back on import."""

from __future__ import annotations

import logging

from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

from gold_textgen.data.checkpoint_tokenizer import AUTO, FILE_CLASS, checked_tokenizer_settings, model_tokenizer
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.model_exchange.export_tokenizer import tools_tokenizer, write_export_record
from gold_textgen.model_exchange.import_record import checked_import, write_import_record

TEXTS = ["kiri nomo kiko", "turasu rituna rinopa sapuri", "fozobu vudelu dodyvi"]
KEY = "tasks.demo.imported_models.mine.path"


def saved_qwen2(folder, tokenizer) -> None:
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2
    )
    Qwen2ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def imported(tmp_path, checkpoint):
    record = checked_import(checkpoint, None, KEY)
    record["tokenizer"] = checked_tokenizer_settings(checkpoint, TEXTS, KEY)
    write_import_record(tmp_path / "record", record)
    return record["tokenizer"], model_tokenizer(tmp_path / "record")


def test_a_checkpoint_autotokenizer_misreads_is_loaded_as_its_tokenizer_file_encodes(tmp_path, caplog):
    workflow = train_tokenizer(TEXTS * 2)
    saved_qwen2(tmp_path / "sft", workflow)
    assert AutoTokenizer.from_pretrained(tmp_path / "sft")(TEXTS[0])["input_ids"] != workflow(TEXTS[0])["input_ids"]  # the trap
    with caplog.at_level(logging.WARNING):
        settings, tokenizer = imported(tmp_path, tmp_path / "sft")
    assert settings == {"class": FILE_CLASS, "add_eos_token": False, "checked_texts": len(TEXTS)}
    assert "loaded as TokenizersBackend" in caplog.text
    for text in TEXTS:
        assert tokenizer(text)["input_ids"] == workflow(text)["input_ids"]  # EOS after the prompt included


def test_an_exports_prompt_format_comes_back_on_import(tmp_path):
    workflow = train_tokenizer(TEXTS * 2)
    exported = tools_tokenizer(workflow)
    assert exported(TEXTS[0])["input_ids"] == workflow(TEXTS[0])["input_ids"][:-1]
    exported.save_pretrained(tmp_path / "export")
    (tmp_path / "export" / "config.json").write_text('{"model_type": "llama"}')
    write_export_record(tmp_path / "export", tmp_path / "model", eos_appended=True, layout="llama")
    settings, tokenizer = imported(tmp_path, tmp_path / "export")
    assert settings == {"class": AUTO, "add_eos_token": True, "checked_texts": len(TEXTS)}
    for text in TEXTS:
        assert tokenizer(text)["input_ids"] == workflow(text)["input_ids"]
