"""Teacher forcing runs the output layer of the copy models once over all positions (recurrent.py
`forward`); decoding runs it step by step (`step`, as every search does). Both must give the same log-
probabilities, loss and gradients, to float tolerance, for both models with their features, copy and
coverage. Teacher forcing computes only the positions a loss reads (packed_positions.py): against every
position of the padded batch (the forward before packing), the same loss, log-probabilities at the labels
and gradients, with dropout drawing the same masks, with labels and with decoder inputs alone."""

import math

import pytest
import torch
from settings import tiny_recurrent
from stepwise_reference import stepwise_teacher_forcing, unpacked_teacher_forcing
from transformers import DataCollatorForSeq2Seq

from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
from gold_textgen.data.token_features import FEATURE_TAGS
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.models.attentive_gru import SourceLayout
from gold_textgen.models.encoded_source import EncodedSource
from gold_textgen.models.packed_positions import PackedPositions
from gold_textgen.models.transformer import initial_model

RECORDS = [
    {"id": 1, "source": "a b zz c d", "target": "b zz yy a"},
    {"id": 2, "source": "c", "target": "d e a c b"},
    {"id": 3, "source": "e d c b a e", "target": "a"},
]


def setup(architecture: str, dropout: float = 0.0):
    torch.manual_seed(0)
    tokenizer = train_tokenizer(["a b c d e"], copy_slots=3)
    features = ["answer"] if architecture == "nqg_pp" else []
    values = {"coverage": True, "coverage_loss_weight": 1.0} if architecture == "pointer_generator" else {"features": features}
    values["dropout"] = dropout
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
    mask = batch["labels"].ne(-100)  # the positions teacher forcing computes
    assert torch.allclose(output.logits[mask], logits[mask], atol=1e-6)
    assert output.loss.item() == pytest.approx(loss.item(), rel=1e-6)
    for ours, theirs in zip(batched, reference, strict=True):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert torch.allclose(ours, theirs, atol=1e-6, rtol=1e-5)


def gradients(loss: torch.Tensor, model) -> list[torch.Tensor | None]:
    return list(torch.autograd.grad(loss, list(model.parameters()), allow_unused=True))


