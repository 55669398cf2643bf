"""layer_norm and rms_norm (kernels/norm.cpp) against float64 NumPy formulas.

Checked over normalized_shape of 1 and 2 dims, with and without weight/bias, layouts (contiguous, transposed,
strided), dtypes (16-bit floats accumulate in float32), rows with a large common offset (the variance must not
cancel), size-0 and size-1, the threaded path, meta tensors and PyTorch's error messages.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def ref_layer_norm(a, k, w=None, b=None, eps=1e-5):
    a = a.astype(np.float64)
    axes = tuple(range(a.ndim - k, a.ndim))
    mean = a.mean(axis=axes, keepdims=True)
    var = ((a - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (a - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * w.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y


def ref_rms_norm(a, k, w=None, eps=None):
    eps = np.finfo(a.dtype).eps if eps is None else eps
    a64 = a.astype(np.float64)
    axes = tuple(range(a.ndim - k, a.ndim))
    y = a64 / np.sqrt((a64**2).mean(axis=axes, keepdims=True) + eps)
    return y if w is None else y * w.astype(np.float64)


def layouts(a):
    yield tp.tensor(a)
    perm = tuple(reversed(range(a.ndim)))
    yield tp.tensor(np.ascontiguousarray(a.transpose(perm))).permute(perm)
    big = np.zeros((a.shape[0] * 2,) + a.shape[1:], a.dtype)
    big[::2] = a
    yield tp.tensor(big)[::2]


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("k", [1, 2])
def test_layer_norm_shapes_and_layouts(k, affine):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ns = list(a.shape[3 - k :])
    w = rng.standard_normal(ns).astype(np.float32) if affine in ("weight", "both") else None
    b = rng.standard_normal(ns).astype(np.float32) if affine in ("bias", "both") else None
    tw = None if w is None else tp.tensor(w)
    tb = None if b is None else tp.tensor(b)
    for x in layouts(a):
        got = tp.layer_norm(x, ns, tw, tb)
        assert got.shape == a.shape and got.dtype == tp.float32
        np.testing.assert_allclose(got.numpy(), ref_layer_norm(a, k, w, b), rtol=1e-5, atol=1e-5)


DTYPE_TOL = [("float32", 1e-5), ("float64", 1e-12), ("float16", 4e-3), ("bfloat16", 3e-2)]


@pytest.mark.parametrize("dtype,tol", DTYPE_TOL)
def test_dtypes(dtype, tol):
    x = tp.tensor(rng.standard_normal((6, 40))).to(getattr(tp, dtype))
    w = tp.tensor(rng.standard_normal(40)).to(getattr(tp, dtype))
    exact, wexact = x.to(tp.float64).numpy(), w.to(tp.float64).numpy()
    got = tp.layer_norm(x, [40], w, None, 1e-3)
    assert got.dtype == getattr(tp, dtype)
    np.testing.assert_allclose(
        got.to(tp.float64).numpy(), ref_layer_norm(exact, 1, wexact, eps=1e-3), rtol=tol, atol=tol * 4
    )
    got = tp.rms_norm(x, [40], w)
    assert got.dtype == getattr(tp, dtype)
    eps = {"float16": 0.0009765625, "bfloat16": 0.0078125}.get(dtype)
    ref = ref_rms_norm(exact.astype(dtype if eps is None else np.float64), 1, wexact, eps)
    np.testing.assert_allclose(got.to(tp.float64).numpy(), ref, rtol=tol, atol=tol * 4)


def test_layer_norm_large_offset_does_not_cancel():
    a = (1e4 + rng.standard_normal((4, 256))).astype(np.float32)
    np.testing.assert_allclose(tp.layer_norm(tp.tensor(a), [256]).numpy(), ref_layer_norm(a, 1), atol=2e-3)


@pytest.mark.parametrize("k", [1, 2])
def test_rms_norm(k):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ns = list(a.shape[3 - k :])
    w = rng.standard_normal(ns).astype(np.float32)
    for x in layouts(a):
        np.testing.assert_allclose(tp.rms_norm(x, ns).numpy(), ref_rms_norm(a, k), rtol=1e-5, atol=1e-6)
        got = tp.rms_norm(x, ns, tp.tensor(w), 1e-2)
        np.testing.assert_allclose(got.numpy(), ref_rms_norm(a, k, w, 1e-2), rtol=1e-5, atol=1e-6)


def test_edge_sizes():
    assert tp.layer_norm(tp.zeros((0, 4)), [4]).shape == (0, 4)
    assert tp.rms_norm(tp.zeros((2, 0, 3)), [3]).shape == (2, 0, 3)
    one = tp.layer_norm(tp.tensor([[3.0], [5.0]]), [1])  # a single element: (x - mean) = 0
    assert (one.numpy() == 0).all()
    v = np.array([1.0, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(tp.layer_norm(tp.tensor(v), [3]).numpy(), ref_layer_norm(v, 1), rtol=1e-5)


def test_threaded_path():
    a = rng.standard_normal((2048, 600)).astype(np.float32)
    np.testing.assert_allclose(tp.layer_norm(tp.tensor(a), [600]).numpy(), ref_layer_norm(a, 1), atol=2e-5)
    np.testing.assert_allclose(tp.rms_norm(tp.tensor(a), [600]).numpy(), ref_rms_norm(a, 1), atol=2e-5)


def test_meta():
    got = tp.layer_norm(tp.empty((2, 3), device="meta"), [3])
    assert got.shape == (2, 3) and got.device.type == "meta"
    assert tp.rms_norm(tp.empty((2, 3), device="meta"), [3]).shape == (2, 3)


def test_errors():
    with pytest.raises(
        RuntimeError,
        match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], "
        r"but got input of size\[4, 3\]",
    ):
        tp.layer_norm(tp.zeros((4, 3)), [5])
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[2, 3\]"):
        tp.rms_norm(tp.zeros((3,)), [2, 3])
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as normalized_shape"):
        tp.layer_norm(tp.zeros((4, 3)), [3], tp.ones(4))
    with pytest.raises(RuntimeError, match="layer_norm: expected a floating point input, got int64"):
        tp.layer_norm(tp.tensor([[1, 2]]), [2])


def test_matches_torch():
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((5, 6, 7)).astype(np.float32)
    w, b = rng.standard_normal((6, 7)).astype(np.float32), rng.standard_normal((6, 7)).astype(np.float32)
    ours = tp.layer_norm(tp.tensor(a), [6, 7], tp.tensor(w), tp.tensor(b))
    theirs = torch.nn.functional.layer_norm(torch.tensor(a), [6, 7], torch.tensor(w), torch.tensor(b))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
    ours = tp.rms_norm(tp.tensor(a), [7], tp.tensor(w[0]))
    theirs = torch.nn.functional.rms_norm(torch.tensor(a), [7], torch.tensor(w[0]))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


# ---- group_norm, batch_norm, instance_norm (Composites) ----------------------------------------------------
def ref_group_norm(a, g, w=None, b=None, eps=1e-5):
    n, c = a.shape[:2]
    x = a.astype(np.float64).reshape(n, g, -1)
    y = ((x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)).reshape(a.shape)
    cs = (1, c) + (1,) * (a.ndim - 2)
    if w is not None:
        y = y * w.reshape(cs)
    if b is not None:
        y = y + b.reshape(cs)
    return y


@pytest.mark.parametrize("shape,g", [((2, 6, 5), 3), ((3, 4, 2, 3), 4), ((2, 4), 1), ((1, 6, 7), 6)])
def test_group_norm(shape, g):
    a = rng.standard_normal(shape).astype(np.float32)
    c = shape[1]
    w, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    for x in layouts(a):
        np.testing.assert_allclose(tp.group_norm(x, g).numpy(), ref_group_norm(a, g), rtol=1e-5, atol=1e-5)
        got = tp.group_norm(x, g, tp.tensor(w), tp.tensor(b), 1e-3)
        np.testing.assert_allclose(got.numpy(), ref_group_norm(a, g, w, b, 1e-3), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match=r"divisible by num_groups, but got input of shape \[2, 6, 5\]"):
        tp.group_norm(tp.zeros((2, 6, 5)), 4)


def ref_batch_stats(a):
    axes = (0,) + tuple(range(2, a.ndim))
    a64 = a.astype(np.float64)
    return a64.mean(axis=axes), a64.var(axis=axes), a64.var(axis=axes, ddof=1)


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (2, 3, 4, 5)])
def test_batch_norm_training_updates_running_stats(shape):
    a = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    c = shape[1]
    w, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    rm0, rv0 = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 0.5
    rm, rv = tp.tensor(rm0), tp.tensor(rv0)
    got = tp.batch_norm(tp.tensor(a), tp.tensor(w), tp.tensor(b), rm, rv, True, 0.1, 1e-5)
    mean, var, uvar = ref_batch_stats(a)
    cs = (1, c) + (1,) * (a.ndim - 2)
    ref = (a - mean.reshape(cs)) / np.sqrt(var.reshape(cs) + 1e-5) * w.reshape(cs) + b.reshape(cs)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm.numpy(), 0.9 * rm0 + 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.9 * rv0 + 0.1 * uvar, rtol=1e-5, atol=1e-6)
    # eval: the running statistics, which stay unchanged
    got = tp.batch_norm(tp.tensor(a), None, None, rm, rv, False, 0.1, 1e-5)
    ref = (a - rm.numpy().reshape(cs)) / np.sqrt(rv.numpy().reshape(cs) + 1e-5)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm.numpy(), 0.9 * rm0 + 0.1 * mean, rtol=1e-5, atol=1e-6)


def test_batch_norm_errors_and_no_running_stats():
    a = rng.standard_normal((5, 2, 3)).astype(np.float32)
    got = tp.batch_norm(
        tp.tensor(a).permute(0, 2, 1).contiguous().permute(0, 2, 1), None, None, None, None, True, 0.1, 1e-5
    )
    mean, var, _ = ref_batch_stats(a)
    np.testing.assert_allclose(got.numpy(), (a - mean[:, None]) / np.sqrt(var[:, None] + 1e-5), atol=1e-5)
    with pytest.raises(
        ValueError, match=r"Expected more than 1 value per channel when training, got input size \[1, 3\]"
    ):
        tp.batch_norm(tp.zeros((1, 3)), None, None, None, None, True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        tp.batch_norm(tp.zeros((2, 3)), None, None, tp.zeros(4), tp.ones(3), True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="must be defined in evaluation mode"):
        tp.batch_norm(tp.zeros((2, 3)), None, None, None, None, False, 0.1, 1e-5)


def test_instance_norm():
    a = rng.standard_normal((3, 2, 4, 5)).astype(np.float32)
    w, b = rng.standard_normal(2).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    x64 = a.astype(np.float64)
    m, v = x64.mean(axis=(2, 3), keepdims=True), x64.var(axis=(2, 3), keepdims=True)
    ref = (x64 - m) / np.sqrt(v + 1e-5) * w.reshape(1, 2, 1, 1) + b.reshape(1, 2, 1, 1)
    rm, rv = tp.zeros(2), tp.ones(2)
    got = tp.instance_norm(tp.tensor(a), tp.tensor(w), tp.tensor(b), rm, rv, True, 0.1, 1e-5)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)
    uvar = x64.var(axis=(2, 3), ddof=1)
    np.testing.assert_allclose(rm.numpy(), 0.1 * m[:, :, 0, 0].mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * uvar.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        tp.instance_norm(tp.tensor(a)).numpy(), (x64 - m) / np.sqrt(v + 1e-5), atol=1e-5
    )


def test_composite_norms_match_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    a = rng.standard_normal((4, 6, 5)).astype(np.float32)
    w, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    np.testing.assert_allclose(
        tp.group_norm(tp.tensor(a), 2, tp.tensor(w), tp.tensor(b)).numpy(),
        F.group_norm(torch.tensor(a), 2, torch.tensor(w), torch.tensor(b)).numpy(),
        rtol=1e-5,
        atol=1e-5,
    )
    rm, rv, trm, trv = tp.zeros(6), tp.ones(6), torch.zeros(6), torch.ones(6)
    ours = tp.batch_norm(tp.tensor(a), tp.tensor(w), tp.tensor(b), rm, rv, True, 0.3, 1e-5)
    theirs = F.batch_norm(torch.tensor(a), trm, trv, torch.tensor(w), torch.tensor(b), True, 0.3, 1e-5)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-5, atol=1e-6)
    rm, rv, trm, trv = tp.zeros(6), tp.ones(6), torch.zeros(6), torch.ones(6)
    ours = tp.instance_norm(tp.tensor(a), None, None, rm, rv, True, 0.2, 1e-5)
    theirs = F.instance_norm(torch.tensor(a), trm, trv, None, None, True, 0.2, 1e-5)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-5, atol=1e-6)
