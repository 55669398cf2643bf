"""The LLM-stack ops on the GPU: delta_rule and its backward, paged_attention, sample, _rrelu_with_noise, and
the small holes conj / angle of real tensors and bool add / mul / sub.

References: float64 NumPy recurrences written from the semantics Notes (the op database's delta_rule_ref and
paged_attention_ref, tests/opdb/recurrent.py) and the CPU op. Covered: size-0 and size-1 dims, batches,
non-contiguous inputs, every float dtype (16-bit inputs compute in float32), state sizes on each kernel path
(rows in registers up to Dk = 256, in scratch beyond; several column tiles), a long sequence, gradients of
delta_rule on CUDA against the CPU through tpx's autograd (the fused backward and the recorded reference), the
CPU op's errors. Random ops cannot match the CPU's draws: sample is checked by its greedy and top_k = 1 cases,
by chi-square against the filtered distribution and by reproducibility under tp.cuda.manual_seed;
_rrelu_with_noise by the range and mean of its slopes. Tests marked needs_device also run on the CPU with
TP_CUDA_TEST_DEVICE=cpu (Note [dry run on the CPU] in cuda_testing.py); needs_cuda ones need a GPU.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(
    0, str(Path(__file__).parent)
)  # importlib mode leaves sys.path alone: find cuda_testing, opdb
from cuda_testing import DEV, f64, kernel_entries, needs_cuda, needs_device  # noqa: E402
from opdb.recurrent import delta_rule_ref, paged_attention_ref  # noqa: E402

rng = np.random.default_rng(0)
TOL = {tp.float16: 1e-2, tp.bfloat16: 6e-2, tp.float32: 2e-5, tp.float64: 1e-11}


def uniform(shape, lo=-1.0, hi=1.0, dtype=tp.float32) -> tp.Tensor:
    return tp.from_numpy(rng.uniform(lo, hi, shape)).to(dtype)


def on(t):
    return t.to(DEV) if isinstance(t, tp.Tensor) else t


def close(got: tp.Tensor, want, tol: float) -> None:
    """`got` (on DEV) against a float64 array, relative to the larger of 1 and want's largest value."""
    assert got.device.type == DEV
    want = np.asarray(want, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(f64(got), want, rtol=tol, atol=tol * scale)


# ---- delta_rule --------------------------------------------------------------------------------------------
def delta_inputs(B, T, H, Dk, Dv, per_channel=False, init=False, dtype=tp.float32, gdtype=None):
    q, k = uniform((B, T, H, Dk), -0.5, 0.5, dtype), uniform((B, T, H, Dk), -0.5, 0.5, dtype)
    v = uniform((B, T, H, Dv), dtype=dtype)
    g = uniform((B, T, H, Dk) if per_channel else (B, T, H), -0.3, 0.0, gdtype or dtype)
    beta = uniform((B, T, H), 0.0, 1.0, gdtype or dtype)
    s0 = uniform((B, H, Dk, Dv), dtype=gdtype or dtype) if init else None
    return q, k, v, g, beta, s0


DELTA_SHAPES = [
    # B, T, H, Dk, Dv, per-channel g, initial state
    (1, 1, 1, 1, 1, False, False),
    (2, 0, 3, 4, 5, False, True),  # no steps: the final state is the initial one
    (0, 4, 2, 4, 4, False, False),
    (2, 5, 0, 4, 4, False, False),
    (3, 17, 4, 16, 24, True, True),
    (2, 9, 2, 64, 64, False, True),
    (1, 6, 2, 128, 128, True, True),
    (1, 4, 1, 256, 256, True, True),  # the largest register kernel, 8 column tiles in the backward
    (1, 3, 1, 300, 20, True, True),  # rows in scratch slots
    (1, 5, 2, 7, 0, False, True),
    (1, 5, 2, 0, 7, False, True),
]


@needs_device
@pytest.mark.parametrize("shape", DELTA_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_delta_rule_matches_the_recurrence(shape):
    B, T, H, Dk, Dv, pc, init = shape
    q, k, v, g, beta, s0 = delta_inputs(B, T, H, Dk, Dv, pc, init)
    out, state = tp.delta_rule(on(q), on(k), on(v), on(g), on(beta), on(s0))
    want_out, want_state = delta_rule_ref(
        *(f64(t) for t in (q, k, v, g, beta)), None if s0 is None else f64(s0)
    )
    assert out.dtype is tp.float32 and state.dtype is tp.float32
    assert tuple(out.shape) == (B, T, H, Dv) and tuple(state.shape) == (B, H, Dk, Dv)
    close(out, want_out, 1e-4)
    close(state, want_state, 1e-4)


@needs_device
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_delta_rule_dtypes(dtype):
    q, k, v, g, beta, s0 = delta_inputs(2, 11, 3, 24, 40, True, True, dtype)
    out, state = tp.delta_rule(on(q), on(k), on(v), on(g), on(beta), on(s0))
    cpu_out, cpu_state = tp.delta_rule(q, k, v, g, beta, s0)
    assert out.dtype is dtype and state.dtype is (tp.float64 if dtype is tp.float64 else tp.float32)
    want = delta_rule_ref(*(f64(t) for t in (q, k, v, g, beta, s0)))
    for got, cpu, ref in ((out, cpu_out, want[0]), (state, cpu_state, want[1])):
        close(got, ref, TOL[dtype])
        close(got, f64(cpu), TOL[dtype])
    # float32 g, beta and state beside 16-bit activations (the usual mix)
    q, k, v, g, beta, s0 = delta_inputs(2, 7, 2, 8, 8, False, True, dtype, gdtype=tp.float32)
    out, _ = tp.delta_rule(on(q), on(k), on(v), on(g), on(beta), on(s0))
    close(out, f64(tp.delta_rule(q, k, v, g, beta, s0)[0]), TOL[dtype])


@needs_device
def test_delta_rule_long_sequence():
    q, k, v, g, beta, s0 = delta_inputs(1, 2048, 2, 32, 32, True, True)
    out, state = tp.delta_rule(on(q), on(k), on(v), on(g), on(beta), on(s0))
    want_out, want_state = delta_rule_ref(*(f64(t) for t in (q, k, v, g, beta, s0)))
    close(out, want_out, 1e-4)
    close(state, want_state, 1e-4)


@needs_device
def test_delta_rule_non_contiguous():
    q, k, v, g, beta, s0 = delta_inputs(2, 6, 3, 8, 10, True, True)
    views = (
        on(q.transpose(0, 1).contiguous()).transpose(0, 1),
        on(tp.stack([k, tp.zeros_like(k)], -1))[..., 0],
        on(v.permute(2, 1, 0, 3).contiguous()).permute(2, 1, 0, 3),
        on(g.flip(1)).flip(1),
        on(beta.permute(2, 0, 1).contiguous()).permute(1, 2, 0),
        on(s0.transpose(-1, -2).contiguous()).transpose(-1, -2),
    )
    assert not any(t.is_contiguous() for t in views[:3])
    out, state = tp.delta_rule(*views)
    want_out, want_state = delta_rule_ref(*(f64(t) for t in (q, k, v, g, beta, s0)))
    close(out, want_out, 1e-4)
    close(state, want_state, 1e-4)


BACKWARD_CASES = [
    # B, T, H, Dk, Dv, per-channel g, initial state, chunk_size
    (1, 1, 1, 1, 1, False, False, 64),
    (2, 13, 3, 8, 12, False, True, 4),
    (2, 13, 3, 8, 12, True, True, 1),
    (1, 70, 2, 16, 16, True, True, 64),
    (1, 9, 1, 64, 128, False, True, 5),  # 4 column tiles
    (1, 5, 1, 256, 256, True, True, 2),
    (1, 4, 1, 300, 36, True, True, 3),  # rows in scratch, cross-warp sums in scratch
    (2, 0, 2, 4, 4, False, True, 64),
    (1, 5, 2, 6, 0, True, True, 64),
]


@needs_device
@pytest.mark.parametrize("case", BACKWARD_CASES, ids=lambda c: "x".join(map(str, c)))
def test_delta_rule_backward_matches_the_cpu(case):
    B, T, H, Dk, Dv, pc, init, chunk = case
    q, k, v, g, beta, s0 = delta_inputs(B, T, H, Dk, Dv, pc, init)
    go, gs = uniform((B, T, H, Dv)), uniform((B, H, Dk, Dv))
    for grads in ((go, gs), (None, gs), (go, None)):
        got = tp.delta_rule_backward(*map(on, grads), on(q), on(k), on(v), on(g), on(beta), on(s0), chunk)
        want = tp.delta_rule_backward(*grads, q, k, v, g, beta, s0, chunk)
        for a, b, x in zip(got, want, (q, k, v, g, beta, s0), strict=True):
            if x is None:
                assert a is None and b is None
                continue
            assert a.dtype is x.dtype and a.shape == x.shape
            close(a, f64(b), 1e-4)


@needs_device
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float64], ids=str)
def test_delta_rule_backward_dtypes(dtype):
    q, k, v, g, beta, s0 = delta_inputs(2, 7, 2, 8, 8, True, True, dtype, gdtype=tp.float32)
    go, gs = uniform((2, 7, 2, 8), dtype=dtype), uniform((2, 2, 8, 8))
    got = tp.delta_rule_backward(on(go), on(gs), *map(on, (q, k, v, g, beta, s0)), 3)
    want = tp.delta_rule_backward(go, gs, q, k, v, g, beta, s0, 3)
    for a, b in zip(got, want, strict=True):
        assert a.dtype is b.dtype
        close(a, f64(b), TOL[dtype])


