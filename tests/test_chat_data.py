"""Conversations as a workflow task's data (local format `chat`): the last turn, the assistant's, is the
target; the turns before it reach a decoder-only model through its tokenizer's chat template, in
training, token NLL and decoding alike (data/seq2seq_batches.py: source_ids)."""

from __future__ import annotations

import json

import pytest
import yaml
from chat_models import conversations, tiny_chat_model
from conftest import run_snakemake

from gold_textgen.data.records import DataFormatError, load_chat
from gold_textgen.data.seq2seq_batches import encode_records
from gold_textgen.data.tokenization import load_tokenizer


def write_jsonl(path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_conversation_is_its_prompt_turns_and_the_assistants_last_answer(tmp_path):
    turns = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 1 plus 2?"},
        {"role": "assistant", "content": "It is 3."},
    ]
    write_jsonl(tmp_path / "chat.jsonl", [{"id": "a", "messages": turns}])
    (record,) = load_chat(tmp_path / "chat.jsonl")
    assert record["target"] == "It is 3." and record["messages"] == turns[:2]
    assert record["source"] == "system: Answer briefly.\nuser: What is 1 plus 2?"
    write_jsonl(tmp_path / "bad.jsonl", [{"messages": turns[:2]}])
    with pytest.raises(DataFormatError, match=r"bad\.jsonl:1: the last turn is the user's"):
        load_chat(tmp_path / "bad.jsonl")
    write_jsonl(tmp_path / "bad.jsonl", [{"messages": [{"role": "robot", "content": "x"}, turns[2]]}])
    with pytest.raises(DataFormatError, match="turn 0 of 'messages' is not a"):
        load_chat(tmp_path / "bad.jsonl")


def test_the_prompt_is_the_chat_templates_and_a_tokenizer_without_one_is_refused(tmp_path):
    data = conversations(3)
    tiny_chat_model(tmp_path / "model", [turn["content"] for row in data for turn in row["messages"]])
    write_jsonl(tmp_path / "chat.jsonl", data)
    records = load_chat(tmp_path / "chat.jsonl")
    tokenizer = load_tokenizer(tmp_path / "model")
    encoded = encode_records(records, tokenizer, 64, 32, causal=True)
    for record, example in zip(records, encoded, strict=True):
        prompt = tokenizer.apply_chat_template(record["messages"], add_generation_prompt=True, tokenize=False)
        assert prompt.endswith("Assistant: ") and example["input_ids"] == tokenizer(prompt, add_special_tokens=False)["input_ids"]
        assert example["labels"] == tokenizer(record["target"])["input_ids"] + [tokenizer.eos_token_id]
    shortened = encode_records(records, tokenizer, 4, 32, causal=True)[0]["input_ids"]
    assert shortened == encoded[0]["input_ids"][-4:]  # the oldest tokens go, the assistant's opening stays
    tokenizer.chat_template = None
    with pytest.raises(DataFormatError, match="no chat template"):
        encode_records(records, tokenizer, 64, 32, causal=True)


@pytest.mark.workflow
@pytest.mark.slow
def test_a_causal_task_trains_and_decodes_on_conversations(tmp_path):
    """A local chat corpus and a pretrained chat model's folder: SFT, then the test split decoded and
    scored, each prompt rendered by the model's chat template."""
    numbers = conversations(56)  # disjoint splits: the data checks refuse a test split that is training data
    rows = {"train": numbers[:40], "valid": numbers[40:48], "test": [{"id": f"t{i}", **row} for i, row in enumerate(numbers[48:])]}
    for split, data in rows.items():
        write_jsonl(tmp_path / f"data/{split}.jsonl", data)
    tiny_chat_model(tmp_path / "chat_model", [turn["content"] for row in numbers for turn in row["messages"]])
    task = {
        "source": {"kind": "local", "format": "chat", "train": "data/train.jsonl", "valid": "data/valid.jsonl", "test": "data/test.jsonl"},
        "model": {"kind": "pretrained", "architecture": "causal", "name_or_path": str(tmp_path / "chat_model")},
        "max_source_length": 32,
        "max_target_length": 16,
        "mle": {"max_steps": 4, "eval_steps": 2, "warmup_steps": 1, "batch_size": 8, "eval_max_examples": 8},
        "generation": {"max_new_tokens": 8},
    }
    overlay = {
        "experiment": {"name": "chat", "tasks": ["chat"], "objectives": ["mle"], "seeds": [1], "allow_unconverged_mle": True},
        "tasks": {"chat": task},
    }
    (tmp_path / "chat.yaml").write_text(yaml.safe_dump(overlay))
    scores = "results/chat/scores/chat/mle/seed1/test/greedy/sample0.json"
    run_snakemake(tmp_path, "--cores", "2", scores, "--configfile", str(tmp_path / "chat.yaml"))
    assert json.loads((tmp_path / scores).read_text())["objective"] == "mle"
    generations = [json.loads(line) for line in (tmp_path / "results/chat/generations/chat/mle/seed1/test/greedy/sample0.jsonl").open()]
    assert [row["reference"] for row in generations] == [row["messages"][-1]["content"] for row in rows["test"]]
    prepared = [json.loads(line) for line in (tmp_path / "results/chat/data/chat/test.jsonl").open()]
    assert prepared[0]["messages"] == rows["test"][0]["messages"][:-1]
