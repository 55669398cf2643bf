"""scaled_dot_product_attention with dropout_p > 0 under autograd: decomposed into recorded ops, so backward
uses the very mask the forward drew (Note [Attention with dropout under autograd] in formulas/attention.py).
References: a float64 NumPy recomputation with the same mask, drawn again from the same seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx import autograd

_DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not tp.cuda.is_available(), reason="no CUDA")),
]


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_gradients_use_the_forward_mask(device: str, causal: bool) -> None:
    rng = np.random.default_rng(0)
    B, H, L, S, E = 2, 3, 4, 4, 5
    qn, kn, vn, gn = (
        rng.standard_normal(s) for s in [(B, H, L, E), (B, H, S, E), (B, H, S, E), (B, H, L, E)]
    )
    q, k, v = (tp.tensor(a, device=device).requires_grad_(True) for a in (qn, kn, vn))
    p = 0.4
    tp.manual_seed(123)
    out = tp.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal)
    out.backward(tp.tensor(gn, device=device))
    # The same draws again: dropout of ones of the [..., L, S] shape gives the mask scaled by 1 / (1 - p).
    tp.manual_seed(123)
    m = tp.dropout(tp.ones(B, H, L, S, dtype=tp.float64, device=device), p, True).cpu().numpy()
    assert 0 < (m == 0).mean() < 1

    scale = 1 / math.sqrt(E)
    s = qn @ kn.swapaxes(-1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    P = _softmax(s)
    A = P * m
    np.testing.assert_allclose(out.detach().cpu().numpy(), A @ vn, rtol=1e-10, atol=1e-12)
    dA = gn @ vn.swapaxes(-1, -2)
    dP = dA * m
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))
    np.testing.assert_allclose(v.grad.cpu().numpy(), A.swapaxes(-1, -2) @ gn, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(q.grad.cpu().numpy(), dS @ kn * scale, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(k.grad.cpu().numpy(), dS.swapaxes(-1, -2) @ qn * scale, rtol=1e-10, atol=1e-12)


def test_values_equal_the_fused_kernel_under_the_same_seed() -> None:
    q, k, v = (tp.randn(2, 3, 5, 4) for _ in range(3))
    mask = tp.randn(5, 5)
    tp.manual_seed(7)
    with autograd.no_grad():
        fused = tp.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.3)
    tp.manual_seed(7)
    recorded = tp.scaled_dot_product_attention(q.requires_grad_(True), k, v, attn_mask=mask, dropout_p=0.3)
    assert recorded.grad_fn is not None
    np.testing.assert_allclose(recorded.detach().numpy(), fused.numpy(), rtol=1e-5, atol=1e-6)


def test_gqa_bool_mask_and_mask_gradient() -> None:
    rng = np.random.default_rng(1)
    q = tp.tensor(rng.standard_normal((1, 4, 3, 2))).requires_grad_(True)
    k = tp.tensor(rng.standard_normal((1, 2, 3, 2))).requires_grad_(True)
    v = tp.tensor(rng.standard_normal((1, 2, 3, 2))).requires_grad_(True)
    keep = tp.tensor([[True, False, True], [True, True, False], [False, False, False]])  # last row: no key

    def f(q, k, v):
        tp.manual_seed(3)  # the same mask on every evaluation
        return tp.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=0.5, enable_gqa=True)

    out = f(q, k, v)
    np.testing.assert_array_equal(out.detach().numpy()[..., 2, :], 0.0)  # a row with no key gives zeros
    assert autograd.gradcheck(f, (q, k, v))
    additive = tp.tensor(rng.standard_normal((3, 3))).requires_grad_(True)

    def g(q, bias):
        tp.manual_seed(4)
        return tp.scaled_dot_product_attention(q, q, q, attn_mask=bias, dropout_p=0.25)

    assert autograd.gradcheck(g, (q, additive))


def test_bad_arguments_keep_the_kernel_messages() -> None:
    q = tp.randn(2, 3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="query and key must have the same last dim"):
        tp.scaled_dot_product_attention(q, tp.randn(2, 3, 5), tp.randn(2, 3, 5), dropout_p=0.1)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\]"):
        tp.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
