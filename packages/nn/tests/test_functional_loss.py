"""nn.functional losses (nn/functional/loss.py, loss_margin.py) against float64 NumPy formulas written here.

The P10 loss kernels have their own tests (packages/p10/tests/test_loss.py); here each F function is checked
for what it adds: reductions, the deprecated size_average/reduce flags, argument checks with PyTorch's
messages, the composed losses (Poisson/Gaussian NLL, the margin losses, weighted MSE/L1/Huber) forward and by
gradcheck, and, where PyTorch is installed, against torch.nn.functional.
"""

from __future__ import annotations

import math
import warnings

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


rng = np.random.default_rng(0)
REDUCTIONS = ["none", "mean", "sum"]


def I(a):  # noqa: E743  (an integer tensor)
    return tp.tensor(np.asarray(a, dtype=np.int64).tolist(), dtype=tp.int64)


def reduce_ref(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


# ---- regression losses ---------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_l1_smooth_l1_huber(reduction):
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)) * 2
    d = x - y
    check(F.mse_loss(T(x), T(y), reduction=reduction), reduce_ref(d**2, reduction))
    check(F.l1_loss(T(x), T(y), reduction=reduction), reduce_ref(np.abs(d), reduction))
    beta = 0.7
    sl1 = np.where(np.abs(d) < beta, 0.5 * d**2 / beta, np.abs(d) - 0.5 * beta)
    check(F.smooth_l1_loss(T(x), T(y), reduction=reduction, beta=beta), reduce_ref(sl1, reduction))
    delta = 1.3
    hub = np.where(np.abs(d) < delta, 0.5 * d**2, delta * (np.abs(d) - 0.5 * delta))
    check(F.huber_loss(T(x), T(y), reduction=reduction, delta=delta), reduce_ref(hub, reduction))


def test_smooth_l1_beta_zero_is_l1():
    x, y = rng.normal(size=5), rng.normal(size=5)
    check(F.smooth_l1_loss(T(x), T(y), beta=0.0), np.abs(x - y).mean())


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_regression_losses(reduction):
    x, y, w = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.uniform(0.1, 2, size=(2, 3))
    d = x - y

    def by_weight(e):  # MSE and L1: 'mean' divides by the total weight
        return {"none": e * w, "sum": (e * w).sum(), "mean": (e * w).sum() / w.sum()}[reduction]

    check(F.mse_loss(T(x), T(y), reduction=reduction, weight=T(w)), by_weight(d**2))
    check(F.l1_loss(T(x), T(y), reduction=reduction, weight=T(w)), by_weight(np.abs(d)))
    hub = np.where(np.abs(d) < 1.0, 0.5 * d**2, np.abs(d) - 0.5)
    check(F.huber_loss(T(x), T(y), reduction=reduction, weight=T(w)), reduce_ref(hub * w, reduction))
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(T(x), T(y), weight=T(w[0]))


def test_regression_broadcast_warns():
    x, y = rng.normal(size=(3, 1)), rng.normal(size=3)
    with pytest.warns(UserWarning, match="Using a target size .* different to the input size"):
        got = F.mse_loss(T(x), T(y), reduction="none")
    check(got, (x - y) ** 2)


def test_regression_gradcheck():
    x, y = T(rng.normal(size=(2, 3)), True), T(rng.normal(size=(2, 3)), True)
    w = T(rng.uniform(0.5, 1.5, size=(2, 3)), True)
    assert gradcheck(lambda a, b, c: F.mse_loss(a, b, weight=c), (x, y, w))
    assert gradcheck(lambda a, b, c: F.l1_loss(a, b, weight=c, reduction="sum"), (x, y, w))
    assert gradcheck(lambda a, b, c: F.huber_loss(a, b, weight=c, delta=0.5), (x, y, w))


# ---- reductions and the deprecated flags ---------------------------------------------------------------


