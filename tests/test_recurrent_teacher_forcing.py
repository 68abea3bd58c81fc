"""Teacher forcing runs the output layer of the copy models once over all positions (recurrent.py
`forward`); decoding runs it step by step (`step`, as every search does). Both must give the same log-
probabilities, loss and gradients, to float tolerance, for both models with their features, copy and
coverage."""

import pytest
import torch
from settings import tiny_recurrent
from stepwise_reference import stepwise_teacher_forcing
from transformers import DataCollatorForSeq2Seq

from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
from gold_textgen.data.token_features import FEATURE_TAGS
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.models.transformer import initial_model

RECORDS = [
    {"id": 1, "source": "a b zz c d", "target": "b zz yy a"},
    {"id": 2, "source": "c", "target": "d e a c b"},
    {"id": 3, "source": "e d c b a e", "target": "a"},
]


def setup(architecture: str):
    torch.manual_seed(0)
    tokenizer = train_tokenizer(["a b c d e"], copy_slots=3)
    features = ["answer"] if architecture == "nqg_pp" else []
    values = {"coverage": True, "coverage_loss_weight": 1.0} if architecture == "pointer_generator" else {"features": features}
    model = initial_model(
        tiny_recurrent(architecture, **values), tokenizer, {"answer": len(FEATURE_TAGS["answer"]) + 1} if features else None
    )
    records = [{**record, "token_features": {"answer": [FEATURE_TAGS["answer"][0]] * len(record["source"].split())}} for record in RECORDS]
    dataset = tokenize_records(records, tokenizer, 10, 10, features)
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))(list(dataset))
    return model, batch


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_teacher_forcing_equals_the_step_by_step_path(architecture):
    model, batch = setup(architecture)
    model.eval()  # no dropout masks: the two paths draw them in another order
    output = model(**batch)
    (batched,) = [torch.autograd.grad(output.loss, list(model.parameters()), allow_unused=True)]
    logits, loss = stepwise_teacher_forcing(model, batch)
    (reference,) = [torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)]
    assert torch.allclose(output.logits, logits, atol=1e-6)
    assert output.loss.item() == pytest.approx(loss.item(), rel=1e-6)
    for ours, theirs in zip(batched, reference, strict=True):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert torch.allclose(ours, theirs, atol=1e-6, rtol=1e-5)
