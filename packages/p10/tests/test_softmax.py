"""softmax and log_softmax (kernels/softmax.cpp) against a float64 NumPy formula.

Checked over every dim of 1-D..4-D inputs, layouts (contiguous, transposed, strided slices), dtypes (the
16-bit floats accumulate in float32), dtype=, 0-d and size-0 inputs, rows of -inf/+inf/NaN, the threaded path
and the error messages. Where PyTorch is installed a few results are also compared with it directly.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def ref_softmax(a, dim, log=False):
    a = a.astype(np.float64)
    m = np.max(a, axis=dim, keepdims=True)
    z = a - m
    lse = np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
    return z - lse if log else np.exp(z - lse)


def layouts(a):
    yield tp.tensor(a)
    if a.ndim >= 2:
        perm = tuple(reversed(range(a.ndim)))
        yield tp.tensor(np.ascontiguousarray(a.transpose(perm))).permute(perm)
    if a.ndim >= 1:
        big = np.zeros((a.shape[0] * 2,) + a.shape[1:], a.dtype)
        big[::2] = a
        yield tp.tensor(big)[::2]


TOL = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1e-2}


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 5)])
def test_every_dim_and_layout(shape, log):
    a = (rng.standard_normal(shape) * 3).astype(np.float32)
    fn = tp.log_softmax if log else tp.softmax
    for dim in range(-len(shape), len(shape)):
        for x in layouts(a):
            got = fn(x, dim)
            assert got.shape == tuple(shape) and got.dtype == tp.float32
            np.testing.assert_allclose(got.numpy(), ref_softmax(a, dim, log), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_dtypes(dtype, log):
    a = rng.standard_normal((4, 33)) * 4
    x = tp.tensor(a).to(getattr(tp, dtype))
    exact = x.to(tp.float64).numpy()  # the values after rounding to `dtype`
    for dim in (0, 1):
        got = (tp.log_softmax if log else tp.softmax)(x, dim)
        assert got.dtype == getattr(tp, dtype)
        np.testing.assert_allclose(
            got.to(tp.float64).numpy(), ref_softmax(exact, dim, log), rtol=TOL[dtype], atol=TOL[dtype]
        )


def test_method_and_dtype_argument():
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x = tp.tensor(a)
    got = x.softmax(1, dtype=tp.float64)
    assert got.dtype == tp.float64
    np.testing.assert_allclose(got.numpy(), ref_softmax(a, 1), rtol=1e-12)
    got = tp.log_softmax(tp.tensor(np.arange(6).reshape(2, 3)), -1, dtype=tp.float32)
    np.testing.assert_allclose(got.numpy(), ref_softmax(np.arange(6.0).reshape(2, 3), -1, True), rtol=1e-6)
    np.testing.assert_allclose(x.log_softmax(0).numpy(), ref_softmax(a, 0, True), rtol=1e-5, atol=1e-6)


def test_large_values_do_not_overflow():
    a = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], np.float32)
    np.testing.assert_allclose(tp.softmax(tp.tensor(a), 1).numpy(), ref_softmax(a, 1), rtol=1e-6)
    np.testing.assert_allclose(tp.log_softmax(tp.tensor(a), 1).numpy(), ref_softmax(a, 1, True), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1])
def test_infinities_and_nan(dim):
    inf = np.inf
    a = np.array([[-inf, -inf, -inf], [0.0, -inf, 1.0], [0.0, inf, 1.0], [0.0, np.nan, 1.0]], np.float32)
    a = a if dim == 1 else np.ascontiguousarray(a.T)
    sm = tp.softmax(tp.tensor(a), dim).numpy()
    ls = tp.log_softmax(tp.tensor(a), dim).numpy()
    if dim == 0:
        sm, ls = sm.T, ls.T
    assert np.isnan(sm[0]).all() and np.isnan(ls[0]).all()  # all -inf: NaN, as PyTorch
    e = np.exp([0.0, 1.0]) / np.exp([0.0, 1.0]).sum()
    np.testing.assert_allclose(sm[1], [e[0], 0.0, e[1]], rtol=1e-6)
    assert ls[1][1] == -inf
    assert np.isnan(sm[2]).all() and np.isnan(sm[3]).all()


def test_zero_dim_and_empty():
    assert tp.softmax(tp.tensor(3.5), 0).item() == 1.0
    assert tp.log_softmax(tp.tensor(3.5), -1).item() == 0.0
    for shape in [(0,), (0, 3), (3, 0), (2, 0, 4)]:
        for dim in range(len(shape)):
            got = tp.softmax(tp.zeros(shape), dim)
            assert got.shape == shape
    one = tp.softmax(tp.tensor(rng.standard_normal((4, 1)).astype(np.float32)), 1)
    assert (one.numpy() == 1.0).all()


@pytest.mark.parametrize("dim", [0, 1])
def test_threaded_path(dim):
    a = rng.standard_normal((1024, 1100)).astype(np.float32)
    for fn, log in ((tp.softmax, False), (tp.log_softmax, True)):
        got = fn(tp.tensor(a), dim).numpy()
        np.testing.assert_allclose(got, ref_softmax(a, dim, log), rtol=2e-5, atol=1e-6)


def test_meta():
    got = tp.softmax(tp.empty((2, 3), device="meta"), 1, dtype=tp.float64)
    assert got.shape == (2, 3) and got.dtype == tp.float64 and got.device.type == "meta"


def test_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        tp.softmax(tp.zeros((2, 3)), 2)
    with pytest.raises(RuntimeError, match="softmax: expected a floating point input, got int64"):
        tp.softmax(tp.tensor([1, 2]), 0)


def test_matches_torch():
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((5, 6, 7)).astype(np.float32)
    for dim in (0, 1, 2):
        for ours, theirs in ((tp.softmax, torch.softmax), (tp.log_softmax, torch.log_softmax)):
            np.testing.assert_allclose(
                ours(tp.tensor(a), dim).numpy(), theirs(torch.tensor(a), dim).numpy(), rtol=1e-5, atol=1e-7
            )
