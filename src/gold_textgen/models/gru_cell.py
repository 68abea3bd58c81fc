"""nn.GRU's cell, forward and backward written out, for the recurrences that run it position by position
over packed rows with a backward of their own (bidirectional_gru.py, attentive_gru.py):

    r = sigmoid(i_r + h_r), z = sigmoid(i_z + h_z), n = tanh(i_n + r * h_n), h' = (1 - z) n + z h,

where i_* = W_i* x + b_i* (the input's part) and h_* = W_h* h + b_h* (the state's part), gates in nn.GRU's
order (reset, update, new). Tensors are [..., P, width]: P packed positions, after any leading dimensions
(the encoder's two directions)."""

from __future__ import annotations

import torch


class GruTrace:
    """What the backward reads of every packed position: the states h', r and z, n, and h_n."""

    def __init__(self, states: torch.Tensor, reset_update: torch.Tensor, candidate: torch.Tensor, hidden_candidate: torch.Tensor):
        self.states, self.reset_update, self.candidate, self.hidden_candidate = states, reset_update, candidate, hidden_candidate
        self.hidden = states.shape[-1]

    @classmethod
    def empty(cls, like: torch.Tensor, shape: tuple[int, ...], hidden: int) -> GruTrace:
        """Buffers for `shape` (leading dimensions and P) positions of `hidden` units."""
        return cls(*(like.new_empty(*shape, width) for width in (hidden, 2 * hidden, hidden, hidden)))

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return self.states, self.reset_update, self.candidate, self.hidden_candidate

    def step(self, rows: slice, step_input: torch.Tensor, from_state: torch.Tensor, previous: torch.Tensor | None) -> torch.Tensor:
        """h' at the positions `rows` [..., n, H] from i (`step_input`) and h_* (`from_state`) [..., n, 3H] and
        the previous state h [..., n, H] (None: zero, a row's first position); kept for the backward."""
        hidden = self.hidden
        gates_rz = torch.sigmoid(step_input[..., : 2 * hidden] + from_state[..., : 2 * hidden], out=self.reset_update[..., rows, :])
        self.hidden_candidate[..., rows, :] = from_state[..., 2 * hidden :]
        new_input = torch.addcmul(step_input[..., 2 * hidden :], gates_rz[..., :hidden], from_state[..., 2 * hidden :])
        new = torch.tanh(new_input, out=self.candidate[..., rows, :])
        state = self.states[..., rows, :]
        if previous is None:
            return torch.mul(new, 1 - gates_rz[..., hidden:], out=state)
        return torch.addcmul(new, gates_rz[..., hidden:], previous - new, out=state)

    def gradients(
        self, rows: slice, grad: torch.Tensor, previous: torch.Tensor | None, input_grad: torch.Tensor, state_grad: torch.Tensor
    ) -> None:
        """The gradients of i and of h_* [..., n, 3H] at `rows` from h''s (`grad` [..., n, H]), written into
        `input_grad` and `state_grad`; `previous` as in `step`. (h's own gradient is grad * z + h_*'s times W_h.)"""
        hidden = self.hidden
        gates_rz = self.reset_update[..., rows, :]
        reset, update = gates_rz[..., :hidden], gates_rz[..., hidden:]
        new = self.candidate[..., rows, :]
        new_grad = torch.mul(grad * (1 - update), 1 - new * new, out=input_grad[..., 2 * hidden :])
        torch.mul(new_grad, self.hidden_candidate[..., rows, :] * reset * (1 - reset), out=state_grad[..., :hidden])
        update_grad = grad * -new if previous is None else grad * (previous - new)
        torch.mul(update_grad, update * (1 - update), out=state_grad[..., hidden : 2 * hidden])
        torch.mul(new_grad, reset, out=state_grad[..., 2 * hidden :])
        input_grad[..., : 2 * hidden] = state_grad[..., : 2 * hidden]
