"""NQG++'s teacher-forced decoder recurrence on a CPU: the GRU cell fed the previous word and context, the
additive attention over the source and the next context, position by position over the packed positions
(packed_positions.py), as one autograd function with its backward written out.

Through autograd, every position of this loop records a dozen small operations whose backward replays
them one by one: the recurrent weights' gradients one small product per position, the attention energy's
gradient an outer product through a matrix product, the energies' tanh three passes over the [n, S, A]
attention tensor each way. Here the weights' gradients are one product each over all positions at the end,
the attention's tanh is 2 sigmoid(2x) - 1 (as sigmoid_tanh, copy_attention.py) kept as its sigmoid, and
its backward two passes. `tests/test_recurrent_teacher_forcing.py` holds what the output layer reads and
every gradient equal to the autograd path's (`PackedTeacherForcing.teacher_forced_reads`), which the
pointer-generator and a GPU keep.
"""

from __future__ import annotations

import torch

from .gru_cell import GruTrace
from .packed_positions import PackedPositions


class AttentiveGruRecurrence(torch.autograd.Function):
    """forward(word_input [P, 3H] = W_ih[:, :E] word + b_ih at every packed position, state [B, H] and
    context [B, C] before the first position, keys [L, A] (W_k h_i + b at the L valid source positions, row
    by row, each row's in order), sources [B, S, C] (the encoder outputs), valid [B, S], context_weight
    [3H, C] = W_ih[:, E:], hidden_weight [3H, H] = W_hh, hidden_bias [3H] = b_hh, query_weight [A, H],
    energy_weight [A], positions (the PackedPositions: the rows still going at each position, the first of
    the rows by length, longest first)) -> the states [P, H], contexts [P, C] and attention weights [P, S] at
    the packed positions.

    Each position: h' = GRU(i = word_input + W_ih[:, E:] c, h) (gru_cell.py), attention a = softmax over the
    valid positions of v . tanh(keys + W_q h'), the next context c' = a . sources. The energies are computed
    at the valid source positions of the rows still going alone (the first rows' keys are a prefix of
    `keys`): a batch padded to its longest sentence is half padding on NQG's sentences."""

    @staticmethod
    def forward(
        ctx,
        word_input,
        state,
        context,
        keys,
        sources,
        valid,
        context_weight,
        hidden_weight,
        hidden_bias,
        query_weight,
        energy_weight,
        positions,
    ):
        total, gates = word_input.shape
        trace = GruTrace.empty(word_input, (total,), gates // 3)
        contexts = word_input.new_empty(total, sources.shape[-1])
        attention = word_input.new_empty(total, sources.shape[1])
        layout = SourceLayout(valid, positions)
        # sigmoid(2x) at every position's valid source positions, x = keys + W_q h' [sum n, A]: what the
        # tanh's backward reads.
        squashed = word_input.new_empty(layout.total, keys.shape[-1])
        doubled_keys = keys * 2  # 2 (a + b) = 2a + 2b exactly: sigmoid_tanh's 2x
        energy_offset = energy_weight.sum()
        initial_state, initial_context = state, context
        for (rows, count, _), span in zip(positions.steps(), layout.spans, strict=True):
            step_input = torch.addmm(word_input[rows], context[:count], context_weight.t())
            from_state = torch.addmm(hidden_bias, state[:count], hidden_weight.t())
            state = trace.step(rows, step_input, from_state, state[:count])
            query = torch.mm(state, query_weight.t()).mul_(2)
            sigmoid = torch.index_select(query, 0, layout.rows[: layout.ends[count]], out=squashed[span])
            sigmoid.add_(doubled_keys[: layout.ends[count]]).sigmoid_()
            # v . tanh(x) = v . (2 sigmoid(2x) - 1) = 2 v . sigmoid(2x) - sum(v)
            energy = torch.mv(sigmoid, energy_weight).mul_(2).sub_(energy_offset)
            energy = sigmoid.new_full((count, valid.shape[1]), float("-inf")).masked_scatter_(valid[:count], energy)
            attention[rows] = torch.softmax(energy, dim=-1)
            context = torch.bmm(attention[rows].unsqueeze(1), sources[:count]).squeeze(1)
            contexts[rows] = context
        ctx.positions, ctx.layout = positions, layout
        ctx.save_for_backward(
            initial_state, initial_context, keys, sources, valid, context_weight, hidden_weight, query_weight, energy_weight, squashed,
            contexts, attention, *trace.tensors(),
        )  # fmt: skip
        return trace.states, contexts, attention

    @staticmethod
    def backward(ctx, states_grad, contexts_grad, attention_grad):
        (
            initial_state, initial_context, keys, sources, valid, context_weight, hidden_weight, query_weight, energy_weight, squashed,
            contexts, attention, *saved,
        ) = ctx.saved_tensors  # fmt: skip
        layout = ctx.layout
        trace = GruTrace(*saved)
        states = trace.states
        total, hidden = states.shape
        # Each position's gradients: its own, plus what the next position of its row gives back.
        total_state = states_grad.clone() if states_grad is not None else torch.zeros_like(states)
        total_context = contexts_grad.clone() if contexts_grad is not None else torch.zeros_like(contexts)
        attention_grad = attention_grad if attention_grad is not None else torch.zeros_like(attention)
        word_input_grad, from_state_grad = states.new_empty(total, 3 * hidden), states.new_empty(total, 3 * hidden)
        query_grad, energy_grad = states.new_empty(total, keys.shape[-1]), squashed.new_empty(layout.total)
        previous_states, previous_contexts = torch.empty_like(states), torch.empty_like(contexts)
        keys_grad = torch.zeros_like(keys)
        state_grad, context_grad = torch.zeros_like(initial_state), torch.zeros_like(initial_context)
        quadrupled_energy = energy_weight * 4  # d/dx of 2 v . sigmoid(2x) = 4 v sigmoid'(2x)
        for (rows, count, previous_rows), span in reversed(list(zip(ctx.positions.steps(), layout.spans, strict=True))):
            context = total_context[rows]
            weights = attention[rows]
            weights_grad = attention_grad[rows] + torch.bmm(sources[:count], context.unsqueeze(2)).squeeze(2)
            energy = torch.mul(weights, weights_grad - (weights * weights_grad).sum(-1, keepdim=True))
            energy = torch.masked_select(energy, valid[:count], out=energy_grad[span])
            inner_grad = torch.ops.aten.sigmoid_backward(energy.unsqueeze(1) * quadrupled_energy, squashed[span])
            keys_grad[: layout.ends[count]] += inner_grad
            query_grad[rows].zero_().index_add_(0, layout.rows[: layout.ends[count]], inner_grad)
            grad = torch.addmm(total_state[rows], query_grad[rows], query_weight)
            if previous_rows is None:
                previous_state, previous_context = initial_state[:count], initial_context[:count]
            else:
                previous_state, previous_context = states[previous_rows], contexts[previous_rows]
            previous_states[rows], previous_contexts[rows] = previous_state, previous_context
            trace.gradients(rows, grad, previous_state, word_input_grad[rows], from_state_grad[rows])
            update = trace.reset_update[rows, hidden:]
            back_state = torch.addmm(grad * update, from_state_grad[rows], hidden_weight)
            back_context = torch.mm(word_input_grad[rows], context_weight)
            if previous_rows is None:
                state_grad[:count], context_grad[:count] = back_state, back_context
            else:
                total_state[previous_rows] += back_state
                total_context[previous_rows] += back_context
        # The weights' gradients: one product each over every packed position.
        energy_weight_grad = torch.mv(squashed.t(), energy_grad).mul_(2).sub_(energy_grad.sum())
        return (
            word_input_grad, state_grad, context_grad, keys_grad, sources_grad(attention, total_context, ctx.positions, sources), None,
            word_input_grad.t().mm(previous_contexts), from_state_grad.t().mm(previous_states), from_state_grad.sum(0),
            query_grad.t().mm(states), energy_weight_grad, None,
        )  # fmt: skip


class SourceLayout:
    """The valid source positions of a batch [B, S] (`valid`, rows in the packed rows' order), row by row:
    `rows` [L], each one's row; `ends[n]`, how many the first n rows have (the prefix of them the rows
    still going read); `spans`, each packed position's slice of a tensor of the valid source positions of
    its rows (`total` in all)."""

    def __init__(self, valid: torch.Tensor, positions: PackedPositions):
        lengths = valid.sum(-1)
        self.rows = torch.repeat_interleave(torch.arange(valid.shape[0], device=valid.device), lengths)
        self.ends = [0, *lengths.cumsum(0).tolist()]
        self.spans, self.total = [], 0
        for count in positions.active:
            self.spans.append(slice(self.total, self.total + self.ends[count]))
            self.total += self.ends[count]


def sources_grad(attention: torch.Tensor, contexts_grad: torch.Tensor, positions: PackedPositions, sources: torch.Tensor) -> torch.Tensor:
    """The encoder outputs' gradient [B, S, C] from every position's context c = a . sources: for each row,
    its attention weights over the positions, transposed, times its contexts' gradients (one batched product)."""
    batch, steps = sources.shape[0], len(positions.active)
    rows = torch.cat([torch.arange(count) * steps + t for t, count in enumerate(positions.active)]).to(sources.device)
    weights = attention.new_zeros(batch * steps, attention.shape[-1]).index_copy_(0, rows, attention)
    grads = contexts_grad.new_zeros(batch * steps, contexts_grad.shape[-1]).index_copy_(0, rows, contexts_grad)
    return torch.bmm(weights.view(batch, steps, -1).transpose(1, 2), grads.view(batch, steps, -1))
