"""nn.functional distances (nn/functional/distance.py): pairwise_distance, cosine_similarity, pdist, against
float64 NumPy formulas written here, with broadcasting, size-0/1 dims, p = 0 / 1 / 2 / 3 / inf, gradients by
gradcheck and PyTorch where installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import T, check

import tensorplay as tp
import tensorplay.nn.functional as F
from tensorplay.autograd import gradcheck

rng = np.random.default_rng(4)


def pnorm(v, p, axis=-1, keepdims=False):
    v = np.abs(v)
    if p == math.inf:
        return v.max(axis, keepdims=keepdims)
    if p == 0:
        return (v != 0).sum(axis, keepdims=keepdims).astype(float)
    return (v**p).sum(axis, keepdims=keepdims) ** (1 / p)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, math.inf])
def test_pairwise_distance(p):
    a, b = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    check(F.pairwise_distance(T(a), T(b), p=p), pnorm(a - b + 1e-6, p))
    check(F.pairwise_distance(T(a), T(b[0]), p=p, keepdim=True), pnorm(a - b[0] + 1e-6, p, keepdims=True))


def test_pairwise_distance_edges():
    a = rng.normal(size=5)
    check(F.pairwise_distance(T(a), T(a), eps=0.0), 0.0)
    check(F.pairwise_distance(T(np.zeros((0, 3))), T(np.zeros((0, 3)))), np.zeros(0))
    assert gradcheck(
        lambda x, y: F.pairwise_distance(x, y),
        (T(rng.normal(size=(3, 4)), True), T(rng.normal(size=4), True)),
    )


def test_cosine_similarity():
    a, b = rng.normal(size=(3, 4, 2)), rng.normal(size=(1, 4, 2))
    want = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    check(F.cosine_similarity(T(a), T(b)), want)
    check(
        F.cosine_similarity(T(a), T(b), dim=-1),
        (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)),
    )
    # a zero vector: its norm is clamped at eps, so the similarity is 0, not nan
    check(F.cosine_similarity(T(np.zeros((1, 3))), T(np.ones((1, 3)))), np.zeros(1))
    # integer inputs are promoted; the result is floating point
    got = F.cosine_similarity(tp.tensor([[1, 0]]), tp.tensor([[1.0, 1.0]]))
    check(got, [1 / math.sqrt(2)], tol=1e-6)
    assert gradcheck(
        lambda x, y: F.cosine_similarity(x, y, dim=0),
        (T(rng.normal(size=(4, 2)), True), T(rng.normal(size=(4, 2)), True)),
    )


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 2.5, math.inf])
def test_pdist(p):
    x = rng.normal(size=(5, 3))
    want = [pnorm(x[i] - x[j], p) for i in range(5) for j in range(i + 1, 5)]
    check(F.pdist(T(x), p), want)


def test_pdist_edges_and_errors():
    check(F.pdist(T(np.zeros((1, 3)))), np.zeros(0))
    check(F.pdist(T(np.zeros((4, 0)))), np.zeros(6))
    assert gradcheck(lambda x: F.pdist(x), (T(rng.normal(size=(4, 3)), True),))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(T(np.zeros((2, 2, 2))))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(T(np.zeros((2, 2))), -1)


def test_distances_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    a, b = rng.normal(size=(6, 5)), rng.normal(size=(6, 5))
    check(
        F.pairwise_distance(T(a), T(b), 3.0),
        tf.pairwise_distance(torch.tensor(a), torch.tensor(b), 3.0).numpy(),
    )
    check(F.cosine_similarity(T(a), T(b)), tf.cosine_similarity(torch.tensor(a), torch.tensor(b)).numpy())
    check(F.pdist(T(a), 1.5), tf.pdist(torch.tensor(a), 1.5).numpy())
