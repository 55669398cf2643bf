"""Backward of convolution, pooling, interpolation and unfold / fold on CUDA (formulas/conv.py, upsample.py)
equals the CPU's: the formulas are compositions of ops, so this checks that every op they call runs on the GPU
and that every constant they build (ones kernels, divisor maps, averaging and interpolation matrices) is made
on the gradient's device. The CPU gradients themselves are gradchecked in test_formulas.py. Needs a GPU.

Dependencies on other CUDA families: max pooling's backward scatters with scatter_add_, and a grouped
convolution's weight gradient joins the groups with cat (both from the index/join CUDA kernels).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "p10" / "tests"))  # find cuda_testing
from cuda_testing import DEV, f64, needs_cuda  # noqa: E402

pytestmark = needs_cuda

rng = np.random.default_rng(0)


def grads_on(dev, fn, arrays, dtype=tp.float32):
    """The gradients of sum(fn(*inputs) * g) for a fixed random g, with the inputs on `dev`."""
    xs = [tp.tensor(a).to(dtype).to(dev).requires_grad_(True) for a in arrays]
    y = fn(*xs)
    g = tp.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape))).to(dtype).to(dev)
    y.backward(g)
    for x in xs:
        assert x.grad is not None and x.grad.device.type == dev
    return [f64(x.grad) for x in xs]


def check(fn, *arrays, tol=1e-4):
    cpu, gpu = grads_on("cpu", fn, arrays), grads_on(DEV, fn, arrays)
    for c, g in zip(cpu, gpu, strict=True):
        np.testing.assert_allclose(g, c, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "fn, x_shape, w_shape, out_channels",
    [
        (lambda x, w, b: tp.conv2d(x, w, b, stride=2, padding=1), (2, 4, 9, 8), (6, 4, 3, 3), 6),
        (lambda x, w, b: tp.conv1d(x, w, b, dilation=2), (2, 4, 11), (6, 4, 3), 6),
        (lambda x, w, b: tp.conv3d(x, w, b, padding=1), (1, 4, 5, 4, 6), (6, 4, 2, 3, 2), 6),
        (
            lambda x, w, b: tp.conv_transpose2d(x, w, b, stride=2, output_padding=1),
            (2, 4, 5, 6),
            (4, 6, 3, 3),
            6,
        ),
        (lambda x, w, b: tp.conv2d(x, w, b, groups=2), (2, 4, 6, 6), (6, 2, 3, 3), 6),  # cat joins the groups
    ],
)
def test_convolution(fn, x_shape, w_shape, out_channels):
    check(fn, rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(out_channels))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: tp.max_pool2d(x, 3, 2, 1),
        lambda x: tp.max_pool3d(x.unsqueeze(2), [1, 2, 2]),
        lambda x: tp.avg_pool2d(x, 3, 2, 1, True, False),
        lambda x: tp.avg_pool2d(x, 2, divisor_override=3),
        lambda x: tp.avg_pool1d(x.flatten(2), 3, 2, 1),
        lambda x: tp.adaptive_avg_pool2d(x, [3, 2]),
        lambda x: tp.adaptive_max_pool2d(x, [3, 2])[0],
        lambda x: tp.interpolate(x, size=[9, 4], mode="bilinear", align_corners=False),
        lambda x: tp.interpolate(x, scale_factor=2, mode="nearest"),
        lambda x: tp.interpolate(x, size=[7, 11], mode="bicubic", align_corners=True),
        lambda x: tp.im2col(x, [2, 3], [1, 1], [1, 0], [2, 1]),
        lambda x: tp.col2im(x.flatten(2)[:, :, :6], [3, 4], [2, 2], [1, 1], [0, 0], [1, 1]),
    ],
)
def test_pool_interpolate_unfold(fn):
    check(fn, rng.standard_normal((2, 4, 6, 7)))
