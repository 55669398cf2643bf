"""The vectorised float32 kernels of kernels/vec_math.h (exp, log, sigmoid, tanh) and the softmax rows built
on them, against float64 NumPy: the error in float32 ulps over a sweep of the whole float32 range, special
values (+-0, +-inf, NaN, subnormal inputs and results, overflow), every layout giving the same bits, in-place
and out=, the threaded path, and long softmax rows (the blocked sum). Where PyTorch is installed the results
are also compared with it."""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(7)


def sigmoid64(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


# op -> (float64 reference, documented bound in float32 ulps: Note [Vectorised float math])
OPS = {
    "exp": (np.exp, 1.5),
    "log": (np.log, 1.5),
    "sigmoid": (sigmoid64, 3.0),
    "tanh": (np.tanh, 2.0),
}


def sweep():
    """Every 4099th float32 bit pattern (both signs, subnormals to inf and NaN) plus random ones."""
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    bits = np.concatenate([bits, rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)])
    return bits.view(np.float32)


def ulp_error(got, want64):
    """|got - want| in float32 spacings at the true value (infinities and NaN must match exactly)."""
    with np.errstate(over="ignore"):
        want32 = want64.astype(np.float32)
    finite = np.isfinite(want32)
    assert np.array_equal(got[~finite], want32[~finite], equal_nan=True)
    # spacing of the float32 grid at the true value; below the normal range it is the subnormal step
    spacing = np.spacing(np.abs(want32[finite])).astype(np.float64)
    return np.abs(got[finite].astype(np.float64) - want64[finite]) / spacing


@pytest.mark.parametrize("name", OPS)
def test_ulp_error_over_the_float32_range(name):
    ref, bound = OPS[name]
    x = sweep()
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    got = getattr(tp, name)(tp.tensor(x)).numpy()
    err = ulp_error(got, want)
    assert err.max() <= bound, (name, x[np.isfinite(want.astype(np.float32))][err.argmax()], err.max())


@pytest.mark.parametrize("name", OPS)
def test_fast_path_agrees_with_the_family_functor(name):
    # Naive beside fast (kernels/unary_float.cpp): float32 runs vec_math.h's loop, float64 the family's
    # readable functor (cuda_kernels/unary_float.cuh, the formula CUDA runs too). The functor's float64
    # result is the reference the fast float32 loop stays within its documented ulps of.
    x = sweep()
    fast = getattr(tp, name)(tp.tensor(x)).numpy()
    functor = getattr(tp, name)(tp.tensor(x.astype(np.float64))).numpy()
    assert ulp_error(fast, functor).max() <= OPS[name][1]


@pytest.mark.parametrize("name", OPS)
def test_dense_sweep_of_the_interesting_range(name):
    ref, bound = OPS[name]
    lo, hi = (1e-30, 1e30) if name == "log" else (-110.0, 110.0)
    x = np.linspace(lo, hi, 2_000_003, dtype=np.float32) if name != "log" else np.geomspace(lo, hi, 2_000_003)
    x = x.astype(np.float32)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    assert ulp_error(getattr(tp, name)(tp.tensor(x)).numpy(), want).max() <= bound


def test_special_values():
    inf, nan = np.inf, np.nan
    sub = np.float32(1e-40)  # subnormal
    x = [0.0, -0.0, inf, -inf, nan, 88.7, 88.73, 89.0, 1000.0, -87.0, -100.0, -103.9, -104.0, -200.0]
    x = np.array(x, np.float32)
    got = tp.exp(tp.tensor(x)).numpy()
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64))  # -100 .. -103.9: subnormal results
    np.testing.assert_array_equal(got[:5], [1.0, 1.0, inf, 0.0, nan])
    assert ulp_error(got, want).max() <= 1.5  # also: the infinities (89, 1000) and zeros exactly
    # e^-104 is about half the least subnormal: 0 or that subnormal (within 1 ulp); e^-200 is 0
    assert got[-3] <= np.float32(1.5e-45) and got[-1] == 0 and got[-4] > 0

    y = np.array([0.0, -0.0, inf, -inf, nan, -1.0, sub, 1.0, 2.0, 3.4e38, 1e-45], np.float32)
    got = tp.log(tp.tensor(y)).numpy()
    assert got[0] == -inf and got[1] == -inf and got[2] == inf
    assert np.isnan(got[3]) and np.isnan(got[4]) and np.isnan(got[5])
    want = np.log(y[6:].astype(np.float64)).astype(np.float32)
    assert np.array_equal(got[7], 0.0)
    assert ulp_error(got[6:], np.log(y[6:].astype(np.float64))).max() <= 1.5, (got[6:], want)

    z = [0.0, -0.0, inf, -inf, nan, 1e-30, -1e-30, 9.0, -9.0, 50.0, -50.0, 0.625, -0.625]
    z = np.array(z, np.float32)
    got = tp.tanh(tp.tensor(z)).numpy()
    np.testing.assert_array_equal(np.signbit(got[:2]), [False, True])  # tanh(-0) = -0
    np.testing.assert_array_equal(got[2:4], [1.0, -1.0])
    assert np.isnan(got[4])
    np.testing.assert_array_equal(got[5:7], z[5:7])  # tanh x = x for tiny x
    assert ulp_error(got[7:], np.tanh(z[7:].astype(np.float64))).max() <= 2.0

    s = np.array([0.0, inf, -inf, nan, -88.0, -100.0, -120.0, 20.0], np.float32)
    got = tp.sigmoid(tp.tensor(s)).numpy()
    np.testing.assert_array_equal(got[:3], [0.5, 1.0, 0.0])
    assert np.isnan(got[3]) and got[-2] == 0.0 and got[-1] == 1.0
    assert got[5] > 0  # about e^-100, a subnormal, not 0
    assert ulp_error(got[4:6], sigmoid64(s[4:6].astype(np.float64))).max() <= 3.0