def test_bad_reduction_raises():
    x = T([1.0, 2.0])
    for fn in (F.mse_loss, F.l1_loss, F.soft_margin_loss, F.poisson_nll_loss):
        with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
            fn(x, x, reduction="bogus")
    with pytest.raises(ValueError, match="bogus is not valid"):
        F.gaussian_nll_loss(x, x, x, reduction="bogus")


@pytest.mark.parametrize(
    ("size_average", "reduce", "want"),
    [(None, False, "none"), (False, None, "sum"), (True, True, "mean"), (False, False, "none")],
)
def test_legacy_flags_pick_the_reduction(size_average, reduce, want):
    x, y = rng.normal(size=4), rng.normal(size=4)
    with pytest.warns(UserWarning, match=f"please use reduction='{want}' instead"):
        got = F.mse_loss(T(x), T(y), size_average=size_average, reduce=reduce, reduction="mean")
    check(got, reduce_ref((x - y) ** 2, want))


# ---- classification losses -----------------------------------------------------------------------------


def log_softmax_ref(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_and_nll(reduction):
    x, y = rng.normal(size=(5, 4)), np.array([0, 3, 1, -100, 2])
    w = rng.uniform(0.5, 2, size=4)
    lsm = log_softmax_ref(x, 1)
    keep = y != -100
    ys = np.where(keep, y, 0)
    per = -lsm[np.arange(5), ys] * w[ys] * keep
    want = {"none": per, "sum": per.sum(), "mean": per.sum() / (w[ys] * keep).sum()}[reduction]
    check(F.cross_entropy(T(x), I(y), weight=T(w), reduction=reduction), want)
    check(F.nll_loss(T(lsm), I(y), weight=T(w), reduction=reduction), want)


def test_cross_entropy_probabilities_and_label_smoothing():
    x = rng.normal(size=(3, 5))
    p = rng.uniform(size=(3, 5))
    p /= p.sum(1, keepdims=True)
    lsm = log_softmax_ref(x, 1)
    check(F.cross_entropy(T(x), T(p)), (-(p * lsm).sum(1)).mean())
    y, eps = np.array([1, 0, 4]), 0.2
    q = np.full((3, 5), eps / 5)
    q[np.arange(3), y] += 1 - eps
    check(F.cross_entropy(T(x), I(y), label_smoothing=eps), (-(q * lsm).sum(1)).mean())


def test_binary_cross_entropy_checks_and_values():
    p, y = rng.uniform(0.05, 0.95, size=(2, 3)), rng.integers(0, 2, size=(2, 3)).astype(float)
    w = rng.uniform(0.5, 2, size=3)  # broadcast against the target, as PyTorch expands it
    bce = -w * (y * np.log(p) + (1 - y) * np.log(1 - p))
    check(F.binary_cross_entropy(T(p), T(y), weight=T(w)), bce.mean())
    with pytest.raises(ValueError, match=r"Using a target size .* different to the input size"):
        F.binary_cross_entropy(T(p), T(y[0]))
    x, pw = rng.normal(size=(2, 3)), rng.uniform(0.5, 3, size=3)
    s = 1 / (1 + np.exp(-x))
    bcel = -(pw * y * np.log(s) + (1 - y) * np.log(1 - s))
    check(F.binary_cross_entropy_with_logits(T(x), T(y), pos_weight=T(pw), reduction="none"), bcel)
    with pytest.raises(ValueError, match=r"Target size .* must be the same as input size"):
        F.binary_cross_entropy_with_logits(T(x), T(y[:, :2]))


def test_kl_div_reductions():
    x = log_softmax_ref(rng.normal(size=(4, 3)), 1)
    t = np.exp(log_softmax_ref(rng.normal(size=(4, 3)), 1))
    pointwise = t * (np.log(t) - x)
    check(F.kl_div(T(x), T(t), reduction="batchmean"), pointwise.sum() / 4)
    check(F.kl_div(T(x), T(np.log(t)), reduction="sum", log_target=True), pointwise.sum())
    with pytest.warns(UserWarning, match="'mean' divides the total loss by both the batch size"):
        check(F.kl_div(T(x), T(t)), pointwise.mean())
    with pytest.raises(ValueError, match="batch is not a valid value for reduction"):
        F.kl_div(T(x), T(t), reduction="batch")


# ---- Poisson and Gaussian NLL --------------------------------------------------------------------------


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss(log_input, full):
    x = rng.uniform(0.1, 2, size=(3, 4))
    y = rng.integers(0, 5, size=(3, 4)).astype(float)
    loss = np.exp(x) - y * x if log_input else x - y * np.log(x + 1e-8)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y)
        loss = loss + np.where(y > 1, stirling, 0.0)
    check(F.poisson_nll_loss(T(x), T(y), log_input=log_input, full=full, reduction="none"), loss)
    check(F.poisson_nll_loss(T(x), T(y), log_input=log_input, full=full), loss.mean())
    assert gradcheck(lambda a: F.poisson_nll_loss(a, T(y), log_input=log_input, full=full), (T(x, True),))


