"""scaled_dot_product_attention and its backward on the GPU (attention.cu, attention_backward.cu) against a
float64 NumPy formula and the CPU op.

Covered: float32/float64 (the warp-per-row kernel) and float16/bfloat16 (the mma.sync tensor-core kernel, head
dims 16..256 and padded ones like 40 and 7), odd lengths (1, 7, 65, 129), is_causal with L < S, L = S and
L > S, enable_gqa, bool and additive masks (broadcast, fully masked rows give zeros), scale=, broadcast batch
dims and Ev != E, transposed / sliced / last-dim-strided inputs, size-0 dims, a NaN score, the error
paths, the backward op directly (float32 and bfloat16, causal or not) and one autograd backward through the
derivative formula. They need a GPU and skip elsewhere ("needs a CUDA device").
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_cuda, normal, np_of64  # noqa: E402

pytestmark = needs_cuda


# (rtol, atol) against the float64 formula on the same (rounded) inputs
TOL = {
    tp.float16: (5e-3, 5e-3),
    tp.bfloat16: (2e-2, 2e-2),
    tp.float32: (2e-5, 2e-5),
    tp.float64: (1e-10, 1e-10),
}
sdpa = tp.scaled_dot_product_attention


def ref_probs(q, k, mask=None, is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T scale + mask) in float64, rows with every key masked 0 (the CPU op's rule)."""
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(E) if scale is None else scale)
    if is_causal:
        mask = np.tril(np.ones((L, S), bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0.0, m))
    return np.where(dead, 0.0, e / np.where(dead, 1.0, e.sum(-1, keepdims=True)))


def ref_attention(q, k, v, mask=None, is_causal=False, scale=None, enable_gqa=False):
    if enable_gqa and q.ndim >= 3 and v.shape[-3] != q.shape[-3]:
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    return ref_probs(q, k, mask, is_causal, scale, enable_gqa) @ v


def check(q, k, v, mask=None, **kw):
    """The op on CUDA against the float64 formula and the CPU op (same inputs)."""
    rtol, atol = TOL[q.dtype]
    dm = None if mask is None else mask.to(DEV)
    got = sdpa(q.to(DEV), k.to(DEV), v.to(DEV), dm, **kw)
    cpu = sdpa(q, k, v, mask, **kw)
    assert got.device.type == DEV and got.dtype is q.dtype and got.shape == cpu.shape
    m = None if mask is None else (mask.numpy() if mask.dtype is tp.bool else np_of64(mask))
    want = ref_attention(np_of64(q), np_of64(k), np_of64(v), m, **kw)
    g = np_of64(got)
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol)
    np.testing.assert_allclose(g, np_of64(cpu), rtol=rtol, atol=atol, equal_nan=True)
    return g


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.bfloat16, tp.float16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(1, 1), (7, 7), (65, 65), (129, 129), (5, 70), (70, 5)])
def test_lengths_causal_dtypes(dtype, causal, L, S):
    q, k, v = (
        normal((2, 3, L, 64), dtype, 1),
        normal((2, 3, S, 64), dtype, 2),
        normal((2, 3, S, 64), dtype, 3),
    )
    check(q, k, v, is_causal=causal)


@pytest.mark.parametrize("dtype", [tp.bfloat16, tp.float16, tp.float32])
@pytest.mark.parametrize(
    "E,Ev", [(16, 16), (32, 32), (128, 128), (256, 256), (40, 40), (7, 7), (64, 32), (300, 24)]
)
def test_head_dims(dtype, E, Ev):
    q, k, v = (
        normal((1, 2, 67, E), dtype, 4),
        normal((1, 2, 67, E), dtype, 5),
        normal((1, 2, 67, Ev), dtype, 6),
    )
    check(q, k, v, is_causal=True)
    check(q, k, v, scale=0.3)


@pytest.mark.parametrize("dtype", [tp.float32, tp.bfloat16])
def test_gqa_and_transposed_inputs(dtype):
    # the layout GroupedQueryAttention makes: [B, L, H, D] viewed as [B, H, L, D]
    q = normal((2, 33, 8, 64), dtype, 7).transpose(1, 2)
    k = normal((2, 33, 2, 64), dtype, 8).transpose(1, 2)
    v = normal((2, 33, 2, 64), dtype, 9).transpose(1, 2)
    check(q, k, v, enable_gqa=True)
    check(q, k, v, enable_gqa=True, is_causal=True)