@needs_device
@pytest.mark.parametrize("create_graph", [False, True])
def test_delta_rule_gradients_through_autograd(create_graph):
    """tpx's formula: the fused backward when the backward pass is not recorded, the reference's ops when it
    is (Note [Delta rule backward paths]); on CUDA both against the CPU's gradients."""
    pytest.importorskip("tensorplay_tpx")
    from tensorplay_tpx.autograd import grad

    inputs = delta_inputs(2, 6, 2, 4, 5, True, True)
    dout, dstate = uniform((2, 6, 2, 5)), uniform((2, 2, 4, 5))
    grads = {}
    for dev in ("cpu", DEV):
        xs = [t.to(dev).requires_grad_(True) for t in inputs]
        out, state = tp.delta_rule(*xs, chunk_size=4)
        loss = (out * dout.to(dev)).sum() + (state * dstate.to(dev)).sum()
        grads[dev] = grad(loss, xs, create_graph=create_graph)
    for a, b in zip(grads[DEV], grads["cpu"], strict=True):
        close(a.detach(), f64(b.detach()), 1e-4)


@needs_cuda
def test_delta_rule_errors():
    q, k, v, g, beta, _ = (on(t) for t in delta_inputs(1, 3, 2, 4, 5))
    with pytest.raises(RuntimeError, match="expected g on query's device"):
        tp.delta_rule(q, k, v, g.cpu(), beta)
    with pytest.raises(RuntimeError, match=r"expected beta of shape \[B, T, H\] = \[1, 3, 2\]"):
        tp.delta_rule(q, k, v, g, beta[..., :1])
    with pytest.raises(ValueError, match="chunk_size must be positive"):
        tp.delta_rule(q, k, v, g, beta, None, 0)
    with pytest.raises(RuntimeError, match="expected a floating point grad_out of shape"):
        tp.delta_rule_backward(on(tp.ones(1, 3, 2, 4)), None, q, k, v, g, beta)


