"""Reductions (loop/reduce.h, kernels/reduce*.cpp) against NumPy and float64 references.

Every op is checked over dim forms (None, int, negative, tuple, empty tuple), keepdim, layouts (contiguous,
transposed, strided), dtypes, size-0/size-1 dims, 0-d inputs, NaNs, the threaded paths (>= 1M elements) and
its error messages. Where PyTorch is installed a few behaviours are also compared with it directly.
"""

import math
from collections import Counter

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def layouts(a):
    """The same values as contiguous, transposed-in-memory and strided-slice tensors."""
    yield "contiguous", tp.tensor(a)
    nd = a.ndim
    if nd >= 2:
        perm = tuple(reversed(range(nd)))
        yield "transposed", tp.tensor(np.ascontiguousarray(a.transpose(perm))).permute(perm)
    if nd >= 1:
        big = np.zeros((a.shape[0] * 2,) + a.shape[1:], a.dtype)
        big[::2] = a
        yield "strided", tp.tensor(big)[::2]


DIMS = [None, 0, -1, 1, (0, 2), (2, 0), (-1, -2), (0, 1, 2), ()]


def np_axis(dim):
    """NumPy's axis for a PyTorch dim argument (an empty tuple reduces every dim, as in PyTorch)."""
    return None if dim is None or dim == () else dim


def call(fn, x, dim, **kw):
    return fn(x, **kw) if dim is None else fn(x, dim, **kw)


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize(
    "op,ref",
    [
        (tp.sum, np.sum),
        (tp.mean, np.mean),
        (tp.nansum, np.nansum),
        (tp.nanmean, np.nanmean),
        (tp.amax, np.amax),
        (tp.amin, np.amin),
    ],
)
def test_sum_family_dims_and_layouts(op, ref, dim, keepdim):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    a[0, 1, 2] = np.nan if op in (tp.nansum, tp.nanmean) else a[0, 1, 2]
    for name, x in layouts(a):
        got = call(op, x, dim, keepdim=keepdim) if dim is not None else op(x, keepdim=keepdim)
        want = ref(a.astype(np.float64), axis=np_axis(dim), keepdims=keepdim)
        assert got.shape == np.shape(want), name
        assert got.dtype is tp.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=1e-6, err_msg=name)


def test_methods_keywords_and_int_dims():
    x = tp.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert x.sum().item() == 276.0
    assert x.sum(dim=1, keepdim=True).shape == (2, 1, 4)
    assert tp.sum(x, dim=[0, 2]).tolist() == [60.0, 92.0, 124.0]
    assert x.mean(-1).tolist() == [[1.5, 5.5, 9.5], [13.5, 17.5, 21.5]]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.bool_])
def test_integer_and_bool_sums_are_int64(dtype):
    a = rng.integers(0, 100, (4, 6)).astype(dtype)
    x = tp.tensor(a)
    assert x.sum().dtype is tp.int64 and x.sum().item() == int(a.astype(np.int64).sum())
    np.testing.assert_array_equal(x.sum(0).numpy(), a.astype(np.int64).sum(0))
    assert x.prod(1).dtype is tp.int64
    np.testing.assert_array_equal(x.prod(1).numpy(), a.astype(np.int64).prod(1))
    assert x.sum(dtype=tp.float64).dtype is tp.float64
    assert x.nansum().item() == int(a.astype(np.int64).sum())
    with pytest.raises(
        RuntimeError, match=r"mean\(\): could not infer output dtype. Input dtype must be either a "
    ):
        x.mean()
    assert x.mean(dtype=tp.float32).item() == pytest.approx(a.astype(np.float64).mean(), rel=1e-6)


