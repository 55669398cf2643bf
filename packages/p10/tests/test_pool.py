"""Pooling (kernels/pool.cpp, pool_adaptive.cpp) against float64 NumPy loops written from the definitions.

max_pool1d/2d/3d (values and flat indices), avg_pool1d/2d/3d and adaptive avg/max pool 1d/2d/3d are checked
over kernel/stride/padding/dilation/ceil_mode grids, batched and unbatched inputs, layouts (transposed,
channels-last, strided slices), dtypes, NaN and -inf windows, size-0 batches, the threaded path on > 1M
elements, meta, out= and PyTorch's error messages. Where PyTorch is installed, random configurations are also
compared with it exactly (values and indices).
"""

import itertools

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


# ---- references --------------------------------------------------------------------------------------------
def out_size(n, k, s, p, d, ceil):
    """PyTorch's pooling output size: floor (or ceil) division; the last window starts in input/left pad."""
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def expand(v, nsp):
    v = [v] if isinstance(v, int) else list(v)
    return v * nsp if len(v) == 1 else v


def ref_max_pool(a, nsp, k, s=None, p=0, d=1, ceil=False):
    """Values and flat per-plane indices, by scanning each window: the first maximum, or the last NaN."""
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
            w = win[q]
            nan = np.flatnonzero(np.isnan(w))
            j = nan[-1] if nan.size else int(np.argmax(w))
            vals[(q,) + pos], idx[(q,) + pos] = w[j], flat[j]
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


def adaptive_ranges(n, o):
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


def ref_adaptive(a, nsp, size, kind):
    sp = a.shape[-nsp:]
    planes = a.reshape((-1,) + sp).astype(np.float64)
    size = expand(size, nsp)
    vals = np.empty((planes.shape[0],) + tuple(size))
    idx = np.empty(vals.shape, np.int64)
    for pos in itertools.product(*[range(o) for o in size]):
        rr = [adaptive_ranges(sp[i], size[i])[pos[i]] for i in range(nsp)]
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


def layouts(a):
    """The same values as a contiguous, a channels-last (permuted) and a strided-slice tensor."""
    yield tp.tensor(a)
    if a.ndim >= 3:
        perm = (0,) + tuple(range(2, a.ndim)) + (1,)
        back = tuple(np.argsort(perm))
        yield tp.tensor(np.ascontiguousarray(a.transpose(perm))).permute(back)
    big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
    big[..., ::2] = a
    yield tp.tensor(big)[..., ::2]


def spatial(nsp, n=7):
    return tuple([5, 6, n][3 - nsp :])


# ---- max pooling -------------------------------------------------------------------------------------------
MAX_CONFIGS = [
    dict(k=2),
    dict(k=3, s=1),
    dict(k=3, s=2, p=1),
    dict(k=3, s=2, p=1, ceil=True),
    dict(k=2, s=2, ceil=True),
    dict(k=3, s=2, d=2, p=1),
    dict(k=[2, 3, 3], s=[1, 2, 3], p=[1, 0, 1], d=[2, 1, 1], ceil=True),
    dict(k=5, s=3, p=2, ceil=True),
]


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("cfg", range(len(MAX_CONFIGS)))
def test_max_pool_values_and_indices(nsp, cfg):
    c = dict(MAX_CONFIGS[cfg])
    for key in ("k", "s", "p", "d"):
        if isinstance(c.get(key), list):
            c[key] = c[key][3 - nsp :]
    a = rng.standard_normal((2, 3) + spatial(nsp)).astype(np.float32)
    ev, ei = ref_max_pool(a, nsp, c["k"], c.get("s"), c.get("p", 0), c.get("d", 1), c.get("ceil", False))
    args = (c["k"], c.get("s", []), c.get("p", 0), c.get("d", 1), c.get("ceil", False))
    for x in layouts(a):
        v, i = getattr(tp, f"max_pool{nsp}d_with_indices")(x, *args)
        assert v.dtype == tp.float32 and i.dtype == tp.int64 and v.shape == ev.shape
        np.testing.assert_array_equal(v.numpy(), ev.astype(np.float32))
        np.testing.assert_array_equal(i.numpy(), ei)
        np.testing.assert_array_equal(getattr(tp, f"max_pool{nsp}d")(x, *args).numpy(), v.numpy())
    # unbatched: [C, *spatial]
    v, i = getattr(tp, f"max_pool{nsp}d_with_indices")(tp.tensor(a[1]), *args)
    np.testing.assert_array_equal(v.numpy(), ev[1].astype(np.float32))
    np.testing.assert_array_equal(i.numpy(), ei[1])


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8"])
def test_max_pool_dtypes(dtype):
    a = rng.integers(0, 100, (2, 3, 9, 8)).astype(np.float64)
    x = tp.tensor(a).to(getattr(tp, dtype))
    v, i = tp.max_pool2d_with_indices(x, 3, 2, 1, ceil_mode=True)
    ev, ei = ref_max_pool(a, 2, 3, 2, 1, ceil=True)
    assert v.dtype == getattr(tp, dtype)
    np.testing.assert_array_equal(v.to(tp.float64).numpy(), ev)  # small integers are exact in every dtype
    np.testing.assert_array_equal(i.numpy(), ei)
    if dtype.startswith("int"):  # the most negative value is a real maximum, not "no value yet"
        lo = np.iinfo(dtype).min
        v, i = tp.max_pool1d_with_indices(tp.full((1, 4), lo, dtype=getattr(tp, dtype)), 2)
        assert v.tolist() == [[lo, lo]] and i.tolist() == [[0, 2]]