def test_gaussian_nll_loss_shapes_and_values():
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    v = rng.uniform(0.2, 2, size=(4, 3))

    def ref(var, full=False):
        var = np.maximum(var, 1e-6)
        loss = 0.5 * (np.log(var) + (x - y) ** 2 / var)
        return loss + (0.5 * math.log(2 * math.pi) if full else 0)

    check(F.gaussian_nll_loss(T(x), T(y), T(v), reduction="none"), ref(v))
    check(F.gaussian_nll_loss(T(x), T(y), T(v), full=True), ref(v, True).mean())
    check(F.gaussian_nll_loss(T(x), T(y), T(v[:, 0]), reduction="sum"), ref(v[:, :1]).sum())  # one dim fewer
    check(F.gaussian_nll_loss(T(x), T(y), T(v[:, :1])), ref(v[:, :1]).mean())  # size 1 in one dim
    check(F.gaussian_nll_loss(T(x), T(y), 0.5), ref(np.full_like(x, 0.5)).mean())  # a float
    check(
        F.gaussian_nll_loss(T(x), T(y), T(np.zeros((4, 3)))), ref(np.zeros((4, 3))).mean()
    )  # clamped at eps
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(T(x), T(y), T(v[:2]))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(T(x), T(y), T(-v))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(T(x), T(y), -1.0)
    assert gradcheck(lambda a, b: F.gaussian_nll_loss(a, T(y), b), (T(x, True), T(v, True)))


# ---- margin and embedding losses -----------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_hinge_soft_margin(reduction):
    a, b = rng.normal(size=6), rng.normal(size=6)
    y = np.array([1.0, -1, 1, -1, 1, -1])
    check(
        F.margin_ranking_loss(T(a), T(b), T(y), margin=0.3, reduction=reduction),
        reduce_ref(np.maximum(0, -y * (a - b) + 0.3), reduction),
    )
    d = np.abs(a)
    check(
        F.hinge_embedding_loss(T(d), T(y), margin=0.8, reduction=reduction),
        reduce_ref(np.where(y == 1, d, np.maximum(0, 0.8 - d)), reduction),
    )
    check(
        F.soft_margin_loss(T(a), T(y), reduction=reduction), reduce_ref(np.log1p(np.exp(-y * a)), reduction)
    )