# ---- paged_attention ---------------------------------------------------------------------------------------
def paged_case(B, H, Hkv, T, D, Dv, bs, lens, N=None, dtype=tp.float32):
    bpr = max(1, max((s + bs - 1) // bs for s in lens)) if lens else 1
    N = N or B * bpr + 1
    table = tp.tensor(rng.permutation(N)[: B * bpr].reshape(B, bpr), dtype=tp.int64)
    return (
        uniform((B, H, T, D), dtype=dtype),
        uniform((N, bs, Hkv, D), dtype=dtype),
        uniform((N, bs, Hkv, Dv), dtype=dtype),
        table,
        tp.tensor(lens, dtype=tp.int64),
    )


PAGED = [
    # B, H, Hkv, T, D, Dv, block_size, seq_lens
    (1, 1, 1, 1, 1, 1, 1, [1]),
    (3, 8, 2, 1, 64, 64, 16, [1, 37, 200]),  # decode, GQA 8:2
    (2, 4, 4, 5, 32, 48, 8, [5, 33]),  # prefill tails, T = S for row 0
    (2, 6, 3, 3, 40, 300, 16, [70, 33]),  # Dv > 256: two passes over the keys
    (2, 4, 2, 0, 8, 8, 4, [0, 5]),
    (0, 4, 2, 1, 8, 8, 4, []),
]


@needs_device
@pytest.mark.parametrize("case", PAGED, ids=lambda c: "x".join(map(str, c[:7])))
def test_paged_attention_matches_the_reference(case):
    args = paged_case(*case)
    got = tp.paged_attention(*map(on, args))
    want = paged_attention_ref(*(f64(t) if t.is_floating_point() else t.numpy() for t in args))
    assert got.dtype is tp.float32 and tuple(got.shape) == tuple(want.shape)
    close(got, want, 1e-5)
    close(tp.paged_attention(*map(on, args), scale=0.2), f64(tp.paged_attention(*args, scale=0.2)), 1e-5)


@needs_device
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float64], ids=str)
def test_paged_attention_dtypes(dtype):
    args = paged_case(2, 4, 2, 2, 32, 16, 8, [9, 20], dtype=dtype)
    got = tp.paged_attention(*map(on, args))
    assert got.dtype is dtype
    close(got, f64(tp.paged_attention(*args)), TOL[dtype])


