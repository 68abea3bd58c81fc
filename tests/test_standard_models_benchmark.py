"""benchmarks.standard_models counts a step's matrix products as torch's profiler does (2 m k n each, a
batched product per batch) and nothing else, and measures their rate beside a large product's."""

import torch

from benchmarks.standard_models import matrix_products


def test_the_products_of_a_step_are_counted_exactly_and_the_rest_is_not():
    left, right, bias = torch.randn(64, 128), torch.randn(128, 256), torch.randn(256)
    stacked, others, start = torch.randn(3, 16, 32), torch.randn(3, 32, 8), torch.randn(3, 16, 8)
    table = torch.randn(512, 512)

    def step() -> None:
        left @ right
        torch.addmm(bias, left, right)
        torch.bmm(stacked, others)
        torch.baddbmm(start, stacked, others)
        torch.mv(table, table[0])  # a matrix-vector product reads the table once: not counted
        table.sigmoid().sum()

    measured = matrix_products(step, steps=2, size=64)
    assert measured.flops == 2 * (2 * 64 * 128 * 256) + 2 * (3 * 2 * 16 * 32 * 8)
    assert 0 < measured.share < 1
    assert measured.rate > 0 and measured.square_rate > 0
