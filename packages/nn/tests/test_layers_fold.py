"""nn.Fold / nn.Unfold: values against a NumPy im2col written here, the adjoint identity, reprs."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn


def _np_unfold(x: np.ndarray, k: int, stride: int, padding: int) -> np.ndarray:
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (h + 2 * padding - k) // stride + 1
    ow = (w + 2 * padding - k) // stride + 1
    cols = np.zeros((n, c * k * k, oh * ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            block = xp[:, :, i * stride : i * stride + k, j * stride : j * stride + k]
            cols[:, :, i * ow + j] = block.reshape(n, c * k * k)
    return cols


@pytest.mark.parametrize("k,stride,padding", [(1, 1, 0), (2, 1, 0), (3, 2, 1), (2, 2, 0)])
def test_unfold_matches_numpy(k: int, stride: int, padding: int) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6))
    got = nn.Unfold(k, padding=padding, stride=stride)(tp.from_numpy(x))
    np.testing.assert_allclose(got.numpy(), _np_unfold(x, k, stride, padding), rtol=1e-12)


@pytest.mark.parametrize("k,stride,padding", [(2, 1, 0), (3, 2, 1)])
def test_fold_is_the_adjoint_of_unfold(k: int, stride: int, padding: int) -> None:
    # <unfold(x), y> == <x, fold(y)> for every x, y: fold sums overlapping blocks back.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 5, 6))
    cols = _np_unfold(x, k, stride, padding)
    y = rng.standard_normal(cols.shape)
    folded = nn.Fold((5, 6), k, padding=padding, stride=stride)(tp.from_numpy(y)).numpy()
    np.testing.assert_allclose((cols * y).sum(), (x * folded).sum(), rtol=1e-10)


def test_reprs_match_pytorch() -> None:
    assert repr(nn.Unfold(2)) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"
    assert (
        repr(nn.Fold((4, 5), (2, 2), stride=2))
        == "Fold(output_size=(4, 5), kernel_size=(2, 2), dilation=1, padding=0, stride=2)"
    )
