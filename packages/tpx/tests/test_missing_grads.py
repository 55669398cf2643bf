"""Gradients that used to be missing: scatter_add (and the scatter family) when src or self needs no gradient,
einsum with '...', cross_entropy's gradient with respect to probability targets. gradcheck in float64, plus
PyTorch where installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx import autograd


def _f64(*shape, seed=0, grad=True):
    t = tp.tensor(np.random.default_rng(seed).standard_normal(shape))
    return t.requires_grad_(True) if grad else t


_INDEX = tp.tensor([[0, 1, 2, 0], [1, 2, 0, 1]])


@pytest.mark.parametrize(
    "call",
    [
        lambda s, src: s.scatter_add(0, _INDEX, src),
        lambda s, src: tp.scatter_add(s, 0, _INDEX, src),
        lambda s, src: s.scatter_add(-2, _INDEX, src),
        lambda s, src: tp.scatter_add(s, dim=0, index=_INDEX, src=src),
        lambda s, src: (s * 1.0).scatter_add_(0, _INDEX, src),
        lambda s, src: s.scatter(0, _INDEX, src, reduce="add"),
        lambda s, src: s.scatter_reduce(0, _INDEX, src, "mean"),
        lambda s, src: s.scatter_reduce(0, _INDEX, src, "amax"),
    ],
    ids=["method", "function", "negative_dim", "kwargs", "in_place", "scatter_add_reduce", "mean", "amax"],
)
@pytest.mark.parametrize("which", ["self", "src", "both"])
def test_scatter_add_gradcheck(call, which: str) -> None:
    s = _f64(3, 4, seed=1, grad=which in ("self", "both"))
    src = _f64(2, 5, seed=2, grad=which in ("src", "both"))
    inputs = tuple(t for t in (s, src) if t.requires_grad)

    def f(*ts):
        it = iter(ts)
        return call(next(it) if s.requires_grad else s, next(it) if src.requires_grad else src)

    assert autograd.gradcheck(f, inputs)


def test_scatter_add_src_gradient_value() -> None:
    s = _f64(3, 4, seed=3)
    src = tp.ones(2, 5, dtype=tp.float64)  # needs no gradient: used to fail reading ctx.src_shape
    out = s.scatter_add(0, _INDEX, src)
    (out * out).sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), 2 * out.detach().numpy())


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
        ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # the ellipses broadcast
        ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),  # implicit output
        ("i...,i...->...", [(3, 2, 2), (3, 1, 2)]),
        ("...ii->...i", [(2, 3, 3)]),
        ("b...d,d->b...", [(2, 3, 4), (4,)]),
    ],
)
def test_einsum_ellipsis_gradcheck(equation: str, shapes) -> None:
    ops = [_f64(*shape, seed=k) for k, shape in enumerate(shapes)]
    assert autograd.gradcheck(lambda *ts: tp.einsum(equation, *ts), tuple(ops))


def test_einsum_ellipsis_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    a, b = _f64(2, 1, 3, 4, seed=4), _f64(5, 4, 2, seed=5)
    tp.einsum("...ij,...jk", a, b).pow(2).sum().backward()
    at, bt = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (a, b))
    torch.einsum("...ij,...jk", at, bt).pow(2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=1e-10)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_soft_target_gradient(reduction: str, label_smoothing: float, weighted: bool) -> None:
    rng = np.random.default_rng(6)
    a = rng.standard_normal((4, 5, 3))  # (N, C, d): the class dim is 1
    p = np.exp(_log_softmax(rng.standard_normal((4, 5, 3)), 1))
    w = rng.uniform(0.5, 2.0, 5) if weighted else None
    x, t = tp.tensor(a).requires_grad_(True), tp.tensor(p).requires_grad_(True)
    weight = tp.tensor(w) if weighted else None
    loss = tp.cross_entropy(x, t, weight, reduction, -100, label_smoothing)
    (loss * loss).sum().backward() if reduction == "none" else loss.backward()
    # float64 reference: loss_n = -sum_c w_c q_c log_softmax(x)_c, q = t (1 - eps) + eps / C
    ls = _log_softmax(a, 1)
    wc = (w if weighted else np.ones(5)).reshape(1, 5, 1)
    per = -(wc * (p * (1 - label_smoothing) + label_smoothing / 5) * ls).sum(1)
    up = 2 * per[:, None] if reduction == "none" else (1 / 12 if reduction == "mean" else 1.0)
    np.testing.assert_allclose(t.grad.numpy(), -(1 - label_smoothing) * wc * ls * up, rtol=1e-10)


def test_cross_entropy_soft_target_gradcheck() -> None:
    x = _f64(3, 4, seed=7)
    t = tp.tensor(np.random.default_rng(8).uniform(0, 1, (3, 4))).requires_grad_(True)
    w = tp.tensor(np.random.default_rng(9).uniform(0.5, 2.0, 4))
    assert autograd.gradcheck(lambda a, b: tp.cross_entropy(a, b, w, "mean", -100, 0.1), (x, t))
    assert autograd.gradgradcheck(lambda a, b: tp.cross_entropy(a, b, None, "sum", -100, 0.0), (x, t))


def test_cross_entropy_soft_target_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    x, t = (
        _f64(6, 4, seed=10),
        tp.tensor(np.random.default_rng(11).uniform(0, 1, (6, 4))).requires_grad_(True),
    )
    tp.cross_entropy(x, t, None, "mean", -100, 0.3).backward()
    xt, tt = (torch.tensor(v.detach().numpy(), requires_grad=True) for v in (x, t))
    torch.nn.functional.cross_entropy(xt, tt, label_smoothing=0.3).backward()
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
