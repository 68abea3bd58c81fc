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
