"""Tests of nn.init and of the layers' default initialisations: distributions, bounds, shapes, errors, and
draws equal to PyTorch's for the same seed (recorded values, and live against torch when it is installed)
(packages/nn/src/tensorplay_nn/nn/init.py)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import init


def np64(t: tp.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


# Recorded from PyTorch 2.13: torch.manual_seed(0) then the same constructor / init call.
RECORDED_LINEAR_3_2 = (
    [[-0.004322517663240433, 0.3097158372402191, -0.4751853346824646],
     [-0.4248946011066437, -0.2223689705133438, 0.15482072532176971]],
    [-0.011439144611358643, 0.45777493715286255],
)  # fmt: skip
RECORDED_EMBEDDING_3_2_PAD1 = [[1.5409960746765137, -0.293428897857666], [0.0, 0.0],
                               [-1.0845223665237427, -1.3985954523086548]]  # fmt: skip
RECORDED_TRUNC_NORMAL_2_3 = [[0.7704980373382568, -0.146714448928833, -1.0893946886062622],
                             [0.28421562910079956, -0.5422611832618713, -0.6992977261543274]]  # fmt: skip
RECORDED_ORTHOGONAL_3_2 = [[0.5349525213241577, -0.1699300855398178],
                           [-0.7563608288764954, 0.340183824300766],
                           [-0.37648898363113403, -0.9248777031898499]]  # fmt: skip


def test_linear_default_init_equals_recorded_pytorch_draws() -> None:
    tp.manual_seed(0)
    m = nn.Linear(3, 2)
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.float32(RECORDED_LINEAR_3_2[0]))
    np.testing.assert_array_equal(m.bias.detach().numpy(), np.float32(RECORDED_LINEAR_3_2[1]))


def test_embedding_default_init_equals_recorded_pytorch_draws() -> None:
    tp.manual_seed(0)
    m = nn.Embedding(3, 2, padding_idx=1)
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.float32(RECORDED_EMBEDDING_3_2_PAD1))


def test_trunc_normal_and_orthogonal_equal_recorded_pytorch_draws() -> None:
    tp.manual_seed(0)
    w = init.trunc_normal_(tp.empty(2, 3), std=0.5)
    np.testing.assert_allclose(w.numpy(), np.float32(RECORDED_TRUNC_NORMAL_2_3), rtol=1e-6, atol=1e-7)
    tp.manual_seed(0)
    q = init.orthogonal_(tp.empty(3, 2))
    np.testing.assert_allclose(q.numpy(), np.float32(RECORDED_ORTHOGONAL_3_2), rtol=1e-5, atol=1e-6)


def _torch_pair(torch: object, name: str) -> tuple:
    """(ours, theirs) for one init call or layer construction under seed 0."""
    calls = {
        "uniform_": lambda lib, t: lib.nn.init.uniform_(t, -0.3, 0.7),
        "normal_": lambda lib, t: lib.nn.init.normal_(t, 0.5, 2.0),
        "xavier_uniform_": lambda lib, t: lib.nn.init.xavier_uniform_(t, gain=2.0),
        "xavier_normal_": lambda lib, t: lib.nn.init.xavier_normal_(t),
        "kaiming_uniform_": lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=0.1, mode="fan_out"),
        "kaiming_normal_": lambda lib, t: lib.nn.init.kaiming_normal_(t, nonlinearity="relu"),
        "trunc_normal_": lambda lib, t: lib.nn.init.trunc_normal_(t, mean=0.1, std=0.02, a=-0.01, b=0.2),
        # little mass in [a, b]: the uniform-proposal branch
        "trunc_normal_tail": lambda lib, t: lib.nn.init.trunc_normal_(t, a=1.5, b=3.0),
        "orthogonal_": lambda lib, t: lib.nn.init.orthogonal_(t, gain=1.5),
        "sparse_": lambda lib, t: lib.nn.init.sparse_(t.reshape(4, -1), 0.5),
    }
    tp.manual_seed(0)
    ours = calls[name](tp, tp.empty(4, 3, 2))
    torch.manual_seed(0)
    theirs = calls[name](torch, torch.empty(4, 3, 2))
    return ours, theirs


@pytest.mark.parametrize(
    "name",
    ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
     "trunc_normal_", "trunc_normal_tail", "orthogonal_", "sparse_"],
)  # fmt: skip
def test_init_draws_equal_live_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _torch_pair(torch, name)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "make",
    [lambda nn: nn.Linear(5, 3), lambda nn: nn.Bilinear(2, 3, 4), lambda nn: nn.Embedding(6, 2),
     lambda nn: nn.EmbeddingBag(6, 2, padding_idx=0), lambda nn: nn.LayerNorm(3),
     lambda nn: nn.GroupNorm(2, 4),
     lambda nn: nn.BatchNorm1d(3), lambda nn: nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))],
)  # fmt: skip
def test_layer_default_init_equals_live_pytorch(make: object) -> None:
    torch = pytest.importorskip("torch")
    tp.manual_seed(0)
    ours = make(nn).state_dict()
    torch.manual_seed(0)
    theirs = make(torch.nn).state_dict()
    assert list(ours) == list(theirs)
    for k in ours:
        np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy(), err_msg=k)


def test_calculate_gain() -> None:
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")


def test_fan_in_fan_out() -> None:
    assert init._calculate_fan_in_and_fan_out(tp.empty(4, 3)) == (3, 4)
    assert init._calculate_fan_in_and_fan_out(tp.empty(8, 2, 3, 5)) == (30, 120)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(tp.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(tp.empty(2, 2), mode="fan_avg")


def test_uniform_bounds_and_distribution_moments() -> None:
    tp.manual_seed(1)
    w = np64(init.uniform_(tp.empty(200, 100), -2.0, 3.0))
    assert w.min() >= -2.0 and w.max() < 3.0
    assert w.mean() == pytest.approx(0.5, abs=0.05) and w.var() == pytest.approx(25 / 12, rel=0.03)
    n = np64(init.normal_(tp.empty(200, 100), 1.0, 0.5))
    assert n.mean() == pytest.approx(1.0, abs=0.02) and n.std() == pytest.approx(0.5, rel=0.03)


def test_xavier_and_kaiming_scales() -> None:
    tp.manual_seed(2)
    fan_in, fan_out = 300, 200
    xu = np64(init.xavier_uniform_(tp.empty(fan_out, fan_in), gain=2.0))
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(xu).max() <= bound and np.abs(xu).max() > 0.95 * bound
    xn = np64(init.xavier_normal_(tp.empty(fan_out, fan_in)))
    assert xn.std() == pytest.approx(math.sqrt(2 / (fan_in + fan_out)), rel=0.03)
    ku = np64(init.kaiming_uniform_(tp.empty(fan_out, fan_in), nonlinearity="relu"))
    assert np.abs(ku).max() <= math.sqrt(6 / fan_in)
    kn = np64(init.kaiming_normal_(tp.empty(fan_out, fan_in), mode="fan_out", nonlinearity="relu"))
    assert kn.std() == pytest.approx(math.sqrt(2 / fan_out), rel=0.03)


def test_kaiming_on_zero_elements_warns_and_does_nothing() -> None:
    t = tp.empty(0, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(t) is t


def test_trunc_normal_stays_in_bounds_and_warns_far_mean() -> None:
    tp.manual_seed(3)
    w = np64(init.trunc_normal_(tp.empty(10000), mean=0.0, std=1.0, a=-0.5, b=1.0))
    assert w.min() >= -0.5 and w.max() <= 1.0
    # the tail branch (2% of the mass in [1.5, 3]): in bounds, and the truncated normal's mean
    t = np64(init.trunc_normal_(tp.empty(20000), a=1.5, b=3.0))
    assert t.min() >= 1.5 and t.max() <= 3.0
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    assert t.mean() == pytest.approx((phi(1.5) - phi(3.0)) / (cdf(3.0) - cdf(1.5)), abs=0.01)
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
        init.trunc_normal_(tp.empty(3), mean=10.0, std=1.0)


def test_constant_ones_zeros_eye_dirac() -> None:
    assert init.constant_(tp.empty(2, 2), 1.5).tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert init.ones_(tp.empty(3)).tolist() == [1.0, 1.0, 1.0]
    assert init.zeros_(tp.empty(2)).tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(np64(init.eye_(tp.empty(3, 4))), np.eye(3, 4))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(tp.empty(2, 2, 2))
    w = np64(init.dirac_(tp.empty(4, 2, 3, 3), groups=2))
    ref = np.zeros((4, 2, 3, 3))
    for g in range(2):
        for d in range(2):
            ref[g * 2 + d, d, 1, 1] = 1
    np.testing.assert_array_equal(w, ref)
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(tp.empty(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(tp.empty(3, 2, 3), groups=2)


def test_init_on_a_parameter_is_not_recorded_by_autograd() -> None:
    p = nn.Parameter(tp.empty(3, 4))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_, init.trunc_normal_,
               init.orthogonal_, init.ones_, init.zeros_, init.eye_):  # fmt: skip
        out = fn(p)
        assert out is p and p.is_leaf and p.grad_fn is None


def test_orthogonal_is_orthogonal_in_both_orientations() -> None:
    for shape in [(3, 5), (5, 3), (4, 2, 2)]:
        w = np64(init.orthogonal_(tp.empty(*shape), gain=2.0)).reshape(shape[0], -1)
        gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(gram, 4.0 * np.eye(min(w.shape)), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(tp.empty(3))
    assert init.orthogonal_(tp.empty(0, 3)).shape == (0, 3)


def test_sparse_zeroes_the_asked_fraction_of_every_column() -> None:
    tp.manual_seed(4)
    w = np64(init.sparse_(tp.empty(10, 6), sparsity=0.3, std=0.1))
    assert ((w == 0).sum(axis=0) == 3).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(tp.empty(2, 2, 2), 0.5)


def test_no_warnings_from_default_layer_init() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Linear(4, 4), nn.Embedding(3, 3), nn.LayerNorm(2)