def test_margin_ranking_dim_mismatch_message():
    with pytest.raises(
        RuntimeError, match="margin_ranking_loss : All input tensors should have same dimension"
    ):
        F.margin_ranking_loss(T(np.zeros((2, 1))), T(np.zeros(2)), T(np.ones(2)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss(reduction):
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    y = np.array([1, -1, 1, -1, -1])
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    want = np.where(y == 1, 1 - cos, np.maximum(0, cos - 0.1))
    check(
        F.cosine_embedding_loss(T(a), T(b), I(y), margin=0.1, reduction=reduction),
        reduce_ref(want, reduction),
    )
    check(F.cosine_embedding_loss(T(a[0]), T(b[0]), I(1), reduction=reduction), 1 - cos[0])  # one pair
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        F.cosine_embedding_loss(T(a[0]), T(b[0]), I(y))
    assert gradcheck(lambda p, q: F.cosine_embedding_loss(p, q, I(y), margin=0.1), (T(a, True), T(b, True)))


def test_multilabel_soft_margin_loss():
    x, y = rng.normal(size=(3, 4)), rng.integers(0, 2, size=(3, 4)).astype(float)
    w = rng.uniform(0.5, 2, size=4)
    logsig = lambda v: -np.log1p(np.exp(-v))  # noqa: E731
    per = (-(y * logsig(x) + (1 - y) * logsig(-x)) * w).mean(1)
    check(F.multilabel_soft_margin_loss(T(x), T(y), weight=T(w), reduction="none"), per)
    check(F.multilabel_soft_margin_loss(T(x), T(y), weight=T(w)), per.mean())
    assert gradcheck(lambda a: F.multilabel_soft_margin_loss(a, T(y), weight=T(w)), (T(x, True),))


def multi_margin_ref(x, y, p, margin, w):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                z = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
                out[i] += z * (w[y[i]] if w is not None else 1.0)
    return out / c


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(p, weighted):
    x, y = rng.normal(size=(5, 4)), np.array([0, 3, 2, 2, 1])
    w = rng.uniform(0.5, 2, size=4) if weighted else None
    want = multi_margin_ref(x, y, p, 0.7, w)
    wt = T(w) if weighted else None
    check(F.multi_margin_loss(T(x), I(y), p=p, margin=0.7, weight=wt, reduction="none"), want)
    check(F.multi_margin_loss(T(x), I(y), p=p, margin=0.7, weight=wt), want.mean())
    check(
        F.multi_margin_loss(T(x[1]), I(3), p=p, margin=0.7, weight=wt, reduction="none"), want[1]
    )  # 0-dim out
    assert gradcheck(lambda a: F.multi_margin_loss(a, I(y), p=p, margin=0.7, weight=wt), (T(x, True),))


def test_multi_margin_loss_errors():
    x = T(rng.normal(size=(2, 3)))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, I([0, 1]), p=3)
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(x, I([0, 1]), weight=T(np.ones((1, 3))))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, I([0, 3]))
    with pytest.raises(RuntimeError, match="inconsistent target size, expected 2 but got"):
        F.multi_margin_loss(x, I([0, 1, 2]))


def multilabel_margin_ref(x, y):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        targets = []
        for v in y[i]:
            if v == -1:
                break
            targets.append(v)
        for j in targets:
            for k in range(c):
                if k not in targets:
                    out[i] += max(0.0, 1 - (x[i, j] - x[i, k]))
    return out / c


def test_multilabel_margin_loss():
    x = rng.normal(size=(4, 5))
    y = np.array([[3, 0, -1, 1, 2], [-1, 2, 2, 2, 2], [0, 1, 2, 3, 4], [4, 4, -1, 0, 0]])
    want = multilabel_margin_ref(x, y)
    check(F.multilabel_margin_loss(T(x), I(y), reduction="none"), want)
    check(F.multilabel_margin_loss(T(x), I(y), reduction="sum"), want.sum())
    check(F.multilabel_margin_loss(T(x[0]), I(y[0]), reduction="none"), want[0])  # one sample: 0-dim
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, I(y)), (T(x, True),))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(T(x), I(y[:, :3]))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multilabel_margin_loss(T(x), I(np.full((4, 5), 5)))


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_triplet_margin_loss(swap, p):
    a, pos, neg = (rng.normal(size=(4, 3)) for _ in range(3))
    eps = 1e-6

    def dist(u, v):
        return (np.abs(u - v + eps) ** p).sum(-1) ** (1 / p)

    d_neg = dist(a, neg)
    if swap:
        d_neg = np.minimum(d_neg, dist(pos, neg))
    want = np.maximum(0, 0.5 + dist(a, pos) - d_neg)
    check(F.triplet_margin_loss(T(a), T(pos), T(neg), margin=0.5, p=p, swap=swap, reduction="none"), want)
    fn = lambda u, v, w: F.triplet_margin_loss(u, v, w, margin=0.5, p=p, swap=swap)  # noqa: E731
    assert gradcheck(fn, (T(a, True), T(pos, True), T(neg, True)))


