import pytest

from gold_textgen.data.tokenization import load_tokenizer, train_tokenizer

TEXTS = ["kamo tisa runo", "bade lufi", "kamo bade", "tisa runo lufi bade"]


@pytest.mark.parametrize("kind", ["wordlevel", "bpe"])
def test_roundtrip_appends_eos_and_survives_save(tmp_path, kind):
    tokenizer = train_tokenizer(TEXTS, kind=kind, vocab_size=60)
    ids = tokenizer("kamo tisa runo")["input_ids"]
    assert ids[-1] == tokenizer.eos_token_id and ids[0] != tokenizer.bos_token_id
    assert tokenizer.decode(ids, skip_special_tokens=True) == "kamo tisa runo"
    tokenizer.save_pretrained(tmp_path)
    assert load_tokenizer(tmp_path)("kamo tisa runo")["input_ids"] == ids


def test_special_tokens_have_bart_ids():
    tokenizer = train_tokenizer(TEXTS)
    assert (tokenizer.bos_token_id, tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) == (0, 1, 2, 3)


def test_unknown_words_map_to_unk():
    tokenizer = train_tokenizer(TEXTS)
    assert tokenizer("zzz")["input_ids"] == [tokenizer.unk_token_id, tokenizer.eos_token_id]


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown tokenizer kind"):
        train_tokenizer(TEXTS, kind="sentencepiece")


def test_the_collators_pad_right_whatever_the_tokenizer_object_says_and_fall_back_to_eos(caplog):
    """A tokenizer object left padding on the left (as Llama-family tokenizers do), handed to the project's
    collator: labels and the cached rewards of each row stay aligned from the left; the caller's object is
    not changed. A tokenizer without a pad token pads with EOS, and says so."""
    import logging

    import torch
    from transformers import DataCollatorForSeq2Seq

    from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator

    tokenizer = train_tokenizer(["a b c d e f"])
    tokenizer.padding_side = "left"
    rows = [
        {"input_ids": [4, 5, 2], "labels": [6, 7, 8, 2], "reward_logprobs": [-0.1, -0.2, -0.3, -0.4]},
        {"input_ids": [4, 2], "labels": [6, 2], "reward_logprobs": [-0.5, -0.6]},
    ]
    with caplog.at_level(logging.INFO):
        batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer), label_fields=("reward_logprobs",))([dict(r) for r in rows])
    assert tokenizer.padding_side == "left"  # the caller's object as it was
    assert batch["labels"][1].tolist() == [6, 2, -100, -100]
    assert torch.equal(batch["reward_logprobs"][1], torch.tensor([-0.5, -0.6, 0.0, 0.0]))
    assert batch["input_ids"][1].tolist() == [4, 2, tokenizer.pad_token_id]
    assert "pads on the left" in caplog.text

    no_pad = train_tokenizer(["a b c d e f"])
    no_pad.pad_token = None
    assert no_pad.pad_token is None
    with caplog.at_level(logging.INFO):
        batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(no_pad))([{"input_ids": [4, 5, 2]}, {"input_ids": [4, 2]}])
    assert batch["input_ids"][1].tolist() == [4, 2, no_pad.eos_token_id]
    assert "no pad token: padding with its EOS token" in caplog.text


def test_a_saved_tokenizer_without_a_pad_token_loads_padding_with_eos(tmp_path):
    tokenizer = train_tokenizer(["a b c"])
    tokenizer.pad_token = None
    tokenizer.save_pretrained(tmp_path)
    loaded = load_tokenizer(tmp_path)
    assert loaded.pad_token == loaded.eos_token == "</s>" and loaded.padding_side == "right"


def test_a_vocabulary_that_leaves_most_words_unknown_is_refused_by_the_tokenizer_job():
    from gold_textgen.data.vocabulary_coverage import copied_unk_rate, coverage_problem, unk_rate

    texts = [f"the cat w{i} w{i + 1} w{i + 2}" for i in range(0, 60, 3)]  # "the" and "cat" 20 times, every other word once
    settings = {"min_frequency": 5, "vocab_size": 8000, "max_unk_share": 20, "copy_slots": 0}
    few = train_tokenizer(texts, min_frequency=5)
    assert unk_rate(few, texts) == 60.0  # 3 of each sentence's 5 words
    assert "60.0% of the training references' tokens are <unk> (above tokenizer.max_unk_share, 20%)" in coverage_problem(60.0, settings)
    assert "lower tokenizer.min_frequency (now 5)" in coverage_problem(60.0, settings)
    assert unk_rate(train_tokenizer(texts), texts) == 0.0
    assert coverage_problem(20.0, settings) is None
    assert coverage_problem(60.0, {**settings, "max_unk_share": 61}) is None
    # A copy model writes the reference words its source holds: of "the cat w0 w1 w2" with the source
    # "w0 w1", only w2 stays unknown (1 token in 5).
    copying = train_tokenizer(texts, min_frequency=5, copy_slots=4)
    pairs = [(" ".join(text.split()[2:4]), text) for text in texts]
    assert copied_unk_rate(copying, pairs) == 20.0
    assert "even with copying from the source" in coverage_problem(30.0, {**settings, "copy_slots": 4})