def test_int_sum_wraps_to_dtype_like_torch():
    x = tp.tensor(np.array([100, 100], np.int8))
    assert x.sum(dtype=tp.int8).item() == -56  # computed in int8, as x.to(int8).sum() would


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_half_precision_accumulates_in_float32(dtype):
    x = tp.ones(4096, dtype=dtype)
    assert x.sum().dtype is dtype and x.sum().item() == 4096.0  # a float16 running sum would stop at 2048
    a = rng.standard_normal((64, 33)).astype(np.float32)
    h = tp.tensor(a).to(dtype=dtype)
    ref = h.to(dtype=tp.float64).numpy()
    np.testing.assert_allclose(h.mean(0).to(dtype=tp.float64).numpy(), ref.mean(0), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(h.sum(1).to(dtype=tp.float64).numpy(), ref.sum(1), rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sum_mean_prod(dtype):
    a = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(dtype)
    x = tp.tensor(a)
    np.testing.assert_allclose(x.sum(1).numpy(), a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(x.mean(0).numpy(), a.mean(0), rtol=1e-5)
    np.testing.assert_allclose(x.prod(1).numpy(), a.prod(1), rtol=1e-5)
    assert x.sum().dtype is (tp.complex64 if dtype == np.complex64 else tp.complex128)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_prod(dim):
    a = rng.uniform(0.5, 1.5, (5, 7))
    for name, x in layouts(a):
        got = x.prod() if dim is None else x.prod(dim, keepdim=True)
        want = a.prod() if dim is None else a.prod(dim, keepdims=True)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, err_msg=name)


def test_size0_size1_and_0d():
    e = tp.zeros(0, 3)
    assert e.sum().item() == 0.0 and e.sum(0).tolist() == [0.0] * 3 and e.sum(1).shape == (0,)
    assert e.prod(0).tolist() == [1.0] * 3
    assert all(math.isnan(v) for v in e.mean(0).tolist())
    assert e.all().item() is True and e.any().item() is False and e.count_nonzero().item() == 0
    o = tp.tensor([[2.0, 3.0]])
    assert o.sum(0).tolist() == [2.0, 3.0] and o.amax(0, keepdim=True).shape == (1, 2)
    s = tp.tensor(5.0)
    for fn in (tp.sum, tp.mean, tp.amax, tp.nansum, tp.prod):
        assert fn(s).shape == () and fn(s).item() == 5.0
        assert fn(s, 0).shape == () and fn(s, -1).item() == 5.0
    assert s.sum(0, keepdim=True).shape == ()
    v, i = s.max(0)
    assert v.item() == 5.0 and i.item() == 0


def test_expanded_inputs_and_thread_counts():
    e = tp.tensor([1.0, 2.0, 3.0]).expand(4, 3)  # stride 0 along dim 0
    assert e.sum(0).tolist() == [4.0, 8.0, 12.0] and e.sum(1).tolist() == [6.0] * 4 and e.sum().item() == 24.0
    assert e.amax(0).tolist() == [1.0, 2.0, 3.0] and e.var(0).tolist() == [0.0] * 3
    a = rng.standard_normal((3, 1_500_000)).astype(np.float32)
    x = tp.tensor(a)
    before = tp.get_num_threads()
    try:
        tp.set_num_threads(1)
        one = (x.sum(1).numpy(), x.argmax().item(), x.var(1).numpy())
    finally:
        tp.set_num_threads(before)
    np.testing.assert_allclose(x.sum(1).numpy(), one[0], rtol=1e-6)
    assert x.argmax().item() == one[1] == a.argmax()
    np.testing.assert_allclose(x.var(1).numpy(), one[2], rtol=1e-6)


def test_dim_errors():
    x = tp.zeros(2, 3)
    with pytest.raises(
        IndexError, match=r"sum: Dimension out of range \(expected to be in range of \[-2, 1\], but got 2"
    ):
        x.sum(2)
    with pytest.raises(RuntimeError, match="sum: dim 0 appears multiple times in the list of dims"):
        x.sum((0, -2))


def test_float32_sum_is_accurate_on_16m_elements():
    # Note [Pairwise summation]: a naive float32 running sum of 16M values in [0, 1) is off by ~1e-3 relative.
    a = rng.random(1 << 24, dtype=np.float32)
    exact = a.astype(np.float64).sum()
    got = tp.tensor(a).sum().item()
    assert abs(got - exact) / exact < 3e-7
    assert abs(tp.tensor(a).mean().item() - exact / a.size) / (exact / a.size) < 3e-7


@pytest.mark.parametrize(
    "shape,dim", [((2048, 600), 0), ((600, 2048), 1), ((1500, 3, 300), (0, 2)), ((8, 200000), 0)]
)
def test_large_sums_threaded_and_outer_layouts(shape, dim):
    a = rng.standard_normal(shape).astype(np.float32)
    x = tp.tensor(a)
    want = a.astype(np.float64).sum(axis=dim)
    np.testing.assert_allclose(x.sum(dim).numpy(), want, rtol=1e-5, atol=2e-4)
    np.testing.assert_allclose(x.amax(dim).numpy(), a.max(axis=dim))
    v = x.var(dim)
    np.testing.assert_allclose(v.numpy(), a.astype(np.float64).var(axis=dim, ddof=1), rtol=1e-4)


def test_out_variants():
    a = rng.standard_normal((4, 5)).astype(np.float32)
    x = tp.tensor(a)
    out = tp.empty(0)
    r = tp.sum(x, 1, out=out)
    assert r is out and out.shape == (4,)
    np.testing.assert_allclose(out.numpy(), a.sum(1), rtol=1e-6)
    out64 = tp.empty(5, dtype=tp.float64)
    tp.mean(x, 0, out=out64)
    np.testing.assert_allclose(out64.numpy(), a.astype(np.float64).mean(0), rtol=1e-6)
    po = tp.empty(4)
    tp.prod(x, 1, out=po)
    np.testing.assert_allclose(po.numpy(), a.prod(1), rtol=1e-5)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type int64"):
        tp.mean(x, 0, out=tp.empty(5, dtype=tp.int64))


# ---- max / min / arg* -------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,npv,npi", [("max", np.max, np.argmax), ("min", np.min, np.argmin)])
def test_max_min_with_dim_named_tuple(op, npv, npi):
    fn = getattr(tp, op)
    a = rng.integers(-5, 5, (4, 6, 3)).astype(np.float32)  # many ties: first occurrence wins
    for name, x in layouts(a):
        for d in (0, 1, -1):
            r = fn(x, d)
            assert type(r).__name__ == op and repr(r).startswith(f"tensorplay.return_types.{op}(values=")
            np.testing.assert_array_equal(r.values.numpy(), npv(a, axis=d), err_msg=name)
            np.testing.assert_array_equal(r.indices.numpy(), npi(a, axis=d), err_msg=name)
            v, i = fn(x, d, keepdim=True)
            assert v.shape == i.shape == np.expand_dims(npv(a, axis=d), d).shape
        assert fn(x).shape == () and fn(x).item() == npv(a)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.float64, np.float16, np.bool_])
