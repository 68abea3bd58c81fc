"""Packed and padding-free batches (training/packed_examples.py): every catalog loss, and its gradient, on
a batch TRL's collator packs or flattens equals the loss on the same examples one per row. Without the
re-layout GOLD-p/s's returns and the sequence-level losses (loss truncation, iw-SFT) read the next example."""

from __future__ import annotations

import copy

import pytest
import torch
from settings import every_trainable_loss
from test_causal_models import tiny_causal_setup
from test_trainer_losses import sft_trainer

from gold_textgen.data.seq2seq_batches import encode_records
from gold_textgen.sft.trainer_losses import ObjectiveLoss
from gold_textgen.training.helper_models import model_from_weights
from gold_textgen.training.packed_examples import one_example_per_row

trl_collators = pytest.importorskip("trl.trainer.sft_trainer", reason="TRL (pip install -e '.[dev]') builds the packed batches")

LOSSES = every_trainable_loss()
LOSSES["gold_p"] = dict(loss="gold", reward="p", floor=-7.0, baseline=-60.0, min_weight=0.1)
LOSSES["loss_truncation"] = dict(drop_fraction=0.4, warmup=1, window=4)  # dropping from the second step on


@pytest.fixture(scope="module")
def setup():
    records, tokenizer, start, _ = tiny_causal_setup()
    torch.manual_seed(1)
    policy = copy.deepcopy(start.language_model)
    with torch.no_grad():
        for parameter in policy.parameters():  # the policy after some updates: pi_tilde and the reference differ from it
            parameter.add_(0.05 * torch.randn_like(parameter))
    encoded = encode_records(records, tokenizer, 10, 10, causal=True)
    return tokenizer, start.language_model, policy, encoded, records


def examples(encoded: list[dict], completion_only: bool) -> list[dict]:
    """Prompt-completion rows (labels -100 on the prompt) or plain text rows (every token a label)."""
    rows = []
    for example in encoded:
        ids = example["input_ids"] + example["labels"]
        labels = [-100] * len(example["input_ids"]) + example["labels"] if completion_only else ids
        rows.append({"input_ids": ids, "labels": labels})
    return rows


def packed(rows: list[dict], per_pack: int) -> list[dict]:
    """Rows concatenated `per_pack` at a time, with their lengths (what TRL's BFD packing hands the collator)."""
    packs = []
    for start in range(0, len(rows), per_pack):
        group = rows[start : start + per_pack]
        packs.append({key: [token for row in group for token in row[key]] for key in ("input_ids", "labels")})
        packs[-1]["seq_lengths"] = [len(row["input_ids"]) for row in group]
    return packs


def layouts(encoded: list[dict], pad_token_id: int, completion_only: bool) -> dict[str, dict]:
    rows = examples(encoded, completion_only)
    padded = trl_collators.DataCollatorForLanguageModeling(pad_token_id=pad_token_id)
    flat = trl_collators.DataCollatorForLanguageModeling(pad_token_id=pad_token_id, padding_free=True)
    return {"one per row": padded(copy.deepcopy(rows)), "packed": flat(packed(rows, 3)), "padding-free": flat(copy.deepcopy(rows))}


def loss_and_gradient(name: str, start, policy, batch: dict, steps: int = 2):
    """The loss of the `steps`-th step on `batch` (the first fills loss truncation's window) and its gradient."""
    settings = {"loss": "gold" if name == "gold_p" else name, **LOSSES[name]}
    loss = ObjectiveLoss(**settings, reference_model=model_from_weights(start))  # the frozen model, pi_tilde's start
    loss.start(start)
    # no cache in training, as TRL's compute_loss: with one the model's attention would not read the marks
    inputs = {**{key: value for key, value in batch.items() if key != "labels"}, "use_cache": False}
    loss._inputs = inputs  # what the callback's forward hook keeps: the policy's inputs of this batch
    for _ in range(steps):
        policy.zero_grad()
        value = loss(policy(**inputs), batch["labels"])
        value.backward()
    return value.detach(), torch.cat([p.grad.flatten() for p in policy.parameters()])


