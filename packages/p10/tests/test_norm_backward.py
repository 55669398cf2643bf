"""layer_norm_backward and rms_norm_backward (kernels/norm_backward.cpp) against float64 NumPy references.

The references are the closed-form gradients of Note [Norm backward], themselves checked against central
finite differences of NumPy forwards. Checked: normalized_shape of 1 and 2 dims, with and without weight,
non-contiguous grad_out and input, the output flags (None where not asked for), size-0 and size-1 shapes,
16-bit dtypes (float32 accumulation), float64, a grad_out of another dtype, the threaded path (partial sums
over rows, the same result on every run), meta tensors, error messages, and PyTorch's autograd when installed.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def _stats(x, k, centered, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True) if centered else np.zeros_like(x[(...,) + (slice(0, 1),) * k])
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    return axes, mean, rstd


def ref_forward(x, k, w, centered, eps):
    _, mean, rstd = _stats(x, k, centered, eps)
    y = (x - mean) * rstd
    return y if w is None else y * w


def ref_backward(dy, x, k, w, centered, eps):
    """(grad_input, grad_weight, grad_bias) in float64, Note [Norm backward]."""
    dy, x = dy.astype(np.float64), x.astype(np.float64)
    w = None if w is None else w.astype(np.float64)
    axes, mean, rstd = _stats(x, k, centered, eps)
    n = int(np.prod([x.shape[a] for a in axes]))
    xhat = (x - mean) * rstd
    g = dy if w is None else dy * w
    dx = g - xhat * (g * xhat).sum(axis=axes, keepdims=True) / n
    if centered:
        dx = dx - g.sum(axis=axes, keepdims=True) / n
    batch = tuple(range(x.ndim - k))
    return rstd * dx, (dy * xhat).sum(axis=batch), dy.sum(axis=batch)


@pytest.mark.parametrize("centered", [True, False])
def test_reference_matches_finite_differences(centered):
    x, w, dy = rng.standard_normal((2, 5)), rng.standard_normal(5), rng.standard_normal((2, 5))
    gx, gw, gb = ref_backward(dy, x, 1, w, centered, 1e-3)
    h = 1e-6

    def loss(x_, w_):
        return float((ref_forward(x_, 1, w_, centered, 1e-3) * dy).sum())

    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        assert abs((loss(x + e, w) - loss(x - e, w)) / (2 * h) - gx[i]) < 1e-7
    for j in range(5):
        e = np.zeros_like(w)
        e[j] = h
        assert abs((loss(x, w + e) - loss(x, w - e)) / (2 * h) - gw[j]) < 1e-7
    np.testing.assert_allclose(gb, dy.sum(0))


def call(centered, dy, x, ns, w, eps, *flags):
    if centered:
        return tp.layer_norm_backward(dy, x, ns, w, eps, *flags)
    return tp.rms_norm_backward(dy, x, ns, w, eps, *flags[:2])


def check(centered, dy, x, k, w, eps, tol, got):
    gx, gw, gb = ref_backward(dy, x, k, w, centered, eps)
    np.testing.assert_allclose(got[0].to(tp.float64).numpy(), gx, rtol=tol, atol=tol)
    if w is not None:
        np.testing.assert_allclose(got[1].to(tp.float64).numpy(), gw, rtol=tol, atol=tol)
    else:
        assert got[1] is None
    if centered:
        np.testing.assert_allclose(got[2].to(tp.float64).numpy(), gb, rtol=tol, atol=tol)


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("with_weight", [True, False])
@pytest.mark.parametrize("k", [1, 2])
def test_shapes_and_layouts(centered, with_weight, k):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    dy = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ns = list(x.shape[3 - k :])
    w = rng.standard_normal(ns).astype(np.float32) if with_weight else None
    tw = None if w is None else tp.tensor(w)
    # contiguous; grad_out transposed in memory; both strided views
    tdy_t = tp.tensor(np.ascontiguousarray(dy.transpose(2, 1, 0))).permute(2, 1, 0)
    assert not tdy_t.is_contiguous()
    big_x, big_dy = np.zeros((6, 4, 5), np.float32), np.zeros((6, 4, 5), np.float32)
    big_x[::2], big_dy[::2] = x, dy
    for tdy, tx in [
        (tp.tensor(dy), tp.tensor(x)),
        (tdy_t, tp.tensor(x)),
        (tp.tensor(big_dy)[::2], tp.tensor(big_x)[::2]),
    ]:
        got = call(centered, tdy, tx, ns, tw, 1e-5, True, True, True)
        assert got[0].shape == x.shape and got[0].dtype == tp.float32
        check(centered, dy, x, k, w, 1e-5, 2e-5, got)


@pytest.mark.parametrize("centered", [True, False])
def test_output_flags(centered):
    x, dy, w = (tp.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((4, 6), (4, 6), (6,)))
    full = call(centered, dy, x, [6], w, 1e-5, True, True, True)
    only_w = call(centered, dy, x, [6], w, 1e-5, False, True, False)
    assert only_w[0] is None and only_w[1] is not None
    np.testing.assert_array_equal(only_w[1].numpy(), full[1].numpy())
    only_x = call(centered, dy, x, [6], w, 1e-5, True, False, False)
    assert only_x[1] is None
    np.testing.assert_array_equal(only_x[0].numpy(), full[0].numpy())
    if centered:
        assert only_x[2] is None and only_w[2] is None
        only_b = call(centered, dy, x, [6], None, 1e-5, False, True, True)
        assert only_b[0] is None and only_b[1] is None  # no weight: no grad_weight even when asked
        np.testing.assert_allclose(only_b[2].numpy(), dy.numpy().sum(0), rtol=1e-6)


@pytest.mark.parametrize("centered", [True, False])
def test_edge_sizes(centered):
    w = tp.ones(4)
    got = call(centered, tp.zeros((0, 4)), tp.zeros((0, 4)), [4], w, 1e-5, True, True, True)
    assert got[0].shape == (0, 4) and got[1].shape == (4,)
    assert (got[1].numpy() == 0).all()  # no rows: the row sums are zero
    got = call(centered, tp.ones((2, 0)), tp.ones((2, 0)), [0], tp.ones(0), 1e-5, True, True, True)
    assert got[0].shape == (2, 0) and got[1].shape == (0,)
    # one element per row: layer_norm's output is the constant bias, so grad_input is 0
    x, dy = np.array([[3.0], [5.0]], np.float32), np.array([[1.0], [-2.0]], np.float32)
    got = call(centered, tp.tensor(dy), tp.tensor(x), [1], tp.tensor([1.5]), 1e-5, True, True, True)
    if centered:
        assert (got[0].numpy() == 0).all()
    check(centered, dy, x, 1, np.array([1.5], np.float32), 1e-5, 1e-5, got)
    # a single row
    x, dy = rng.standard_normal((1, 7)).astype(np.float32), rng.standard_normal((1, 7)).astype(np.float32)
    check(
        centered,
        dy,
        x,
        1,
        None,
        1e-5,
        2e-5,
        call(centered, tp.tensor(dy), tp.tensor(x), [7], None, 1e-5, True, True, True),
    )


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float16", 2e-2), ("bfloat16", 1e-1)])
def test_dtypes(centered, dtype, tol):
    x = tp.tensor(rng.standard_normal((6, 40))).to(getattr(tp, dtype))
    dy = tp.tensor(rng.standard_normal((6, 40))).to(getattr(tp, dtype))
    w = tp.tensor(rng.standard_normal(40)).to(getattr(tp, dtype))
    got = call(centered, dy, x, [40], w, 1e-3, True, True, True)
    assert all(g.dtype == getattr(tp, dtype) for g in got)
    exact = [t.to(tp.float64).numpy() for t in (dy, x, w)]
    check(centered, exact[0], exact[1], 1, exact[2], 1e-3, tol, got)


def test_rms_norm_default_eps_is_finfo_eps():
    x = rng.standard_normal((3, 8)) * 1e-5  # small enough that eps matters
    dy = rng.standard_normal((3, 8))
    got = tp.rms_norm_backward(tp.tensor(dy), tp.tensor(x), [8], None)
    np.testing.assert_allclose(
        got[0].numpy(), ref_backward(dy, x, 1, None, False, np.finfo(np.float64).eps)[0], rtol=1e-10
    )


@pytest.mark.parametrize("centered", [True, False])
def test_grad_out_of_another_dtype(centered):
    x = rng.standard_normal((5, 9)).astype(np.float32)
    dy = rng.standard_normal((5, 9))
    w = rng.standard_normal(9).astype(np.float64)
    got = call(centered, tp.tensor(dy), tp.tensor(x), [9], tp.tensor(w), 1e-5, True, True, True)
    assert got[0].dtype == tp.float32 and got[1].dtype == tp.float64  # grad_weight in weight's dtype
    # the kernel works in the input's dtype: grad_out and weight rounded to float32 first
    check(centered, dy.astype(np.float32), x, 1, w.astype(np.float32), 1e-5, 2e-5, got)


@pytest.mark.parametrize("centered", [True, False])
def test_threaded_path_is_deterministic(centered):
    x = rng.standard_normal((4096, 96)).astype(np.float32)
    dy = rng.standard_normal((4096, 96)).astype(np.float32)
    w = rng.standard_normal(96).astype(np.float32)
    args = (tp.tensor(dy), tp.tensor(x), [96], tp.tensor(w), 1e-5, True, True, True)
    first = call(centered, *args)
    check(centered, dy, x, 1, w, 1e-5, 2e-4, first)
    again = call(centered, *args)
    for a, b in zip(first, again, strict=False):
        if a is not None:
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_meta():
    x, w = tp.empty((2, 3), device="meta"), tp.empty(3, device="meta")
    gx, gw, gb = tp.layer_norm_backward(x, x, [3], w, 1e-5)
    assert gx.shape == (2, 3) and gw.shape == (3,) and gb.shape == (3,) and gx.device.type == "meta"
    gx, gw = tp.rms_norm_backward(x, x, [3], w.to(tp.float64))
    assert gx.shape == (2, 3) and gw.dtype == tp.float64 and gw.device.type == "meta"


def test_errors():
    x = tp.zeros((2, 3))
    with pytest.raises(
        RuntimeError,
        match=r"layer_norm_backward: Expected grad_out of the input's shape \[2, 3\], "
        r"but got grad_out of shape \[3, 2\]",
    ):
        tp.layer_norm_backward(tp.zeros((3, 2)), x, [3], None, 1e-5)
    with pytest.raises(
        RuntimeError, match=r"Given normalized_shape=\[2\], expected input with shape \[\*, 2\]"
    ):
        tp.rms_norm_backward(x, x, [2], None)
    with pytest.raises(RuntimeError, match="rms_norm_backward: Expected weight to be of same shape"):
        tp.rms_norm_backward(x, x, [3], tp.ones(2))
    with pytest.raises(
        RuntimeError, match="layer_norm_backward: expected a floating point grad_out, got int64"
    ):
        tp.layer_norm_backward(tp.zeros((2, 3), dtype=tp.int64), x, [3], None, 1e-5)


@pytest.mark.parametrize("centered", [True, False])
def test_matches_torch_autograd(centered):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((4, 3, 10)).astype(np.float32)
    dy = rng.standard_normal((4, 3, 10)).astype(np.float32)
    w = rng.standard_normal((3, 10)).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    fn = torch.nn.functional.layer_norm if centered else torch.nn.functional.rms_norm
    fn(tx, (3, 10), tw, eps=1e-5).backward(torch.tensor(dy))
    got = call(centered, tp.tensor(dy), tp.tensor(x), [3, 10], tp.tensor(w), 1e-5, True, True, True)
    np.testing.assert_allclose(got[0].numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1].numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)