def test_max_pool_nan_and_inf():
    a = np.array([[[1.0, np.nan, 3.0, np.nan, 0.0, -np.inf, -np.inf, np.inf, 2.0]]], np.float32)
    v, i = tp.max_pool1d_with_indices(tp.tensor(a), 3)
    np.testing.assert_array_equal(v.numpy(), [[[np.nan, np.nan, np.inf]]])
    assert i.tolist() == [[[1, 3, 7]]]
    v, i = tp.max_pool1d_with_indices(tp.tensor(np.full((1, 1, 4), -np.inf, np.float32)), 2, padding=1)
    assert v.tolist() == [[[-np.inf] * 3]] and i.tolist() == [[[0, 1, 3]]]  # the first tap of each window
    np.testing.assert_array_equal(ref_max_pool(a, 1, 3)[1], [[[1, 3, 7]]])  # the reference agrees


@pytest.mark.parametrize("n", range(1, 12))
def test_ceil_mode_output_sizes(n):
    for k, s, p in itertools.product([1, 2, 3, 4], [1, 2, 3], [0, 1, 2]):
        if p > k // 2:
            continue
        for ceil in (False, True):
            want = out_size(n, k, s, p, 1, ceil)
            if want < 1:
                with pytest.raises(RuntimeError, match="Output size is too small"):
                    tp.max_pool2d(tp.zeros(1, 1, n), [1, k], [1, s], [0, p], ceil_mode=ceil)
                continue
            assert tp.max_pool2d(tp.zeros(1, 1, n), [1, k], [1, s], [0, p], ceil_mode=ceil).shape == (
                1,
                1,
                want,
            )
            assert tp.avg_pool1d(tp.zeros(1, n), k, s, p, ceil_mode=ceil).shape == (1, want)