@pytest.mark.parametrize("name", OPS)
def test_every_layout_gives_the_same_bits(name):
    a = (rng.standard_normal((64, 48)) * 4).astype(np.float32)
    if name == "log":
        a = np.abs(a)
    fn = getattr(tp, name)
    base = fn(tp.tensor(a)).numpy()
    t = tp.tensor(np.ascontiguousarray(a.T)).t()
    np.testing.assert_array_equal(fn(t).numpy(), base)
    big = np.zeros((128, 96), np.float32)
    big[::2, ::2] = a
    np.testing.assert_array_equal(fn(tp.tensor(big)[::2, ::2]).numpy(), base)
    np.testing.assert_array_equal(fn(tp.tensor(a[::-1].copy()).flip(0)).numpy(), base)
    # in place and out= run the same loop
    x = tp.tensor(a)
    getattr(x, name + "_")()
    np.testing.assert_array_equal(x.numpy(), base)
    out = tp.empty(64, 48)
    getattr(tp, name)(tp.tensor(a), out=out)
    np.testing.assert_array_equal(out.numpy(), base)
    out64 = tp.empty(64, 48, dtype=tp.float64)  # computed in float32, then cast
    getattr(tp, name)(tp.tensor(a), out=out64)
    np.testing.assert_array_equal(out64.numpy(), base.astype(np.float64))


@pytest.mark.parametrize("name", OPS)
def test_size_zero_one_and_zero_dim(name):
    fn = getattr(tp, name)
    assert fn(tp.empty(0, 3)).shape == (0, 3)
    v = np.float32(0.75)
    ref, bound = OPS[name]
    got = fn(tp.tensor(v)).numpy()
    assert got.shape == () and ulp_error(got.reshape(1), ref(np.array([v], np.float64))).max() <= bound
    assert fn(tp.tensor([v])).shape == (1,)


@pytest.mark.parametrize("name", OPS)
def test_threaded_path_and_other_dtypes(name):
    ref, bound = OPS[name]
    a = (rng.standard_normal(1 << 20) * 3).astype(np.float32)
    if name == "log":
        a = np.abs(a) + np.float32(1e-3)
    got = getattr(tp, name)(tp.tensor(a)).numpy()
    assert ulp_error(got, ref(a.astype(np.float64))).max() <= bound
    # integers promote to float32 and take the same loop; float64 keeps the C library
    ints = np.arange(1, 50)
    got_ints = getattr(tp, name)(tp.tensor(ints)).numpy()
    np.testing.assert_allclose(got_ints, ref(ints.astype(np.float64)), rtol=2e-7)
    d = a[:1000].astype(np.float64)
    np.testing.assert_allclose(getattr(tp, name)(tp.tensor(d)).numpy(), ref(d), rtol=1e-15)
    h = getattr(tp, name)(tp.tensor(a[:1000]).to(tp.float16)).to(tp.float64).numpy()
    np.testing.assert_allclose(h, ref(a[:1000].astype(np.float16).astype(np.float64)), rtol=1e-3, atol=1e-5)


def test_softmax_long_rows_keep_their_accuracy():
    # one row of 3M elements: the exp sum is blocked (Note [Softmax float32 rows]), so its error stays small
    a = (rng.standard_normal((1, 3_000_001)) * 2).astype(np.float32)
    got = tp.softmax(tp.tensor(a), 1).numpy().astype(np.float64)
    z = a.astype(np.float64) - a.max()
    want = np.exp(z) / np.exp(z).sum()
    np.testing.assert_allclose(got, want, rtol=2e-6)
    lgot = tp.log_softmax(tp.tensor(a), 1).numpy()
    np.testing.assert_allclose(lgot, z - np.log(np.exp(z).sum()), rtol=1e-5, atol=2e-5)
    assert abs(got.sum() - 1) < 1e-5


@pytest.mark.parametrize("n", [1, 15, 16, 17, 1023, 1024, 1025, 4096 + 7])
def test_softmax_row_lengths_around_lanes_and_blocks(n):
    a = (rng.standard_normal((3, n)) * 5).astype(np.float32)
    z = a.astype(np.float64) - a.max(1, keepdims=True)
    want = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    # float32 rounds x - max, which exp turns into a relative error of |x - max| * 2^-24 (about 2e-6 at -35)
    np.testing.assert_allclose(tp.softmax(tp.tensor(a), -1).numpy(), want, rtol=5e-6, atol=1e-30)
    a[1, n // 2] = np.nan
    a[2, 0] = np.inf
    got = tp.softmax(tp.tensor(a), -1).numpy()
    assert np.isnan(got[1:]).all() and not np.isnan(got[0]).any()


def test_matches_torch():
    torch = pytest.importorskip("torch")
    a = (rng.standard_normal(100_003) * 30).astype(np.float32)
    for name in OPS:
        x = np.abs(a) if name == "log" else a
        got = getattr(tp, name)(tp.tensor(x)).numpy()
        want = getattr(torch, name)(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=1e-38)
    s = (rng.standard_normal((512, 1000)) * 3).astype(np.float32)
    want = torch.softmax(torch.from_numpy(s), 1).numpy()
    np.testing.assert_allclose(tp.softmax(tp.tensor(s), 1).numpy(), want, rtol=2e-6, atol=1e-30)
