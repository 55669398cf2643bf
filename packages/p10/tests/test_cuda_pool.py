"""Pooling on the GPU (pool.cu via csrc/cuda/ops_pool.cpp and ops_pool_adaptive.cpp) against float64 NumPy
loops written from the definitions and against the CPU op.

Covered: max_pool1d/2d/3d (values and flat indices, exact), avg_pool1d/2d/3d (count_include_pad, ceil_mode,
divisor_override, int64 truncation), adaptive avg/max pool 1d/2d/3d; dtypes, NaN windows, layouts (transposed,
channels-last, strided slices), unbatched inputs, size-0 batches and size-1 dims, the out= forms, errors (the
CPU's exception types and messages). Backward on CUDA is in tpx/tests/test_cuda_conv_grad.py. They need a
GPU and skip elsewhere.
"""

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, layouts, needs_cuda, np_of64  # noqa: E402

pytestmark = needs_cuda

rng = np.random.default_rng(0)


# ---- references (float64 loops, as in test_pool.py) --------------------------------------------------------
def out_size(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def expand(v, nsp):
    v = [v] if isinstance(v, int) else list(v)
    return v * nsp if len(v) == 1 else v


def ref_max_pool(a, nsp, k, s=None, p=0, d=1, ceil=False):
    """Values and flat per-plane indices: the first maximum of each window, or its last NaN."""
    k = expand(k, nsp)
    s = k if s in (None, []) else expand(s, nsp)
    p, d = expand(p, nsp), expand(d, nsp)
    sp = a.shape[-nsp:]
    planes = a.reshape((-1,) + sp).astype(np.float64)
    outs = [out_size(sp[i], k[i], s[i], p[i], d[i], ceil) for i in range(nsp)]
    vals = np.empty((planes.shape[0],) + tuple(outs))
    idx = np.empty(vals.shape, np.int64)
    for pos in itertools.product(*[range(o) for o in outs]):
        taps = [[pos[i] * s[i] - p[i] + j * d[i] for j in range(k[i])] for i in range(nsp)]
        taps = [[t for t in tt if 0 <= t < sp[i]] for i, tt in enumerate(taps)]
        flat = np.ravel_multi_index(np.ix_(*taps), sp).reshape(-1)
        win = planes.reshape(planes.shape[0], -1)[:, flat]
        for q in range(planes.shape[0]):
            nan = np.flatnonzero(np.isnan(win[q]))
            j = nan[-1] if nan.size else int(np.argmax(win[q]))
            vals[(q,) + pos], idx[(q,) + pos] = win[q][j], flat[j]
    shape = a.shape[:-nsp] + tuple(outs)
    return vals.reshape(shape), idx.reshape(shape)


def ref_avg_pool(a, nsp, k, s=None, p=0, ceil=False, count_include_pad=True, divisor=None):
    k = expand(k, nsp)
    s = k if s in (None, []) else expand(s, nsp)
    p = expand(p, nsp)
    sp = a.shape[-nsp:]
    planes = a.reshape((-1,) + sp).astype(np.float64)
    outs = [out_size(sp[i], k[i], s[i], p[i], 1, ceil) for i in range(nsp)]
    res = np.empty((planes.shape[0],) + tuple(outs))
    for pos in itertools.product(*[range(o) for o in outs]):
        lo = [pos[i] * s[i] - p[i] for i in range(nsp)]
        hi = [min(lo[i] + k[i], sp[i] + p[i]) for i in range(nsp)]
        padded = int(np.prod([hi[i] - lo[i] for i in range(nsp)]))
        lo = [max(v, 0) for v in lo]
        hi = [min(hi[i], sp[i]) for i in range(nsp)]
        box = planes[(slice(None),) + tuple(slice(lo[i], hi[i]) for i in range(nsp))]
        n = divisor or (padded if count_include_pad else int(np.prod([hi[i] - lo[i] for i in range(nsp)])))
        res[(slice(None),) + pos] = box.reshape(box.shape[0], -1).sum(1) / n if box.size else 0.0
    return res.reshape(a.shape[:-nsp] + tuple(outs))


def ref_adaptive(a, nsp, size, kind):
    sp = a.shape[-nsp:]
    planes = a.reshape((-1,) + sp).astype(np.float64)
    size = expand(size, nsp)
    vals = np.empty((planes.shape[0],) + tuple(size))
    idx = np.empty(vals.shape, np.int64)
    for pos in itertools.product(*[range(o) for o in size]):
        rr = [(pos[i] * sp[i] // size[i], -(-(pos[i] + 1) * sp[i] // size[i])) for i in range(nsp)]
        flat = np.ravel_multi_index(np.ix_(*[range(*r) for r in rr]), sp).reshape(-1)
        win = planes.reshape(planes.shape[0], -1)[:, flat]
        if kind == "avg":
            vals[(slice(None),) + pos] = win.mean(1)
            continue
        for q in range(planes.shape[0]):
            nan = np.flatnonzero(np.isnan(win[q]))
            j = nan[-1] if nan.size else int(np.argmax(win[q]))
            vals[(q,) + pos], idx[(q,) + pos] = win[q][j], flat[j]
    shape = a.shape[:-nsp] + tuple(size)
    return vals.reshape(shape), idx.reshape(shape)


def sample(nsp, batch=2, channels=3, dtype=np.float32):
    return rng.standard_normal((batch, channels) + (5, 6, 7)[3 - nsp :]).astype(dtype)


MAX_CONFIGS = [
    dict(k=2),
    dict(k=3, s=2, p=1),
    dict(k=3, s=2, p=1, ceil=True),
    dict(k=3, s=2, d=2, p=1),
    dict(k=[2, 3, 3], s=[1, 2, 3], p=[1, 0, 1], d=[2, 1, 1], ceil=True),
]
MAX_FN = {1: tp.max_pool1d, 2: tp.max_pool2d, 3: tp.max_pool3d}
AVG_FN = {1: tp.avg_pool1d, 2: tp.avg_pool2d, 3: tp.avg_pool3d}


def max_args(cfg, nsp):
    k = cfg["k"] if isinstance(cfg["k"], int) else cfg["k"][3 - nsp :]
    s = cfg.get("s", [])
    s = s if isinstance(s, int) else s[3 - nsp :] if s else []
    p = cfg.get("p", 0)
    p = p if isinstance(p, int) else p[3 - nsp :]
    d = cfg.get("d", 1)
    d = d if isinstance(d, int) else d[3 - nsp :]
    return k, s, p, d, cfg.get("ceil", False)


# ---- max pooling -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("cfg", range(len(MAX_CONFIGS)))
def test_max_pool_values_and_indices(nsp, cfg):
    a = sample(nsp)
    k, s, p, d, ceil = max_args(MAX_CONFIGS[cfg], nsp)
    want_v, want_i = ref_max_pool(a, nsp, k, s, p, d, ceil)
    with_indices = getattr(tp, f"max_pool{nsp}d_with_indices")
    cpu_v, cpu_i = with_indices(tp.tensor(a), k, s, p, d, ceil)
    for x in layouts(a):
        v, i = with_indices(x, k, s, p, d, ceil)
        assert v.device.type == DEV and i.dtype == tp.int64 and v.shape == cpu_v.shape
        np.testing.assert_array_equal(np_of64(v), want_v)
        np.testing.assert_array_equal(i.cpu().numpy(), want_i)
        np.testing.assert_array_equal(i.cpu().numpy(), cpu_i.numpy())
        np.testing.assert_array_equal(np_of64(MAX_FN[nsp](x, k, s, p, d, ceil)), want_v)


@pytest.mark.parametrize(
    "dtype", ["float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"]
)
def test_max_pool_dtypes(dtype):
    a = rng.integers(0, 100, (2, 3, 6, 7)).astype(np.float32)
    x = tp.tensor(a).to(getattr(tp, dtype))
    v, i = tp.max_pool2d_with_indices(x.to(DEV), 3, 2, 1)
    cv, ci = tp.max_pool2d_with_indices(x, 3, 2, 1)
    assert v.dtype == x.dtype
    np.testing.assert_array_equal(np_of64(v), np_of64(cv))
    np.testing.assert_array_equal(i.cpu().numpy(), ci.numpy())
    np.testing.assert_array_equal(np_of64(v), ref_max_pool(a, 2, 3, 2, 1)[0])


def test_max_pool_past_int32_takes_the_64_bit_kernel():
    # 2^30 input elements: pool_fits_int32 is false, so the general max_pool_* kernel runs (every smaller test
    # takes max_pool32_*, Note [32-bit pooling indices]). Checked on the last plane's last two output rows,
    # whose flat indices are the largest: they read input rows 16379..16383, no padding below.
    a = rng.integers(0, 255, (4, 16384, 16384), dtype=np.uint8)
    v, i = tp.max_pool2d_with_indices(tp.tensor(a).to(DEV), 3, 2, 1)
    assert v.shape == (4, 8192, 8192)
    want_v, want_i = ref_max_pool(a[3:, 16379:].astype(np.float64), 2, 3, 2, [0, 1])
    np.testing.assert_array_equal(np_of64(v[3:, -2:]), want_v)
    np.testing.assert_array_equal(i[3:, -2:].cpu().numpy(), want_i + 16379 * 16384)


def test_max_pool_nan_and_inf():
    a = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    a[0, 0, 1, 1] = a[0, 0, 1, 2] = np.nan
    a[0, 1, :3, :3] = -np.inf
    v, i = tp.max_pool2d_with_indices(tp.tensor(a).to(DEV), 3, 3)
    cv, ci = tp.max_pool2d_with_indices(tp.tensor(a), 3, 3)
    np.testing.assert_array_equal(np_of64(v), np_of64(cv))
    np.testing.assert_array_equal(i.cpu().numpy(), ci.numpy())
    assert np.isnan(np_of64(v)[0, 0, 0, 0]) and i.cpu().numpy()[0, 0, 0, 0] == 8  # the last NaN of the window


def test_max_pool_bool_refused_as_on_cpu():
    x = tp.zeros(1, 1, 4, 4, dtype=tp.bool)
    with pytest.raises(Exception) as cpu:
        tp.max_pool2d(x, 2)
    with pytest.raises(type(cpu.value)):
        tp.max_pool2d(x.to(DEV), 2)


# ---- average pooling ---------------------------------------------------------------------------------------
AVG_CONFIGS = [
    dict(k=2),
    dict(k=3, s=2, p=1),
    dict(k=3, s=2, p=1, ceil=True, cip=False),
    dict(k=3, s=1, p=1, div=5),
    dict(k=[2, 3, 2], s=[2, 1, 3], p=[1, 1, 0], ceil=True),
]


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("cfg", range(len(AVG_CONFIGS)))
def test_avg_pool(nsp, cfg):
    c = AVG_CONFIGS[cfg]
    if nsp == 1 and "div" in c:
        pytest.skip("avg_pool1d takes no divisor_override")
    a = sample(nsp)
    k, s, p, _, ceil = max_args(c, nsp)
    cip, div = c.get("cip", True), c.get("div")
    want = ref_avg_pool(a, nsp, k, s, p, ceil, cip, div)
    extra = () if nsp == 1 else (div,)
    cpu = AVG_FN[nsp](tp.tensor(a), k, s, p, ceil, cip, *extra)
    for x in layouts(a):
        got = AVG_FN[nsp](x, k, s, p, ceil, cip, *extra)
        assert got.shape == cpu.shape and got.dtype == tp.float32
        np.testing.assert_allclose(np_of64(got), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np_of64(got), np_of64(cpu), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float16", 2e-3), ("bfloat16", 1.6e-2)])
def test_avg_pool_float_dtypes(dtype, tol):
    a = sample(2)
    x = tp.tensor(a).to(getattr(tp, dtype))
    got = tp.avg_pool2d(x.to(DEV), 3, 2, 1)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(np_of64(got), ref_avg_pool(np_of64(x), 2, 3, 2, 1), rtol=tol, atol=tol)
    np.testing.assert_allclose(np_of64(got), np_of64(tp.avg_pool2d(x, 3, 2, 1)), rtol=tol, atol=tol)


def test_avg_pool_int64_truncates():
    a = rng.integers(-50, 50, (2, 3, 6, 7))
    got = tp.avg_pool2d(tp.tensor(a).to(DEV), 3, 2, 1)
    assert got.dtype == tp.int64
    np.testing.assert_array_equal(got.cpu().numpy(), tp.avg_pool2d(tp.tensor(a), 3, 2, 1).numpy())
    with pytest.raises(Exception) as cpu:
        tp.avg_pool2d(tp.tensor(a).to(tp.int32), 2)
    with pytest.raises(type(cpu.value)):
        tp.avg_pool2d(tp.tensor(a).to(tp.int32).to(DEV), 2)


# ---- adaptive pooling --------------------------------------------------------------------------------------
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 3, 4, 9])
def test_adaptive_pools(nsp, size):
    a = sample(nsp)
    if size == 3:
        a.reshape(-1)[::7] = np.nan  # NaN windows: the max takes the last NaN, the average is NaN
    avg = getattr(tp, f"adaptive_avg_pool{nsp}d")
    mx = getattr(tp, f"adaptive_max_pool{nsp}d")
    want_avg, _ = ref_adaptive(a, nsp, size, "avg")
    want_max, want_idx = ref_adaptive(a, nsp, size, "max")
    for x in layouts(a):
        np.testing.assert_allclose(np_of64(avg(x, [size] * nsp)), want_avg, rtol=1e-5, atol=1e-6)
        v, i = mx(x, [size] * nsp)
        np.testing.assert_array_equal(np_of64(v), want_max)
        np.testing.assert_array_equal(i.cpu().numpy(), want_idx)
        np.testing.assert_array_equal(i.cpu().numpy(), mx(tp.tensor(a), [size] * nsp)[1].numpy())


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float16", 2e-3), ("bfloat16", 1.6e-2)])
def test_adaptive_dtypes(dtype, tol):
    x = tp.tensor(sample(2)).to(getattr(tp, dtype))
    got = tp.adaptive_avg_pool2d(x.to(DEV), [2, 3])
    assert got.dtype == x.dtype
    np.testing.assert_allclose(
        np_of64(got), ref_adaptive(np_of64(x), 2, [2, 3], "avg")[0], rtol=tol, atol=tol
    )
    v, i = tp.adaptive_max_pool2d(x.to(DEV), [2, 3])
    cv, ci = tp.adaptive_max_pool2d(x, [2, 3])
    np.testing.assert_array_equal(np_of64(v), np_of64(cv))
    np.testing.assert_array_equal(i.cpu().numpy(), ci.numpy())
    with pytest.raises(Exception) as cpu:
        tp.adaptive_avg_pool2d(tp.zeros(1, 2, 4, 4, dtype=tp.int64), [2, 2])
    with pytest.raises(type(cpu.value)):
        tp.adaptive_avg_pool2d(tp.zeros(1, 2, 4, 4, dtype=tp.int64).to(DEV), [2, 2])


# ---- shapes, out=, errors ----------------------------------------------------------------------------------
def test_unbatched_empty_batch_and_size_one_dims():
    a = rng.standard_normal((3, 1, 7)).astype(np.float32)  # unbatched 2-d input with a size-1 dim
    got = tp.max_pool2d(tp.tensor(a).to(DEV), [1, 2])
    np.testing.assert_array_equal(np_of64(got), ref_max_pool(a[None], 2, [1, 2])[0][0])
    empty = tp.zeros(0, 3, 6, 6).to(DEV)
    assert tp.max_pool2d(empty, 2).shape == (0, 3, 3, 3)
    assert tp.avg_pool2d(empty, 2).shape == (0, 3, 3, 3)
    assert tp.adaptive_avg_pool2d(empty, [2, 2]).shape == (0, 3, 2, 2)
    assert tp.adaptive_max_pool2d(tp.zeros(2, 3, 4, 4).to(DEV), [0, 2])[0].shape == (2, 3, 0, 2)
    one = tp.tensor(rng.standard_normal((1, 1, 1, 1)).astype(np.float32)).to(DEV)
    assert np_of64(tp.avg_pool2d(one, 1)) == np_of64(one)


def test_out_variants():
    a = sample(2)
    want_v, want_i = ref_max_pool(a, 2, 3, 2, 1)
    out, ind = tp.empty(1).to(DEV), tp.empty(1, dtype=tp.int64).to(DEV)  # resized, as on the CPU
    tp.ops.call("max_pool2d_with_indices.out", tp.tensor(a).to(DEV), 3, 2, 1, out=out, indices=ind)
    np.testing.assert_array_equal(np_of64(out), want_v)
    np.testing.assert_array_equal(ind.cpu().numpy(), want_i)
    out = tp.empty(2, 3, 3, 4).to(DEV)
    tp.ops.call("avg_pool2d.out", tp.tensor(a).to(DEV), 2, out=out)
    np.testing.assert_allclose(np_of64(out), ref_avg_pool(a, 2, 2), rtol=1e-5, atol=1e-6)
    out = tp.empty(2, 3, 3, 2).to(DEV)
    tp.ops.call("adaptive_avg_pool2d.out", tp.tensor(a).to(DEV), [3, 2], out=out)
    np.testing.assert_allclose(np_of64(out), ref_adaptive(a, 2, [3, 2], "avg")[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float32, but got float64"):
        tp.ops.call("avg_pool2d.out", tp.tensor(a).to(DEV), 3, out=tp.empty(1, dtype=tp.float64).to(DEV))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda x: tp.max_pool2d(x, 3, padding=2), "pad should be at most half of effective kernel"),
        (lambda x: tp.max_pool2d(x[..., :2, :2], 3), "Output size is too small"),
        (lambda x: tp.max_pool2d(x[0, 0], 2), "non-empty 3D or 4D"),
        (lambda x: tp.avg_pool2d(x, 2, divisor_override=0), "divisor must be not zero"),
        (lambda x: tp.adaptive_avg_pool2d(x, [-1, 2]), "elements of output_size must be greater"),
        (lambda x: tp.adaptive_max_pool2d(x[:, :, :0], [2, 2]), "non-zero size for non-batch dimensions"),
    ],
)
def test_errors_match_the_cpu(call, match):
    x = tp.zeros(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match=match):
        call(x)
    with pytest.raises(RuntimeError, match=match):
        call(x.to(DEV))