def test_large_input_uses_threads():
    a = rng.standard_normal((4, 16, 128, 130)).astype(np.float32)  # 1.06M elements
    v, i = tp.max_pool2d_with_indices(tp.tensor(a), 2)
    blocks = a[:, :, :, :130].reshape(4, 16, 64, 2, 65, 2)
    np.testing.assert_array_equal(v.numpy(), blocks.max(axis=(3, 5)))
    flat = a.reshape(4, 16, -1)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, i.numpy().reshape(4, 16, -1), 2), v.numpy().reshape(4, 16, -1)
    )
    got = tp.avg_pool2d(tp.tensor(a), 2).numpy()
    np.testing.assert_allclose(got, blocks.astype(np.float64).mean(axis=(3, 5)), rtol=1e-6, atol=1e-6)
    got = tp.adaptive_avg_pool2d(tp.tensor(a), [7, 7]).numpy()
    np.testing.assert_allclose(got[:1, :2], ref_adaptive(a[:1, :2], 2, 7, "avg")[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[-1:, -2:], ref_adaptive(a[-1:, -2:], 2, 7, "avg")[0], rtol=1e-5, atol=1e-6)


# ---- average pooling ---------------------------------------------------------------------------------------
AVG_CONFIGS = [
    dict(k=2),
    dict(k=3, s=1, p=1),
    dict(k=3, s=2, p=1, cip=False),
    dict(k=3, s=2, p=1, ceil=True),
    dict(k=3, s=2, p=1, ceil=True, cip=False),
    dict(k=[3, 2, 4], s=[2, 1, 3], p=[1, 1, 2], ceil=True),
    dict(k=3, s=2, p=1, div=5),
    dict(k=2, s=3, ceil=True, cip=False),
]


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("cfg", range(len(AVG_CONFIGS)))
def test_avg_pool(nsp, cfg):
    c = dict(AVG_CONFIGS[cfg])
    for key in ("k", "s", "p"):
        if isinstance(c.get(key), list):
            c[key] = c[key][3 - nsp :]
    if nsp == 1 and "div" in c:
        return  # avg_pool1d has no divisor_override in PyTorch
    a = rng.standard_normal((2, 3) + spatial(nsp)).astype(np.float32)
    want = ref_avg_pool(
        a, nsp, c["k"], c.get("s"), c.get("p", 0), c.get("ceil", False), c.get("cip", True), c.get("div")
    )
    args = [c["k"], c.get("s", []), c.get("p", 0), c.get("ceil", False), c.get("cip", True)]
    if nsp > 1:
        args.append(c.get("div"))
    for x in layouts(a):
        got = getattr(tp, f"avg_pool{nsp}d")(x, *args)
        assert got.shape == want.shape and got.dtype == tp.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    got = getattr(tp, f"avg_pool{nsp}d")(tp.tensor(a[0]), *args)  # unbatched
    np.testing.assert_allclose(got.numpy(), want[0], rtol=1e-6, atol=1e-6)


TOL = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1e-2}


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_avg_pool_float_dtypes(dtype):
    x = tp.tensor(rng.standard_normal((2, 3, 6, 7, 5))).to(getattr(tp, dtype))
    exact = x.to(tp.float64).numpy()
    got = tp.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    assert got.dtype == getattr(tp, dtype)
    want = ref_avg_pool(exact, 3, 3, 2, 1, True, False)
    np.testing.assert_allclose(got.to(tp.float64).numpy(), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_avg_pool_int64_truncates():
    a = np.array([[[[1, 2, -7], [4, 6, 0]]]], np.int64)
    got = tp.avg_pool2d(tp.tensor(a), [2, 2], 1)
    assert got.dtype == tp.int64 and got.tolist() == [[[[3, 0]]]]  # 13 // 4 = 3, -1 / 4 truncates to 0
    with pytest.raises(NotImplementedError, match="avg_pool2d"):
        tp.avg_pool2d(tp.tensor(a).to(tp.int32), 2)


# ---- adaptive pooling --------------------------------------------------------------------------------------
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 9])
def test_adaptive_pools(nsp, size):
    a = rng.standard_normal((2, 3) + spatial(nsp)).astype(np.float32)
    osz = [size, max(1, size - 1), size][3 - nsp :]
    ea, _ = ref_adaptive(a, nsp, osz, "avg")
    em, ei = ref_adaptive(a, nsp, osz, "max")
    for x in layouts(a):
        got = getattr(tp, f"adaptive_avg_pool{nsp}d")(x, osz)
        np.testing.assert_allclose(got.numpy(), ea, rtol=1e-6, atol=1e-6)
        v, i = getattr(tp, f"adaptive_max_pool{nsp}d")(x, osz)
        np.testing.assert_array_equal(v.numpy(), em.astype(np.float32))
        np.testing.assert_array_equal(i.numpy(), ei)
    v, i = getattr(tp, f"adaptive_max_pool{nsp}d")(tp.tensor(a[1]), osz)  # unbatched
    np.testing.assert_array_equal(i.numpy(), ei[1])


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_adaptive_dtypes(dtype):
    x = tp.tensor(rng.standard_normal((2, 9, 10))).to(getattr(tp, dtype))
    exact = x.to(tp.float64).numpy()
    got = tp.adaptive_avg_pool2d(x, [4, 3])
    assert got.dtype == getattr(tp, dtype)
    np.testing.assert_allclose(
        got.to(tp.float64).numpy(), ref_adaptive(exact, 2, [4, 3], "avg")[0], rtol=TOL[dtype], atol=TOL[dtype]
    )
    v, i = tp.adaptive_max_pool2d(x, [4, 3])
    ev, ei = ref_adaptive(exact, 2, [4, 3], "max")
    np.testing.assert_array_equal(v.to(tp.float64).numpy(), ev)
    np.testing.assert_array_equal(i.numpy(), ei)


def test_adaptive_max_nan():
    a = np.array([[[0.0, np.nan, 1.0, 2.0, np.nan, np.nan]]])
    v, i = tp.adaptive_max_pool1d(tp.tensor(a), [2])
    assert np.isnan(v.numpy()).all() and i.tolist() == [[[1, 5]]]