def test_max_argmax_dtypes(dtype):
    a = rng.integers(0, 50, (5, 7)).astype(dtype)
    x = tp.tensor(a)
    assert x.max().item() == a.max() and x.max().dtype is x.dtype
    np.testing.assert_array_equal(x.argmax(1).numpy(), a.argmax(1))
    np.testing.assert_array_equal(x.argmin(0).numpy(), a.argmin(0))
    np.testing.assert_array_equal(x.amin((0, 1)).numpy(), a.min())


def test_argmax_flattened_in_logical_order():
    a = rng.standard_normal((5, 7)).astype(np.float32)
    for name, x in layouts(a):
        assert x.argmax().item() == a.argmax(), name
        assert x.argmin().item() == a.argmin(), name
        assert x.argmax(keepdim=True).shape == (1, 1)
    big = rng.standard_normal(3_000_000).astype(np.float32)
    big[[17, 2_500_000]] = 100.0  # the threaded split must still return the first maximum
    assert tp.tensor(big).argmax().item() == 17
    assert tp.tensor(big).max().item() == 100.0


def test_nan_propagates_with_its_index():
    a = np.array([[1.0, np.nan, 3.0, np.nan], [1.0, 2.0, 3.0, 0.5]], np.float32)
    x = tp.tensor(a)
    v, i = x.max(1)
    assert math.isnan(v.tolist()[0]) and v.tolist()[1] == 3.0 and i.tolist() == [1, 2]
    v, i = x.min(1)
    assert math.isnan(v.tolist()[0]) and i.tolist() == [1, 3]
    assert math.isnan(x.amax().item()) and x.argmax().item() == 1 and x.argmin().item() == 1
    mn, mx = x.aminmax(dim=1)
    assert math.isnan(mn.tolist()[0]) and mx.tolist()[1] == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int64, np.float16])
