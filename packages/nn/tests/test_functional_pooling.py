"""nn.functional pooling (nn/functional/pooling.py) against float64 NumPy references written here.

Max / average pooling over explicit windows (padding as -inf or as counted zeros, ceil_mode, dilation),
adaptive pooling over PyTorch's cell bounds floor(i L / O) .. ceil((i + 1) L / O), power-average pooling,
and max unpooling as the inverse scatter of max pooling's indices; gradients by gradcheck; PyTorch where
installed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from nn_testing import T
from nn_testing import check as _check

import tensorplay as tp
import tensorplay.nn.functional as F
from tensorplay.autograd import gradcheck


def check(got, want, tol=1e-10):
    """nn_testing.check with this file's default tolerance."""
    _check(got, want, tol)


rng = np.random.default_rng(2)


def out_size(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    o = (math.ceil if ceil_mode else math.floor)(span / s) + 1
    if ceil_mode and (o - 1) * s >= size + p:  # the last window must start inside the input or left padding
        o -= 1
    return o


def pool_ref(x, k, s, p, d, ceil_mode, kind, count_include_pad=True):
    """Max or average pooling over the last len(k) dims of x, window by window."""
    n = len(k)
    sp = x.shape[-n:]
    outs = [out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(n)]
    out = np.zeros((*x.shape[:-n], *outs))
    idx = np.zeros(out.shape, dtype=np.int64)
    for o in itertools.product(*[range(v) for v in outs]):
        vals, flat, inside_pad = [], [], 0
        for tap in itertools.product(*[range(v) for v in k]):
            pos = [o[i] * s[i] - p[i] + tap[i] * d[i] for i in range(n)]
            if all(-p[i] <= pos[i] < sp[i] + p[i] for i in range(n)):
                inside_pad += 1  # a position inside input + padding (what count_include_pad counts)
            if all(0 <= pos[i] < sp[i] for i in range(n)):
                vals.append(x[(..., *pos)])
                flat.append(np.ravel_multi_index(pos, sp))
        vals = np.stack(vals, -1)
        if kind == "max":
            arg = vals.argmax(-1)
            out[(..., *o)] = vals.max(-1)
            idx[(..., *o)] = np.asarray(flat)[arg]
        else:
            out[(..., *o)] = vals.sum(-1) / (inside_pad if count_include_pad else vals.shape[-1])
    return out, idx


MAX_CASES = [
    (1, (2, 3, 9), (3,), (2,), (1,), (1,), False),
    (1, (3, 8), (2,), (3,), (0,), (2,), True),
    (2, (2, 2, 7, 6), (3, 2), (2, 2), (1, 1), (1, 2), True),
    (2, (1, 3, 5, 5), (2, 2), (1, 2), (0, 1), (1, 1), False),
    (3, (1, 2, 4, 5, 3), (2, 3, 2), (2, 1, 1), (1, 1, 0), (1, 1, 1), False),
]


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool_values_and_indices(case):
    n, shape, k, s, p, d, ceil_mode = case
    x = rng.normal(size=shape)
    want, want_idx = pool_ref(x, k, s, p, d, ceil_mode, "max")
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
    check(pool(T(x), k, s, p, d, ceil_mode), want)
    out, idx = pool(T(x), k, s, p, d, ceil_mode, return_indices=True)
    check(out, want)
    assert idx.dtype == tp.int64
    np.testing.assert_array_equal(np.asarray(idx.tolist()), want_idx)


def test_max_pool_stride_defaults_to_kernel():
    x = rng.normal(size=(1, 2, 6, 6))
    check(F.max_pool2d(T(x), 3), pool_ref(x, (3, 3), (3, 3), (0, 0), (1, 1), False, "max")[0])
    check(F.max_pool2d(T(x), 2, stride=[]), pool_ref(x, (2, 2), (2, 2), (0, 0), (1, 1), False, "max")[0])


AVG_CASES = [
    (1, (2, 3, 9), (3,), (2,), (1,), False, True),
    (1, (2, 3, 8), (4,), (3,), (2,), True, False),
    (2, (2, 2, 7, 6), (3, 2), (2, 2), (1, 1), True, True),
    (2, (1, 3, 5, 5), (2, 3), (1, 2), (1, 1), False, False),
    (3, (1, 2, 4, 5, 3), (2, 3, 2), (2, 1, 1), (1, 1, 0), False, True),
]


@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool(case):
    n, shape, k, s, p, ceil_mode, cip = case
    x = rng.normal(size=shape)
    want, _ = pool_ref(x, k, s, p, (1,) * n, ceil_mode, "avg", cip)
    pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[n - 1]
    check(pool(T(x), k, s, p, ceil_mode, cip), want)


def test_avg_pool_divisor_override():
    x = rng.normal(size=(1, 1, 4, 4))
    sums = pool_ref(x, (2, 2), (2, 2), (0, 0), (1, 1), False, "avg")[0] * 4
    check(F.avg_pool2d(T(x), 2, divisor_override=3), sums / 3)


def adaptive_ref(x, sizes, kind):
    n = len(sizes)
    sp = x.shape[-n:]
    out = np.zeros((*x.shape[:-n], *sizes))
    for o in itertools.product(*[range(v) for v in sizes]):
        sl = tuple(slice((o[i] * sp[i]) // sizes[i], -((-(o[i] + 1) * sp[i]) // sizes[i])) for i in range(n))
        cell = x[(..., *sl)].reshape(*x.shape[:-n], -1)
        out[(..., *o)] = cell.max(-1) if kind == "max" else cell.mean(-1)
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_adaptive_pooling(kind):
    cases = [((2, 3, 7), (3,)), ((2, 5, 7), (4, 3)), ((1, 2, 5, 4, 3), (2, 3, 2))]
    for shape, sizes in cases:
        x = rng.normal(size=shape)
        n = len(sizes)
        fn = getattr(F, f"adaptive_{kind}_pool{n}d")
        check(fn(T(x), sizes), adaptive_ref(x, sizes, kind))
    x = rng.normal(size=(1, 2, 5, 7))
    fn = F.adaptive_max_pool2d if kind == "max" else F.adaptive_avg_pool2d
    check(fn(T(x), (None, 2)), adaptive_ref(x, (5, 2), kind))  # None keeps the input's size
    if kind == "max":
        out, idx = F.adaptive_max_pool1d(T(x[0]), 3, return_indices=True)
        flat = np.asarray(idx.tolist())
        np.testing.assert_array_equal(np.take_along_axis(x[0], flat, -1), np.asarray(out.tolist()))


@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0, math.inf])
def test_lp_pool(norm_type):
    x = rng.normal(size=(2, 3, 8))
    win = np.lib.stride_tricks.sliding_window_view(x, 3, -1)[..., ::2, :]
    if norm_type == math.inf:
        want = np.abs(win).max(-1)
    else:
        total = np.lib.stride_tricks.sliding_window_view(x**norm_type, 3, -1)[..., ::2, :].sum(-1)
        with np.errstate(
            invalid="ignore"
        ):  # a negative sum of cubes has no real cube root here: nan, as in PyTorch
            want = np.power(total, 1 / norm_type)
    check(F.lp_pool1d(T(x), norm_type, 3, 2), want)
    x2 = np.abs(rng.normal(size=(1, 2, 4, 4))) + 0.1
    want2 = ((x2**2).reshape(1, 2, 2, 2, 2, 2).sum((3, 5))) ** 0.5
    check(F.lp_pool2d(T(x2), 2, 2), want2)
    x3 = np.abs(rng.normal(size=(1, 1, 2, 2, 2))) + 0.1
    check(F.lp_pool3d(T(x3), 1, 2), x3.sum().reshape(1, 1, 1, 1, 1))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_inverts_max_pool(n):
    shape = {1: (2, 3, 8), 2: (2, 2, 6, 4), 3: (1, 2, 4, 4, 2)}[n]
    x = rng.normal(size=shape)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
    unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[n - 1]
    y, idx = pool(T(x), 2, return_indices=True)
    got = np.asarray(unpool(y, idx, 2).tolist())
    # every maximum is back where it was, the rest are zeros
    flat_got = got.reshape(*shape[:-n], -1)
    flat_idx = np.asarray(idx.tolist()).reshape(*shape[:-n], -1)
    want = np.zeros_like(flat_got)
    np.put_along_axis(want, flat_idx, np.asarray(y.tolist()).reshape(*shape[:-n], -1), -1)
    np.testing.assert_array_equal(flat_got, want)


def test_max_unpool_output_size_and_errors():
    x = rng.normal(size=(1, 1, 5))
    y, idx = F.max_pool1d(T(x), 2, return_indices=True)
    assert F.max_unpool1d(y, idx, 2, output_size=[5]).shape == (1, 1, 5)
    assert F.max_unpool1d(y, idx, 2, output_size=[1, 1, 5]).shape == (1, 1, 5)
    with pytest.raises(ValueError, match=r"invalid output_size .* \(dim 0 must be between 2 and 6\)"):
        F.max_unpool1d(y, idx, 2, output_size=[7])
    with pytest.raises(RuntimeError, match="Found an invalid max index: 9"):
        F.max_unpool1d(y, tp.tensor([[[0, 9]]]), 2)
    assert gradcheck(lambda a: F.max_unpool1d(a, idx, 2), (T(rng.normal(size=(1, 1, 2)), True),))


def test_pooling_gradcheck():
    x = T(rng.normal(size=(1, 2, 5, 5)), True)
    assert gradcheck(lambda a: F.max_pool2d(a, 3, 2, 1), (x,))
    assert gradcheck(lambda a: F.avg_pool2d(a, 2, 1, 1, count_include_pad=False), (x,))
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, (2, 3)), (x,))
    assert gradcheck(lambda a: F.adaptive_max_pool2d(a, 2), (x,))
    xp = T(np.abs(rng.normal(size=(1, 2, 6))) + 0.5, True)
    assert gradcheck(lambda a: F.lp_pool1d(a, 2, 2), (xp,))


