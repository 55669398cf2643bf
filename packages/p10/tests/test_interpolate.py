"""tp.interpolate (src/tensorplay_p10/_interpolate.py) and the upsample ops (kernels/upsample.cpp).

The references are float64 NumPy: each spatial dim gets an [out, in] resampling matrix built from PyTorch's
sampling rule (nearest: floor(dst * scale), computed in float32 as PyTorch does, since the index is
discontinuous; linear: two taps; cubic: Keys' kernel with A = -0.75, clamped taps), applied along its axis
with tensordot. Checked: every mode and rank, up- and down-sampling, align_corners both ways, scale_factor
with and without recompute_scale_factor, dtypes (uint8 for the nearest modes), layouts, size-0 batches, the
threaded path, meta, argument errors, and, where PyTorch is installed, agreement on random configurations.
"""

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


# ---- references --------------------------------------------------------------------------------------------
def scale_of(n_in, n_out, align_corners, sf, dtype=np.float64):
    if align_corners:
        return dtype((n_in - 1) / (n_out - 1)) if n_out > 1 else dtype(0)
    return dtype(1.0 / sf) if sf else dtype(n_in) / dtype(n_out)


A = -0.75  # Keys' cubic convolution kernel, as PyTorch's bicubic


def keys_near(x):  # |x| <= 1
    return ((A + 2) * x - (A + 3)) * x * x + 1


def keys_far(x):  # 1 < |x| < 2
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A


def matrix(mode, n_in, n_out, align_corners=False, sf=None, rank=1):
    """The [n_out, n_in] matrix that resamples one dim of a `rank`-d op."""
    m = np.zeros((n_out, n_in))
    if mode == "nearest" and rank == 2 and n_out in (n_in, 2 * n_in):
        # PyTorch's 2-d nearest (nearest_idx): a copy or a doubling whatever the scale factor says
        m[np.arange(n_out), np.arange(n_out) // (n_out // n_in)] = 1
        return m
    if mode in ("nearest", "nearest-exact"):
        sc = scale_of(n_in, n_out, False, sf, np.float32)  # the index rule runs in float32 in PyTorch
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
        else:  # cubic
            i = min(int(math.floor(src)), n_in - 1)
            t = min(max(src - i, 0.0), 1.0)
            for j, w in enumerate([keys_far(t + 1), keys_near(t), keys_near(1 - t), keys_far(2 - t)]):
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


def ref_area(a, size):
    nsp = len(size)
    r = a.astype(np.float64)
    for i in range(nsp):
        ax = a.ndim - nsp + i
        n = a.shape[ax]
        m = np.zeros((size[i], n))
        for o in range(size[i]):
            lo, hi = o * n // size[i], -(-(o + 1) * n // size[i])
            m[o, lo:hi] = 1 / (hi - lo)
        r = np.moveaxis(np.tensordot(m, np.moveaxis(r, ax, 0), axes=1), 0, ax)
    return r


MODE_RANK = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
BASE = {"bilinear": "linear", "trilinear": "linear", "linear": "linear", "bicubic": "cubic"}


def shapes(nsp):
    return (2, 3) + (4, 5, 7)[3 - nsp :]


def layouts(a):
    yield tp.tensor(a)
    perm = (0,) + tuple(range(2, a.ndim)) + (1,)  # channels-last memory
    yield tp.tensor(np.ascontiguousarray(a.transpose(perm))).permute(tuple(np.argsort(perm)))
    big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
    big[..., ::2] = a
    yield tp.tensor(big)[..., ::2]


# ---- nearest -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 3, 6, 11])
def test_nearest_sizes(mode, nsp, size):
    a = rng.standard_normal(shapes(nsp)).astype(np.float32)
    osz = [size, size + 1, size + 2][:nsp]
    want = ref_resample(a, mode, osz)
    for x in layouts(a):
        got = tp.interpolate(x, size=osz, mode=mode)
        assert got.shape == want.shape and got.dtype == tp.float32
        np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("sf", [0.5, 0.7, 1.5, 2, 3, 2.3])
def test_nearest_scale_factor(mode, sf):
    a = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    osz = [int(5 * sf), int(7 * sf)]
    got = tp.interpolate(tp.tensor(a), scale_factor=sf, mode=mode)
    np.testing.assert_array_equal(got.numpy(), ref_resample(a, mode, osz, sfs=[sf, sf]).astype(np.float32))
    got = tp.interpolate(tp.tensor(a), scale_factor=sf, mode=mode, recompute_scale_factor=True)
    np.testing.assert_array_equal(got.numpy(), ref_resample(a, mode, osz).astype(np.float32))


@pytest.mark.parametrize("dtype", ["uint8", "float64", "float16", "bfloat16"])
def test_nearest_dtypes_are_exact(dtype):
    a = rng.integers(0, 200, (2, 3, 5, 6))
    x = tp.tensor(a).to(getattr(tp, dtype))
    for mode in ("nearest", "nearest-exact"):
        got = tp.interpolate(x, size=(9, 4), mode=mode)
        assert got.dtype == getattr(tp, dtype)
        np.testing.assert_array_equal(got.to(tp.float64).numpy(), ref_resample(a, mode, [9, 4]))


# ---- linear, bilinear, trilinear, bicubic ------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["linear", "bilinear", "trilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [1, 2, 4, 9])
def test_linear_modes(mode, align_corners, size):
    nsp = MODE_RANK[mode]
    a = rng.standard_normal(shapes(nsp)).astype(np.float32)
    osz = [size, size + 3, max(size - 1, 1)][:nsp]
    want = ref_resample(a, BASE[mode], osz, align_corners)
    for x in layouts(a):
        got = tp.interpolate(x, size=osz, mode=mode, align_corners=align_corners)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("mode", ["linear", "bilinear", "trilinear", "bicubic"])
@pytest.mark.parametrize("sf", [0.6, 1.7, 2.0])
@pytest.mark.parametrize("recompute", [None, True])
def test_linear_modes_scale_factor(mode, sf, recompute):
    nsp = MODE_RANK[mode]
    a = rng.standard_normal(shapes(nsp)).astype(np.float32)
    osz = [int(n * sf) for n in a.shape[2:]]
    got = tp.interpolate(tp.tensor(a), scale_factor=sf, mode=mode, recompute_scale_factor=recompute)
    want = ref_resample(a, BASE[mode], osz, False, None if recompute else [sf] * nsp)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=2e-6)
    # align_corners ignores the scale: the corners meet whatever the factor
    got = tp.interpolate(tp.tensor(a), scale_factor=sf, mode=mode, align_corners=True)
    np.testing.assert_allclose(got.numpy(), ref_resample(a, BASE[mode], osz, True), rtol=1e-5, atol=2e-6)