@needs_device
def test_paged_attention_non_contiguous_and_shared_blocks():
    q, kp, vp, _, lens = paged_case(2, 4, 2, 3, 16, 8, 4, [7, 11], N=6)
    table = tp.tensor([[4, 4, 1], [4, 1, 5]])  # block 4 shared by both rows (prefix sharing)
    views = (
        on(q.transpose(1, 2).contiguous()).transpose(1, 2),
        on(kp.transpose(0, 1).contiguous()).transpose(0, 1),
        on(tp.stack([vp, tp.zeros_like(vp)], -1))[..., 0],
    )
    got = tp.paged_attention(*views, on(table), on(lens))
    close(got, paged_attention_ref(f64(q), f64(kp), f64(vp), table.numpy(), lens.numpy()), 1e-5)


@needs_device
def test_paged_attention_errors():
    q, kp, vp = on(tp.ones(1, 4, 1, 8)), on(tp.ones(3, 4, 2, 8)), on(tp.ones(3, 4, 2, 6))
    with pytest.raises(IndexError, match=r"block_table\[0, 1\] = 3 is not a block of the pools"):
        tp.paged_attention(q, kp, vp, on(tp.tensor([[0, 3]])), on(tp.tensor([5])))
    with pytest.raises(RuntimeError, match=r"seq_lens\[0\] = 9 exceeds the block table's capacity"):
        tp.paged_attention(q, kp, vp, on(tp.tensor([[0, 2]])), on(tp.tensor([9])))
    with pytest.raises(RuntimeError, match="smaller than the number of queries"):
        tp.paged_attention(on(tp.ones(1, 4, 3, 8)), kp, vp, on(tp.tensor([[0, 2]])), on(tp.tensor([2])))


@needs_device
def test_paged_attention_gradient_through_the_reference():
    pytest.importorskip("tensorplay_tpx")
    from tensorplay_tpx.autograd import grad

    q, kp, vp, table, lens = paged_case(2, 4, 2, 2, 8, 8, 4, [6, 9])
    dy = uniform((2, 4, 2, 8))
    grads = {}
    for dev in ("cpu", DEV):
        xs = [t.to(dev).requires_grad_(True) for t in (q, kp, vp)]
        y = tp.paged_attention(*xs, table.to(dev), lens.to(dev))
        grads[dev] = grad((y * dy.to(dev)).sum(), xs)
    for a, b in zip(grads[DEV], grads["cpu"], strict=True):
        close(a, f64(b), 1e-5)


