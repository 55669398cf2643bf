"""scaled_dot_product_attention_backward (kernels/attention_backward.cpp) against float64 NumPy references.

The reference materialises P = softmax(scale Q K^T) and applies the textbook gradients (Note [Attention
backward]); it is itself checked against central finite differences. Checked: causal and not, L < S, L > S
and L = S across query-block boundaries (64 rows), several batch dims, non-contiguous inputs, size-0 and
size-1 sequences, float32 and float64, the threaded path, meta tensors, error messages and PyTorch.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def ref_forward(q, k, v, causal, scale):
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return p / p.sum(-1, keepdims=True), v


def ref_backward(g, q, k, v, causal, scale):
    p, _ = ref_forward(q, k, v, causal, scale)
    dv = np.swapaxes(p, -1, -2) @ g
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k * scale, np.swapaxes(ds, -1, -2) @ q * scale, dv


def test_reference_matches_finite_differences():
    q, k, v, g = (rng.standard_normal(s) for s in ((3, 2), (4, 2), (4, 3), (3, 3)))

    def loss(q_, k_, v_):
        p, _ = ref_forward(q_, k_, v_, True, 0.7)
        return float(((p @ v_) * g).sum())

    grads = ref_backward(g, q, k, v, True, 0.7)
    for which, t in enumerate((q, k, v)):
        for i in np.ndindex(t.shape):
            e = np.zeros_like(t)
            e[i] = 1e-6
            args_p = [x + e if j == which else x for j, x in enumerate((q, k, v))]
            args_m = [x - e if j == which else x for j, x in enumerate((q, k, v))]
            assert abs((loss(*args_p) - loss(*args_m)) / 2e-6 - grads[which][i]) < 1e-7


def run(g, q, k, v, causal, scale, dtype=tp.float64):
    return tp.scaled_dot_product_attention_backward(
        *(tp.tensor(a).to(dtype) for a in (g, q, k, v)), causal, scale
    )


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 70, 70, 8, 5), (1, 2, 130, 50, 4, 6), (1, 1, 5, 9, 3, 3)])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 2e-4)])
def test_matches_reference(causal, shape, dtype, tol):
    b, h, L, S, E, Ev = shape
    q, k = rng.standard_normal((b, h, L, E)), rng.standard_normal((b, h, S, E))
    v, g = rng.standard_normal((b, h, S, Ev)), rng.standard_normal((b, h, L, Ev))
    got = run(g, q, k, v, causal, 0.37, getattr(tp, dtype))
    for a, want in zip(got, ref_backward(g, q, k, v, causal, 0.37), strict=True):
        assert a.dtype == getattr(tp, dtype) and a.shape == want.shape
        np.testing.assert_allclose(a.to(tp.float64).numpy(), want, rtol=tol, atol=tol)


def test_non_contiguous_inputs():
    q = rng.standard_normal((2, 6, 3, 4))  # stored [B, L, H, E] as a model's projections are
    k, v, g = (
        rng.standard_normal((2, 6, 3, 4)),
        rng.standard_normal((2, 6, 3, 5)),
        rng.standard_normal((2, 3, 6, 5)),
    )
    tq, tk, tv = (tp.tensor(a).transpose(1, 2) for a in (q, k, v))
    tg = tp.tensor(np.ascontiguousarray(np.swapaxes(g, -1, -2))).transpose(-1, -2)
    assert not tq.is_contiguous() and not tg.is_contiguous()
    got = tp.scaled_dot_product_attention_backward(tg, tq, tk, tv, True, 0.5)
    want = ref_backward(g, *(np.swapaxes(a, 1, 2) for a in (q, k, v)), True, 0.5)
    for a, w in zip(got, want, strict=True):
        np.testing.assert_allclose(a.numpy(), w, rtol=1e-10, atol=1e-12)


def test_edge_sizes():
    # no keys: the output is zeros whatever Q and V are, so every gradient is zero (or empty)
    gq, gk, gv = tp.scaled_dot_product_attention_backward(
        tp.ones((2, 3, 4)), tp.ones((2, 3, 5)), tp.ones((2, 0, 5)), tp.ones((2, 0, 4)), False, 1.0
    )
    assert (
        gq.shape == (2, 3, 5) and (gq.numpy() == 0).all() and gk.shape == (2, 0, 5) and gv.shape == (2, 0, 4)
    )
    # no queries: nothing flows back to K and V
    gq, gk, gv = tp.scaled_dot_product_attention_backward(
        tp.ones((0, 4)), tp.ones((0, 5)), tp.ones((3, 5)), tp.ones((3, 4)), True, 1.0
    )
    assert gq.shape == (0, 5) and (gk.numpy() == 0).all() and (gv.numpy() == 0).all()
    # one key: P is 1 everywhere, so dQ and dK vanish and dV sums dO
    g = rng.standard_normal((4, 2))
    gq, gk, gv = run(
        g, rng.standard_normal((4, 3)), rng.standard_normal((1, 3)), rng.standard_normal((1, 2)), True, 1.0
    )
    np.testing.assert_allclose(gq.numpy(), 0, atol=1e-15)
    np.testing.assert_allclose(gk.numpy(), 0, atol=1e-14)
    np.testing.assert_allclose(gv.numpy(), g.sum(0, keepdims=True), rtol=1e-12)


def test_threaded_path_matches_one_thread():
    q, k, v, g = (rng.standard_normal((16, 200, 16)).astype(np.float32) for _ in range(4))
    threads = tp.get_num_threads()
    try:
        tp.set_num_threads(1)
        one = run(g, q, k, v, True, 0.25, tp.float32)
        tp.set_num_threads(max(threads, 2))
        many = run(g, q, k, v, True, 0.25, tp.float32)
    finally:
        tp.set_num_threads(threads)
    for a, b in zip(one, many, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())  # one task per batch element: same sums


def test_meta():
    m = tp.empty((2, 7, 4), device="meta")
    gq, gk, gv = tp.scaled_dot_product_attention_backward(
        m, m, tp.empty((2, 3, 4), device="meta"), tp.empty((2, 3, 4), device="meta"), False, 0.5
    )
    assert gq.shape == (2, 7, 4) and gk.shape == (2, 3, 4) and gv.device.type == "meta"


def test_errors():
    x = tp.zeros((2, 3, 4))
    with pytest.raises(
        RuntimeError,
        match=r"scaled_dot_product_attention_backward: expected grad_out of shape "
        r"\[2, 3, 4\], got \[2, 3, 5\]",
    ):
        tp.scaled_dot_product_attention_backward(tp.zeros((2, 3, 5)), x, x, x, False, 1.0)
    with pytest.raises(RuntimeError, match=r"expected key \[2, 3, 4\] and value \[2, 3, 4\] for query"):
        tp.scaled_dot_product_attention_backward(x, x, tp.zeros((1, 3, 4)), x, False, 1.0)
    with pytest.raises(
        RuntimeError, match="expected float32 or float64 grad_out, query, key and value of one"
    ):
        tp.scaled_dot_product_attention_backward(x, x, x.to(tp.float64), x, False, 1.0)
    with pytest.raises(RuntimeError, match="must have at least 2 dims, got 1"):
        tp.scaled_dot_product_attention_backward(x, tp.zeros(3), x, x, False, 1.0)


@pytest.mark.parametrize("causal", [True, False])
def test_matches_torch(causal):
    torch = pytest.importorskip("torch")
    q, k, v, g = (rng.standard_normal((2, 2, 90, 16)).astype(np.float32) for _ in range(4))
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal).backward(torch.tensor(g))
    got = run(g, q, k, v, causal, 0.25, tp.float32)
    for a, t in zip(got, (tq, tk, tv), strict=True):
        np.testing.assert_allclose(a.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
