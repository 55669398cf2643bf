"""Gradients and running statistics of BatchNorm1d/2d/3d (nn/modules/batchnorm.py over P10's `batch_norm`
Composite, packages/p10/csrc/kernels/norm.cpp), step by step through training and evaluation, against a
float64 NumPy recomputation of the batch-norm maths and against PyTorch when installed.

The forward shapes, repr, state_dict and errors are in test_layers_core.py; this file is about backward and
about what the running statistics carry from one step to the next (Note [Running statistics have no history]
in norm.cpp).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn

EPS = 1e-5
CASES = [  # module class, PyTorch's class name, input shape
    pytest.param(nn.BatchNorm1d, "BatchNorm1d", (8, 3), id="1d-NC"),
    pytest.param(nn.BatchNorm1d, "BatchNorm1d", (4, 3, 5), id="1d-NCL"),
    pytest.param(nn.BatchNorm2d, "BatchNorm2d", (3, 3, 4, 5), id="2d"),
    pytest.param(nn.BatchNorm3d, "BatchNorm3d", (2, 3, 2, 3, 2), id="3d"),
]
# The modes of successive steps: training only, and training then evaluation with the statistics it gathered.
SCHEDULES = {"train": (True, True, True), "train_then_eval": (True, True, False, True, False)}
CONFIGS = [
    {"affine": affine, "track_running_stats": track, "momentum": momentum}
    for affine, track, momentum in itertools.product((True, False), (True, False), (0.1, None))
]


def _cfg_id(cfg: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in cfg.items())


class NumpyBatchNorm:
    """The batch-norm maths in float64: forward, backward for a given output gradient, running statistics."""

    def __init__(self, c: int, affine: bool, track_running_stats: bool, momentum: float | None) -> None:
        self.weight = np.linspace(0.5, 1.5, c) if affine else None
        self.bias = np.linspace(-0.3, 0.4, c) if affine else None
        self.track, self.momentum = track_running_stats, momentum
        self.running_mean, self.running_var, self.batches = np.zeros(c), np.ones(c), 0

    def step(self, x: np.ndarray, dy: np.ndarray, training: bool) -> dict[str, np.ndarray]:
        """One forward + backward of `sum(y * dy)`; updates the running statistics as a training step does."""
        axes = tuple(i for i in range(x.ndim) if i != 1)
        cs = [1, -1] + [1] * (x.ndim - 2)
        n = x.size // x.shape[1]
        batch_stats = training or not self.track
        if batch_stats:
            mean, var = x.mean(axes), x.var(axes)  # biased: the normalisation divides by n
        else:
            mean, var = self.running_mean, self.running_var
        rstd = 1.0 / np.sqrt(var + EPS)
        xhat = (x - mean.reshape(cs)) * rstd.reshape(cs)
        w = self.weight if self.weight is not None else np.ones(x.shape[1])
        b = self.bias if self.bias is not None else np.zeros(x.shape[1])
        y = xhat * w.reshape(cs) + b.reshape(cs)
        dxhat = dy * w.reshape(cs)
        if batch_stats:  # mean and variance depend on x too
            dx = (rstd.reshape(cs) / n) * (
                n * dxhat - dxhat.sum(axes).reshape(cs) - xhat * (dxhat * xhat).sum(axes).reshape(cs)
            )
        else:  # the running statistics are constants
            dx = dxhat * rstd.reshape(cs)
        out = {"y": y, "dx": dx, "dw": (dy * xhat).sum(axes), "db": dy.sum(axes)}
        if training and self.track:
            self.batches += 1
            f = 1.0 / self.batches if self.momentum is None else self.momentum
            self.running_mean = (1 - f) * self.running_mean + f * mean
            self.running_var = (1 - f) * self.running_var + f * var * n / (n - 1)  # unbiased
        return out


def _ours(cls: type, c: int, ref: NumpyBatchNorm, cfg: dict) -> nn.Module:
    m = cls(c, **cfg)
    if cfg["affine"]:
        with tp.no_grad():
            m.weight.copy_(tp.tensor(ref.weight.astype(np.float32)))
            m.bias.copy_(tp.tensor(ref.bias.astype(np.float32)))
    return m


def _batches(shape: tuple[int, ...], steps: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        # off-centre and wider than N(0, 1), so that the statistics matter
        x = (rng.standard_normal(shape) * 2.0 + 1.5).astype(np.float32)
        yield x, rng.standard_normal(shape).astype(np.float32)


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    scale = max(float(np.abs(want).max()), 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5 * scale, err_msg=what)


@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("cls,_name,shape", CASES)
def test_gradients_and_running_stats_match_float64_numpy(cls, _name, shape, schedule: str, cfg: dict) -> None:
    c = shape[1]
    ref = NumpyBatchNorm(c, **cfg)
    m = _ours(cls, c, ref, cfg)
    modes = SCHEDULES[schedule]
    for step, (training, (x, dy)) in enumerate(zip(modes, _batches(shape, len(modes)), strict=True)):
        m.train(training)
        want = ref.step(x.astype(np.float64), dy.astype(np.float64), training)
        xt = tp.tensor(x, requires_grad=True)
        y = m(xt)
        (y * tp.tensor(dy)).sum().backward()
        at = f"step {step} ({'train' if training else 'eval'})"
        _close(y.detach().numpy(), want["y"], f"y, {at}")
        _close(xt.grad.numpy(), want["dx"], f"input grad, {at}")
        if cfg["affine"]:
            _close(m.weight.grad.numpy(), want["dw"], f"weight grad, {at}")
            _close(m.bias.grad.numpy(), want["db"], f"bias grad, {at}")
            m.weight.grad = m.bias.grad = None
        if cfg["track_running_stats"]:
            _close(m.running_mean.numpy(), ref.running_mean, f"running_mean, {at}")
            _close(m.running_var.numpy(), ref.running_var, f"running_var, {at}")
            assert int(m.num_batches_tracked.item()) == ref.batches
            # state, never part of a graph
            assert not m.running_mean.requires_grad and not m.running_var.requires_grad


@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
@pytest.mark.parametrize("cls,name,shape", CASES)
def test_gradients_and_running_stats_match_pytorch(cls, name: str, shape, cfg: dict) -> None:
    torch = pytest.importorskip("torch")
    c = shape[1]
    ref = NumpyBatchNorm(c, **cfg)
    ours = _ours(cls, c, ref, cfg)
    theirs = getattr(torch.nn, name)(c, **cfg)
    if cfg["affine"]:
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(ref.weight))
            theirs.bias.copy_(torch.tensor(ref.bias))
    modes = SCHEDULES["train_then_eval"]
    for step, (training, (x, dy)) in enumerate(zip(modes, _batches(shape, len(modes), seed=1), strict=True)):
        ours.train(training)
        theirs.train(training)
        xo, xt = tp.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        yo, yt = ours(xo), theirs(xt)
        (yo * tp.tensor(dy)).sum().backward()
        (yt * torch.tensor(dy)).sum().backward()
        at = f"step {step} ({'train' if training else 'eval'})"
        _close(yo.detach().numpy(), yt.detach().numpy(), f"y, {at}")
        _close(xo.grad.numpy(), xt.grad.numpy(), f"input grad, {at}")
        if cfg["affine"]:
            _close(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), f"weight grad, {at}")
            _close(ours.bias.grad.numpy(), theirs.bias.grad.numpy(), f"bias grad, {at}")
        for key, value in theirs.state_dict().items():
            _close(ours.state_dict()[key].numpy(), value.numpy(), f"{key}, {at}")


def test_eval_backward_does_not_reach_the_batches_that_trained_the_statistics() -> None:
    # Forward-only training steps (a warm-up of the running statistics), then one evaluation step with
    # backward. In eval the running statistics are constants: the warm-up inputs get no gradient, and the
    # layer before the norm gets exactly the gradient of the affine map the norm now is.
    rng = np.random.default_rng(3)
    tp.manual_seed(0)
    lin, bn = nn.Linear(4, 3), nn.BatchNorm1d(3, momentum=0.3)
    warm = [tp.tensor(rng.standard_normal((6, 4)).astype(np.float32), requires_grad=True) for _ in range(3)]
    for x in warm:
        bn(lin(x))
    assert bn.running_mean.grad_fn is None and bn.running_var.grad_fn is None
    bn.eval()
    x = rng.standard_normal((5, 4)).astype(np.float32)
    g = rng.standard_normal((5, 3)).astype(np.float32)
    (bn(lin(tp.tensor(x))) * tp.tensor(g)).sum().backward()
    assert all(w.grad is None for w in warm)
    rstd = 1.0 / np.sqrt(bn.running_var.numpy().astype(np.float64) + EPS)
    dh = g.astype(np.float64) * bn.weight.detach().numpy() * rstd  # d loss / d lin(x)
    _close(lin.weight.grad.numpy(), dh.T @ x.astype(np.float64), "linear weight grad")
    _close(lin.bias.grad.numpy(), dh.sum(0), "linear bias grad")


def test_instance_norm_running_stats_have_no_history_either() -> None:
    # instance_norm is batch_norm on [1, N*C, *] (norm.cpp), so it shares the running-statistics update.
    m = nn.InstanceNorm1d(2, affine=True, track_running_stats=True)
    x = tp.randn(3, 2, 5, requires_grad=True)
    m(x).sum().backward()
    assert not m.running_mean.requires_grad and m.running_mean.grad_fn is None
    assert not m.running_var.requires_grad and m.running_var.grad_fn is None
    m.eval()
    x2 = tp.randn(3, 2, 5, requires_grad=True)
    m(x2).square().sum().backward()  # the first graph is freed: this must not walk into it
    assert x2.grad is not None
