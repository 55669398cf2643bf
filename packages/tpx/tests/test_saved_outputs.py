"""Nodes that keep their own output (exp, tanh, softmax, ...): no reference cycle, so a graph dropped without
backward() is freed (Note [Saved outputs] in csrc/node.h), and backward through those outputs still works —
retain_graph, double backward, hooks, the version check. References are NumPy float64.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx import autograd


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _growth(step, iterations: int = 2000) -> int:
    """Bytes the process grew by over `iterations` calls of step() after a warm-up (RSS, or tracemalloc's
    count where /proc is missing). A leaked 64x64 float32 output is 16 KiB, so 2000 leaks are ~32 MB."""
    for _ in range(50):
        step()
    gc.collect()
    try:
        before = _rss()
    except OSError:
        before = None
        tracemalloc.start()
    for _ in range(iterations):
        step()
    gc.collect()
    if before is not None:
        return _rss() - before
    grown = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return grown


@pytest.mark.parametrize(
    "op",
    [
        lambda w: w.tanh(),
        lambda w: w.exp(),
        lambda w: w.sigmoid(),
        lambda w: w.relu(),
        lambda w: w.softmax(-1),
        lambda w: w.log_softmax(-1),
        lambda w: w.abs().sqrt(),
        lambda w: w.abs().add(1).rsqrt(),
    ],
    ids=["tanh", "exp", "sigmoid", "relu", "softmax", "log_softmax", "sqrt", "rsqrt"],
)
def test_dropped_graph_frees_saved_output(op) -> None:
    w = tp.randn(64, 64, requires_grad=True)
    grown = _growth(lambda: op(w))
    assert grown < 8 * 2**20, f"{grown / 2**20:.1f} MiB kept by 2000 dropped graphs"


def test_mlp_forward_loop_does_not_grow() -> None:
    rng = np.random.default_rng(0)
    w1 = tp.tensor(rng.standard_normal((32, 64)).astype(np.float32)).requires_grad_(True)
    w2 = tp.tensor(rng.standard_normal((64, 64)).astype(np.float32)).requires_grad_(True)
    w3 = tp.tensor(rng.standard_normal((64, 10)).astype(np.float32)).requires_grad_(True)
    x = tp.tensor(rng.standard_normal((64, 32)).astype(np.float32))

    def forward():
        h = (x @ w1).relu()
        h = (h @ w2).tanh()
        return (h @ w3).softmax(-1).sum()

    grown = _growth(forward)
    assert grown < 8 * 2**20, f"{grown / 2**20:.1f} MiB kept by 2000 forward passes"


def test_saved_output_keeps_no_tensor_alive() -> None:
    # Releasing the output and its graph frees every tensor of the call (nothing is held in a cycle).
    w = tp.randn(8, 8, requires_grad=True)
    y = w.exp()
    node = y.grad_fn
    assert node.name() == "ExpBackward"
    del y
    gc.collect()
    # The node lives on (we hold it), but unpacking its saved output still gives the values of exp(w).
    (saved,) = node._saved_tensors()
    np.testing.assert_allclose(saved.detach().numpy(), np.exp(w.detach().numpy()), rtol=1e-6)
    assert saved.grad_fn is not None and saved.grad_fn.name() == "ExpBackward"


@pytest.mark.parametrize(
    ("f", "d1", "d2"),
    [
        (
            lambda t: t.tanh(),
            lambda a: 1 - np.tanh(a) ** 2,
            lambda a: -2 * np.tanh(a) * (1 - np.tanh(a) ** 2),
        ),
        (lambda t: t.exp(), np.exp, np.exp),
        (
            lambda t: t.sigmoid(),
            lambda a: (s := 1 / (1 + np.exp(-a))) * (1 - s),
            lambda a: (s := 1 / (1 + np.exp(-a))) * (1 - s) * (1 - 2 * s),
        ),
    ],
    ids=["tanh", "exp", "sigmoid"],
)
def test_double_backward_through_saved_output(f, d1, d2) -> None:
    a = np.linspace(-2, 2, 7)
    x = tp.tensor(a).requires_grad_(True)
    (g,) = autograd.grad(f(x).sum(), [x], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), d1(a), rtol=1e-10)
    (gg,) = autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), d2(a), rtol=1e-10)


def test_softmax_double_backward_gradgradcheck() -> None:
    x = tp.tensor(np.random.default_rng(1).standard_normal((3, 4))).requires_grad_(True)
    assert autograd.gradgradcheck(lambda t: t.softmax(-1) * t, (x,))


def test_retain_graph_and_hooks_with_saved_output() -> None:
    a = np.array([0.5, -1.0, 2.0])
    x = tp.tensor(a).requires_grad_(True)
    y = x.exp()
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(a))
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_in_place_write_into_saved_output_is_caught() -> None:
    x = tp.randn(4, requires_grad=True)
    y = x.tanh()
    y.mul_(2)
    with pytest.raises(
        RuntimeError,
        match=r"one of the variables needed for gradient computation has been modified by an inplace "
        r"operation: \[tensorplay.FloatTensor \[4\]\], which is output 0 of TanhBackward, is at version 1; "
        r"expected version 0",
    ):
        y.sum().backward()


def test_in_place_write_into_a_view_of_saved_output_is_caught() -> None:
    x = tp.randn(2, 3, requires_grad=True)
    y = x.exp()
    z = y.sum()
    with autograd.no_grad():
        y[0].zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
