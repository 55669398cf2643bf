"""Pooling layers (nn/modules/pooling.py): stored attributes and extra_repr exactly as PyTorch keeps and
prints them, forward against NumPy, return_indices feeding MaxUnpool, and PyTorch's reprs where installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from nn_testing import T, check

from tensorplay import nn

rng = np.random.default_rng(9)


REPRS = [
    (lambda m: m.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (
        lambda m: m.MaxPool1d(3, 1, 1, ceil_mode=True),
        "MaxPool1d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=True)",
    ),
    (
        lambda m: m.MaxPool3d((1, 2, 2)),
        "MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2), padding=0, dilation=1, ceil_mode=False)",
    ),
    (lambda m: m.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    (lambda m: m.AvgPool2d(2, 1), "AvgPool2d(kernel_size=2, stride=1, padding=0)"),
    (lambda m: m.AvgPool3d(2), "AvgPool3d(kernel_size=2, stride=2, padding=0)"),
    (lambda m: m.LPPool2d(2, 3), "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"),
    (lambda m: m.LPPool1d(1.5, 2, 1), "LPPool1d(norm_type=1.5, kernel_size=2, stride=1, ceil_mode=False)"),
    (lambda m: m.AdaptiveAvgPool2d((None, 7)), "AdaptiveAvgPool2d(output_size=(None, 7))"),
    (lambda m: m.AdaptiveMaxPool1d(4), "AdaptiveMaxPool1d(output_size=4)"),
    (lambda m: m.AdaptiveAvgPool3d(1), "AdaptiveAvgPool3d(output_size=1)"),
    (lambda m: m.MaxUnpool2d(2), "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"),
    (lambda m: m.MaxUnpool1d(3, 2, 1), "MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(1,))"),
]


@pytest.mark.parametrize(("make", "text"), REPRS)
def test_repr(make, text):
    assert repr(make(nn)) == text


def test_repr_matches_live_torch():
    torch = pytest.importorskip("torch")
    for make, _ in REPRS:
        assert repr(make(nn)) == repr(make(torch.nn))


def test_max_pool_forward_and_unpool():
    x = rng.normal(size=(2, 3, 4, 6))
    want = x.reshape(2, 3, 2, 2, 3, 2).max((3, 5))
    pool = nn.MaxPool2d(2, return_indices=True)
    out, idx = pool(T(x))
    check(out, want)
    back = np.asarray(nn.MaxUnpool2d(2)(out, idx).tolist())
    assert (back != 0).sum() == want.size
    np.testing.assert_array_equal(back[back != 0], x[back != 0])
    check(nn.MaxPool2d(2)(T(x)), want)


def test_avg_lp_and_adaptive_forward():
    x = np.abs(rng.normal(size=(2, 3, 4, 6))) + 0.1
    check(nn.AvgPool2d(2)(T(x)), x.reshape(2, 3, 2, 2, 3, 2).mean((3, 5)))
    check(nn.AvgPool2d(2, divisor_override=1)(T(x)), x.reshape(2, 3, 2, 2, 3, 2).sum((3, 5)))
    check(nn.LPPool2d(2, 2)(T(x)), np.sqrt((x**2).reshape(2, 3, 2, 2, 3, 2).sum((3, 5))))
    check(nn.AdaptiveAvgPool2d(1)(T(x)), x.mean((2, 3), keepdims=True))
    check(nn.AdaptiveMaxPool2d((None, 1))(T(x)), x.max(3, keepdims=True))
    out, idx = nn.AdaptiveMaxPool1d(2, return_indices=True)(T(x[0]))
    check(out, x[0].reshape(3, 4, 2, 3).max(-1))
    y = rng.normal(size=(1, 2, 6))
    check(nn.AvgPool1d(2)(T(y)), y.reshape(1, 2, 3, 2).mean(-1))
    check(nn.AdaptiveAvgPool1d(3)(T(y)), y.reshape(1, 2, 3, 2).mean(-1))


def test_pooling_layers_have_no_parameters():
    for make, _ in REPRS:
        assert list(make(nn).parameters()) == []