@pytest.mark.parametrize("dtype", [tp.float32, tp.bfloat16])
def test_masks(dtype):
    q, k, v = (
        normal((2, 2, 9, 32), dtype, 10),
        normal((2, 2, 11, 32), dtype, 11),
        normal((2, 2, 11, 32), dtype, 12),
    )
    keep = np.random.default_rng(13).random((9, 11)) < 0.6
    keep[3] = False  # a fully masked row: zeros
    check(q, k, v, tp.from_numpy(keep))
    check(
        q, k, v, tp.from_numpy(keep[None, None, :1].repeat(2, 0))
    )  # [2, 1, 1, 11]: broadcast rows and heads
    add = normal((2, 1, 9, 11), tp.float32, 14)
    check(q, k, v, add)  # float32 mask with 16-bit inputs: cast once, as the CPU op does
    check(q, k, v, normal((11,), dtype, 15))  # 1-D mask: one row for all


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16])
def test_layouts_and_broadcast(dtype):
    base = normal((3, 20, 48), dtype, 16)
    q = base[:, ::2, :]  # row stride 96
    k = normal((4, 3, 17, 48), dtype, 17).flip(-2)  # 4-D key against 3-D query: batch broadcast
    v = normal((1, 3, 17, 24), dtype, 18)  # Ev != E, broadcast dim 0
    check(q, k, v)
    check(q.transpose(-1, -2).contiguous().transpose(-1, -2), k, v, is_causal=True)  # last dim strided
    check(normal((5, 32), dtype, 19), normal((6, 32), dtype, 20), normal((6, 8), dtype, 21))  # 2-D


def test_empty_and_nan():
    z = tp.zeros((2, 0, 8), device=DEV)
    assert sdpa(z, normal((2, 3, 8)).to(DEV), normal((2, 3, 8)).to(DEV)).shape == (2, 0, 8)
    out = sdpa(normal((2, 3, 8)).to(DEV), tp.zeros((2, 0, 8), device=DEV), tp.zeros((2, 0, 5), device=DEV))
    assert out.shape == (2, 3, 5) and not np_of64(out).any()
    for dtype in (tp.float32, tp.bfloat16):
        q = normal((1, 1, 4, 16), dtype, 22)
        q[0, 0, 2, 3] = float("nan")
        got = np_of64(sdpa(q.to(DEV), q.to(DEV), q.to(DEV)))
        assert np.isnan(got[0, 0, 2]).all()  # the NaN row
        assert np.isnan(got[0, 0, [0, 1, 3]]).all()  # every row sees key 2, which has a NaN


def test_errors_match_the_cpu_op():
    q = normal((1, 2, 4, 8)).to(DEV)
    with pytest.raises(RuntimeError, match="same dtype"):
        sdpa(q, q.double(), q)
    with pytest.raises(RuntimeError, match="Explicit attn_mask"):
        sdpa(q, q, q, tp.ones((4, 4), dtype=tp.bool, device=DEV), is_causal=True)
    with pytest.raises(RuntimeError, match="does not broadcast"):
        sdpa(q, q, q, tp.ones((3, 4), dtype=tp.bool, device=DEV))
    with pytest.raises(RuntimeError, match="enable_gqa"):
        sdpa(q, normal((1, 3, 4, 8)).to(DEV), q, enable_gqa=True)
    with pytest.raises(RuntimeError, match="device"):
        sdpa(q, q, q, tp.ones((4, 4), dtype=tp.bool))
    with pytest.raises(ValueError, match="dropout_p"):
        sdpa(q, q, q, dropout_p=1.5)


@pytest.mark.parametrize("causal", [False, True])
def test_dropout_drops_probabilities_and_rescales(causal):
    # with V = the identity (Ev = S) the output IS the dropped probability matrix: each entry is either 0 or
    # P / (1 - p), with P from the float64 reference, and about a fraction p of them are 0
    L = S = 48
    q, k = normal((4, 2, L, 16), tp.float32, 50), normal((4, 2, S, 16), tp.float32, 51)
    v = tp.eye(S).expand(4, 2, S, S).contiguous()
    p = 0.3
    tp.cuda.manual_seed(7)
    got = sdpa(q.to(DEV), k.to(DEV), v.to(DEV), dropout_p=p, is_causal=causal)
    tp.cuda.manual_seed(7)
    again = sdpa(q.to(DEV), k.to(DEV), v.to(DEV), dropout_p=p, is_causal=causal)
    assert got.device.type == DEV and got.shape == (4, 2, L, S)
    np.testing.assert_array_equal(got.cpu().numpy(), again.cpu().numpy())  # the same seed, the same mask
    want = ref_probs(np_of64(q), np_of64(k), is_causal=causal) / (1 - p)
    g = np_of64(got)
    kept = g != 0
    np.testing.assert_allclose(g[kept], want[kept], rtol=1e-5, atol=1e-7)
    live = want > 0  # causal: the masked-out entries are 0 with or without dropout
    dropped = (~kept & live).sum() / live.sum()
    assert abs(dropped - p) < 0.03, dropped
    assert not np.any(kept & ~live)
    out1 = sdpa(q.to(DEV), k.to(DEV), v.to(DEV), dropout_p=1.0)
    assert not np.any(np_of64(out1))  # p = 1 drops everything


# ---- backward ----------------------------------------------------------------------------------------------
# gradients: the largest error against the largest magnitude (dP = dO.v grows with the head dim, and the
# 16-bit kernels round P and dS to 16 bits before their products, as FlashAttention-2 does)
GRAD_TOL = {tp.float16: 1e-2, tp.bfloat16: 3e-2, tp.float32: 2e-5, tp.float64: 1e-10}