def test_size_one_and_non_contiguous_inputs():
    x = rng.normal(size=(2, 3, 1, 1))
    check(F.max_pool2d(T(x), 1), x)
    check(F.adaptive_avg_pool2d(T(x), 1), x)
    base = rng.normal(size=(1, 6, 6, 2))
    xt = T(base).permute(0, 3, 1, 2)  # a non-contiguous view [1, 2, 6, 6]
    ref = base.transpose(0, 3, 1, 2)
    check(F.avg_pool2d(xt, 2), pool_ref(ref, (2, 2), (2, 2), (0, 0), (1, 1), False, "avg")[0])


def test_pooling_matches_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = rng.normal(size=(2, 3, 9, 7))
    tx = torch.tensor(x)
    check(F.max_pool2d(T(x), 3, 2, 1, 2, True), tf.max_pool2d(tx, 3, 2, 1, 2, True).numpy())
    check(F.avg_pool2d(T(x), 3, 2, 1, True, False), tf.avg_pool2d(tx, 3, 2, 1, True, False).numpy())
    check(F.lp_pool2d(T(np.abs(x)), 3, 2), tf.lp_pool2d(torch.tensor(np.abs(x)), 3, 2).numpy())
    check(F.adaptive_avg_pool2d(T(x), (4, 5)), tf.adaptive_avg_pool2d(tx, (4, 5)).numpy())
    y, i = tf.max_pool2d(tx, 2, return_indices=True)
    check(
        F.max_unpool2d(T(y.numpy()), tp.tensor(i.tolist()), 2, output_size=(9, 7)),
        tf.max_unpool2d(y, i, 2, output_size=(9, 7)).numpy(),
    )