# ---- shapes: size 0, meta, out= ----------------------------------------------------------------------------
def test_empty_batch_and_meta():
    x = tp.zeros(0, 3, 8, 8)
    assert tp.max_pool2d(x, 2).shape == (0, 3, 4, 4)
    assert tp.avg_pool2d(x, 3, 2, 1).shape == (0, 3, 4, 4)
    assert tp.adaptive_avg_pool2d(x, [2, 3]).shape == (0, 3, 2, 3)
    assert tp.adaptive_avg_pool2d(tp.zeros(2, 3, 4, 4), [0, 3]).shape == (2, 3, 0, 3)
    assert tp.adaptive_avg_pool2d(tp.zeros(2, 0, 4, 4), [1, 3]).shape == (2, 0, 1, 3)  # as PyTorch allows
    m = tp.empty((2, 3, 8, 9, 10), device="meta")
    v, i = tp.max_pool3d_with_indices(m, 3, 2, 1, ceil_mode=True)
    assert v.shape == (2, 3, 5, 5, 6) and v.device.type == "meta" and i.dtype == tp.int64
    assert tp.avg_pool3d(m, 2).shape == (2, 3, 4, 4, 5)
    assert tp.adaptive_max_pool3d(m, [1, 2, 3])[0].shape == (2, 3, 1, 2, 3)
    assert tp.max_pool1d(tp.empty((3, 10), device="meta"), 3).shape == (3, 3)


def test_out_variants():
    a = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    out, ind = tp.empty(0), tp.empty(0, dtype=tp.int64)
    r = tp.ops.call("max_pool2d_with_indices.out", tp.tensor(a), [2], out=out, indices=ind)
    assert r[0] is out and r[1] is ind and out.shape == (2, 3, 4, 4)
    ev, ei = ref_max_pool(a, 2, 2)
    np.testing.assert_array_equal(out.numpy(), ev.astype(np.float32))
    np.testing.assert_array_equal(ind.numpy(), ei)
    out = tp.empty(2, 3, 3, 3)
    assert tp.ops.call("avg_pool2d.out", tp.tensor(a), 3, 2, 1, out=out) is out
    np.testing.assert_allclose(out.numpy(), ref_avg_pool(a, 2, 3, 2, 1), rtol=1e-6, atol=1e-6)
    out = tp.empty(1)
    tp.ops.call("adaptive_avg_pool2d.out", tp.tensor(a), [3, 2], out=out)
    np.testing.assert_allclose(out.numpy(), ref_adaptive(a, 2, [3, 2], "avg")[0], rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float32, but got float64"):
        tp.ops.call("avg_pool2d.out", tp.tensor(a), 3, out=tp.empty(1, dtype=tp.float64))


# ---- errors ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: tp.max_pool2d(tp.zeros(1, 1, 4, 4), 3, padding=2),
            "pad should be at most half of effective kernel",
        ),
        (
            lambda: tp.max_pool2d(tp.zeros(1, 1, 4, 4), 3, padding=2, dilation=3),
            "pad should be smaller than or equal",
        ),
        (
            lambda: tp.max_pool2d(tp.zeros(1, 1, 2, 2), 3),
            r"Given input size: \(1x2x2\). Calculated output size: "
            r"\(1x0x0\). Output size is too small",
        ),
        (lambda: tp.max_pool2d(tp.zeros(4, 4), 2), "non-empty 3D or 4D"),
        (
            lambda: tp.max_pool2d(tp.zeros(1, 1, 4, 4), [2, 2, 2]),
            "max_pool2d: kernel_size must either be a single",
        ),
        (lambda: tp.max_pool2d(tp.zeros(1, 1, 4, 4), 2, 0), "stride should not be zero"),
        (lambda: tp.max_pool2d(tp.zeros(1, 0, 4, 4), 2), "Expected 3D or 4D"),
        (lambda: tp.max_pool3d(tp.zeros(1, 4, 4), 2), "non-empty 4D or 5D"),
        (
            lambda: tp.max_pool1d(tp.zeros(1, 1, 4), 3, padding=2),
            "max_pool1d\\(\\) padding should be at most half",
        ),
        (
            lambda: tp.max_pool1d(tp.zeros(1, 1, 1, 4), 3),
            r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor",
        ),
        (lambda: tp.max_pool1d(tp.zeros(0, 4), 2), r"optional 0 dim batch size for input, but got:\[0, 4\]"),
        (
            lambda: tp.max_pool2d(tp.zeros(0, 4, 4), 2),
            r"optional 0 dim batch size for input, but got:\[0, 4, 4\]",
        ),
        (lambda: tp.max_pool2d(tp.zeros(1, 1, 4, 4), 2, dilation=0), "but got dilationH: 0 dilationW: 0"),
        (
            lambda: tp.max_pool3d(tp.zeros(1, 1, 4, 4, 4), 2, -1),
            "stride should be greater than zero, but got dT: -1",
        ),
        (
            lambda: tp.max_pool3d(tp.zeros(1, 1, 4, 4, 4), 3, padding=2, dilation=3),
            "but got kT: 3 kW: 3 kH: 3 padT: 2 padW: 2 padH: 2",
        ),
        (
            lambda: tp.avg_pool1d(tp.zeros(1, 1, 1, 4), 2),
            r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' "
            r"\(while checking arguments for avg_pool1d\)",
        ),
        (
            lambda: tp.avg_pool1d(tp.zeros(1, 4), [2, 2]),
            r"avg_pool1d\(\) argument 'kernel_size' should contain one int \(got 2\)",
        ),
        (
            lambda: tp.adaptive_max_pool1d(tp.zeros(1, 4), [2, 2]),
            r"adaptive_max_pool1d\(\) argument 'output_size' should contain one int \(got 2\)",
        ),
        (
            lambda: tp.adaptive_avg_pool2d(tp.zeros(1, 1, 4, 4), [-1, 2]),
            "elements of output_size must be greater than or equal to 0 but received {-1, 2}",
        ),
        (lambda: tp.max_pool1d(tp.zeros(1, 1, 2), 3), "max_pool1d\\(\\) Invalid computed output size: 0"),
        (lambda: tp.avg_pool2d(tp.zeros(1, 1, 4, 4), 2, divisor_override=0), "divisor must be not zero"),
        (lambda: tp.avg_pool2d(tp.zeros(1, 1, 4, 4), 2, padding=-1), "pad must be non-negative"),
        (
            lambda: tp.adaptive_avg_pool2d(tp.zeros(1, 1, 4, 4), [2]),
            "adaptive_avg_pool2d: output_size must be 2",
        ),
        (lambda: tp.adaptive_avg_pool2d(tp.zeros(4), [2, 2]), r"Expected 3D or 4D tensor, but got \[4\]"),
        (
            lambda: tp.adaptive_max_pool2d(tp.zeros(1, 2, 0, 4), [2, 2]),
            "non-zero size for non-batch dimensions",
        ),
    ],
)
def test_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


