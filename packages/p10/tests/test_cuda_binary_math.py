"""Two-tensor functions on the GPU (binary_math.cu, logical.cu): true_divide, floor_divide, remainder, fmod,
float_power, atan2, hypot, copysign, logaddexp, logaddexp2, xlogy, fmax, fmin, nextafter, heaviside, the
logical_* and bitwise_* ops and the shifts.

Every GPU result is compared with the CPU op on the same inputs and with a float64 NumPy formula: each dtype
the CPU op takes, broadcasting, Python numbers on either side (the scalar form), views, size-0 and 0-d
shapes, in-place and out= forms, and the error paths (integer division by zero raises as on the CPU). They
need a GPU and skip elsewhere.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, FLOATS, INTS, check, needs_cuda, np_of64  # noqa: E402
from cuda_testing import sample as shared_sample

pytestmark = needs_cuda


def sample(shape, dtype, seed=0, scale=3.0) -> tp.Tensor:
    return shared_sample(shape, dtype, seed, scale, lo=-40, hi=40, ulo=1)


TOL = {tp.float16: 4e-3, tp.bfloat16: 3.2e-2, tp.float32: 1e-5, tp.float64: 1e-12}


def _floor_div(a, b):
    return np.floor_divide(a, b)


def _xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where(np.isnan(y), y, np.where(x == 0, 0.0, x * np.log(y)))


# name -> (call, float64 formula, positive second operand)
FLOAT_FNS = {
    "true_divide": (tp.true_divide, np.true_divide, True),
    "floor_divide": (tp.floor_divide, _floor_div, True),
    "remainder": (tp.remainder, np.mod, True),
    "fmod": (tp.fmod, np.fmod, True),
    "atan2": (tp.atan2, np.arctan2, False),
    "hypot": (tp.hypot, np.hypot, False),
    "copysign": (tp.copysign, np.copysign, False),
    "logaddexp": (tp.logaddexp, np.logaddexp, False),
    "logaddexp2": (tp.logaddexp2, np.logaddexp2, False),
    "xlogy": (tp.xlogy, _xlogy, True),
    "fmax": (tp.fmax, np.fmax, False),
    "fmin": (tp.fmin, np.fmin, False),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", FLOAT_FNS)
def test_floats(name, dtype):
    f, ref, positive = FLOAT_FNS[name]
    a, b = sample((17, 33), dtype, 1), sample((17, 33), dtype, 2)
    if positive:
        b = b.abs() + 0.5
    tol = 0 if name in ("fmax", "fmin", "copysign") else 2 * TOL[dtype]

    def want(x, y):
        # floor_divide and remainder jump at integer quotients: take NumPy's formula in the op's math type
        # (float32 for the 16-bit floats, as the CPU and the kernel), then round to the dtype.
        if name in ("floor_divide", "remainder") and dtype is not tp.float64:
            r = ref(np.float32(x), np.float32(y))
            return np_of64(tp.from_numpy(np.asarray(r, dtype=np.float32)).to(dtype))
        return ref(x, y)

    check(f(a.to(DEV), b.to(DEV)), f(a, b), want(np_of64(a), np_of64(b)), tol)
    # broadcasting, and a Python number (the scalar form)
    row = b[:1]
    check(f(a.to(DEV), row.to(DEV)), f(a, row), want(np_of64(a), np_of64(row)), tol)
    check(f(a.to(DEV), 1.5), f(a, 1.5), want(np_of64(a), 1.5), tol)


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "fmax", "fmin"])
def test_integers(name, dtype):
    f, ref, _ = FLOAT_FNS[name]
    a, b = sample((7, 19), dtype, 3), sample((7, 19), dtype, 4)
    if name in ("floor_divide", "remainder", "fmod"):
        b = tp.where(b == 0, tp.ones_like(b), b)
    got, cpu = f(a.to(DEV), b.to(DEV)), f(a, b)
    assert got.dtype is dtype
    check(got, cpu, ref(np_of64(a), np_of64(b)), 0)
    got = f(a.to(DEV), 3)  # the scalar form
    check(got, f(a, 3), ref(np_of64(a), 3.0), 0)


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod"])
def test_integer_division_by_zero_raises_like_the_cpu(name):
    f = FLOAT_FNS[name][0]
    a, b = tp.tensor([5, 7, -3]), tp.tensor([1, 0, 2])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a, b)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a.to(DEV), b.to(DEV))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a.to(DEV), 0)
    # float division by zero is IEEE (inf / nan), not an error
    fa, fb = a.float(), b.float()
    check(f(fa.to(DEV), fb.to(DEV)), f(fa, fb), np_of64(f(fa, fb)), 0)


def test_remainder_scalar_tensor_and_in_place_forms():
    b = sample((5, 6), tp.float32, 5).abs() + 0.5
    check(tp.remainder(7.5, b.to(DEV)), tp.remainder(7.5, b), np.mod(7.5, np_of64(b)), 1e-5)
    a = sample((5, 6), tp.float32, 6)
    for name in ("remainder", "atan2", "xlogy", "floor_divide"):
        d = a.to(DEV).clone()
        version = d._version
        getattr(tp, name + "_")(d, b.to(DEV))
        assert d._version > version
        check(d, getattr(tp, name)(a, b), FLOAT_FNS[name][1](np_of64(a), np_of64(b)), 2e-5)
    out = tp.empty((5, 6), dtype=tp.float64, device=DEV)
    tp.atan2(a.to(DEV), b.to(DEV), out=out)
    check(out, tp.atan2(a, b).double(), np.arctan2(np_of64(a), np_of64(b)), 2e-5)


def test_float_power_overloads():
    a, e = sample((4, 9), tp.float32, 7).abs() + 0.1, sample((4, 9), tp.int32, 8) % 4
    for got, cpu, want in [
        (tp.float_power(a.to(DEV), e.to(DEV)), tp.float_power(a, e), np_of64(a) ** np_of64(e)),
        (tp.float_power(a.to(DEV), 2.5), tp.float_power(a, 2.5), np_of64(a) ** 2.5),
        (tp.float_power(2, e.to(DEV)), tp.float_power(2, e), 2.0 ** np_of64(e)),
    ]:
        assert got.dtype is tp.float64
        check(got, cpu, want, 1e-12)
    d = a.double().to(DEV)
    tp.float_power_(d, 2)
    check(d, tp.float_power(a, 2), np_of64(a) ** 2, 1e-12)
    with pytest.raises(RuntimeError):
        tp.float_power_(a.clone(), 2)
    with pytest.raises(RuntimeError):
        tp.float_power_(a.to(DEV), 2)


def test_xlogy_scalar_self_and_special_values():
    y = tp.tensor([0.0, 1.0, 2.0, float("nan"), float("inf")])
    check(tp.xlogy(0, y.to(DEV)), tp.xlogy(0, y), _xlogy(0.0, np_of64(y)), 0)
    check(tp.xlogy(2, y.to(DEV)), tp.xlogy(2, y), _xlogy(2.0, np_of64(y)), 1e-6)
    inf = tp.tensor([float("inf"), -float("inf"), float("nan"), 1.0])
    for f in (tp.logaddexp, tp.logaddexp2):
        check(f(inf.to(DEV), inf.to(DEV)), f(inf, inf), np_of64(f(inf, inf)), 0)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nextafter(dtype):
    a = tp.tensor([0.0, 1.0, -1.0, 2.0, float("nan"), -0.0]).to(dtype)
    b = tp.tensor([1.0, 2.0, -2.0, 1.0, 0.0, -1.0]).to(dtype)
    got, cpu = tp.nextafter(a.to(DEV), b.to(DEV)), tp.nextafter(a, b)
    check(got, cpu, np_of64(cpu), 0)
    if dtype in (tp.float32, tp.float64):
        npd = np.float32 if dtype is tp.float32 else np.float64
        want = np.nextafter(np_of64(a).astype(npd), np_of64(b).astype(npd)).astype(np.float64)
        np.testing.assert_array_equal(np_of64(got), want)


@pytest.mark.parametrize("dtype", [tp.bool, tp.uint8, tp.int32, tp.float16, tp.float32], ids=str)
def test_heaviside(dtype):
    x = sample((6, 7), dtype, 9)
    if dtype in INTS:
        x = x % 3 - (1 if dtype is not tp.uint8 else 0)  # negatives, zeros and positives
    elif dtype is not tp.bool:
        x = tp.round(x)
    v = sample((7,), dtype, 10)
    got, cpu = tp.heaviside(x.to(DEV), v.to(DEV)), tp.heaviside(x, v)
    xn, vn = np_of64(x), np_of64(v)
    check(got, cpu, np.heaviside(xn, np.broadcast_to(vn, xn.shape)), 0)
    with pytest.raises(RuntimeError):
        tp.heaviside(x.to(DEV), v.to(DEV).double() if dtype is not tp.float64 else v.to(DEV).float())


# ---- logical and bitwise --------------------------------------------------------------------------------
LOGICAL = {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}


@pytest.mark.parametrize("dtype", [tp.bool, tp.uint8, tp.int64, tp.float16, tp.float32], ids=str)
@pytest.mark.parametrize("name", LOGICAL)
def test_logical(name, dtype):
    f, ref = getattr(tp, name), LOGICAL[name]
    a, b = sample((5, 11), dtype, 11), sample((11,), dtype, 12)
    if dtype in INTS:
        a = a % 2  # zeros and non-zeros
    got, cpu = f(a.to(DEV), b.to(DEV)), f(a, b)
    assert got.dtype is tp.bool
    check(got, cpu, ref(np_of64(a), np_of64(b)).astype(np.float64), 0)
    check(f(a.to(DEV), 0), f(a, 0), ref(np_of64(a), 0).astype(np.float64), 0)
    d = a.to(DEV).clone()  # in place: 0/1 in self's dtype
    getattr(tp, name + "_")(d, b.to(DEV))
    check(d, f(a, b).to(dtype), ref(np_of64(a), np_of64(b)).astype(np.float64), 0)
    n = tp.logical_not(a.to(DEV))
    check(n, tp.logical_not(a), np.logical_not(np_of64(a)).astype(np.float64), 0)


BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}


@pytest.mark.parametrize("dtype", [tp.bool, *INTS], ids=str)
@pytest.mark.parametrize("name", BITWISE)
def test_bitwise(name, dtype):
    f, ref = getattr(tp, name), BITWISE[name]
    a, b = sample((5, 11), dtype, 13), sample((5, 11), dtype, 14)
    an, bn = a.numpy(), b.numpy()
    got, cpu = f(a.to(DEV), b.to(DEV)), f(a, b)
    check(got, cpu, ref(an, bn).astype(np.float64), 0)
    check(tp.bitwise_not(a.to(DEV)), tp.bitwise_not(a), np.invert(an).astype(np.float64), 0)
    d = a.to(DEV).clone()
    getattr(tp, name + "_")(d, b.to(DEV))
    check(d, cpu, ref(an, bn).astype(np.float64), 0)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_shifts(dtype):
    a = sample((4, 13), dtype, 15)
    s = (
        tp.from_numpy(np.arange(-2, 50, 4)).to(dtype)
        if dtype is not tp.uint8
        else tp.arange(0, 52, 4).to(dtype)
    )
    for f in (tp.bitwise_left_shift, tp.bitwise_right_shift):
        got, cpu = f(a.to(DEV), s.to(DEV)), f(a, s)
        check(got, cpu, np_of64(cpu), 0)  # out-of-range amounts follow the CPU (PyTorch) rule
        check(f(a.to(DEV), 1), f(a, 1), np_of64(f(a, 1)), 0)
    inside = s % 5 if dtype is tp.uint8 else s.abs() % 5
    want = (a.numpy().astype(np.int64) << inside.numpy().astype(np.int64)).astype(a.numpy().dtype)
    check(
        tp.bitwise_left_shift(a.to(DEV), inside.to(DEV)),
        tp.bitwise_left_shift(a, inside),
        want.astype(np.float64),
        0,
    )
    check(
        tp.bitwise_left_shift(3, inside.to(DEV)),
        tp.bitwise_left_shift(3, inside),
        np_of64(tp.bitwise_left_shift(3, inside)),
        0,
    )


def test_dtype_errors_match_the_cpu():
    f32, b = sample((3,), tp.float32, 16), sample((3,), tp.bool, 17)
    for call in (
        lambda x, y: tp.bitwise_and(x, x),
        lambda x, y: tp.bitwise_left_shift(y, y),
        lambda x, y: tp.hypot(y.int(), y.int()),
        lambda x, y: tp.nextafter(y.int(), y.int()),
    ):
        with pytest.raises(Exception) as cpu_err:
            call(f32, b)
        with pytest.raises(cpu_err.type):
            call(f32.to(DEV), b.to(DEV))


def test_views_empty_and_zero_dim():
    base = sample((8, 6, 5), tp.float32, 18)
    other = sample((5,), tp.float32, 19).abs() + 0.5
    views = (
        (base, lambda t: t.transpose(0, 2)[..., :5].transpose(0, 2)),
        (base, lambda t: t[::2, 1:]),
        (base, lambda t: tp.flip(t, [0])),
        (base, lambda t: t[:0]),
        (tp.tensor(2.0), lambda t: t),
    )
    for src, view in views:  # each view taken on its own device: real strides and offsets on the GPU
        v = view(src)
        for f in (tp.atan2, tp.remainder, tp.logical_xor):
            w = other if v.dim() else tp.tensor(0.7)
            got, cpu = f(view(src.to(DEV)), w.to(DEV)), f(v, w)
            check(got, cpu, np_of64(cpu), 2e-6 if f is not tp.logical_xor else 0)
            assert got.shape == cpu.shape
    big = sample((1 << 18) + 5, tp.float32, 20)
    bd = big.to(DEV)
    for x, xd in ((big, bd), (big[3:], bd[3:])):  # 16-byte packs with a tail, and unaligned on the device
        check(tp.fmax(xd, 0.0), tp.fmax(x, 0.0), np.fmax(np_of64(x), 0.0), 0)
        check(tp.atan2(xd, xd), tp.atan2(x, x), np.arctan2(np_of64(x), np_of64(x)), 2e-6)


@pytest.mark.parametrize("dtype", [tp.int8, tp.int64, tp.uint8, tp.float16, tp.float32], ids=str)
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_modes(mode, dtype):
    a, b = sample((6, 9), dtype, 23), sample((9,), dtype, 24)
    b = tp.where(b == 0, tp.ones_like(b), b)
    got, cpu = tp.div(a.to(DEV), b.to(DEV), rounding_mode=mode), tp.div(a, b, rounding_mode=mode)
    # NumPy in the op's math type (float32 for the 16-bit floats; the quotient rounds as in the kernel)
    math_t = np.float32 if dtype in (tp.float16, tp.float32) else np.int64
    an, bn = np_of64(a).astype(math_t), np_of64(b).astype(math_t)
    q = (np.trunc(an / bn) if math_t is np.float32 else np.fix(an / bn)) if mode == "trunc" else an // bn
    want = np_of64(tp.from_numpy(np.asarray(q).astype(math_t)).to(dtype))
    check(got, cpu, want, 0)
    d = a.to(DEV).clone()
    tp.div_(d, b.to(DEV), rounding_mode=mode)
    check(d, cpu, want, 0)
    with pytest.raises(ValueError):
        tp.div(a.to(DEV), b.to(DEV), rounding_mode="round")
