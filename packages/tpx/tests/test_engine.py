"""The autograd engine's semantics (csrc/engine.cpp, record.cpp, views.cpp): accumulation, retain/create
graph,
multi-root, grad(), hooks, versions, views + in-place, grad modes, deep graphs.

References are closed-form derivatives computed with NumPy in float64, never values from the code under test.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx import autograd


def leaf(values, dtype=tp.float64):
    return tp.tensor(values, dtype=dtype).requires_grad_(True)


def test_readme_example_with_p10_and_tpx_only() -> None:
    code = (
        "import sys, tensorplay_p10 as tp, tensorplay_tpx\n"
        "x = tp.Tensor([[1.0, 2.0], [3.0, 4.0]]).requires_grad_(True)\n"
        "y = tp.Tensor([[5.0, 6.0], [7.0, 8.0]])\n"
        "z = x.matmul(y) + tp.ones_like(x)\n"
        "z.sum().backward()\n"
        "assert x.grad.tolist() == [[11.0, 15.0], [11.0, 15.0]], x.grad\n"
        "assert not any(m in sys.modules for m in ('tensorplay', 'tensorplay_nn', 'tensorplay_stax'))\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("ok")


def test_fan_out_accumulates() -> None:
    x = leaf([1.0, -2.0, 3.0])
    y = x * x + x * 3.0 + x.exp()
    y.sum().backward()
    xn = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * xn + 3 + np.exp(xn))


def test_broadcast_gradients_are_summed_back_to_the_input_shape() -> None:
    a = leaf(np.ones((2, 3)))
    b = leaf([1.0, 2.0, 3.0])
    c = leaf([[2.0]])
    (a * b * c).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(c.grad.numpy(), [[12.0]])
    np.testing.assert_allclose(a.grad.numpy(), np.tile([2.0, 4.0, 6.0], (2, 1)))


def test_second_backward_through_freed_graph_raises_pytorch_message() -> None:
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward_and_accumulates() -> None:
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_create_graph_gives_second_and_third_derivatives() -> None:
    x = leaf(1.5)
    y = x**4
    (d1,) = autograd.grad(y, x, create_graph=True)
    (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)
    assert d1.item() == pytest.approx(4 * 1.5**3)
    assert d2.item() == pytest.approx(12 * 1.5**2)
    assert d3.item() == pytest.approx(24 * 1.5)


def test_multi_root_backward_with_gradients() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y1, y2 = x * 2, x.sin()
    g1, g2 = tp.tensor([1.0, 0.0, 1.0], dtype=tp.float64), tp.tensor([0.5, 0.5, 0.5], dtype=tp.float64)
    autograd.backward([y1, y2], [g1, g2])
    xn = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1.numpy() + 0.5 * np.cos(xn))


def test_grad_allow_unused_and_materialize() -> None:
    x, z = leaf([1.0]), leaf([2.0])
    y = (x * 3).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and gx.tolist() == [3.0]
    gx, gz = autograd.grad(y, [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0]
    assert x.grad is None  # grad() returns, it does not accumulate


def test_backward_inputs_restricts_accumulation() -> None:
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


def test_non_scalar_backward_needs_a_gradient() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_backward_on_tensor_without_grad_raises() -> None:
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        tp.ones(2).sum().backward()


def test_retain_grad_on_non_leaf() -> None:
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])


def test_tensor_hooks_modify_gradients_and_can_be_removed() -> None:
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    y = x * 2
    y.register_hook(lambda g: g + 1)
    y.sum().backward()
    assert seen == [[4.0, 4.0]]  # (1 + 1) * 2 reaches x's hook
    np.testing.assert_allclose(x.grad.numpy(), [40.0, 40.0])
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_node_hooks_and_post_accumulate_hook() -> None:
    x = leaf([1.0, 2.0])
    y = x * 3
    order = []
    y.grad_fn.register_prehook(lambda go: order.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: order.append("post"))
    x.register_post_accumulate_grad_hook(lambda t: order.append(("acc", t.grad.tolist())))
    y.sum().backward()
    assert order == ["pre", "post", ("acc", [3.0, 3.0])]


def test_grad_fn_names_next_functions_and_repr() -> None:
    x = leaf([1.0, 2.0])
    y = (x * 2).sum()
    assert y.grad_fn.name() == "SumBackward"
    ((mul, _),) = y.grad_fn.next_functions
    assert mul.name() == "MulBackward"
    acc = mul.next_functions[0][0]
    assert acc.name() == "AccumulateGrad"
    assert "grad_fn=<SumBackward>" in repr(y)
    assert x.is_leaf and not y.is_leaf
    dot = autograd.graph.to_dot(y)
    assert dot.startswith("digraph") and "MulBackward" in dot and "->" in dot


def test_saved_tensor_modified_in_place_raises_version_error() -> None:
    x = leaf([1.0, 2.0])
    y = x.exp()
    z = y * 1.0
    z2 = y.exp()
    y.mul_(2)
    with pytest.raises(
        RuntimeError, match=r"modified by an inplace operation.*is at version 1; expected version 0"
    ):
        z2.sum().backward()
    del z


def test_in_place_on_leaf_requiring_grad_raises() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].mul_(2)


def test_in_place_on_non_leaf_rebases_history() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    y.mul_(x)  # y = 2x * x -> dy/dx = 4x
    y.exp_()
    y.sum().backward()
    xn = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(2 * xn * xn) * 4 * xn)


def test_in_place_op_overwriting_its_own_saved_input_raises() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2
    y.mul_(y)  # mul saves `other`, which is y itself, before the write: PyTorch refuses this in backward
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_setitem_on_graph_tensor_copy_slices() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    y[0] = 0
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 2.0, 2.0])


def test_in_place_through_a_view_reaches_the_base() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    v = y[1:]
    v.mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 6.0, 6.0])
    np.testing.assert_allclose(y.detach().numpy(), [2.0, 12.0, 18.0])


def test_writing_a_graph_value_into_a_plain_tensor() -> None:
    x = leaf([5.0])
    z = tp.zeros(3, dtype=tp.float64)
    z[1] = x[0] * 2
    (z * tp.tensor([1.0, 10.0, 100.0], dtype=tp.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0])


def test_no_grad_enable_grad_set_grad_enabled() -> None:
    x = leaf([1.0])
    with autograd.no_grad():
        assert not autograd.is_grad_enabled()
        assert not (x * 2).requires_grad
        with autograd.enable_grad():
            assert (x * 2).requires_grad
    assert autograd.is_grad_enabled()

    @autograd.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    with autograd.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    with autograd.inference_mode():
        assert not (x * 2).requires_grad and autograd.is_inference_mode_enabled()


def test_grad_mode_is_thread_local() -> None:
    import threading

    seen = []
    with autograd.no_grad():
        t = threading.Thread(target=lambda: seen.append(autograd.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_deep_graph_backward_and_teardown() -> None:
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
    del y  # freeing 100k nodes must not recurse


def test_detach_and_requires_grad_rules() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 100.0  # shares memory ...
    assert y.detach().tolist() == [100.0, 4.0]
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    y2 = x * 3
    y2.detach_()
    assert y2.is_leaf and not y2.requires_grad


def test_missing_formula_raises_naming_the_op() -> None:
    # Every P10 op has a formula now, so define one that has none: its forward works, its backward must not.
    lib = tp.library.Library("engine_test")
    lib.define("no_formula(Tensor x) -> Tensor")
    lib.impl("no_formula", lambda x: x * 2, "CPU")
    y = tp.ops.engine_test.no_formula(leaf([1.0, 2.0]))
    msg = "the derivative for 'engine_test::no_formula' is not implemented"
    with pytest.raises(NotImplementedError, match=msg):
        y.sum().backward()


def test_non_differentiable_outputs_do_not_require_grad() -> None:
    x = leaf([1.0, 3.0, 2.0])
    assert not x.argmax().requires_grad
    assert not (x > 1).requires_grad
    values, indices = x.sort()
    assert values.requires_grad and not indices.requires_grad


def test_out_variant_with_grad_raises() -> None:
    x = leaf([1.0])
    out = tp.empty(1, dtype=tp.float64)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        tp.add(x, x, out=out)


def test_anomaly_mode_reports_nan() -> None:
    x = leaf([0.0])
    with autograd.detect_anomaly():
        y = (x.sqrt() * 0).sum()
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            with pytest.warns(RuntimeWarning, match="Traceback of forward call"):
                y.backward()
    assert not autograd.is_anomaly_enabled()


def test_integer_tensor_cannot_require_grad() -> None:
    with pytest.raises(RuntimeError, match="floating point and complex"):
        tp.tensor([1, 2]).requires_grad_(True)


def test_saved_tensors_hooks_pack_and_unpack() -> None:
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.clone() * 1.0  # a copy: later in-place writes to the original no longer matter

    def unpack(t):
        unpacked.append(tuple(t.shape))
        return t

    x = leaf([1.0, 2.0])
    with autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.exp()
        z = (y * x).sum()
    assert packed  # exp saved its result, mul saved both operands
    z.backward()
    assert len(unpacked) == len(packed)
    xn = np.array([1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xn) * xn + np.exp(xn))


def test_inference_tensors_cannot_enter_autograd() -> None:
    w = leaf([1.0, 2.0])
    with autograd.inference_mode():
        assert autograd.is_inference_mode_enabled() and not autograd.is_grad_enabled()
        t = tp.ones(2, dtype=tp.float64) * 3
        assert t.is_inference() and not (w * 2).requires_grad
    assert not autograd.is_inference_mode_enabled() and not tp.ones(1).is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        w * t  # mul saves both operands
    assert (w + t).requires_grad  # add saves nothing: fine, as in PyTorch
    with pytest.raises(
        RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"
    ):
        t.requires_grad_(True)
    c = t.clone()
    assert not c.is_inference() and (w * c).requires_grad


def test_double_backward_through_an_in_place_op() -> None:
    x = leaf([1.0, 2.0])
    y = x * 1
    y.mul_(x)  # y = x^2: mul_ keeps a recorded copy of self's old value
    (g,) = autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = autograd.grad(g.sum(), x)
    assert g.tolist() == [2.0, 4.0] and gg.tolist() == [2.0, 2.0]


def test_a_contiguous_leaf_gets_a_contiguous_grad() -> None:
    # Note [Gradient layout contract]: x @ W.t() hands W the transpose of a contiguous product; .grad is
    # stored row-major like W (as PyTorch's AccumulateGrad does), with the same values; later gradients add
    # into it.
    rng = np.random.default_rng(0)
    w = tp.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    x = tp.tensor(rng.standard_normal((4, 3)))
    (x @ w.t()).sum().backward()
    assert w.grad.is_contiguous() and w.grad.stride() == w.stride()
    want = np.ones((4, 5)).T @ x.numpy()
    np.testing.assert_allclose(w.grad.numpy(), want)
    (x @ w.t()).sum().backward()
    assert w.grad.is_contiguous()
    np.testing.assert_allclose(w.grad.numpy(), 2 * want)
    # a leaf of another layout keeps the gradient's layout
    v = tp.tensor(rng.standard_normal((3, 5))).t().detach().requires_grad_(True)
    (x @ v.t()).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), want)