def test_amax_amin_contiguous_rows(dtype):
    # long contiguous rows take the vector path; NaNs anywhere in them (vector body or scalar tail) propagate
    a = rng.integers(-100, 100, (3, 1003)).astype(dtype)
    x = tp.tensor(a)
    np.testing.assert_array_equal(x.amax(1).numpy(), a.max(1))
    np.testing.assert_array_equal(x.amin(1).numpy(), a.min(1))
    assert x.max().item() == a.max() and x.min().item() == a.min()
    if np.issubdtype(dtype, np.floating):
        for pos in (0, 17, 500, 1002):
            b = a.copy()
            b[1, pos] = np.nan
            got = tp.tensor(b).amax(1).numpy()
            assert np.isnan(got[1]) and got[0] == a[0].max() and np.isnan(tp.tensor(b).amin().item())


def test_aminmax():
    a = rng.standard_normal((3, 4)).astype(np.float32)
    r = tp.aminmax(tp.tensor(a))
    assert type(r).__name__ == "aminmax" and r.min.item() == a.min() and r.max.item() == a.max()
    mn, mx = tp.tensor(a).aminmax(dim=0, keepdim=True)
    np.testing.assert_array_equal(mn.numpy(), a.min(0, keepdims=True))
    np.testing.assert_array_equal(mx.numpy(), a.max(0, keepdims=True))


def test_empty_reductions_without_identity_raise():
    e = tp.zeros(0, 3)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size."):
        e.max(0)
    with pytest.raises(
        RuntimeError, match=r"max\(\): Expected reduction dim to be specified for input.numel"
    ):
        tp.zeros(0).max()
    with pytest.raises(
        IndexError, match=r"argmax\(\): Expected reduction dim to be specified for input.numel"
    ):
        tp.zeros(0).argmax()
    with pytest.raises(IndexError, match=r"amin\(\): Expected reduction dim 0 to have non-zero size."):
        e.amin(0)
    assert e.max(1).values.shape == (0,) and e.argmax(1).shape == (0,)
    with pytest.raises(NotImplementedError, match="max"):
        tp.tensor([1 + 1j]).max()


# ---- all / any / count_nonzero ----------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_all_any_count_nonzero(dim):
    a = rng.integers(0, 3, (4, 5)).astype(np.float32)
    a[1] = 1
    for name, x in layouts(a):
        ax = np_axis(dim)
        got = x.all() if dim is None else x.all(dim)
        assert got.dtype is tp.bool
        np.testing.assert_array_equal(got.numpy(), a.all(axis=ax), err_msg=name)
        got = x.any() if dim is None else x.any(dim, keepdim=True)
        np.testing.assert_array_equal(got.numpy(), a.any(axis=ax, keepdims=dim is not None), err_msg=name)
        got = x.count_nonzero() if dim is None else x.count_nonzero(dim)
        assert got.dtype is tp.int64
        np.testing.assert_array_equal(got.numpy(), np.count_nonzero(a, axis=ax), err_msg=name)


def test_all_any_uint8_and_nan():
    u = tp.tensor(np.array([1, 2, 0], np.uint8))
    assert u.all().dtype is tp.uint8 and u.all().item() == 0 and u.any().item() == 1
    assert tp.tensor([float("nan")]).all().item() is True  # NaN is non-zero
    big = np.ones(2_000_000, bool)
    big[1_999_999] = False
    assert tp.tensor(big).all().item() is False and tp.tensor(big).any().item() is True
    assert tp.tensor(big).count_nonzero().item() == 1_999_999


# ---- meta -------------------------------------------------------------------------------------------------
def test_meta_shapes_and_dtypes():
    m = tp.empty(2, 3, 4, device="meta")
    assert m.sum(1).shape == (2, 4) and m.sum(1).device.type == "meta"
    assert m.mean((0, 2), keepdim=True).shape == (1, 3, 1)
    assert tp.empty(2, 3, dtype=tp.int32, device="meta").sum().dtype is tp.int64
    v, i = m.max(2)
    assert v.shape == i.shape == (2, 3) and i.dtype is tp.int64
    assert m.var(0).shape == (3, 4) and m.std_mean(1)[1].shape == (2, 4)
    assert m.norm(dim=1).shape == (2, 4) and m.logsumexp(2).shape == (2, 3)
    assert m.median(0).values.shape == (3, 4) and m.mode(1).indices.shape == (2, 4)
    assert m.quantile(tp.tensor([0.1, 0.9], device="meta"), dim=0).shape == (2, 3, 4)
    assert m.all(1).dtype is tp.bool and m.count_nonzero(0).shape == (3, 4) and m.argmax().shape == ()


