"""The recurrent models' bidirectional GRU encoder on a CPU: nn.GRU's function over a padded batch of
sources of different lengths, as pack_padded_sequence gives it, in a fraction of its time.

PyTorch's CPU GRU over a packed sequence runs every time step through autograd as a handful of small
operations (the input projection included, one per step), and its backward replays them one by one:
nqg_real's encoder took a third of a training step. Here the input projections of every position and both
directions are two large matrix products over the sources' packed positions (packed_positions.py), the
recurrence runs both directions side by side in one loop (the backward direction over each row reversed
within its length, so both walk the same packed positions), and its backward (`GruRecurrence`) is written
out, with the recurrent weights' gradient one matrix product over all the steps at the end. The
parameters are the nn.GRU's own, so checkpoints do not change; `tests/test_bidirectional_gru.py` holds
outputs, final states and gradients equal to nn.GRU's over the packed batch (to float rounding: the sums
run in another order). On a GPU the model keeps nn.GRU (one cuDNN kernel).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .gru_cell import GruTrace
from .packed_positions import PackedPositions


def encoder_states(encoder: nn.GRU | nn.LSTM, inputs: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, tuple | torch.Tensor]:
    """(outputs [B, S, 2H], final states) of a recurrent model's bidirectional encoder over `inputs`
    [B, S, E], row b running its first `lengths[b]` positions: a GRU on a CPU through `bidirectional_gru`,
    otherwise (the pointer-generator's LSTM, a GPU) through pack_padded_sequence."""
    if isinstance(encoder, nn.GRU) and not inputs.is_cuda:
        return bidirectional_gru(encoder, inputs, lengths)
    packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
    outputs, final = encoder(packed)
    outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=inputs.shape[1])
    return outputs, final


def bidirectional_gru(gru: nn.GRU, inputs: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(outputs [B, S, 2H], zero past each row's length; final states [layers * 2, B, H]) of the
    bidirectional, batch-first `gru` over `inputs` [B, S, E], row b running its first `lengths[b]` (>= 1)
    positions: what pack_padded_sequence, `gru` and pad_packed_sequence give."""
    batch, steps = inputs.shape[:2]
    lengths = lengths.to(inputs.device)
    positions = PackedPositions.of_lengths(lengths, steps)
    # Each packed position's index in the flattened batch reading its row forwards (`flat`) and backwards
    # (position t of a row read backwards is its position length - 1 - t), and each row's last one.
    times = positions.flat - positions.rows * steps
    last_times = lengths.index_select(0, positions.rows) - 1
    backwards = positions.rows * steps + last_times - times
    is_last = times == last_times
    last = torch.empty_like(lengths).index_copy_(0, positions.rows[is_last], is_last.nonzero().squeeze(1))
    layer_input = inputs.reshape(batch * steps, -1)
    finals = []
    for layer in range(gru.num_layers):
        if layer and gru.dropout and gru.training:
            layer_input = functional.dropout(layer_input, gru.dropout, training=True)
        weights = [
            [getattr(gru, f"{name}_l{layer}{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            for suffix in ("", "_reverse")
        ]
        projected = torch.stack(
            [
                functional.linear(layer_input.index_select(0, index), direction[0], direction[2])
                for index, direction in zip((positions.flat, backwards), weights, strict=True)
            ]
        )  # [2, N, 3H]: the packed positions of each direction
        recurrent_weight = torch.stack([weights[0][1], weights[1][1]])
        recurrent_bias = torch.stack([weights[0][3], weights[1][3]])
        outputs = GruRecurrence.apply(projected, recurrent_weight, recurrent_bias, positions)
        padding = outputs.new_zeros(batch * steps, outputs.shape[-1])
        layer_input = torch.cat([padding.index_copy(0, positions.flat, outputs[0]), padding.index_copy(0, backwards, outputs[1])], dim=-1)
        finals.append(outputs.index_select(1, last))
    return layer_input.view(batch, steps, -1), torch.cat(finals)


class GruRecurrence(torch.autograd.Function):
    """The GRU recurrence (gru_cell.py) of D directions side by side from their input projections, over a
    PackedPositions, with its backward: forward(projected [D, N, 3H] = W_ih x + b_ih at the packed positions,
    weight [D, 3H, H] = W_hh, bias [D, 3H] = b_hh, positions) -> the states [D, N, H] at the packed positions,
    the state before a row's first position zero."""

    @staticmethod
    def forward(ctx, projected: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, positions: PackedPositions):
        directions, total, gates = projected.shape
        trace = GruTrace.empty(projected, (directions, total), gates // 3)
        weight_t, bias = weight.transpose(1, 2), bias.unsqueeze(1)
        previous = None
        for rows, count, _ in positions.steps():
            # W_hh h + b_hh [D, n, 3H] (the bias alone before a row's first position)
            from_state = bias.expand(directions, count, gates) if previous is None else torch.baddbmm(bias, previous[:, :count], weight_t)
            previous = trace.step(rows, projected[:, rows], from_state, None if previous is None else previous[:, :count])
        ctx.positions = positions
        ctx.save_for_backward(weight, *trace.tensors())
        return trace.states

    @staticmethod
    def backward(ctx, states_grad: torch.Tensor):
        weight, *saved = ctx.saved_tensors
        trace = GruTrace(*saved)
        directions, total, hidden = trace.states.shape
        # Each position's state gradient: its own, plus what the next position of its row gives back.
        total_grad = states_grad.clone()
        projected_grad = trace.states.new_empty(directions, total, 3 * hidden)
        from_state_grad = trace.states.new_empty(directions, total, 3 * hidden)
        previous_states = trace.states.new_zeros(directions, total, hidden)
        for rows, _, previous_rows in reversed(ctx.positions.steps()):
            grad = total_grad[:, rows]
            previous = None if previous_rows is None else trace.states[:, previous_rows]
            trace.gradients(rows, grad, previous, projected_grad[:, rows], from_state_grad[:, rows])
            if previous_rows is not None:
                previous_states[:, rows] = previous
                update = trace.reset_update[:, rows, hidden:]
                total_grad[:, previous_rows] += torch.baddbmm(grad * update, from_state_grad[:, rows], weight)
        # The recurrent weights' gradient: one product over every packed position.
        weight_grad = torch.bmm(from_state_grad.transpose(1, 2), previous_states)
        return projected_grad, weight_grad, from_state_grad.sum(1), None
