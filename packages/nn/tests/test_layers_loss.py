"""Loss modules (nn/modules/loss.py): defaults, reprs, weights kept as buffers, the deprecated flags,
constructor checks with PyTorch's messages, and each module's value equal to a NumPy formula (the functional
side is tested in test_functional_loss.py); PyTorch's attributes compared where installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from nn_testing import T, check

import tensorplay as tp
from tensorplay import nn

rng = np.random.default_rng(8)

ALL = [
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "KLDivLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiLabelMarginLoss",
    "MultiMarginLoss",
    "HingeEmbeddingLoss",
    "CosineEmbeddingLoss",
    "MarginRankingLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]


@pytest.mark.parametrize("name", ALL)
def test_defaults_and_repr(name):
    m = getattr(nn, name)()
    assert m.reduction == "mean"
    want = (
        f"{name}()"
        if name != "TripletMarginWithDistanceLoss"
        else f"{name}(\n  (distance_function): PairwiseDistance()\n)"
    )
    assert repr(m) == want
    assert list(m.parameters()) == []


def test_options_are_kept():
    ce = nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.1, reduction="sum")
    assert (ce.ignore_index, ce.label_smoothing, ce.reduction, ce.weight) == (3, 0.1, "sum", None)
    assert nn.HuberLoss(delta=2).delta == 2
    assert nn.SmoothL1Loss(beta=0.5).beta == 0.5
    assert (nn.PoissonNLLLoss().log_input, nn.PoissonNLLLoss().full, nn.PoissonNLLLoss().eps) == (
        True,
        False,
        1e-8,
    )
    assert (nn.GaussianNLLLoss().full, nn.GaussianNLLLoss().eps) == (False, 1e-6)
    t = nn.TripletMarginLoss()
    assert (t.margin, t.p, t.eps, t.swap) == (1.0, 2.0, 1e-6, False)
    assert (nn.MultiMarginLoss().p, nn.MultiMarginLoss().margin) == (1, 1.0)
    assert nn.KLDivLoss().log_target is False


def test_weights_are_buffers():
    w = T([1.0, 2.0, 3.0])
    ce = nn.CrossEntropyLoss(weight=w)
    assert ce.weight is w
    assert list(ce.state_dict()) == ["weight"]
    bce = nn.BCEWithLogitsLoss(pos_weight=T([2.0]))
    assert set(bce.state_dict()) == {"pos_weight"}
    assert [n for n, _ in nn.MultiMarginLoss(weight=w).named_buffers()] == ["weight"]


def test_legacy_flags():
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert nn.NLLLoss(reduce=False).reduction == "none"


def test_constructor_errors():
    with pytest.raises(TypeError, match="delta must be a float or int"):
        nn.HuberLoss(delta="1")
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(
        ValueError, match="MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead"
    ):
        nn.MultiMarginLoss(weight=T(np.ones((2, 2))))
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got 0"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(
        ValueError, match="TripletMarginWithDistanceLoss: expected margin to be greater than 0"
    ):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)


def log_softmax(x):
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def test_forward_values():
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    cls = np.array([2, 0, 1, 1])
    w = np.array([0.5, 1.0, 2.0])
    lsm = log_softmax(x)
    per = -lsm[np.arange(4), cls] * w[cls]
    check(nn.CrossEntropyLoss(weight=T(w))(T(x), tp.tensor(cls.tolist())), per.sum() / w[cls].sum())
    check(nn.NLLLoss(reduction="sum")(T(lsm), tp.tensor(cls.tolist())), (-lsm[np.arange(4), cls]).sum())
    check(nn.MSELoss(reduction="none")(T(x), T(y)), (x - y) ** 2)
    check(nn.L1Loss(reduction="sum")(T(x), T(y)), np.abs(x - y).sum())
    p = 1 / (1 + np.exp(-x))
    t01 = (y > 0).astype(float)
    check(nn.BCELoss()(T(p), T(t01)), -(t01 * np.log(p) + (1 - t01) * np.log(1 - p)).mean())
    pw = np.array([1.0, 2.0, 3.0])
    check(
        nn.BCEWithLogitsLoss(pos_weight=T(pw))(T(x), T(t01)),
        -(pw * t01 * np.log(p) + (1 - t01) * np.log(1 - p)).mean(),
    )
    check(nn.GaussianNLLLoss(reduction="sum")(T(x), T(y), 1.0), (0.5 * (x - y) ** 2).sum())
    check(nn.PoissonNLLLoss()(T(x), T(np.abs(y))), (np.exp(x) - np.abs(y) * x).mean())
    sgn = np.sign(y)
    check(nn.SoftMarginLoss()(T(x), T(sgn)), np.log1p(np.exp(-sgn * x)).mean())
    check(
        nn.MarginRankingLoss(0.5)(T(x[:, 0]), T(y[:, 0]), T(sgn[:, 0])),
        np.maximum(0, -sgn[:, 0] * (x[:, 0] - y[:, 0]) + 0.5).mean(),
    )


def test_triplet_with_distance_uses_its_module():
    a, p, n = (T(rng.normal(size=(3, 4))) for _ in range(3))
    check(nn.TripletMarginWithDistanceLoss()(a, p, n), nn.TripletMarginLoss()(a, p, n).tolist())
    cos = nn.CosineSimilarity(dim=1)
    m = nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: 1.0 - cos(u, v), margin=0.3)
    d = lambda u, v: 1 - (u * v).sum(1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)  # noqa: E731
    an, pn, nn_ = (np.asarray(t.tolist()) for t in (a, p, n))
    check(m(a, p, n), np.maximum(0, 0.3 + d(an, pn) - d(an, nn_)).mean())


def test_attributes_match_torch():
    torch = pytest.importorskip("torch")
    for name in ALL:
        ours, theirs = getattr(nn, name)(), getattr(torch.nn, name)()
        for attr in (
            "reduction",
            "ignore_index",
            "label_smoothing",
            "margin",
            "p",
            "eps",
            "swap",
            "beta",
            "delta",
            "log_input",
            "full",
            "log_target",
        ):
            assert getattr(ours, attr, None) == getattr(theirs, attr, None), (name, attr)
        assert repr(ours) == repr(theirs)