def test_against_torch_when_installed():
    torch = pytest.importorskip("torch")
    a = rng.integers(-3, 3, (6, 9)).astype(np.float32)
    a[2, 4] = np.nan
    x, t = tp.tensor(a), torch.tensor(a)
    for d in (0, 1):
        v, i = x.max(d)
        tv, ti = t.max(d)
        np.testing.assert_array_equal(v.numpy(), tv.numpy())
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
        v, i = tp.tensor(np.nan_to_num(a)).mode(d)  # PyTorch's mode of a row with NaN depends on its sort
        tv, ti = torch.tensor(np.nan_to_num(a)).mode(d)
        np.testing.assert_array_equal(v.numpy(), tv.numpy())
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
        np.testing.assert_allclose(x.nanmean(d).numpy(), t.nanmean(d).numpy(), rtol=1e-6)
        np.testing.assert_array_equal(x.nanmedian(d).values.numpy(), t.nanmedian(d).values.numpy())
    assert x.argmax().item() == t.argmax().item()


# ---- mode (Counter reference) -----------------------------------------------------------------------------
def test_mode_matches_counter_reference():
    a = rng.integers(0, 4, (5, 11)).astype(np.int64)
    x = tp.tensor(a)
    for d in (0, 1, -1):
        v, i = x.mode(d)
        rows = np.moveaxis(a, d, -1)
        for r, (val, idx) in enumerate(zip(v.tolist(), i.tolist(), strict=True)):
            c = Counter(rows[r].tolist())
            top = max(c.values())
            assert val == min(k for k, n in c.items() if n == top)
            assert idx == max(j for j, e in enumerate(rows[r].tolist()) if e == val)  # its last occurrence
    assert x.mode().values.shape == (5,)


# ---- var / std --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), ()])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_std_correction(dim, correction):
    a = rng.standard_normal((4, 5, 6))
    for name, x in layouts(a):
        kw = {"correction": correction, "keepdim": True}
        got_v = x.var(**kw) if dim is None else x.var(dim, **kw)
        want = a.var(axis=np_axis(dim), ddof=correction, keepdims=True)
        np.testing.assert_allclose(got_v.numpy(), want, rtol=1e-12, err_msg=name)
        got_s = x.std(**kw) if dim is None else x.std(dim, **kw)
        np.testing.assert_allclose(got_s.numpy(), np.sqrt(want), rtol=1e-12, err_msg=name)


