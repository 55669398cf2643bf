"""Convolution layers (nn/modules/conv.py): constructor checks and messages, parameter shapes, PyTorch's
default initialisation (bounds, and the exact values a seeded PyTorch layer holds), extra_repr text,
padding_mode, 'same' padding, ConvTranspose's output_size, forward against a NumPy reference and backward.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn

rng = np.random.default_rng(6)

# PyTorch 2.13: torch.manual_seed(0); m = torch.nn.Conv2d(3, 8, 3); m.weight.flatten()[:6], m.bias[:3]
TORCH_CONV2D_SEED0_WEIGHT = [-0.0014408, 0.1032386, -0.1583951, -0.1416315, -0.074123, 0.0516069]
TORCH_CONV2D_SEED0_BIAS = [-0.1505354, -0.1008691, 0.155402]


def values(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def test_parameter_shapes_and_bounds():
    conv = nn.Conv2d(4, 6, (3, 2), groups=2)
    assert tuple(conv.weight.shape) == (6, 2, 3, 2)
    assert tuple(conv.bias.shape) == (6,)
    bound = 1 / math.sqrt(2 * 3 * 2)  # kaiming_uniform(a=sqrt(5)) is U(+-1/sqrt(fan_in)); so is the bias
    for p in (conv.weight, conv.bias):
        v = values(p)
        assert (np.abs(v) <= bound).all() and np.abs(v).max() > 0.5 * bound
    convt = nn.ConvTranspose1d(4, 6, 3, groups=2, bias=False)
    assert tuple(convt.weight.shape) == (4, 3, 3)
    assert convt.bias is None
    assert [name for name, _ in convt.named_parameters()] == ["weight"]


def test_seeded_init_equals_pytorch():
    tp.manual_seed(0)
    conv = nn.Conv2d(3, 8, 3)
    np.testing.assert_allclose(values(conv.weight).ravel()[:6], TORCH_CONV2D_SEED0_WEIGHT, atol=1e-6)
    np.testing.assert_allclose(values(conv.bias)[:3], TORCH_CONV2D_SEED0_BIAS, atol=1e-6)


def test_seeded_init_equals_live_pytorch():
    torch = pytest.importorskip("torch")
    for make in (
        lambda m: m.Conv1d(4, 6, 3, groups=2),
        lambda m: m.Conv3d(2, 3, (1, 2, 3), bias=False),
        lambda m: m.ConvTranspose2d(4, 2, 3, groups=2),
    ):
        torch.manual_seed(7)
        want = make(torch.nn)
        tp.manual_seed(7)
        got = make(nn)
        for (n1, p1), (n2, p2) in zip(got.named_parameters(), want.named_parameters(), strict=True):
            assert n1 == n2
            np.testing.assert_array_equal(values(p1), p2.detach().numpy())


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: nn.Conv2d(3, 8, 3), "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))"),
        (
            lambda: nn.Conv1d(2, 4, 5, stride=2, padding=1, bias=False),
            "Conv1d(2, 4, kernel_size=(5,), stride=(2,), padding=(1,), bias=False)",
        ),
        (
            lambda: nn.Conv2d(4, 4, 3, padding="same", dilation=2, groups=4, padding_mode="reflect"),
            "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, dilation=(2, 2), groups=4, "
            "padding_mode=reflect)",
        ),
        (lambda: nn.Conv3d(1, 2, (1, 2, 3)), "Conv3d(1, 2, kernel_size=(1, 2, 3), stride=(1, 1, 1))"),
        (
            lambda: nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1),
            "ConvTranspose2d(8, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))",
        ),
    ],
)
def test_repr(make, text):
    assert repr(make()) == text


def test_constructor_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 6, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 6, 3, groups=4)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        nn.Conv1d(4, 4, 3, groups=0)
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv1d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv1d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv1d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


def corr2d(x, w, b):
    """Valid 2-D cross-correlation of [N, C, H, W] with [O, C, kh, kw], by taps."""
    kh, kw = w.shape[2:]
    oh, ow = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, i : i + oh, j : j + ow], w[:, :, i, j])
    return out + b[None, :, None, None]


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_padding_modes_forward(mode):
    conv = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode)
    x = rng.normal(size=(1, 2, 5, 6))
    np_mode = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (2, 2)], mode=np_mode)
    got = conv(tp.tensor(x.tolist(), dtype=tp.float32))
    want = corr2d(xp, values(conv.weight), values(conv.bias))
    np.testing.assert_allclose(values(got), want, rtol=1e-5, atol=1e-5)


def test_same_padding_keeps_the_size_and_backward_reaches_parameters():
    conv = nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular")
    x = tp.randn(3, 2, 9)
    y = conv(x)
    assert tuple(y.shape) == (3, 2, 9)
    y.sum().backward()
    assert tuple(conv.weight.grad.shape) == (2, 2, 4) and tuple(conv.bias.grad.shape) == (2,)
    np.testing.assert_allclose(values(conv.bias.grad), [27.0, 27.0])  # d(sum)/d(bias) = N * L


def test_conv_transpose_output_size():
    up = nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)
    h = tp.randn(1, 2, 6, 6)
    assert tuple(up(h).shape) == (1, 2, 11, 11)
    assert tuple(up(h, output_size=[12, 12]).shape) == (1, 2, 12, 12)
    assert tuple(up(h, output_size=(1, 2, 12, 11)).shape) == (1, 2, 12, 11)
    with pytest.raises(
        ValueError, match=r"requested an output size of \[13, 13\], but valid sizes range from"
    ):
        up(h, output_size=[13, 13])
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        up(h, output_size=[12])


def test_unbatched_input():
    conv = nn.Conv1d(3, 2, 2)
    x = tp.randn(3, 5)
    np.testing.assert_allclose(values(conv(x)), values(conv(x.unsqueeze(0))[0]), rtol=1e-6)
