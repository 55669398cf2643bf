"""Autograd on fake tensors (p10's Note [Fake tensors]): the Autograd key records nodes above the Fake key, so
forward and backward of a CUDA program trace on a machine without a GPU, with every gradient fake and shaped
as the real one (the reference: the same program on real CPU tensors)."""

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  installs autograd
from tensorplay_p10.fake_tensor import FakeTensorMode, is_fake


def test_backward_on_fake_cuda_tensors_gives_fake_gradients_of_the_real_shapes():
    w_real = tp.randn(3, 4).requires_grad_(True)
    x_real = tp.randn(5, 3)
    (x_real @ w_real).tanh().sum().backward()

    mode = FakeTensorMode()
    w = mode.from_tensor(w_real.detach(), device="cuda").requires_grad_(True)
    x = mode.from_tensor(x_real, device="cuda")
    loss = (x @ w).tanh().sum()
    assert is_fake(loss) and loss.is_cuda and loss.grad_fn is not None
    loss.backward()
    assert is_fake(w.grad) and w.grad.is_cuda
    assert w.grad.shape == w_real.grad.shape and w.grad.dtype == w_real.grad.dtype


def test_autograd_grad_through_views_and_broadcasting():
    mode = FakeTensorMode()
    a = mode.from_tensor(tp.ones(4, 1, dtype=tp.float64), device="cuda").requires_grad_(True)
    b = mode.from_tensor(tp.ones(3, dtype=tp.float64), device="cuda").requires_grad_(True)
    out = (a * b)[1:, ::2].exp().mean()
    ga, gb = tensorplay_tpx.autograd.grad(out, (a, b))
    assert ga.shape == (4, 1) and gb.shape == (3,) and ga.is_cuda and gb.dtype == tp.float64
