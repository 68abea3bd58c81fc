"""Which label positions the token-NLL table (and so perplexity) scores, on a pretrained BART layout; the
table's numbers are those of the whole [B, T, V] table's log-softmax."""

from __future__ import annotations

import json

import pytest
import torch
from settings import TINY_MODEL
from test_causal_models import tiny_causal_setup
from test_recurrent_teacher_forcing import RECORDS as RECURRENT_RECORDS
from test_recurrent_teacher_forcing import setup
from tokenizers import pre_tokenizers
from transformers import BartTokenizerFast, DataCollatorForSeq2Seq

from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
from gold_textgen.data.token_features import FEATURE_TAGS
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


def whole_table_nll(model, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Each label position's NLL and top-1 hit from the log-softmax of the whole [B, T, V] table, padding
    included: what the token table held before it took the scored rows first."""
    labels = batch["labels"]
    logits = model(**batch).logits.float()
    nll = -torch.log_softmax(logits, dim=-1).gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    mask = labels.ne(-100)
    return nll[mask], logits.argmax(-1).eq(labels.clamp_min(0))[mask]


@pytest.mark.parametrize("architecture", ["nqg_pp", "bart"])
def test_the_table_reads_the_scored_rows_with_the_whole_tables_numbers(architecture, bart_tokenizer):
    """The token table takes the scored rows before its log-softmax: the same NLL bit for bit (a row's
    log-softmax does not depend on the other rows), on a recurrent copy model and a transformer."""
    if architecture == "nqg_pp":
        model, _ = setup("nqg_pp")
        tokenizer, features = train_tokenizer(["a b c d e"], copy_slots=3), ["answer"]
        tags = FEATURE_TAGS["answer"][0]
        records = [{**r, "token_features": {"answer": [tags] * len(r["source"].split())}} for r in RECURRENT_RECORDS]
    else:
        torch.manual_seed(0)
        tokenizer, records, features = bart_tokenizer, RECORDS, []
        model = build_scratch_model({**TINY_MODEL, "architecture": "bart", "max_position_embeddings": 64}, tokenizer)
    model.eval()
    table = token_nll_table(model, tokenizer, records, 10, 10, batch_size=len(records), features=features)
    examples = tokenize_records(records, tokenizer, 10, 10, features)
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))(list(examples))
    with torch.no_grad():
        nll, correct = whole_table_nll(model, batch)  # row-major: the table's order (example, position)
    assert torch.equal(torch.tensor(table["nll"].to_numpy()), nll)
    assert table["correct"].tolist() == correct.tolist()


def model_under_test(kind: str, bart_tokenizer):
    """(model in eval mode, tokenizer, records, features, causal) of one model family, from seed 0."""
    if kind in ("nqg_pp", "pointer_generator"):
        model, _ = setup(kind)
        if kind == "pointer_generator":
            model.config.coverage_loss_weight = 0.0  # the dev loss is the NLL alone; coverage is a training term
        features = ["answer"] if kind == "nqg_pp" else []
        tags = FEATURE_TAGS["answer"][0]
        records = [{**r, "token_features": {"answer": [tags] * len(r["source"].split())}} for r in RECURRENT_RECORDS]
        return model.eval(), train_tokenizer(["a b c d e"], copy_slots=3), records, features, False
    if kind == "bart":
        torch.manual_seed(0)
        model = build_scratch_model({**TINY_MODEL, "architecture": "bart", "max_position_embeddings": 64}, bart_tokenizer)
        return model.eval(), bart_tokenizer, RECORDS, [], False
    records, tokenizer, model, _ = tiny_causal_setup()
    return model.eval(), tokenizer, records, [], True


@pytest.mark.parametrize("kind", ["nqg_pp", "pointer_generator", "bart", "causal"])
def test_the_token_table_and_the_dev_loss_give_one_nll(kind, bart_tokenizer):
    """One NLL: the mean of a token table over every label position equals the loss the model reports in
    evaluation (what the Trainer's dev loss is), for the copy models, a transformer (transformers' own
    loss) and a decoder-only model, one batch of the same records."""
    model, tokenizer, records, features, causal = model_under_test(kind, bart_tokenizer)
    table = token_nll_table(model, tokenizer, records, 10, 10, batch_size=len(records), features=features, causal=causal)
    examples = tokenize_records(records, tokenizer, 10, 10, features, causal=causal)
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))(list(examples))
    with torch.no_grad():
        dev_loss = model(**batch).loss.item()
    assert len(table) == int(batch["labels"].ne(-100).sum())
    assert float(table["nll"].astype("float64").mean()) == pytest.approx(dev_loss, rel=1e-5)