def assert_same_gradients(ours: list, theirs: list) -> None:
    for mine, reference in zip(ours, theirs, strict=True):
        assert (mine is None) == (reference is None)
        if mine is not None:
            assert torch.allclose(mine, reference, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_packed_teacher_forcing_trains_as_every_position_did_dropout_included(architecture):
    model, batch = setup(architecture, dropout=0.3)
    model.train()
    torch.manual_seed(7)
    output = model(**batch)
    packed = gradients(output.loss, model)
    torch.manual_seed(7)  # the same draws: the readout's dropout mask is drawn for every position
    logits, loss, coverage = unpacked_teacher_forcing(model, batch)
    mask = batch["labels"].ne(-100)
    assert mask.sum() < mask.numel()  # the batch has padding to skip
    assert output.loss.item() == pytest.approx(loss.item(), rel=1e-6)
    assert torch.allclose(output.logits[mask], logits[mask], atol=1e-6)
    if coverage is not None:
        assert torch.allclose(output.coverage_losses[mask], coverage[mask], atol=1e-6)
    assert_same_gradients(packed, gradients(loss, model))
    torch.manual_seed(8)
    assert not torch.equal(model(**batch).logits[mask], output.logits[mask])  # dropout did draw


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_packed_teacher_forcing_from_decoder_inputs_alone_gives_the_fine_tuning_losses_their_numbers(architecture):
    """Fine-tuning calls the model without labels and reads log_softmax(logits) at the labels."""
    model, batch = setup(architecture, dropout=0.3)
    model.train()
    inputs = {key: value for key, value in batch.items() if key != "labels"}
    mask = batch["labels"].ne(-100)

    def reference_loss(logits: torch.Tensor) -> torch.Tensor:
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        return -(logprobs.gather(-1, batch["labels"].clamp_min(0).unsqueeze(-1)).squeeze(-1) * mask).sum()

    torch.manual_seed(3)
    logits = model(**inputs).logits
    packed = gradients(reference_loss(logits), model)
    torch.manual_seed(3)
    unpacked_logits, _, _ = unpacked_teacher_forcing(model, batch, with_labels=False)
    assert torch.allclose(logits[mask], unpacked_logits[mask], atol=1e-6)
    assert_same_gradients(packed, gradients(reference_loss(unpacked_logits), model))


def test_positions_not_computed_read_as_a_uniform_distribution():
    model, batch = setup("nqg_pp")
    model.eval()
    with torch.no_grad():
        logits = model(**batch).logits
    skipped = batch["labels"].eq(-100)
    size = model.config.output_size
    assert skipped.any()
    assert torch.allclose(logits[skipped], torch.full_like(logits[skipped], -math.log(size)))
    assert torch.allclose(torch.log_softmax(logits[skipped], dim=-1), logits[skipped], atol=1e-6)


def test_packed_positions_run_each_row_to_its_last_label_longest_first():
    labels = torch.tensor([[5, 6, -100, -100], [5, 6, 7, 8], [5, -100, -100, -100]])
    positions = PackedPositions.of(labels, torch.zeros_like(labels), pad_token_id=0)
    assert positions.order.tolist() == [1, 0, 2]
    assert positions.active == [3, 2, 1, 1]
    assert positions.rows.tolist() == [1, 0, 2, 1, 0, 1, 1]
    assert positions.flat.tolist() == [4, 0, 8, 5, 1, 6, 7]
    assert sorted(positions.skipped.tolist()) == [2, 3, 9, 10, 11]
    values = torch.arange(7.0).unsqueeze(1)
    assert positions.unpack(values, fill=-1.0).squeeze(-1).tolist() == [[1, 4, -1, -1], [0, 3, 5, 6], [2, -1, -1, -1]]
    assert positions.take(positions.unpack(values)).equal(values)


def test_without_labels_a_row_runs_to_its_last_decoder_input_that_is_not_padding():
    pad = 0
    decoder_input_ids = torch.tensor([[2, 5, 6, pad], [2, pad, pad, pad], [2, 5, 6, 7]])
    positions = PackedPositions.of(None, decoder_input_ids, pad)
    assert positions.order.tolist() == [2, 0, 1]
    assert positions.active == [3, 2, 2, 1]


def test_nqg_pps_written_out_recurrence_trains_as_the_loop_through_autograd(monkeypatch):
    """NQG++'s decoder recurrence on a CPU (attentive_gru.py) against the position-by-position loop through
    autograd that the pointer-generator runs: the same loss, log-probabilities and gradients of every
    weight, dropout included."""
    model, batch = setup("nqg_pp", dropout=0.3)
    model.train()
    assert model.runs_attentive_gru(batch["input_ids"])
    results = []
    for written_out in (True, False):
        monkeypatch.setattr(type(model), "runs_attentive_gru", lambda self, ids, written_out=written_out: written_out)
        torch.manual_seed(5)
        output = model(**batch)
        results.append((output.loss, output.logits, gradients(output.loss, model)))
    (loss, logits, ours), (expected_loss, expected_logits, theirs) = results
    mask = batch["labels"].ne(-100)
    assert loss.item() == pytest.approx(expected_loss.item(), rel=1e-6)
    assert torch.allclose(logits[mask], expected_logits[mask], atol=1e-6)
    assert_same_gradients(ours, theirs)
    recurrent = [name.startswith(("decoder_cell", "attention")) for name, _ in model.named_parameters()]
    assert all(gradient.abs().sum() > 0 for gradient, kept in zip(ours, recurrent, strict=True) if kept)  # the loop's weights learn


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_the_prefixes_of_the_encoded_source_add_their_gradients_as_slicing_them_did(architecture, monkeypatch):
    """EncodedSource.prefixes gives every decoder step its rows of the encoder's outputs and keys with one
    backward that adds their gradients in place (RowPrefixes): the gradients bit for bit as slicing at every
    step gives them, dropout included."""
    model, batch = setup(architecture, dropout=0.3)
    model.train()
    monkeypatch.setattr(type(model), "runs_attentive_gru", lambda self, ids: False)  # NQG++ through the loop that slices
    torch.manual_seed(4)
    ours = gradients(model(**batch).loss, model)
    sliced_at_every_step = lambda self, counts: [EncodedSource(*(part[:rows] for part in self.parts())) for rows in counts]  # noqa: E731
    monkeypatch.setattr(EncodedSource, "prefixes", sliced_at_every_step)
    torch.manual_seed(4)
    sliced = gradients(model(**batch).loss, model)
    for mine, reference in zip(ours, sliced, strict=True):
        assert (mine is None and reference is None) or torch.equal(mine, reference)


def test_the_source_layout_gives_each_position_the_valid_source_positions_of_its_rows():
    """attentive_gru.SourceLayout: rows in the packed order (longest reference first), each row's valid source
    positions in order; the rows still going at a position are the first ones, so their source positions
    are a prefix, and each position's span follows the last."""
    valid = torch.tensor([[True, False, False], [True, True, True], [True, True, False]])
    positions = PackedPositions.of_lengths(torch.tensor([3, 2, 1]), width=3)  # already longest first
    layout = SourceLayout(valid, positions)
    assert layout.rows.tolist() == [0, 1, 1, 1, 2, 2]
    assert layout.ends == [0, 1, 4, 6]
    assert positions.active == [3, 2, 1]
    assert layout.spans == [slice(0, 6), slice(6, 10), slice(10, 11)]
    assert layout.total == 11


def test_an_output_layer_that_computes_more_than_its_weight_trains_through_its_own_forward():
    """A loss at the labels takes its gradient to the readout and the output weight directly only from a
    plain linear output layer (projected_log_softmax.py); a wrapped one (as PEFT's LoRA layers wrap it) that
    adds parameters of its own gives them the gradient that the full table's loss gives them."""
    model, batch = setup("nqg_pp")

    class WithOffset(torch.nn.Module):
        def __init__(self, linear):
            super().__init__()
            self.linear, self.offset = linear, torch.nn.Parameter(torch.linspace(-1, 1, linear.out_features))

        def forward(self, x):
            return self.linear(x) + self.offset

    model.output_projection = WithOffset(model.output_projection)
    model.output_projection.weight = model.output_projection.linear.weight
    labels = batch["labels"]
    mask = labels.ne(-100)
    (at_the_labels,) = torch.autograd.grad(model(**batch, return_logits=False).loss, [model.output_projection.offset])
    table = model(**batch).logits
    table_loss = -table.gather(2, labels.clamp_min(0).unsqueeze(2)).squeeze(2)[mask].mean()
    (through_the_table,) = torch.autograd.grad(table_loss, [model.output_projection.offset])
    assert at_the_labels.abs().sum() > 0
    assert torch.allclose(at_the_labels, through_the_table, atol=1e-6)