def test_var_forms_and_tuples():
    a = rng.standard_normal((5, 8)).astype(np.float32)
    x = tp.tensor(a)
    np.testing.assert_allclose(x.var().item(), a.var(ddof=1), rtol=1e-5)
    np.testing.assert_allclose(x.var(False).item(), a.var(), rtol=1e-5)
    np.testing.assert_allclose(x.var(unbiased=False).item(), a.var(), rtol=1e-5)
    np.testing.assert_allclose(x.std(1, False).numpy(), a.std(1), rtol=1e-5)
    np.testing.assert_allclose(x.std(1, True, True).numpy(), a.std(1, ddof=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(x.var(dim=0, correction=0.5).numpy(), a.var(0, ddof=0.5), rtol=1e-5)
    r = tp.var_mean(x, 1)
    assert type(r) is tuple and len(r) == 2
    np.testing.assert_allclose(r[0].numpy(), a.var(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(r[1].numpy(), a.mean(1), rtol=1e-5, atol=1e-7)
    s, m = tp.std_mean(x, dim=0, correction=0, keepdim=True)
    np.testing.assert_allclose(s.numpy(), a.std(0, keepdims=True), rtol=1e-5)
    assert m.shape == (1, 8)
    s, m = x.std_mean(False)
    assert s.shape == m.shape == ()


def test_var_numerics_and_edges():
    # Two passes: a large offset does not swamp the variance (E[x^2] - E[x]^2 would lose every digit).
    a = (1e4 + rng.standard_normal(3_000_000)).astype(np.float32)
    ref = a.astype(np.float64).var(ddof=1)
    assert abs(tp.tensor(a).var().item() - ref) / ref < 1e-4
    assert (
        abs(
            tp.tensor(a.reshape(3, -1)).var(1).numpy() / a.reshape(3, -1).astype(np.float64).var(1, ddof=1)
            - 1
        ).max()
        < 1e-4
    )
    assert math.isnan(tp.tensor(5.0).var().item())  # one element, correction 1: 0/0
    assert tp.tensor([1.0, 2.0]).var(correction=3).item() == math.inf
    assert tp.tensor([[1.0, 3.0]], dtype=tp.float16).var(1).dtype is tp.float16
    c = (rng.standard_normal(10) + 1j * rng.standard_normal(10)).astype(np.complex64)
    v = tp.tensor(c).var()
    assert v.dtype is tp.float32
    np.testing.assert_allclose(v.item(), c.var(ddof=1), rtol=1e-5)
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        tp.tensor([1, 2]).var()


# ---- logsumexp --------------------------------------------------------------------------------------------
def ref_logsumexp(a, axis, keepdims=False):
    a = a.astype(np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


@pytest.mark.parametrize("dim", [0, -1, (0, 1), (1, 2)])
def test_logsumexp(dim):
    a = (rng.standard_normal((3, 4, 5)) * 50).astype(np.float32)
    for name, x in layouts(a):
        np.testing.assert_allclose(x.logsumexp(dim).numpy(), ref_logsumexp(a, dim), rtol=1e-5, err_msg=name)
        assert x.logsumexp(dim, keepdim=True).shape == ref_logsumexp(a, dim, True).shape


def test_logsumexp_infinities_and_ints():
    inf = math.inf
    x = tp.tensor([[-inf, -inf], [1000.0, 1000.0], [inf, 1.0], [-inf, 2.0]])
    got = x.logsumexp(1).tolist()
    assert got[0] == -inf and got[1] == pytest.approx(1000 + math.log(2)) and got[2] == inf and got[3] == 2.0
    assert tp.zeros(2, 0).logsumexp(1).tolist() == [-inf, -inf]
    i = tp.tensor([[1, 2], [3, 4]]).logsumexp(1)
    assert i.dtype is tp.float32
    np.testing.assert_allclose(i.numpy(), ref_logsumexp(np.array([[1, 2], [3, 4]]), 1), rtol=1e-6)


# ---- norm -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 1, math.inf, -math.inf, 0, 3, 0.5, -1])
@pytest.mark.parametrize("dim", [0, -1])
def test_norm_vector_p(p, dim):
    a = rng.standard_normal((4, 6))
    a[1, 2] = 0.0
    for name, x in layouts(a):
        with np.errstate(divide="ignore"):
            want = np.linalg.norm(a, ord=p, axis=dim)
        np.testing.assert_allclose(x.norm(p, dim).numpy(), want, rtol=1e-12, err_msg=name)
        assert x.norm(p, dim, keepdim=True).shape == np.expand_dims(want, dim).shape


def test_norm_forms():
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x = tp.tensor(a)
    np.testing.assert_allclose(x.norm().item(), np.sqrt((a.astype(np.float64) ** 2).sum()), rtol=1e-6)
    np.testing.assert_allclose(x.norm(p="fro", dim=(0, 1)).numpy(), np.sqrt((a**2).sum((0, 1))), rtol=1e-5)
    np.testing.assert_allclose(tp.norm(x, 1, (0, 2)).numpy(), np.abs(a).sum((0, 2)), rtol=1e-5)
    assert x.norm(dtype=tp.float64).dtype is tp.float64
    c = (rng.standard_normal(7) + 1j * rng.standard_normal(7)).astype(np.complex128)
    assert tp.tensor(c).norm().dtype is tp.float64
    np.testing.assert_allclose(tp.tensor(c).norm().item(), np.linalg.norm(c), rtol=1e-12)
    big = rng.standard_normal(2_000_000).astype(np.float32)
    np.testing.assert_allclose(
        tp.tensor(big).norm().item(), np.linalg.norm(big.astype(np.float64)), rtol=1e-6
    )
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got int64"):
        tp.tensor([1, 2]).norm()
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        tp.zeros(0).norm(math.inf)
    with pytest.raises(NotImplementedError, match="nuc"):
        x.norm(p="nuc", dim=(0, 1))
    assert tp.zeros(0).norm().item() == 0.0


# ---- median / nanmedian -----------------------------------------------------------------------------------
def lower_median(a, axis):
    s = np.sort(a, axis=axis)
    return np.take(s, (a.shape[axis] - 1) // 2, axis=axis)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_median_values_and_indices(dtype):
    a = rng.integers(-20, 20, (5, 6, 7)).astype(dtype)
    for name, x in layouts(a):
        assert x.median().item() == np.sort(a, axis=None)[(a.size - 1) // 2]
        for d in (0, 1, -1):
            v, i = x.median(d)
            np.testing.assert_array_equal(v.numpy(), lower_median(a, d), err_msg=name)
            picked = np.take_along_axis(a, np.expand_dims(i.numpy(), d), d).squeeze(d)
            np.testing.assert_array_equal(picked, v.numpy(), err_msg=name)
            assert x.median(d, keepdim=True).values.shape == np.expand_dims(lower_median(a, d), d).shape


def test_median_nan():
    a = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 1.0, 3.0, 2.0], [np.nan] * 4], np.float32)
    x = tp.tensor(a)
    v, i = x.median(1)
    assert (
        math.isnan(v.tolist()[0])
        and i.tolist()[0] == 1
        and v.tolist()[1] == 2.0
        and math.isnan(v.tolist()[2])
    )
    assert math.isnan(x.median().item())
    v, i = x.nanmedian(1)
    assert v.tolist()[:2] == [2.0, 2.0] and i.tolist()[:2] == [3, 3] and math.isnan(v.tolist()[2])
    assert x.nanmedian().item() == np.sort(a[~np.isnan(a)])[(np.count_nonzero(~np.isnan(a)) - 1) // 2]
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 0 to have non-zero size."):
        tp.zeros(0, 2).median(0)
    assert math.isnan(tp.zeros(0).median().item())


# ---- quantile ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_quantile_matches_numpy(interpolation, dim):
    a = rng.standard_normal((5, 8))
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
    for name, x in layouts(a):
        got = tp.quantile(x, tp.tensor(q), dim=dim, keepdim=True, interpolation=interpolation)
        want = np.quantile(a, q, axis=dim, keepdims=True, method=interpolation)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, err_msg=name)
        got = x.quantile(0.3, dim, interpolation=interpolation)
        np.testing.assert_allclose(
            got.numpy(), np.quantile(a, 0.3, axis=dim, method=interpolation), rtol=1e-12
        )


def test_quantile_nan_and_errors():
    a = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 1.0, 3.0, 2.0], [np.nan] * 4], np.float32)
    x = tp.tensor(a)
    got = x.quantile(0.5, 1).tolist()
    assert math.isnan(got[0]) and got[1] == 2.5 and math.isnan(got[2])
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        want = np.nanquantile(a, [0.2, 0.7], axis=1)
    np.testing.assert_allclose(x.nanquantile(tp.tensor([0.2, 0.7]), 1).numpy(), want)
    assert tp.tensor([1.0, 2.0]).quantile(tp.tensor(0.5)).shape == ()
    with pytest.raises(RuntimeError, match=r"quantile\(\) input tensor must be either float or double dtype"):
        tp.tensor([1, 2]).quantile(0.5)
    with pytest.raises(RuntimeError, match=r"quantile\(\) q values must be in the range \[0, 1\]"):
        x.quantile(1.5)
    with pytest.raises(RuntimeError, match=r"quantile\(\) q tensor must be same dtype as the input tensor"):
        x.quantile(tp.tensor([0.5], dtype=tp.float64))
    with pytest.raises(
        ValueError, match=r"interpolation must be one of linear, lower, higher, midpoint or nearest"
    ):
        x.quantile(0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match=r"quantile\(\) input tensor must be non-empty"):
        tp.zeros(0).quantile(0.5)
