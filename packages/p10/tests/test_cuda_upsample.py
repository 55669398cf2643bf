"""Resampling on the GPU (upsample.cu via csrc/cuda/ops_upsample.cpp; tp.interpolate picks the op) against
float64 NumPy resampling matrices built from PyTorch's rules (as test_interpolate.py) and against the CPU op.

Covered: nearest and nearest-exact (1-3 d, sizes and scale factors, uint8), linear / bilinear / bicubic /
trilinear (align_corners both ways, up and down), mode='area' (adaptive_avg_pool), dtypes (float16/bfloat16
loosely), layouts (channels-last, strided slices), size-0 batches and size-1 dims, the .out forms and errors.
Backward on CUDA is in tpx/tests/test_cuda_conv_grad.py. They need a GPU and skip elsewhere.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, layouts, needs_cuda, np_of64  # noqa: E402

pytestmark = needs_cuda

rng = np.random.default_rng(0)
A = -0.75  # Keys' cubic convolution kernel, as PyTorch's bicubic


def scale_of(n_in, n_out, align_corners, sf, dtype=np.float64):
    if align_corners:
        return dtype((n_in - 1) / (n_out - 1)) if n_out > 1 else dtype(0)
    return dtype(1.0 / sf) if sf else dtype(n_in) / dtype(n_out)


def matrix(mode, n_in, n_out, align_corners=False, sf=None, rank=1):
    """The [n_out, n_in] matrix that resamples one dim of a `rank`-d op (PyTorch's sampling rules)."""
    m = np.zeros((n_out, n_in))
    if mode == "nearest" and rank == 2 and n_out in (n_in, 2 * n_in):
        m[np.arange(n_out), np.arange(n_out) // (n_out // n_in)] = 1  # nearest_idx: a copy or a doubling
        return m
    if mode in ("nearest", "nearest-exact"):
        sc = scale_of(n_in, n_out, False, sf, np.float32)  # the index rule runs in float32
        for o in range(n_out):
            if mode == "nearest":
                src = np.floor(np.float32(o) * sc)
            else:
                src = np.floor(np.float32(float(max(sc * np.float32(o + 0.5) - np.float32(0.5), 0)) + 0.5))
            m[o, min(int(src), n_in - 1)] = 1
        return m
    sc = scale_of(n_in, n_out, align_corners, sf)
    for o in range(n_out):
        src = sc * o if align_corners else sc * (o + 0.5) - 0.5
        if mode == "linear":
            if n_in == n_out:
                m[o, o] = 1
                continue
            src = max(src, 0.0)
            i = min(int(math.floor(src)), n_in - 1)
            lam = min(max(src - i, 0.0), 1.0)
            m[o, i] += 1 - lam
            m[o, min(i + 1, n_in - 1)] += lam
        else:
            i = min(int(math.floor(src)), n_in - 1)
            t = min(max(src - i, 0.0), 1.0)
            near = lambda x: ((A + 2) * x - (A + 3)) * x * x + 1  # noqa: E731
            far = lambda x: ((A * x - 5 * A) * x + 8 * A) * x - 4 * A  # noqa: E731
            for j, w in enumerate([far(t + 1), near(t), near(1 - t), far(2 - t)]):
                m[o, min(max(i - 1 + j, 0), n_in - 1)] += w
    return m


def ref_resample(a, mode, size, align_corners=False, sfs=None):
    nsp = len(size)
    r = a.astype(np.float64)
    for i in range(nsp):
        ax = a.ndim - nsp + i
        m = matrix(mode, a.shape[ax], size[i], align_corners, sfs[i] if sfs else None, nsp)
        r = np.moveaxis(np.tensordot(m, np.moveaxis(r, ax, 0), axes=1), 0, ax)
    return r


def shapes(nsp):
    return (2, 3) + (4, 5, 7)[3 - nsp :]


MODE_RANK = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
BASE = {"bilinear": "linear", "trilinear": "linear", "linear": "linear", "bicubic": "cubic"}


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 3, 8])
def test_nearest(mode, nsp, size):
    a = rng.standard_normal(shapes(nsp)).astype(np.float32)
    osz = [size, size + 1, size + 2][:nsp]
    want = ref_resample(a, mode, osz)
    for x in layouts(a):
        got = tp.interpolate(x, size=osz, mode=mode)
        assert got.device.type == DEV and got.shape == want.shape and got.dtype == tp.float32
        np.testing.assert_array_equal(np_of64(got), want.astype(np.float32))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("sf", [0.7, 2, 2.3])
def test_nearest_scale_factor_and_uint8(mode, sf):
    a = rng.integers(0, 255, (1, 2, 5, 7)).astype(np.uint8)
    osz = [int(5 * sf), int(7 * sf)]
    got = tp.interpolate(tp.tensor(a).to(DEV), scale_factor=sf, mode=mode)
    assert got.dtype == tp.uint8
    np.testing.assert_array_equal(
        got.cpu().numpy(), ref_resample(a, mode, osz, sfs=[sf, sf]).astype(np.uint8)
    )
    np.testing.assert_array_equal(
        got.cpu().numpy(), tp.interpolate(tp.tensor(a), scale_factor=sf, mode=mode).numpy()
    )


