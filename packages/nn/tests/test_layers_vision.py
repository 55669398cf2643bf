"""Shape-changing layers: padding (nn/modules/padding.py), PixelShuffle/Unshuffle, Upsample and its 2-D
spellings, ChannelShuffle, and the distance modules PairwiseDistance / CosineSimilarity. Stored attributes
and reprs as PyTorch prints them, forward against NumPy, and PyTorch's reprs where installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from nn_testing import T, check

from tensorplay import nn

rng = np.random.default_rng(10)


REPRS = [
    (lambda m: m.ZeroPad2d(2), "ZeroPad2d((2, 2, 2, 2))"),
    (lambda m: m.ZeroPad1d((1, 0)), "ZeroPad1d((1, 0))"),
    (lambda m: m.ConstantPad1d(2, 3.5), "ConstantPad1d(padding=(2, 2), value=3.5)"),
    (lambda m: m.ConstantPad3d((1, 0, 1, 0, 1, 0), 0), "ConstantPad3d(padding=(1, 0, 1, 0, 1, 0), value=0)"),
    (lambda m: m.ReflectionPad2d((1, 1, 2, 0)), "ReflectionPad2d((1, 1, 2, 0))"),
    (lambda m: m.ReplicationPad3d(1), "ReplicationPad3d((1, 1, 1, 1, 1, 1))"),
    (lambda m: m.CircularPad1d(3), "CircularPad1d((3, 3))"),
    (lambda m: m.PixelShuffle(3), "PixelShuffle(upscale_factor=3)"),
    (lambda m: m.PixelUnshuffle(2), "PixelUnshuffle(downscale_factor=2)"),
    (lambda m: m.ChannelShuffle(4), "ChannelShuffle(groups=4)"),
    (lambda m: m.Upsample(scale_factor=2), "Upsample(scale_factor=2.0, mode='nearest')"),
    (lambda m: m.Upsample(size=(4, 5), mode="bilinear"), "Upsample(size=(4, 5), mode='bilinear')"),
    (lambda m: m.UpsamplingNearest2d(size=3), "UpsamplingNearest2d(size=3, mode='nearest')"),
    (
        lambda m: m.UpsamplingBilinear2d(scale_factor=(2, 3)),
        "UpsamplingBilinear2d(scale_factor=(2.0, 3.0), mode='bilinear')",
    ),
    (lambda m: m.PairwiseDistance(), "PairwiseDistance()"),
    (lambda m: m.CosineSimilarity(), "CosineSimilarity()"),
]


@pytest.mark.parametrize(("make", "text"), REPRS)
def test_repr(make, text):
    assert repr(make(nn)) == text


def test_repr_matches_live_torch():
    torch = pytest.importorskip("torch")
    for make, _ in REPRS:
        assert repr(make(nn)) == repr(make(torch.nn))


NP_MODE = {
    "Zero": "constant",
    "Constant": "constant",
    "Reflection": "reflect",
    "Replication": "edge",
    "Circular": "wrap",
}


@pytest.mark.parametrize("kind", list(NP_MODE))
@pytest.mark.parametrize("n", [1, 2, 3])
def test_padding_layers(kind, n):
    pad = (2, 1, 0, 1, 1, 2)[: 2 * n]
    x = rng.normal(size=(2,) + (3,) * n)  # unbatched [C, *spatial]; reflection needs pad < size
    widths = [(0, 0)] + [(pad[2 * (n - 1 - d)], pad[2 * (n - 1 - d) + 1]) for d in range(n)]
    cls = getattr(nn, f"{kind}Pad{n}d")
    if kind == "Constant":
        m, want = cls(pad, 1.5), np.pad(x, widths, constant_values=1.5)
    else:
        m, want = cls(pad), np.pad(x, widths, mode=NP_MODE[kind])
    assert m.padding == pad
    check(m(T(x)), want)
    check(m(T(x[None])), want[None])  # batched


def test_zero_pad_is_a_constant_pad_and_circular_checks_rank():
    assert isinstance(nn.ZeroPad2d(1), nn.ConstantPad2d)
    assert nn.ZeroPad2d(1).value == 0.0
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(T(np.zeros((2, 2))))


def test_pixel_and_channel_shuffle_layers():
    x = rng.normal(size=(1, 8, 2, 3))
    y = nn.PixelShuffle(2)(T(x))
    assert tuple(y.shape) == (1, 2, 4, 6)
    check(y[:, :, ::2, ::2], x[:, ::4])  # output (c, 2h, 2w) is input channel 4c at (h, w)
    check(nn.PixelUnshuffle(2)(y), x)
    check(nn.ChannelShuffle(2)(T(x)), x[:, [0, 4, 1, 5, 2, 6, 3, 7]])


def test_upsample_layers():
    x = rng.normal(size=(1, 1, 2, 3))
    check(nn.Upsample(scale_factor=2)(T(x)), x.repeat(2, 2).repeat(2, 3))
    check(nn.UpsamplingNearest2d(size=(4, 6))(T(x)), x.repeat(2, 2).repeat(2, 3))
    got = nn.UpsamplingBilinear2d(size=(3, 5))(T(x))
    rows = np.array([[1, 0], [0.5, 0.5], [0, 1]])
    cols = np.array([[1, 0, 0], [0.5, 0.5, 0], [0, 1, 0], [0, 0.5, 0.5], [0, 0, 1]])
    check(got, np.einsum("ih,nchw,jw->ncij", rows, x, cols))
    up = nn.Upsample(scale_factor=(2, 3), mode="bilinear", align_corners=False)
    assert up.scale_factor == (2.0, 3.0) and up.align_corners is False and up.name == "Upsample"


def test_distance_layers():
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    pd = nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True)
    assert (pd.norm, pd.eps, pd.keepdim) == (1.0, 0.0, True)
    check(pd(T(a), T(b)), np.abs(a - b).sum(1, keepdims=True))
    cs = nn.CosineSimilarity(dim=0, eps=1e-6)
    check(cs(T(a), T(b)), (a * b).sum(0) / np.linalg.norm(a, axis=0) / np.linalg.norm(b, axis=0))