# ---- PyTorch -----------------------------------------------------------------------------------------------
def test_matches_torch_on_random_configs():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    r = np.random.default_rng(1)
    for trial in range(80):
        nsp = int(r.integers(1, 4))
        sp = tuple(int(v) for v in r.integers(3, 12, nsp))
        a = r.standard_normal((2, 3) + sp).astype(np.float32)
        a[r.random(a.shape) < 0.02] = np.nan if trial % 3 == 0 else 0.0
        k = [int(v) for v in r.integers(1, 5, nsp)]
        s = [int(v) for v in r.integers(1, 4, nsp)]
        d = [int(v) for v in r.integers(1, 3, nsp)]
        p = [int(r.integers(0, kk // 2 + 1)) for kk in k]
        ceil = bool(r.integers(0, 2))
        cip = bool(r.integers(0, 2))
        ta, xa = torch.from_numpy(a), tp.tensor(a)
        try:
            tv, ti = getattr(F, f"max_pool{nsp}d")(ta, k, s, p, d, ceil_mode=ceil, return_indices=True)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                getattr(tp, f"max_pool{nsp}d_with_indices")(xa, k, s, p, d, ceil)
        else:
            v, i = getattr(tp, f"max_pool{nsp}d_with_indices")(xa, k, s, p, d, ceil)
            np.testing.assert_array_equal(v.numpy(), tv.numpy())
            np.testing.assert_array_equal(i.numpy(), ti.numpy())
        avg = [k, s, p, ceil, cip] + ([] if nsp == 1 or trial % 2 else [int(r.integers(1, 7))])  # divisor
        try:
            want = getattr(F, f"avg_pool{nsp}d")(ta, *avg)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                getattr(tp, f"avg_pool{nsp}d")(xa, *avg)
        else:
            got = getattr(tp, f"avg_pool{nsp}d")(xa, *avg)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        osz = [int(v) for v in r.integers(1, 10, nsp)]
        np.testing.assert_allclose(
            getattr(tp, f"adaptive_avg_pool{nsp}d")(xa, osz).numpy(),
            getattr(F, f"adaptive_avg_pool{nsp}d")(ta, osz).numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
        tv, ti = getattr(F, f"adaptive_max_pool{nsp}d")(ta, osz, return_indices=True)
        v, i = getattr(tp, f"adaptive_max_pool{nsp}d")(xa, osz)
        np.testing.assert_array_equal(v.numpy(), tv.numpy())
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