@pytest.mark.parametrize("mode", ["linear", "bilinear", "bicubic", "trilinear"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("scale", [0.6, 2.5])
def test_weighted_modes(mode, align_corners, scale):
    nsp = MODE_RANK[mode]
    a = rng.standard_normal(shapes(nsp)).astype(np.float32)
    osz = [max(1, int(n * scale)) for n in a.shape[2:]]
    want = ref_resample(a, BASE[mode], osz, align_corners)
    cpu = tp.interpolate(tp.tensor(a), size=osz, mode=mode, align_corners=align_corners)
    for x in layouts(a):
        got = tp.interpolate(x, size=osz, mode=mode, align_corners=align_corners)
        assert got.shape == want.shape
        np.testing.assert_allclose(np_of64(got), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np_of64(got), np_of64(cpu), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_scale_factor_kept(mode):
    a = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    got = tp.interpolate(tp.tensor(a).to(DEV), scale_factor=1.7, mode=mode)
    want = ref_resample(a, BASE[mode], [8, 11], sfs=[1.7, 1.7])
    np.testing.assert_allclose(np_of64(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype, tol", [(tp.float64, 1e-12), (tp.float16, 4e-3), (tp.bfloat16, 3e-2)])
def test_dtypes(dtype, tol):
    x = tp.tensor(rng.standard_normal((2, 3, 5, 6))).to(dtype)
    for mode in ("nearest", "bilinear", "bicubic"):
        kw = {} if mode == "nearest" else {"align_corners": False}
        got = tp.interpolate(x.to(DEV), size=[9, 4], mode=mode, **kw)
        assert got.dtype == dtype
        np.testing.assert_allclose(
            np_of64(got), ref_resample(np_of64(x), BASE.get(mode, mode), [9, 4]), rtol=tol, atol=tol
        )
        np.testing.assert_allclose(
            np_of64(got), np_of64(tp.interpolate(x, size=[9, 4], mode=mode, **kw)), rtol=tol, atol=tol
        )


def test_area_empty_batch_size_one_and_out():
    a = rng.standard_normal((2, 3, 7, 9)).astype(np.float32)
    got = tp.interpolate(tp.tensor(a).to(DEV), size=[3, 4], mode="area")
    np.testing.assert_allclose(
        np_of64(got), np_of64(tp.interpolate(tp.tensor(a), size=[3, 4], mode="area")), rtol=1e-6
    )
    assert tp.interpolate(tp.zeros(0, 3, 4, 4).to(DEV), size=[8, 8], mode="bilinear").shape == (0, 3, 8, 8)
    one = tp.interpolate(
        tp.tensor(np.ascontiguousarray(a[:, :, :1, :1])).to(DEV), size=[3, 2], mode="bilinear"
    )
    np.testing.assert_allclose(np_of64(one), np.broadcast_to(a[:, :, :1, :1], (2, 3, 3, 2)), rtol=1e-6)
    out = tp.empty(1).to(DEV)  # resized, as on the CPU
    tp.ops.call("upsample_bilinear2d.out", tp.tensor(a).to(DEV), [5, 5], True, out=out)
    np.testing.assert_allclose(np_of64(out), ref_resample(a, "linear", [5, 5], True), rtol=1e-5, atol=1e-5)
    out = tp.empty(2, 3, 14, 18, dtype=tp.float32).to(DEV)
    tp.ops.call("upsample_nearest2d.out", tp.tensor(a).to(DEV), [14, 18], out=out)
    np.testing.assert_array_equal(np_of64(out), ref_resample(a, "nearest", [14, 18]).astype(np.float32))


def test_errors_match_the_cpu():
    for x in (tp.zeros(1, 1, 4, 4), tp.zeros(1, 1, 4, 4).to(DEV)):
        with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
            tp.ops.call("upsample_bilinear2d", x, [0, 3], False)
        with pytest.raises(RuntimeError, match="It is expected output_size equals to 2"):
            tp.upsample_nearest2d(x, [3])
        with pytest.raises(RuntimeError, match="Non-empty 4D data tensor expected"):
            tp.upsample_nearest2d(x[:, :0], [2, 2])
    with pytest.raises(Exception) as cpu:
        tp.ops.call("upsample_bilinear2d", tp.zeros(1, 1, 4, 4, dtype=tp.uint8), [8, 8], False)
    with pytest.raises(type(cpu.value)):
        tp.ops.call("upsample_bilinear2d", tp.zeros(1, 1, 4, 4, dtype=tp.uint8).to(DEV), [8, 8], False)