def test_nearest_2d_copies_and_doubles_whatever_the_scale():
    # PyTorch's upsample_nearest2d ignores the scale when out == in or out == 2 in; 1-d and 3-d do not
    a = np.arange(2 * 4 * 4, dtype=np.float32).reshape(1, 2, 4, 4)
    got = tp.interpolate(tp.tensor(a), scale_factor=(1.128, 2.1), mode="nearest")
    np.testing.assert_array_equal(got.numpy(), a.repeat(2, axis=3))
    got = tp.interpolate(tp.tensor(a[:, :, 0]), scale_factor=1.128, mode="nearest")
    np.testing.assert_array_equal(got.numpy(), a[:, :, 0, [0, 0, 1, 2]])  # floor(o / 1.128)


def test_same_size_is_a_copy_and_2x_align_corners():
    a = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    for mode in ("nearest", "nearest-exact", "bilinear", "bicubic", "area"):
        kw = {} if mode in ("nearest", "nearest-exact", "area") else {"align_corners": False}
        np.testing.assert_array_equal(tp.interpolate(tp.tensor(a), size=(5, 6), mode=mode, **kw).numpy(), a)
    x = tp.tensor([[[0.0, 1.0, 4.0]]])
    assert tp.interpolate(x, size=5, mode="linear", align_corners=True).tolist() == [
        [[0.0, 0.5, 1.0, 2.5, 4.0]]
    ]
    assert tp.interpolate(x, scale_factor=2, mode="nearest").tolist() == [[[0.0, 0.0, 1.0, 1.0, 4.0, 4.0]]]