# ---- sample ------------------------------------------------------------------------------------------------
def filtered(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """Note [Sampling rule] from its definition (as test_sample.py): softmax, top-k with ties kept, then the
    shortest most-likely-first prefix reaching top_p."""
    z = logits.astype(np.float64) / temperature
    p = np.exp(z - z.max())
    if 0 < top_k < z.size:
        p[z < np.sort(z)[::-1][top_k - 1]] = 0
    p /= p.sum()
    if top_p < 1:
        cum, keep = 0.0, []
        for i in sorted(range(z.size), key=lambda i: (-p[i], i)):
            if p[i] == 0:
                break
            keep.append(i)
            cum += p[i]
            if cum >= top_p:
                break
        mask = np.zeros(z.size, bool)
        mask[keep] = True
        p[~mask] = 0
        p /= p.sum()
    return p


@needs_device
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_sample_greedy_and_top_k_one_are_argmax(dtype):
    # distinct integers (exact in every dtype): top_k = 1 keeps ties, so the rows must have none
    logits = tp.from_numpy(np.stack([rng.permutation(200) - 100.0 for _ in range(9)])).to(dtype)
    want = np.argmax(f64(logits), axis=-1)
    for kwargs in ({"temperature": 0.0}, {"temperature": 1e-6}, {"temperature": 1.3, "top_k": 1}):
        got = tp.sample(on(logits), **kwargs)
        assert got.device.type == DEV and got.dtype is tp.int64 and tuple(got.shape) == (9,)
        np.testing.assert_array_equal(got.cpu().numpy(), want)
    one = tp.sample(on(logits[4]), 0.0)
    assert one.dim() == 0 and one.item() == want[4]
    ties = on(tp.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]]).to(dtype))
    np.testing.assert_array_equal(tp.sample(ties, 0.0).cpu().numpy(), [1, 0])  # the first maximum
    assert tuple(tp.sample(on(tp.zeros(0, 5, dtype=dtype)), 1.0).shape) == (0,)


# 99.9% points of chi-square by degrees of freedom (a correct sampler fails one case in a thousand)
_CHI2_999 = {1: 10.83, 2: 13.82, 3: 16.27, 4: 18.47, 5: 20.52, 6: 22.46}
SAMPLE_CASES = [
    ("plain softmax", [1.0, 0.5, 0.0, -0.5, -1.0, 2.0], 1.0, 0, 1.0),
    ("hot, top_k=3", [1.0, 0.5, 0.0, -0.5, -1.0, 2.0], 2.0, 3, 1.0),
    ("top_p=0.7", [1.0, 0.5, 0.0, -0.5, -1.0, 2.0], 1.0, 0, 0.7),
    ("top_k=4 then top_p=0.8", [0.3, 1.2, -0.4, 0.9, 2.0, 0.1, -1.5], 1.5, 4, 0.8),
    ("ties at the top_k boundary are kept", [2.0, 1.0, 1.0, 1.0, 0.0], 1.0, 2, 1.0),
    ("-inf logits are never drawn", [0.0, -np.inf, 1.0, -np.inf, 0.5], 1.0, 0, 1.0),
]


@needs_device
@pytest.mark.parametrize("case", SAMPLE_CASES, ids=lambda c: c[0])
def test_sample_distribution(case):
    _, row, temperature, top_k, top_p = case
    tp.manual_seed(0)  # every device's generator: the draws do not depend on what ran before
    n = 20000
    logits = on(tp.tensor([row] * n))  # one draw per row: n independent draws
    got = tp.sample(logits, temperature, top_k, top_p).cpu().numpy()
    p = filtered(np.array(row), temperature, top_k, top_p)
    counts = np.bincount(got, minlength=len(row))
    assert counts[p == 0].sum() == 0, "a filtered-out token was drawn"
    kept = p > 0
    expected = n * p[kept]
    chi2 = float((((counts[kept] - expected) ** 2) / expected).sum())
    dof = int(kept.sum()) - 1
    if dof > 0:
        assert chi2 < _CHI2_999[dof], (counts, expected)


