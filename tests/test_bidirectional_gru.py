"""The recurrent models' CPU encoder (models/bidirectional_gru.py) against nn.GRU over the packed batch, as
pack_padded_sequence and pad_packed_sequence give it: outputs, final states and the gradients of the inputs
and of every weight, in float64 so that only the order of the sums differs."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from gold_textgen.models.bidirectional_gru import bidirectional_gru


def through_nn_gru(gru, inputs, lengths):
    packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
    outputs, final = gru(packed)
    outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=inputs.shape[1])
    return outputs, final


@pytest.mark.parametrize("layers", [1, 2])
def test_the_encoder_is_nn_grus_function_with_its_gradients(layers):
    torch.manual_seed(0)
    gru = torch.nn.GRU(6, 5, num_layers=layers, bidirectional=True, batch_first=True).double()
    lengths = torch.tensor([4, 9, 1, 9, 6, 4])  # ties, a row of one position, the longest twice
    inputs = torch.randn(6, 10, 6, dtype=torch.float64, requires_grad=True)  # padded one past the longest
    output_probe, final_probe = torch.randn(6, 10, 10, dtype=torch.float64), torch.randn(2 * layers, 6, 5, dtype=torch.float64)
    results = []
    for encoder in (through_nn_gru, lambda *args: bidirectional_gru(gru, *args)):
        outputs, final = encoder(gru, inputs, lengths) if encoder is through_nn_gru else encoder(inputs, lengths)
        loss = (outputs * output_probe).sum() + (final * final_probe).sum()
        results.append((outputs, final, torch.autograd.grad(loss, [inputs, *gru.parameters()])))
    (expected_outputs, expected_final, expected_grads), (outputs, final, grads) = results
    assert outputs[2, 1:].abs().max() == 0 and outputs[0, 4:].abs().max() == 0  # zero past each length
    assert torch.allclose(outputs, expected_outputs, atol=1e-12)
    assert torch.allclose(final, expected_final, atol=1e-12)
    for ours, theirs in zip(grads, expected_grads, strict=True):
        assert torch.allclose(ours, theirs, atol=1e-10)


def test_the_encoder_without_gradient_and_in_float32():
    """Decoding's path (no gradient) in the models' own float32: nn.GRU's numbers to a float rounding."""
    torch.manual_seed(1)
    gru = torch.nn.GRU(8, 6, bidirectional=True, batch_first=True)
    inputs, lengths = torch.randn(5, 7, 8), torch.tensor([7, 3, 5, 7, 2])
    with torch.no_grad():
        expected_outputs, expected_final = through_nn_gru(gru, inputs, lengths)
        outputs, final = bidirectional_gru(gru, inputs, lengths)
    assert torch.allclose(outputs, expected_outputs, atol=1e-6)
    assert torch.allclose(final, expected_final, atol=1e-6)