TOL = {"float64": 1e-12, "float16": 3e-3, "bfloat16": 2e-2}


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_float_dtypes(dtype, mode):
    x = tp.tensor(rng.standard_normal((2, 3, 6, 5))).to(getattr(tp, dtype))
    exact = x.to(tp.float64).numpy()
    got = tp.interpolate(x, size=(11, 8), mode=mode, align_corners=True)
    assert got.dtype == getattr(tp, dtype)
    want = ref_resample(exact, BASE[mode], [11, 8], True)
    np.testing.assert_allclose(got.to(tp.float64).numpy(), want, rtol=TOL[dtype], atol=TOL[dtype] * 4)


def test_int_input_to_linear_mode_is_an_error():
    with pytest.raises(NotImplementedError, match="upsample_bilinear2d"):
        tp.interpolate(tp.ones(1, 1, 2, 2, dtype=tp.int64), size=3, mode="bilinear")
    with pytest.raises(NotImplementedError, match="upsample_nearest2d"):
        tp.interpolate(tp.ones(1, 1, 2, 2, dtype=tp.int32), size=3)


# ---- area --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_area(nsp):
    a = rng.standard_normal(shapes(nsp)).astype(np.float32)
    osz = [3, 2, 4][:nsp]
    got = tp.interpolate(tp.tensor(a), size=osz, mode="area")
    np.testing.assert_allclose(got.numpy(), ref_area(a, osz), rtol=1e-6, atol=1e-6)
    got = tp.interpolate(tp.tensor(a), scale_factor=0.5, mode="area")  # area always recomputes the size
    np.testing.assert_allclose(got.numpy(), ref_area(a, [n // 2 for n in a.shape[2:]]), rtol=1e-6, atol=1e-6)


# ---- shapes, threads, meta ---------------------------------------------------------------------------------
def test_large_input_and_empty_batch():
    a = rng.standard_normal((2, 8, 256, 260)).astype(np.float32)  # 1.06M elements in, 4.3M out
    got = tp.interpolate(tp.tensor(a), scale_factor=2, mode="bilinear")
    want = ref_resample(a[:, :2], "linear", [512, 520], False, [2.0, 2.0])
    np.testing.assert_allclose(got.numpy()[:, :2], want, rtol=1e-5, atol=2e-6)
    got = tp.interpolate(tp.tensor(a), scale_factor=0.5, mode="nearest")
    np.testing.assert_array_equal(got.numpy(), a[:, :, ::2, ::2])
    assert tp.interpolate(tp.zeros(0, 3, 4, 4), size=(6, 7), mode="bicubic").shape == (0, 3, 6, 7)


def test_meta():
    m = tp.empty((2, 3, 4, 5, 6), device="meta")
    got = tp.interpolate(m, scale_factor=(2, 1.5, 0.5), mode="trilinear")
    assert got.shape == (2, 3, 8, 7, 3) and got.device.type == "meta"
    assert tp.upsample_nearest1d(tp.empty((1, 2, 5), device="meta"), [9]).shape == (1, 2, 9)


def test_ops_directly():
    a = rng.standard_normal((1, 2, 4, 6)).astype(np.float32)
    got = tp.upsample_bilinear2d(tp.tensor(a), [7, 3], False, 1.5, None)
    np.testing.assert_allclose(
        got.numpy(), ref_resample(a, "linear", [7, 3], False, [1.5, None]), rtol=1e-5, atol=2e-6
    )
    got = tp.ops.call("_upsample_nearest_exact1d", tp.tensor(a[0]), [4])
    np.testing.assert_array_equal(got.numpy(), ref_resample(a[0], "nearest-exact", [4]).astype(np.float32))


def test_out_variants():
    a = rng.standard_normal((1, 2, 4, 6)).astype(np.float32)
    out = tp.empty(0)
    r = tp.ops.call("upsample_bicubic2d.out", tp.tensor(a), [5, 9], True, out=out)
    assert r is out and out.shape == (1, 2, 5, 9)
    np.testing.assert_allclose(out.numpy(), ref_resample(a, "cubic", [5, 9], True), rtol=1e-5, atol=2e-6)
    out = tp.empty(1, 2, 3, 3, dtype=tp.float32)
    tp.ops.call("_upsample_nearest_exact2d.out", tp.tensor(a), [3, 3], out=out)
    np.testing.assert_array_equal(out.numpy(), ref_resample(a, "nearest-exact", [3, 3]).astype(np.float32))
    with pytest.raises(
        RuntimeError, match="upsample_nearest2d.out: Expected out tensor to have dtype float32"
    ):
        tp.ops.call("upsample_nearest2d.out", tp.tensor(a), [3, 3], out=tp.empty(0, dtype=tp.int64))


def test_docstring_examples():
    import doctest

    import tensorplay_p10._interpolate as module

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


# ---- errors ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(size=4, scale_factor=2), ValueError, "only one of size or scale_factor should be defined"),
        (dict(), ValueError, "either size or scale_factor should be defined"),
        (dict(size=4, align_corners=True), ValueError, "align_corners option can only be set"),
        (
            dict(size=(4, 4, 4)),
            ValueError,
            "Input and output must have the same number of spatial dimensions",
        ),
        (dict(scale_factor=(2,)), ValueError, "Input and scale_factor must have the same number"),
        (dict(size=(4, 4.0)), TypeError, "expected size to be one of int"),
        (dict(size=4, recompute_scale_factor=True), ValueError, "recompute_scale_factor is not meaningful"),
        (dict(size=4, mode="linear"), NotImplementedError, "Got 4D input, but linear mode needs 3D input"),
        (
            dict(size=4, mode="trilinear"),
            NotImplementedError,
            "Got 4D input, but trilinear mode needs 5D input",
        ),
        (dict(size=4, mode="lanczos"), NotImplementedError, "Input Error: Only 3D, 4D and 5D input Tensors"),
        (
            dict(size=0),
            RuntimeError,
            r"Input and output sizes should be greater than 0, but got input \(H: 3, W: 3\) "
            r"output \(H: 0, W: 0\)",
        ),
    ],
)
def test_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        tp.interpolate(tp.zeros(1, 1, 3, 3), **kwargs)


def test_op_errors():
    with pytest.raises(RuntimeError, match="It is expected input_size equals to 4, but got size 3"):
        tp.upsample_bilinear2d(tp.zeros(1, 3, 3), [2, 2], False)
    with pytest.raises(RuntimeError, match="It is expected output_size equals to 2, but got size 1"):
        tp.upsample_nearest2d(tp.zeros(1, 1, 3, 3), [2])
    with pytest.raises(RuntimeError, match="Non-empty 4D data tensor expected"):
        tp.upsample_nearest2d(tp.zeros(1, 0, 3, 3), [2, 2])


# ---- PyTorch -----------------------------------------------------------------------------------------------
def test_matches_torch_on_random_configs():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    r = np.random.default_rng(2)
    modes = ["nearest", "nearest-exact", "area", "linear", "bilinear", "bicubic", "trilinear"]
    for trial in range(120):
        mode = modes[trial % len(modes)]
        nsp = MODE_RANK.get(mode, int(r.integers(1, 4)))
        sp = tuple(int(v) for v in r.integers(1, 9, nsp))
        a = r.standard_normal((2, 2) + sp).astype(np.float32 if trial % 4 else np.float64)
        kw = {}
        if mode not in ("nearest", "nearest-exact", "area"):
            kw["align_corners"] = bool(r.integers(0, 2))
        if r.integers(0, 2):
            kw["size"] = [int(v) for v in r.integers(1, 17, nsp)]
        else:
            kw["scale_factor"] = [float(v) for v in np.round(r.uniform(0.3, 3.5, nsp), 3)]
            if any(int(n * s) < 1 for n, s in zip(sp, kw["scale_factor"], strict=True)):
                continue
            kw["recompute_scale_factor"] = bool(r.integers(0, 2))
        want = F.interpolate(torch.from_numpy(a), mode=mode, **kw).numpy()
        got = tp.interpolate(tp.tensor(a), mode=mode, **kw).numpy()
        assert got.shape == want.shape, (mode, kw)
        if mode.startswith("nearest"):
            np.testing.assert_array_equal(got, want, err_msg=f"{mode} {kw}")  # same index rule, bit for bit
        else:
            # Not bit for bit: PyTorch's AVX2 kernels fuse the multiply-adds (FMA), which rounds differently;
            # the inputs are O(1), so 1e-5 is a few float32 ulps of the terms summed.
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{mode} {kw}")