@needs_cuda
def test_sample_reproducible_under_cuda_manual_seed():
    logits = on(uniform((64, 500), -2, 2))
    tp.cuda.manual_seed(1234)
    a = tp.sample(logits, 0.9, 50, 0.9)
    b = tp.sample(logits, 0.9, 50, 0.9)
    tp.cuda.manual_seed(1234)
    np.testing.assert_array_equal(tp.sample(logits, 0.9, 50, 0.9).cpu().numpy(), a.cpu().numpy())
    assert not np.array_equal(a.cpu().numpy(), b.cpu().numpy())  # the generator moved on


@needs_device
def test_sample_errors():
    x = on(tp.zeros(2, 5))
    bad = on(tp.tensor([[0.0, 1.0], [0.0, float("nan")]]))
    with pytest.raises(RuntimeError, match="logits row 1 contains NaN or \\+inf"):
        tp.sample(bad, 1.0)
    with pytest.raises(RuntimeError, match="every logit of row 0 is -inf"):
        tp.sample(on(tp.full((1, 3), float("-inf"))), 1.0)
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\]"):
        tp.sample(x, 1.0, top_p=0.0)
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        tp.sample(x, -1.0)
    with pytest.raises(RuntimeError, match="empty vocabulary"):
        tp.sample(on(tp.zeros(2, 0)), 1.0)
    with pytest.raises(RuntimeError, match="floating-point logits"):
        tp.sample(on(tp.zeros(2, 3, dtype=tp.int64)), 1.0)


@needs_cuda
def test_sample_refuses_a_cpu_generator():
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        tp.sample(on(tp.zeros(2, 5)), 1.0, generator=tp.Generator())


# ---- _rrelu_with_noise -------------------------------------------------------------------------------------
@needs_device
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_rrelu_with_noise_slopes(dtype):
    lower, upper = 0.1, 0.3
    x = uniform((257, 129), -1, 1, dtype)
    x[0, :3] = tp.tensor([0.0, float("nan"), -0.0]).to(dtype)
    out, noise = tp.ops._rrelu_with_noise(on(x).t(), lower, upper)  # a transposed input: logical order
    out, noise, xt = f64(out), f64(noise), f64(x).T
    assert out.shape == xt.shape
    neg = xt <= 0
    tol = TOL[dtype]
    assert np.all(noise[~neg] == 1) and np.array_equal(np.isnan(out), np.isnan(xt))
    assert np.all((noise[neg] >= lower - tol) & (noise[neg] <= upper + tol))
    np.testing.assert_allclose(out[neg], xt[neg] * noise[neg], rtol=tol, atol=tol)
    np.testing.assert_allclose(out[~neg & ~np.isnan(xt)], xt[~neg & ~np.isnan(xt)])
    assert abs(noise[neg].mean() - (lower + upper) / 2) < 0.01  # ~16000 uniform slopes
    assert len(np.unique(noise[neg])) > 100
    empty = tp.ops._rrelu_with_noise(on(tp.zeros(0, 3, dtype=dtype)), lower, upper)
    assert all(tuple(t.shape) == (0, 3) for t in empty)


@needs_device
def test_rrelu_training_and_errors():
    x = on(uniform((64,), -1, 1))
    y = tp.rrelu(x, 0.2, 0.2, True)  # lower == upper: a fixed slope
    close(y, np.where(f64(x) > 0, f64(x), 0.2 * f64(x)), 1e-6)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        tp.ops._rrelu_with_noise(x, 0.5, 0.1)
    with pytest.raises((RuntimeError, TypeError)):
        tp.ops._rrelu_with_noise(on(tp.ones(3, dtype=tp.int64)), 0.1, 0.3)


@needs_cuda
def test_rrelu_reproducible_under_cuda_manual_seed():
    x = on(uniform((1000,), -1, 0))
    tp.cuda.manual_seed(7)
    a = tp.ops._rrelu_with_noise(x, 0.1, 0.3)[1].cpu().numpy()
    tp.cuda.manual_seed(7)
    np.testing.assert_array_equal(tp.ops._rrelu_with_noise(x, 0.1, 0.3)[1].cpu().numpy(), a)


