"""log_softmax(readout @ weight.T) at the target ids, with a backward that never builds the [N, V] gradient.

A loss at the labels of a tied output layer z = r W^T (N positions, V words, E dimensions) has the logits'
gradient g (onehot(t) - softmax(z)) per row, and autograd would then write that [N, V] table, scale it,
scatter the targets into it and read it twice, once for each matrix product of the projection's backward.
The two products simplify, with q = softmax(z) and m = q W [N, E] (the softmax-weighted mean of the output
embeddings):

    dL/dr_n = g_n (W[t_n] - m_n)                      no product over V at all, given m
    dL/dW   = sum_n g_n r_n (onehot(t_n) - q_n)^T     = index_add(t, g r) - q^T (g r)

so the backward reads the softmax once (one [V, N] x [N, E] product) and writes nothing of size [N, V].
The forward computes m, one [N, V] x [V, E] product, which replaces the [N, V] x [V, E] product that the
backward of dL/dr would have cost; the training log's entropy reuses it (sum_v q_v z_v = r . m, see
CopyDistribution.entropies_and_top). The numbers are those of the autograd path to a float rounding
(tests/test_copy_distribution.py).
"""

from __future__ import annotations

import torch


def mean_output_embedding(softmax: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """softmax @ weight [N, E], in float32, without gradient."""
    with torch.no_grad():
        return torch.mm(softmax, weight.detach().float())


class ProjectedTargetLogSoftmax(torch.autograd.Function):
    """Inputs: the readout [N, E] and the output weight [V, E] (both differentiable); the logits r W^T [N, V],
    their softmax and log-normaliser [N, 1], `mean_output_embedding` [N, E] (all without gradient: computed
    once, shared with the training log) and the targets [N] (ids below V). Output: log_softmax(z)[n, t_n] [N]."""

    @staticmethod
    def forward(ctx, readout, weight, logits, softmax, log_normaliser, mean_embedding, targets):
        ctx.save_for_backward(readout, weight, softmax, mean_embedding, targets)
        return (logits.float().gather(1, targets.unsqueeze(1)) - log_normaliser).squeeze(1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        readout, weight, softmax, mean_embedding, targets = ctx.saved_tensors
        grad = grad.float().unsqueeze(1)
        readout_grad = weight_grad = None
        if ctx.needs_input_grad[0]:
            readout_grad = ((weight.float()[targets] - mean_embedding) * grad).to(readout.dtype)
        if ctx.needs_input_grad[1]:
            scaled = readout.float() * grad
            weight_grad = torch.mm(softmax.t(), scaled).neg_().index_add_(0, targets, scaled).to(weight.dtype)
        return readout_grad, weight_grad, None, None, None, None, None
