"""nn.functional convolutions and sliding blocks (nn/functional/conv.py) against float64 NumPy references.

The references are written here from the definitions (explicit zero padding, strided/dilated windows, groups;
transposed convolution as the scatter-add of each input value times the kernel), independent of P10's
kernels; gradients by gradcheck; and, with PyTorch installed, against torch.nn.functional.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from nn_testing import T
from nn_testing import check as _check

import tensorplay.nn.functional as F
from tensorplay.autograd import gradcheck


def check(got, want, tol=1e-10):
    """nn_testing.check with this file's default tolerance."""
    _check(got, want, tol)


rng = np.random.default_rng(1)


def conv_ref(x, w, b, stride, padding, dilation, groups):
    """Cross-correlation over n spatial dims, by looping over kernel taps."""
    n = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    cout, cin_g = w.shape[:2]
    ks = w.shape[2:]
    out_sp = [(x.shape[2 + d] - dilation[d] * (ks[d] - 1) - 1) // stride[d] + 1 for d in range(n)]
    out = np.zeros((x.shape[0], cout, *out_sp))
    per_group = cout // groups
    for o in range(cout):
        g = o // per_group
        for tap in itertools.product(*[range(k) for k in ks]):
            sl = tuple(
                slice(tap[d] * dilation[d], tap[d] * dilation[d] + stride[d] * (out_sp[d] - 1) + 1, stride[d])
                for d in range(n)
            )
            xs = x[(slice(None), slice(g * cin_g, (g + 1) * cin_g), *sl)]
            out[:, o] += np.einsum("nc...,c->n...", xs, w[(o, slice(None), *tap)])
        if b is not None:
            out[:, o] += b[o]
    return out


def conv_transpose_ref(x, w, b, stride, padding, output_padding, dilation, groups):
    """Each input value scatters value * kernel into the (uncropped) output; then crop the padding."""
    n = x.ndim - 2
    cin, cout_g = w.shape[:2]
    ks = w.shape[2:]
    full = [
        (x.shape[2 + d] - 1) * stride[d] + dilation[d] * (ks[d] - 1) + 1 + output_padding[d] for d in range(n)
    ]
    out = np.zeros((x.shape[0], cout_g * groups, *full))
    cin_g = cin // groups
    for c in range(cin):
        g = c // cin_g
        for pos in itertools.product(*[range(s) for s in x.shape[2:]]):
            for tap in itertools.product(*[range(k) for k in ks]):
                where = tuple(pos[d] * stride[d] + tap[d] * dilation[d] for d in range(n))
                out[(slice(None), slice(g * cout_g, (g + 1) * cout_g), *where)] += (
                    x[(slice(None), c, *pos)][:, None] * w[(c, slice(None), *tap)][None]
                )
    crop = tuple(slice(padding[d], full[d] - padding[d]) for d in range(n))
    out = out[(slice(None), slice(None), *crop)]
    if b is not None:
        out += b.reshape(1, -1, *([1] * n))
    return out


CONV_CASES = [
    # n, in shape, cout, kernel, stride, padding, dilation, groups
    (1, (2, 4, 9), 6, (3,), (1,), (1,), (1,), 2),
    (1, (1, 3, 8), 2, (2,), (3,), (0,), (2,), 1),
    (2, (2, 2, 6, 5), 4, (3, 2), (2, 1), (1, 0), (1, 2), 1),
    (2, (1, 4, 5, 5), 4, (3, 3), (1, 1), (2, 1), (1, 1), 4),
    (3, (1, 2, 4, 5, 3), 2, (2, 3, 1), (1, 2, 1), (0, 1, 1), (1, 1, 2), 2),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_matches_reference(case, bias):
    n, shape, cout, k, s, p, d, g = case
    x = rng.normal(size=shape)
    w = rng.normal(size=(cout, shape[1] // g, *k))
    b = rng.normal(size=cout) if bias else None
    conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    got = conv(T(x), T(w), T(b) if bias else None, s, p, d, g)
    check(got, conv_ref(x, w, b, s, p, d, g))


def test_conv_int_arguments_and_unbatched_input():
    x, w = rng.normal(size=(3, 7, 7)), rng.normal(size=(2, 3, 3, 3))
    got = F.conv2d(T(x), T(w), stride=2, padding=1)
    check(got, conv_ref(x[None], w, None, (2, 2), (1, 1), (1, 1), 1)[0])


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv_string_padding(padding):
    x, w = rng.normal(size=(1, 2, 7)), rng.normal(size=(3, 2, 4))
    got = F.conv1d(T(x), T(w), padding=padding, dilation=1)
    if padding == "valid":
        want = conv_ref(x, w, None, (1,), (0,), (1,), 1)
    else:  # total padding 3 split as 1 before, 2 after (PyTorch puts the extra one after)
        want = conv_ref(np.pad(x, [(0, 0), (0, 0), (1, 2)]), w, None, (1,), (0,), (1,), 1)
    check(got, want)


CONVT_CASES = [
    # n, in shape, cout_per_group, kernel, stride, padding, output_padding, dilation, groups
    (1, (2, 4, 5), 3, (3,), (2,), (1,), (1,), (1,), 2),
    (2, (1, 2, 3, 4), 2, (2, 3), (2, 1), (0, 1), (1, 0), (1, 1), 1),
    (2, (1, 2, 3, 3), 1, (3, 3), (1, 1), (1, 1), (0, 0), (2, 2), 2),
    (3, (1, 2, 2, 3, 2), 2, (2, 2, 2), (2, 1, 2), (0, 0, 1), (1, 0, 0), (1, 1, 1), 1),
]


@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv_transpose_matches_reference(case):
    n, shape, cout_g, k, s, p, op, d, g = case
    x = rng.normal(size=shape)
    w = rng.normal(size=(shape[1], cout_g, *k))
    b = rng.normal(size=cout_g * g)
    conv_t = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
    got = conv_t(T(x), T(w), T(b), s, p, op, g, d)
    check(got, conv_transpose_ref(x, w, b, s, p, op, d, g))


def test_conv_gradcheck():
    x, w, b = (
        T(rng.normal(size=(1, 2, 5, 4)), True),
        T(rng.normal(size=(4, 1, 2, 3)), True),
        T(rng.normal(size=4), True),
    )
    assert gradcheck(lambda a, c, e: F.conv2d(a, c, e, stride=(2, 1), padding=1, groups=2), (x, w, b))
    wt = T(rng.normal(size=(2, 3, 3)), True)
    xt = T(rng.normal(size=(1, 2, 4)), True)
    assert gradcheck(lambda a, c: F.conv_transpose1d(a, c, stride=2, padding=1, output_padding=1), (xt, wt))


def test_conv_errors_name_the_problem():
    with pytest.raises(RuntimeError):
        F.conv2d(T(np.zeros((1, 3, 5, 5))), T(np.zeros((2, 4, 3, 3))))  # 3 input channels, weight wants 4
    with pytest.raises(RuntimeError):
        F.conv1d(T(np.zeros((1, 1, 2))), T(np.zeros((1, 1, 3))))  # kernel larger than the padded input


def unfold_ref(x, k, d, p, s):
    n, c = x.shape[:2]
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (xp.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow))
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = xp[
                :,
                :,
                i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
                j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1],
            ]
    return cols.reshape(n, c * k[0] * k[1], oh * ow), (oh, ow)


def test_unfold_and_fold():
    x = rng.normal(size=(2, 3, 5, 6))
    k, d, p, s = (2, 3), (1, 2), (1, 0), (2, 1)
    cols, _ = unfold_ref(x, k, d, p, s)
    check(F.unfold(T(x), k, d, p, s), cols)
    # fold is unfold's adjoint: <unfold(x), y> == <x, fold(y)>
    y = rng.normal(size=cols.shape)
    folded = np.asarray(F.fold(T(y), (5, 6), k, d, p, s).tolist())
    np.testing.assert_allclose((cols * y).sum(), (x * folded).sum(), rtol=1e-10)
    check(F.fold(T(np.ones((1, 4, 4))), 3, 2), [[[[1, 2, 1], [2, 4, 2], [1, 2, 1]]]])
    assert gradcheck(lambda a: F.unfold(a, 2, padding=1), (T(rng.normal(size=(1, 2, 3, 3)), True),))
    assert gradcheck(lambda a: F.fold(a, (3, 3), 2), (T(rng.normal(size=(1, 8, 4)), True),))


def test_conv_matches_torch():
    torch = pytest.importorskip("torch")
    x, w, b = rng.normal(size=(2, 4, 7, 6)), rng.normal(size=(6, 2, 3, 2)), rng.normal(size=6)
    got = F.conv2d(T(x), T(w), T(b), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    want = torch.nn.functional.conv2d(
        torch.tensor(x),
        torch.tensor(w),
        torch.tensor(b),
        stride=(2, 1),
        padding=(1, 2),
        dilation=(1, 2),
        groups=2,
    )
    check(got, want.numpy())
    wt = rng.normal(size=(4, 3, 3, 3))
    got = F.conv_transpose2d(T(x), T(wt), stride=2, padding=1, output_padding=1)
    want = torch.nn.functional.conv_transpose2d(
        torch.tensor(x), torch.tensor(wt), stride=2, padding=1, output_padding=1
    )
    check(got, want.numpy())