@pytest.mark.trl
@pytest.mark.parametrize("completion_only", [True, False], ids=["prompt-completion", "text"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_loss_on_a_packed_batch_equals_the_loss_one_example_per_row(setup, name, completion_only):
    tokenizer, reference, policy, encoded, _ = setup
    batches = layouts(encoded, tokenizer.pad_token_id, completion_only)
    assert batches["packed"]["input_ids"].shape[0] == 1 and int(batches["packed"]["position_ids"].eq(0).sum()) == len(encoded)
    expected, expected_gradient = loss_and_gradient(name, reference, policy, batches["one per row"])
    for layout in ("packed", "padding-free"):
        value, gradient = loss_and_gradient(name, reference, policy, batches[layout])
        assert torch.allclose(value, expected, rtol=1e-6, atol=1e-6), (layout, float(value), float(expected))
        largest = float((gradient - expected_gradient).abs().max())
        assert torch.allclose(gradient, expected_gradient, rtol=0, atol=1e-6), (layout, largest)


@pytest.mark.trl
def test_trls_sft_trainer_reads_a_packed_batch_one_example_per_row_and_counts_its_tokens_as_trl(setup, tmp_path):
    tokenizer, start, policy, encoded, records = setup
    batches = layouts(encoded, tokenizer.pad_token_id, completion_only=False)
    values = {}
    for layout in ("one per row", "packed"):
        loss = ObjectiveLoss(**{"loss": "gold", **LOSSES["gold_p"]}, reference_model=model_from_weights(start))
        trainer = sft_trainer(policy, tokenizer, records, tmp_path / layout.replace(" ", "_"), 1, loss)
        loss.start(start)  # as the callback does when training starts
        values[layout] = trainer.compute_loss(policy.train(), dict(batches[layout]))
        seen = batches[layout].get("attention_mask", batches[layout]["input_ids"]).numel() if layout == "packed" else None
        if seen is not None:  # TRL counts a padding-free row's whole width
            assert trainer._metrics["train"]["num_tokens"] == [seen]
    policy.eval()
    assert torch.allclose(values["packed"], values["one per row"], rtol=1e-6, atol=1e-6)


def test_a_packed_row_is_laid_out_one_example_per_row_from_each_mark():
    """Tokens a0 a1 a2 | b0 b1 | two pads, each mark saying so: each example's label positions (after the
    causal shift, prompt and masked positions kept) in a row of their own, padding at the right, the pads
    (examples without a label) dropped; a batch without marks is unchanged."""
    from gold_textgen.objectives.table import TokenBatch

    labels = torch.tensor([[-100, 12, 13, -100, 22, -100, -100]])[:, 1:]  # TRL masks each example's first token
    reference = torch.arange(6, dtype=torch.float32)[None]
    batch = TokenBatch(logprobs=reference[..., None].repeat(1, 1, 3), reference=reference, mask=labels.ne(-100))
    marks = [
        {"position_ids": torch.tensor([[0, 1, 2, 0, 1, 0, 0]])},
        {"seq_idx": torch.tensor([[0, 0, 0, 1, 1, 2, 3]])},
        {"cu_seq_lens_q": torch.tensor([0, 3, 5, 6, 7])},
    ]
    for inputs in marks:
        unpacked, unpacked_labels = one_example_per_row(batch, labels, inputs, causal=True)
        assert unpacked_labels.tolist() == [[12, 13], [-100, 22]], inputs
        assert unpacked.reference.tolist() == [[0.0, 1.0], [2.0, 3.0]] and unpacked.logprobs.shape == (2, 2, 3)
        assert unpacked.mask.tolist() == [[True, True], [False, True]]
    same, same_labels = one_example_per_row(batch, labels, {"attention_mask": torch.ones(1, 7)}, causal=True)
    assert same is batch and same_labels is labels