def test_triplet_margin_with_distance_loss():
    a, pos, neg = (rng.normal(size=(4, 3)) for _ in range(3))

    def l1(u, v):
        return (u - v).abs().sum(-1)

    d = lambda u, v: np.abs(u - v).sum(-1)  # noqa: E731
    want = np.maximum(0, 1.0 + d(a, pos) - np.minimum(d(a, neg), d(pos, neg)))
    got = F.triplet_margin_with_distance_loss(
        T(a), T(pos), T(neg), distance_function=l1, swap=True, reduction="none"
    )
    check(got, want)
    default = F.triplet_margin_with_distance_loss(T(a), T(pos), T(neg))
    check(default, F.triplet_margin_loss(T(a), T(pos), T(neg)).tolist())
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_with_distance_loss(T(a), T(pos), T(neg), margin=0)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 1D, and negative 2D inputs"):
        F.triplet_margin_loss(T(a), T(pos[0]), T(neg))


def test_empty_batch_reductions():
    x = T(np.zeros((0, 3)))
    check(F.soft_margin_loss(x, x, reduction="sum"), 0.0)
    check(F.multi_margin_loss(x, I(np.zeros(0)), reduction="none"), np.zeros(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(float(F.poisson_nll_loss(x, x)))


# ---- PyTorch, where installed --------------------------------------------------------------------------


def test_losses_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    v = rng.uniform(0.1, 2, size=(5, 4))
    cls = np.array([0, 3, 1, 2, 2])
    lab = np.sign(rng.normal(size=5))
    ml = np.array([[3, 0, -1, 1], [1, -1, 0, 0], [0, 1, 2, 3], [2, -1, 2, 2], [-1, 0, 0, 0]])
    tt = lambda a: torch.tensor(a)  # noqa: E731
    cases = [
        (
            F.poisson_nll_loss(T(x), T(np.abs(y)), full=True),
            tf.poisson_nll_loss(tt(x), tt(np.abs(y)), full=True),
        ),
        (F.gaussian_nll_loss(T(x), T(y), T(v)), tf.gaussian_nll_loss(tt(x), tt(y), tt(v))),
        (F.multi_margin_loss(T(x), I(cls), p=2), tf.multi_margin_loss(tt(x), tt(cls), p=2)),
        (F.multilabel_margin_loss(T(x), I(ml)), tf.multilabel_margin_loss(tt(x), tt(ml))),
        (
            F.multilabel_soft_margin_loss(T(x), T(y > 0)),
            tf.multilabel_soft_margin_loss(tt(x), tt((y > 0) * 1.0)),
        ),
        (F.cosine_embedding_loss(T(x), T(y), T(lab)), tf.cosine_embedding_loss(tt(x), tt(y), tt(lab))),
        (F.soft_margin_loss(T(x), T(np.sign(y))), tf.soft_margin_loss(tt(x), tt(np.sign(y)))),
        (F.hinge_embedding_loss(T(x), T(np.sign(y))), tf.hinge_embedding_loss(tt(x), tt(np.sign(y)))),
        (
            F.triplet_margin_loss(T(x), T(y), T(v), swap=True),
            tf.triplet_margin_loss(tt(x), tt(y), tt(v), swap=True),
        ),
    ]
    for got, want in cases:
        check(got, want.numpy(), tol=1e-9)