# ---- conj and angle of real tensors; bool arithmetic -------------------------------------------------------
@needs_device
@pytest.mark.parametrize(
    "dtype", [tp.bool, tp.uint8, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str
)
def test_conj_and_angle_of_real_tensors(dtype):
    if dtype.is_floating_point:
        values = [-2.5, 0.0, 3.0, -0.0, 1.0]  # -0.0 is not below 0: angle 0, as PyTorch's
    elif dtype in (tp.bool, tp.uint8):
        values = [0, 1, 1, 0, 1]
    else:
        values = [-2, -1, 0, 3, 7]
    x = on(tp.tensor(values).to(dtype))
    assert tp.conj(x) is x
    a = tp.angle(x)
    assert a.dtype is (dtype if dtype.is_floating_point else tp.float32)
    close(a, np.where(f64(x) < 0, math.pi, 0.0), TOL.get(a.dtype, 1e-6))
    out = on(tp.empty(5, dtype=a.dtype))
    assert tp.angle(x, out=out) is out
    close(out, np.where(f64(x) < 0, math.pi, 0.0), TOL.get(a.dtype, 1e-6))
    if dtype.is_floating_point:
        nan = tp.angle(on(tp.tensor([float("nan"), -float("inf")]).to(dtype)))
        assert np.isnan(f64(nan)[0]) and f64(nan)[1] == pytest.approx(math.pi, rel=TOL[dtype])


@needs_cuda
def test_complex_inputs_are_refused_clearly():
    try:
        z = tp.zeros(3, dtype=tp.complex64).to(DEV)
    except (RuntimeError, NotImplementedError):
        pytest.skip("complex tensors cannot be made on this device")
    for fn in (tp.conj, tp.angle):
        with pytest.raises(NotImplementedError, match="complex dtypes"):
            fn(z)


@needs_device
def test_bool_add_mul_sub():
    a = on(tp.tensor([True, False, True, False]))
    b = on(tp.tensor([True, True, False, False]))
    assert tp.add(a, b).dtype is tp.bool
    np.testing.assert_array_equal(tp.add(a, b).cpu().numpy(), [True, True, True, False])
    np.testing.assert_array_equal(tp.add(a, b, alpha=False).cpu().numpy(), [True, False, True, False])
    np.testing.assert_array_equal((a * b).cpu().numpy(), [True, False, False, False])
    np.testing.assert_array_equal((a * True).cpu().numpy(), [True, False, True, False])  # a CPU number
    c = a.clone()
    assert c.add_(b) is c
    np.testing.assert_array_equal(c.cpu().numpy(), [True, True, True, False])
    out = on(tp.empty(4, dtype=tp.bool))
    assert tp.mul(a, b, out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), [True, False, False, False])
    m = on(tp.tensor([[True], [False]]))
    np.testing.assert_array_equal((m + b).cpu().numpy(), [[True] * 4, [True, True, False, False]])
    np.testing.assert_array_equal((a + 1).cpu().numpy(), [2, 1, 2, 1])  # promotes like the CPU
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        a - b
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        a.sub_(b)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        tp.add(a, b, alpha=2)


# ---- the kernel names the ops ask for (no GPU needed, only NVRTC) ------------------------------------------
def test_kernel_names_exist():
    rows = [0, 1, 2, 4, 8, 16, 32]  # cuda/delta_rule.h delta_rows_kernel
    assert {f"delta_fwd_r{r}_{m}" for r in rows for m in ("float32", "float64")} <= kernel_entries(
        "delta_rule.cu"
    )
    assert {f"delta_bwd_r{r}_{m}" for r in rows for m in ("float32", "float64")} <= kernel_entries(
        "delta_rule_backward.cu"
    )
    floats = ("float16", "bfloat16", "float32", "float64")
    assert {f"paged_attention_{t}" for t in floats} <= kernel_entries("paged_attention.cu")
    assert {f"rrelu_with_noise_{t}" for t in floats} <= kernel_entries("random.cu")
    assert {f"angle_{f}_{t}" for f in ("contig", "strided") for t in floats} <= kernel_entries(
        "unary_math.cu"
    )
    assert {
        f"{op}_{f}_bool" for op in ("add", "mul") for f in ("contig", "scalar", "strided")
    } <= kernel_entries("binary.cu")
