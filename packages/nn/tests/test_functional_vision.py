"""nn.functional vision ops (nn/functional/vision.py): pad in every mode, interpolate and the deprecated
upsample spellings, pixel_shuffle / pixel_unshuffle, channel_shuffle, affine_grid and grid_sample.

References are NumPy (np.pad's modes 'constant' / 'reflect' / 'edge' / 'wrap' are exactly PyTorch's
'constant' / 'reflect' / 'replicate' / 'circular'; the shuffles from their index formulas; grid_sample point
by point in plain Python from ATen's definition); gradients by gradcheck; PyTorch where installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import T, check

import tensorplay.nn.functional as F
from tensorplay.autograd import gradcheck

rng = np.random.default_rng(3)
NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def np_pad(x, pad, mode, value=0.0):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=NP_MODE[mode])


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize(
    ("shape", "pad"),
    [((2, 3, 5), (2, 1)), ((1, 2, 4, 5), (1, 2, 3, 0)), ((1, 1, 3, 4, 4), (1, 1, 2, 0, 1, 2))],
)
def test_pad_modes(mode, shape, pad):
    x = rng.normal(size=shape)
    check(F.pad(T(x), pad, mode=mode), np_pad(x, pad, mode))


def test_pad_constant_value_and_negative_crop():
    x = rng.normal(size=(2, 4))
    check(F.pad(T(x), (1, 2), value=-3.5), np_pad(x, (1, 2), "constant", -3.5))
    check(F.pad(T(x), [-1, 1, 0, -1]), np.pad(x[:-1, 1:], [(0, 0), (0, 1)]))
    assert gradcheck(
        lambda a: F.pad(a, (1, 2, 2, 1), mode="reflect"), (T(rng.normal(size=(1, 1, 3, 4)), True),)
    )
    assert gradcheck(lambda a: F.pad(a, (2, 1), mode="circular"), (T(rng.normal(size=(1, 2, 3)), True),))


def test_pad_errors():
    with pytest.raises((RuntimeError, ValueError)):
        F.pad(T(np.zeros((1, 1, 3))), (3, 0), mode="reflect")  # reflection pad must be < the dim
    with pytest.raises((RuntimeError, ValueError, NotImplementedError)):
        F.pad(T(np.zeros((1, 1, 3))), (1, 1), mode="bogus")


def test_interpolate_nearest_and_linear():
    x = rng.normal(size=(1, 2, 3))
    check(F.interpolate(T(x), scale_factor=2), np.repeat(x, 2, -1))
    want = np.stack([np.interp(np.linspace(0, 2, 5), np.arange(3), row) for row in x[0]])[None]
    check(F.interpolate(T(x), size=5, mode="linear", align_corners=True), want)


def test_upsample_spellings_warn():
    x = rng.normal(size=(1, 1, 2, 2))
    with pytest.warns(UserWarning, match="`nn.functional.upsample` is deprecated"):
        check(F.upsample(T(x), scale_factor=2), np.repeat(np.repeat(x, 2, -1), 2, -2))
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        check(F.upsample_nearest(T(x), size=4), np.repeat(np.repeat(x, 2, -1), 2, -2))
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        got = F.upsample_bilinear(T(x), size=3)
    r = np.array([[1, 0], [0.5, 0.5], [0, 1]])  # align_corners=True sample weights for 2 -> 3
    check(got, np.einsum("ih,nchw,jw->ncij", r, x, r))


def pixel_shuffle_ref(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c // (r * r), h * r, w * r))
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., ch, i::r, j::r] = x[..., ch * r * r + i * r + j, :, :]
    return out


@pytest.mark.parametrize("shape", [(2, 8, 3, 2), (8, 2, 3), (2, 1, 4, 2, 2)])
def test_pixel_shuffle_and_unshuffle(shape):
    x = rng.normal(size=shape)
    want = pixel_shuffle_ref(x, 2)
    got = F.pixel_shuffle(T(x), 2)
    check(got, want)
    check(F.pixel_unshuffle(T(want), 2), x)
    assert gradcheck(lambda a: F.pixel_shuffle(a, 2), (T(x, True),))


def test_pixel_shuffle_errors():
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=3 is not divisible by 4"):
        F.pixel_shuffle(T(np.zeros((1, 3, 2, 2))), 2)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects input to have at least 3 dimensions"):
        F.pixel_shuffle(T(np.zeros((4, 2))), 2)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\)=3 is not divisible by 2"):
        F.pixel_unshuffle(T(np.zeros((1, 1, 2, 3))), 2)


def test_channel_shuffle():
    x = rng.normal(size=(2, 6, 2, 3))
    g = 3
    want = np.stack([x[:, (c % g) * (6 // g) + c // g] for c in range(6)], 1)
    check(F.channel_shuffle(T(x), g), want)
    check(F.native_channel_shuffle(T(x), g), want)
    assert gradcheck(lambda a: F.channel_shuffle(a, 2), (T(rng.normal(size=(1, 4, 2)), True),))
    with pytest.raises(
        RuntimeError, match="Number of channels must be divisible by groups. Got 6 channels and 4"
    ):
        F.channel_shuffle(T(x), 4)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.channel_shuffle(T(np.zeros((2, 4))), 2)


def test_vision_matches_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = rng.normal(size=(2, 8, 4, 6))
    check(F.pixel_shuffle(T(x), 2), tf.pixel_shuffle(torch.tensor(x), 2).numpy())
    check(F.pixel_unshuffle(T(x), 2), tf.pixel_unshuffle(torch.tensor(x), 2).numpy())
    check(F.channel_shuffle(T(x), 4), tf.channel_shuffle(torch.tensor(x), 4).numpy())
    for mode in NP_MODE:
        check(F.pad(T(x), (1, 2, 3, 0), mode=mode), tf.pad(torch.tensor(x), (1, 2, 3, 0), mode=mode).numpy())


# ---- affine_grid and grid_sample -----------------------------------------------------------------------


def unnormalize(c, size, align_corners):
    return (c + 1) / 2 * (size - 1) if align_corners else ((c + 1) * size - 1) / 2


def reflect(c, lo2, hi2):
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    d = abs(c - lo)
    extra, flips = math.fmod(d, span), math.floor(d / span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def pad_coord(c, size, padding_mode, align_corners):
    if padding_mode == "border":
        return min(max(c, 0), size - 1)
    if padding_mode == "reflection":
        c = reflect(c, 0, 2 * (size - 1)) if align_corners else reflect(c, -1, 2 * size - 1)
        return min(max(c, 0), size - 1)
    return c


def grid_sample_ref(x, grid, mode, padding_mode, align_corners):
    """Point by point, for 4-D input: the definition in ATen's GridSampler.h, in plain Python."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, *grid.shape[1:3]))

    def read(b, yy, xx):
        return x[b, :, yy, xx] if 0 <= yy < h and 0 <= xx < w else np.zeros(c)

    def cubic(t):
        a = -0.75
        near = lambda v: ((a + 2) * v - (a + 3)) * v * v + 1  # noqa: E731
        far = lambda v: ((a * v - 5 * a) * v + 8 * a) * v - 4 * a  # noqa: E731
        return [far(t + 1), near(t), near(1 - t), far(2 - t)]

    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx = unnormalize(grid[b, i, j, 0], w, align_corners)
                gy = unnormalize(grid[b, i, j, 1], h, align_corners)
                if mode == "bicubic":
                    x0, y0 = math.floor(gx), math.floor(gy)
                    wx, wy = cubic(gx - x0), cubic(gy - y0)
                    acc = np.zeros(c)
                    for p in range(4):
                        for q in range(4):
                            xx = pad_coord(x0 - 1 + p, w, padding_mode, align_corners)
                            yy = pad_coord(y0 - 1 + q, h, padding_mode, align_corners)
                            acc += wx[p] * wy[q] * read(b, int(yy), int(xx))
                    out[b, :, i, j] = acc
                    continue
                gx = pad_coord(gx, w, padding_mode, align_corners)
                gy = pad_coord(gy, h, padding_mode, align_corners)
                if mode == "nearest":
                    out[b, :, i, j] = read(b, int(np.rint(gy)), int(np.rint(gx)))
                    continue
                x0, y0 = math.floor(gx), math.floor(gy)
                fx, fy = gx - x0, gy - y0
                out[b, :, i, j] = (
                    read(b, y0, x0) * (1 - fx) * (1 - fy)
                    + read(b, y0, x0 + 1) * fx * (1 - fy)
                    + read(b, y0 + 1, x0) * (1 - fx) * fy
                    + read(b, y0 + 1, x0 + 1) * fx * fy
                )
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    x = rng.normal(size=(2, 3, 4, 5))
    grid = rng.uniform(-1.4, 1.4, size=(2, 3, 6, 2))  # some points outside the input
    got = F.grid_sample(T(x), T(grid), mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check(got, grid_sample_ref(x, grid, mode, padding_mode, align_corners), tol=1e-10)


def test_grid_sample_gradcheck_and_3d():
    x, grid = T(rng.normal(size=(1, 2, 3, 4)), True), T(rng.uniform(-0.9, 0.9, size=(1, 2, 3, 2)), True)
    assert gradcheck(lambda a, g: F.grid_sample(a, g, align_corners=False), (x, grid))
    assert gradcheck(lambda a, g: F.grid_sample(a, g, padding_mode="border", align_corners=True), (x, grid))
    # 3-D: the identity grid reproduces the input
    v = rng.normal(size=(1, 2, 3, 4, 5))
    theta = T([[[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]]])
    g3 = F.affine_grid(theta, [1, 2, 3, 4, 5], align_corners=False)
    check(F.grid_sample(T(v), g3, align_corners=False), v, tol=1e-10)


def test_affine_grid():
    theta = rng.normal(size=(2, 2, 3))
    for align_corners in (False, True):
        got = F.affine_grid(T(theta), [2, 1, 3, 4], align_corners=align_corners)

        def axis(s, align_corners=align_corners):
            base = np.linspace(-1, 1, s)
            return base if align_corners else base * (s - 1) / s

        xs, ys = np.meshgrid(axis(4), axis(3))
        base = np.stack([xs, ys, np.ones_like(xs)], -1)  # [H, W, 3]
        check(got, np.einsum("hwk,nik->nhwi", base, theta))
    check(F.affine_grid(T(theta), [2, 1, 1, 1], align_corners=False), theta[:, None, None, :, 2])
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(T(theta[:, :1]), [2, 1, 3, 4], align_corners=False)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.affine_grid(T(theta), [2, 1, 3, 4])
    assert gradcheck(lambda t: F.affine_grid(t, [2, 1, 2, 3], align_corners=True), (T(theta, True),))


def test_grid_sample_errors():
    x, g = T(np.zeros((1, 1, 2, 2))), T(np.zeros((1, 1, 1, 2)))
    with pytest.raises(
        ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'area'"
    ):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection'"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(
            T(np.zeros((1, 1, 2, 2, 2))), T(np.zeros((1, 1, 1, 1, 3))), mode="bicubic", align_corners=False
        )


def test_grid_sample_matches_torch():
    torch = pytest.importorskip("torch")
    x, grid = rng.normal(size=(2, 3, 5, 4)), rng.uniform(-1.2, 1.2, size=(2, 4, 3, 2))
    for mode in ("bilinear", "nearest", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            want = torch.nn.functional.grid_sample(
                torch.tensor(x), torch.tensor(grid), mode=mode, padding_mode=pm, align_corners=False
            )
            check(
                F.grid_sample(T(x), T(grid), mode=mode, padding_mode=pm, align_corners=False),
                want.numpy(),
                1e-9,
            )
