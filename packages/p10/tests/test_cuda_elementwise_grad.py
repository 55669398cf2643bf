"""Backward on the GPU through the new elementwise CUDA kernels: gradients of CUDA inputs against the same
computation on the CPU (whose formulas test_activation_grad.py and test_formulas.py gradcheck).

The activations' backward runs the dedicated ops (mish_backward, leaky_relu_backward, elu_backward,
softplus_backward, hardtanh_backward: activation.cu); atan2, logaddexp, lerp and addcmul compose their
gradients from P10 ops. They need a GPU and TPX's autograd engine, and skip without either.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_cuda  # noqa: E402

pytestmark = needs_cuda

tpx = pytest.importorskip("tensorplay_tpx")


ONE = {
    "mish": tp.mish,
    "leaky_relu": lambda x: tp.leaky_relu(x, 0.2),
    "elu": lambda x: tp.elu(x, 0.5, 2.0, 1.5),
    "softplus": lambda x: tp.softplus(x, 2.0, 3.0),
    "hardtanh": lambda x: tp.hardtanh(x, -1.0, 1.0),
    "log_sigmoid": tp.log_sigmoid,
}
TWO = {
    "atan2": tp.atan2,
    "logaddexp": tp.logaddexp,
    "lerp": lambda a, b: tp.lerp(a, b, tp.sigmoid(b.detach())),
    "addcmul": lambda a, b: tp.addcmul(a, a, b, value=0.5),
}


def leaf(seed, device, dtype=tp.float64):
    a = np.random.default_rng(seed).uniform(-3, 3, (5, 7))
    a[np.abs(np.abs(a) - 1) < 0.05] += 0.1  # off hardtanh's kinks
    return tp.tensor(a).to(dtype).to(device).requires_grad_(True)


def grads(f, n, device, dtype=tp.float64):
    xs = [leaf(k, device, dtype) for k in range(n)]
    f(*xs).sum().backward()
    return [x.grad for x in xs]


@pytest.mark.parametrize("name", ONE)
def test_one_input(name):
    (got,), (want,) = grads(ONE[name], 1, DEV), grads(ONE[name], 1, "cpu")
    assert got.device.type == DEV
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", TWO)
def test_two_inputs(name):
    got, want = grads(TWO[name], 2, DEV), grads(TWO[name], 2, "cpu")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-12, atol=1e-12)


def test_float32_mish_backward():
    (got,), (want,) = grads(tp.mish, 1, DEV, tp.float32), grads(tp.mish, 1, "cpu", tp.float32)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=2e-5, atol=2e-6)