def assert_grad_close(got: np.ndarray, want: np.ndarray, dtype) -> None:
    assert got.shape == want.shape
    err = float(np.abs(got - want).max()) if got.size else 0.0
    assert err <= GRAD_TOL[dtype] * max(1.0, float(np.abs(want).max()) if want.size else 0.0), err


def ref_backward(q, k, v, g, causal, scale):
    p = ref_probs(q, k, is_causal=causal, scale=scale)
    dv = np.swapaxes(p, -1, -2) @ g
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k * scale, np.swapaxes(ds, -1, -2) @ q * scale, dv


@pytest.mark.parametrize("dtype", [tp.float32, tp.bfloat16, tp.float16, tp.float64])
@pytest.mark.parametrize("causal", [False, True])
# (150, 140, 16, 16), (40, 150, 8, 24) and (150, 40, 32, 20): float32's CUDA-core tiles (attention_simt.cu)
# across more than one block of 128 rows and a partial tile of 32, with E != Ev and L != S both ways
@pytest.mark.parametrize(
    "L,S,E,Ev",
    [
        (1, 1, 16, 16),
        (65, 65, 64, 64),
        (33, 70, 32, 48),
        (70, 9, 128, 128),
        (150, 140, 16, 16),
        (40, 150, 8, 24),
        (150, 40, 32, 20),
    ],
)
def test_backward_op(dtype, causal, L, S, E, Ev):
    q, k, v = (
        normal((2, 2, L, E), dtype, 30),
        normal((2, 2, S, E), dtype, 31),
        normal((2, 2, S, Ev), dtype, 32),
    )
    g = normal((2, 2, L, Ev), dtype, 33)
    scale = 1 / math.sqrt(E)
    got = tp.scaled_dot_product_attention_backward(g.to(DEV), q.to(DEV), k.to(DEV), v.to(DEV), causal, scale)
    want = ref_backward(np_of64(q), np_of64(k), np_of64(v), np_of64(g), causal, scale)
    for a, w in zip(got, want, strict=True):
        assert a.device.type == DEV and a.dtype is dtype
        assert_grad_close(np_of64(a), w, dtype)
    if dtype in (tp.float32, tp.float64):  # the CPU op takes these only
        cpu = tp.scaled_dot_product_attention_backward(g, q, k, v, causal, scale)
        for a, c in zip(got, cpu, strict=True):
            assert_grad_close(np_of64(a), np_of64(c), dtype)


def test_backward_op_empty_and_errors():
    q = normal((1, 3, 8)).to(DEV)
    dq, dk, dv = tp.scaled_dot_product_attention_backward(
        q, q, tp.zeros((1, 0, 8), device=DEV), tp.zeros((1, 0, 8), device=DEV), False, 0.5
    )
    assert dq.shape == (1, 3, 8) and not np_of64(dq).any() and dk.shape == (1, 0, 8)
    with pytest.raises(RuntimeError, match="expected"):
        tp.scaled_dot_product_attention_backward(q, q, q, normal((1, 4, 8)).to(DEV), False, 0.5)
    with pytest.raises(RuntimeError, match="dtype"):
        tp.scaled_dot_product_attention_backward(q, q.double(), q, q, False, 0.5)


@pytest.mark.parametrize("dtype", [tp.float32, tp.bfloat16])
def test_autograd_gqa_causal_matches_cpu(dtype):
    import tensorplay as tpa

    def grads(device):
        q = tpa.tensor(
            np_of64(normal((2, 4, 19, 32), dtype, 40)), dtype=dtype, device=device, requires_grad=True
        )
        k = tpa.tensor(
            np_of64(normal((2, 2, 19, 32), dtype, 41)), dtype=dtype, device=device, requires_grad=True
        )
        v = tpa.tensor(
            np_of64(normal((2, 2, 19, 32), dtype, 42)), dtype=dtype, device=device, requires_grad=True
        )
        out = tpa.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        out.backward(tpa.tensor(np_of64(normal((2, 4, 19, 32), dtype, 43)), dtype=dtype, device=device))
        return [np_of64(t.grad) for t in (q, k, v)]

    cuda = grads(DEV)
    cpu = grads("cpu") if dtype is tp.float32 else None
    if cpu is None:  # bfloat16 on the CPU takes the composite backward: compare with float32 instead
        q, k, v = (
            np_of64(normal(s, dtype, i))
            for s, i in [((2, 4, 19, 32), 40), ((2, 2, 19, 32), 41), ((2, 2, 19, 32), 42)]
        )
        g = np_of64(normal((2, 4, 19, 32), dtype, 43))
        kr, vr = np.repeat(k, 2, axis=-3), np.repeat(v, 2, axis=-3)
        dq, dk, dv = ref_backward(q, kr, vr, g, True, 1 / math.sqrt(32))
        cpu = [dq, dk.reshape(2, 2, 2, 19, 32).sum(2), dv.reshape(2, 2, 2, 19, 32).sum(2)]
    for a, c in zip(cuda, cpu, strict=True):
        assert_grad_close(a, c, dtype)
