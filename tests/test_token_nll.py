"""Which label positions the token-NLL table (and so perplexity) scores, on a pretrained BART layout."""

from __future__ import annotations

import json

import pytest
import torch
from settings import TINY_MODEL
from tokenizers import pre_tokenizers
from transformers import BartTokenizerFast

from gold_textgen.data.tokenization import leading_target_specials, train_tokenizer
from gold_textgen.evaluation.token_nll import token_nll_table
from gold_textgen.models.transformer import build_scratch_model

RECORDS = [{"source": "the cat sat", "target": "a cat"}, {"source": "dogs run far away", "target": "dogs run"}]


@pytest.fixture(scope="module")
def bart_tokenizer(tmp_path_factory) -> BartTokenizerFast:
    """A byte-level BPE tokenizer in BART's pretrained format (vocab.json + merges.txt, BART's special ids)."""
    folder = tmp_path_factory.mktemp("bart_tokenizer")
    vocab = {token: index for index, token in enumerate(["<s>", "<pad>", "</s>", "<unk>"])}
    for char in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab.setdefault(char, len(vocab))
    vocab["<mask>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return BartTokenizerFast(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"))


def test_bart_targets_start_with_a_start_token_and_ours_do_not(bart_tokenizer):
    assert bart_tokenizer(text_target="a cat")["input_ids"][0] == bart_tokenizer.bos_token_id
    assert leading_target_specials(bart_tokenizer) == 1
    assert leading_target_specials(train_tokenizer(["a cat", "dogs run"])) == 0


def test_perplexity_positions_of_a_bart_layout_model_exclude_the_start_token(bart_tokenizer):
    torch.manual_seed(0)
    model = build_scratch_model({**TINY_MODEL, "architecture": "bart", "max_position_embeddings": 64}, bart_tokenizer)
    labels = [bart_tokenizer(text_target=r["target"])["input_ids"] for r in RECORDS]
    every = token_nll_table(model, bart_tokenizer, RECORDS, 32, 32, batch_size=2)
    scored = token_nll_table(model, bart_tokenizer, RECORDS, 32, 32, batch_size=2, skip_leading=leading_target_specials(bart_tokenizer))
    assert len(every) == sum(len(ids) for ids in labels)
    assert len(scored) == sum(len(ids) - 1 for ids in labels)
    for example, ids in enumerate(labels):
        rows = scored[scored["example"] == example]
        assert rows["token_id"].tolist() == ids[1:]  # reference tokens and EOS, no <s>
        assert rows["position"].tolist() == list(range(len(ids) - 1))  # time steps from the first reference token
        full = every[every["example"] == example]
        assert rows["nll"].tolist() == full["nll"].tolist()[1:]
