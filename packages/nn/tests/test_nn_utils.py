"""Tests of nn.utils: gradient clipping by norm and by value, and flat parameter vectors, against NumPy
float64 references (packages/nn/src/tensorplay_nn/nn/utils)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import utils


def np64(t: tp.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def params_with_grads(*grads: list | np.ndarray) -> list[nn.Parameter]:
    out = []
    for g in grads:
        g = np.asarray(g, dtype=np.float32)
        p = nn.Parameter(tp.zeros(*g.shape))
        p.grad = tp.from_numpy(g.copy())
        out.append(p)
    return out


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_numpy(norm_type: float, max_norm: float) -> None:
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5), rng.standard_normal(())]
    ps = params_with_grads(*grads)
    ps.append(nn.Parameter(tp.zeros(2)))  # no grad: skipped
    flat = np.concatenate([np.asarray(g, np.float32).astype(np.float64).ravel() for g in grads])
    ref_total = (
        np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    )
    total = utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
    assert total.dim() == 0
    assert total.item() == pytest.approx(ref_total, rel=1e-5)
    coef = min(1.0, max_norm / (ref_total + 1e-6))
    for p, g in zip(ps, grads, strict=False):
        np.testing.assert_allclose(np64(p.grad), np.asarray(g, np.float32) * coef, rtol=1e-5, atol=1e-7)
    assert ps[-1].grad is None


def test_clip_grad_norm_single_tensor_generator_and_empty() -> None:
    (p,) = params_with_grads([3.0, 4.0])
    assert utils.clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(np64(p.grad), [0.6, 0.8], rtol=1e-5)
    m = nn.Linear(2, 1)
    m(tp.ones(1, 2)).sum().backward()
    assert utils.clip_grad_norm_(m.parameters(), 10.0).item() == pytest.approx(math.sqrt(3), rel=1e-5)
    assert utils.clip_grad_norm_([], 1.0).item() == 0.0
    assert utils.clip_grad_norm_([nn.Parameter(tp.zeros(1))], 1.0).item() == 0.0


def test_clip_grad_norm_foreach_gives_the_same_result() -> None:
    a = params_with_grads([1.0, 2.0], [[3.0]])
    b = params_with_grads([1.0, 2.0], [[3.0]])
    ta = utils.clip_grad_norm_(a, 1.0, foreach=True)
    tb = utils.clip_grad_norm_(b, 1.0, foreach=False)
    assert ta.item() == tb.item()
    for x, y in zip(a, b, strict=True):
        assert x.grad.tolist() == y.grad.tolist()


def test_clip_grad_norm_nonfinite() -> None:
    ps = params_with_grads([1.0, math.inf])
    with pytest.raises(
        RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"
    ):
        utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    total = utils.clip_grad_norm_(ps, 1.0)  # scaled by the infinite norm: PyTorch's behaviour
    assert math.isinf(total.item())
    assert ps[0].grad.tolist()[0] == 0.0


def test_get_total_norm_and_clip_grads_with_norm() -> None:
    ps = params_with_grads([3.0], [4.0])
    total = utils.get_total_norm([p.grad for p in ps])
    assert total.item() == pytest.approx(5.0)
    utils.clip_grads_with_norm_(ps, 2.5, total)
    assert [p.grad.item() for p in ps] == pytest.approx([1.5, 2.0], rel=1e-5)


def test_clip_grad_value() -> None:
    ps = params_with_grads([-2.0, 0.5, 3.0], [[0.1, -0.9]])
    assert utils.clip_grad_value_(ps, 0.8) is None
    assert ps[0].grad.tolist() == pytest.approx([-0.8, 0.5, 0.8])
    assert ps[1].grad.tolist() == [pytest.approx([0.1, -0.8])]
    (single,) = params_with_grads([5.0])
    utils.clip_grad_value_(single, 1)
    assert single.grad.tolist() == [1.0]


def test_parameters_to_vector_and_back() -> None:
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = utils.parameters_to_vector(m.parameters())
    ref = np.concatenate([np64(p).ravel() for p in m.parameters()])
    np.testing.assert_array_equal(np64(vec), ref)
    assert vec.requires_grad  # differentiable: a loss on the vector reaches the parameters
    vec.sum().backward()
    assert all(np.all(np64(p.grad) == 1) for p in m.parameters())
    new = tp.arange(float(vec.numel()))
    weight = m[0].weight
    utils.vector_to_parameters(new, m.parameters())
    assert m[0].weight is weight  # copied in place
    np.testing.assert_array_equal(np64(utils.parameters_to_vector(m.parameters())), np.arange(vec.numel()))
    np.testing.assert_array_equal(np64(m[0].bias), [6.0, 7.0])


def test_vector_to_parameters_errors() -> None:
    m = nn.Linear(2, 1)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        utils.vector_to_parameters([1.0, 2.0, 3.0], m.parameters())
    with pytest.raises(RuntimeError, match="vec must be 1-D with at least 3 elements"):
        utils.vector_to_parameters(tp.zeros(2), m.parameters())
    with pytest.raises(RuntimeError, match="expected a non-empty iterable"):
        utils.parameters_to_vector([])
