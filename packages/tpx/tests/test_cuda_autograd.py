"""Autograd on the GPU: gradients computed on CUDA equal the CPU's, op family by op family.

Where it sits: TPX's engine is device-blind — a backward formula calls P10 ops, which run on the device of
their tensors and on its current stream — so these tests check the whole chain on CUDA: the recorded forward,
each formula's ops, gradient accumulation, and the engine moving a gradient back to its input's device
(``x.cuda()`` on a CPU leaf). The CPU gradients are the oracle (test_formulas.py checks them against finite
differences). float64 throughout, so the comparison is tight. They need a GPU and skip elsewhere ("needs a
CUDA device"); an op with no CUDA kernel yet skips its case, naming the op.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401

pytestmark = pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a CUDA device")

F64 = tp.float64


def _i(values, d):
    return tp.tensor(values, device=d)


# name -> (fn(device, *inputs), input shapes, positive inputs?)
CASES: dict[str, tuple[Callable, tuple, bool]] = {
    "add_bcast": (lambda d, a, b: a + b, ((2, 3), (3,)), False),
    "mul_div": (lambda d, a, b: a * b / (b * b + 1), ((2, 3), (1, 3)), False),
    "exp_tanh_sigmoid": (lambda d, a: a.exp() + a.tanh() + a.sigmoid(), ((3, 4),), False),
    "log_sqrt": (lambda d, a: a.log() + a.sqrt() + a.rsqrt(), ((5,),), True),
    "pow": (lambda d, a, b: a**b + a**3, ((3,), (3,)), True),
    "gelu_silu_relu": (lambda d, a: tp.gelu(a) + tp.silu(a) + tp.relu(a), ((4, 3),), False),
    "where_maximum_clamp": (
        lambda d, a, b: tp.where(a > 0, a, b) + tp.maximum(a, b) + a.clamp(-0.5, 0.5),
        ((3, 2), (3, 2)),
        False,
    ),
    "sum_mean": (lambda d, a: a.sum(1) + a.mean(1), ((2, 3),), False),
    "sum_strided_flipped": (lambda d, a: a[::2].flip(0).sum(0), ((5, 2),), False),
    "amax_var_logsumexp": (lambda d, a: a.amax(1) + a.var(1) + a.logsumexp(1), ((3, 4),), False),
    "max_dim_prod_cumsum": (lambda d, a: a.max(1)[0] + a.prod(1) + a.cumsum(1)[:, -1], ((2, 3),), False),
    "mm_bmm_matmul": (
        lambda d, a, b: (a @ b).sum() + tp.bmm(a[None], b[None]).sum(),
        ((2, 3), (3, 4)),
        False,
    ),
    "mm_transposed": (lambda d, a, b: a.t() @ b.t(), ((3, 2), (4, 3)), False),
    "addmm": (lambda d, c, a, b: tp.addmm(c, a, b, beta=0.5, alpha=2), ((2, 4), (2, 3), (3, 4)), False),
    "linear": (lambda d, x, w, b: x @ w.t() + b, ((2, 5, 3), (4, 3), (4,)), False),
    "softmax_log_softmax": (lambda d, a: a.softmax(1) * a.log_softmax(0), ((3, 5),), False),
    "layer_norm": (lambda d, a, w, b: tp.layer_norm(a, [4], w, b), ((3, 4), (4,), (4,)), False),
    "rms_norm": (lambda d, a, w: tp.rms_norm(a, [4], w, 1e-6), ((3, 4), (4,)), False),
    "cross_entropy": (lambda d, a: tp.cross_entropy(a, _i([0, 2, 1], d)), ((3, 4),), False),
    "cross_entropy_smooth_ignore": (
        lambda d, a: tp.cross_entropy(a, _i([0, -100, 1], d), label_smoothing=0.1, reduction="sum"),
        ((3, 4),),
        False,
    ),
    "mse_l1": (lambda d, a, b: tp.mse_loss(a, b) + tp.l1_loss(a, b), ((2, 3), (2, 3)), False),
    "embedding": (lambda d, w: tp.embedding(w, _i([0, 2, 0, 1], d)), ((3, 2),), False),
    "index_gather_scatter": (
        lambda d, a: a[_i([0, 0, 1], d)].sum(0) + a.gather(1, _i([[0, 0, 2], [1, 2, 2]], d)).sum(0),
        ((2, 3),),
        False,
    ),
    "cat_stack_split": (
        lambda d, a, b: tp.cat([a, b], 1) * 2 + tp.stack([a, a]).sum(0).repeat(1, 2)[:, :5],
        ((2, 3), (2, 2)),
        False,
    ),
    "tril_masked_fill": (lambda d, a: a.tril().masked_fill(a > 1, 0.0), ((3, 3),), False),
    "sort_topk": (lambda d, a: a.sort(1)[0] + a.topk(3)[0], ((2, 3),), False),
    "sdpa": (
        lambda d, q, k, v: tp.scaled_dot_product_attention(q, k, v),
        ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)),
        False,
    ),
    "sdpa_causal_gqa": (
        lambda d, q, k, v: tp.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        ((1, 4, 5, 8), (1, 2, 5, 8), (1, 2, 5, 8)),
        False,
    ),
    "conv2d_pool": (
        lambda d, x, w: tp.max_pool2d(tp.conv2d(x, w, padding=1), 2) + tp.avg_pool2d(x[:, :1], 2),
        ((2, 3, 4, 4), (1, 3, 3, 3)),
        False,
    ),
}


def _inputs(shapes, positive: bool, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.random(s) + 0.5 if positive else rng.standard_normal(s) for s in shapes]


def _grads(fn, arrays, device: str):
    xs = [tp.tensor(a, dtype=F64, device=device).requires_grad_(True) for a in arrays]
    out = fn(device, *xs)
    w = tp.tensor(np.random.default_rng(99).standard_normal(tuple(out.shape)), dtype=F64, device=device)
    (out * w).sum().backward()
    return out, [x.grad for x in xs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_gradients_match_cpu(name: str) -> None:
    fn, shapes, positive = CASES[name]
    arrays = _inputs(shapes, positive, seed=len(name))
    out_cpu, g_cpu = _grads(fn, arrays, "cpu")
    try:
        out_gpu, g_gpu = _grads(fn, arrays, "cuda")
    except NotImplementedError as e:
        if "CUDA" not in str(e):
            raise
        pytest.skip(f"no CUDA kernel yet: {e}")
    assert out_gpu.device.type == "cuda"
    np.testing.assert_allclose(
        out_gpu.detach().cpu().numpy(), out_cpu.detach().numpy(), rtol=1e-9, atol=1e-10
    )
    for i, (gc, gg) in enumerate(zip(g_cpu, g_gpu, strict=True)):
        assert gg is not None and gg.device.type == "cuda", f"{name}: input {i} has no CUDA gradient"
        np.testing.assert_allclose(
            gg.cpu().numpy(), gc.numpy(), rtol=1e-9, atol=1e-10, err_msg=f"{name}[{i}]"
        )


def test_gradient_returns_to_the_leafs_device() -> None:
    """A CPU leaf moved to the GPU gets its gradient on the CPU (the engine moves it back)."""
    x = tp.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x.cuda() * tp.tensor([2.0, 3.0, 4.0], device="cuda")).sum()
    y.backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 3.0, 4.0])
    z = x.to("cuda", tp.float16) * 2  # device and dtype both change back
    z.sum().backward()
    assert x.grad.dtype is tp.float32 and x.grad.device.type == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 5.0, 6.0])


def test_backward_runs_on_the_current_stream() -> None:
    """Forward and backward inside a side stream: the gradient is right once that stream is synchronised."""
    s = tp.cuda.Stream()
    x = tp.tensor(np.random.default_rng(0).standard_normal((256, 256)), device="cuda").requires_grad_(True)
    with tp.cuda.stream(s):
        loss = (x @ x).tanh().sum()
        loss.backward()
    s.synchronize()
    xc = x.detach().cpu().requires_grad_(True)
    (xc @ xc).tanh().sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_accumulation_across_backward_calls_stays_on_the_gpu() -> None:
    w = tp.ones(4, device="cuda").requires_grad_(True)
    for _ in range(3):
        (w * 2).sum().backward()
    assert w.grad.device.type == "cuda"
    np.testing.assert_array_equal(w.grad.cpu().numpy(), [6.0] * 4)
