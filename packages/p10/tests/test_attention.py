"""scaled_dot_product_attention (kernels/attention.cpp) against a float64 NumPy composite.

`reference_attention` is the readable definition, softmax(Q K^T * scale + mask) @ V, that the blockwise
online-softmax kernel must reproduce. Checked: shapes from 1x1 to several query and key blocks, 2-D to 5-D
inputs with broadcast batch dims, bool and additive masks of every broadcastable shape, is_causal with L < S,
L = S and L > S, fully masked rows, enable_gqa, scale=, every float dtype, transposed / strided / expanded
layouts, size-0 dims, dropout (against the same generator stream drawn by hand), meta, the BLAS-off path, a
threaded >= 1M-element case and the error messages. Where PyTorch is installed, results are compared with it.
"""

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)
sdpa = tp.scaled_dot_product_attention


def reference_attention(q, k, v, mask=None, is_causal=False, scale=None, enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v in float64; rows whose keys are all masked give zeros."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    if enable_gqa and q.ndim >= 3:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if S == 0:
        return np.zeros(batch + (L, v.shape[-1]))
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(E) if scale is None else scale)
    if is_causal:
        mask = np.tril(np.ones((L, S), bool))
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask.astype(np.float64)
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0.0, m))
    p = np.where(dead, 0.0, e / np.where(dead, 1.0, e.sum(-1, keepdims=True)))
    return p @ v


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def check(q, k, v, rtol=2e-5, atol=2e-6, **kw):
    """Run the op on float32 NumPy inputs and compare with the reference."""
    mask = kw.pop("attn_mask", None)
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), None if mask is None else tp.tensor(mask), **kw)
    want = reference_attention(
        q, k, v, mask, kw.get("is_causal", False), kw.get("scale"), kw.get("enable_gqa", False)
    )
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)
    return got


# (batch dims, L, S, E, Ev): one element, one block, several query (64) and key (512) blocks, ragged ends
SHAPES = [
    ((), 1, 1, 1, 1),
    ((2, 3), 5, 7, 4, 6),
    ((1, 2), 64, 512, 8, 8),
    ((2, 2), 130, 300, 16, 8),
    ((3,), 9, 600, 32, 5),
    ((1,), 5, 1100, 8, 4),
    ((), 70, 3, 2, 3),
    ((2, 1, 2), 3, 4, 5, 2),
]


@pytest.mark.parametrize("batch,L,S,E,Ev", SHAPES)
def test_matches_reference(batch, L, S, E, Ev):
    check(randn(*batch, L, E), randn(*batch, S, E), randn(*batch, S, Ev))


@pytest.mark.parametrize("batch,L,S,E,Ev", SHAPES)
def test_causal_top_left(batch, L, S, E, Ev):
    check(randn(*batch, L, E), randn(*batch, S, E), randn(*batch, S, Ev), is_causal=True)


@pytest.mark.parametrize("L,S", [(5, 9), (9, 5), (300, 300), (70, 260), (260, 70)])
def test_causal_square_and_not(L, S):
    # L > S: rows past S see every key; L < S: keys past L are never seen (PyTorch's tril(ones(L, S)))
    check(randn(2, L, 8), randn(2, S, 8), randn(2, S, 4), is_causal=True)


@pytest.mark.parametrize(
    "mshape", [(7, 11), (11,), (1, 11), (2, 1, 7, 11), (3, 1, 11), (2, 3, 7, 11), (7, 1)]
)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks_broadcast(mshape, kind):
    q, k, v = randn(2, 3, 7, 8), randn(2, 3, 11, 8), randn(2, 3, 11, 5)
    if kind == "bool":
        mask = rng.random(mshape) < 0.7
        mask[..., 0] = True  # some rows may still be fully masked when the key dim is broadcast: tested below
    else:
        mask = randn(*mshape) * 2
    check(q, k, v, attn_mask=mask)


def test_mask_with_many_key_blocks():
    q, k, v = randn(1, 2, 70, 16), randn(1, 2, 700, 16), randn(1, 2, 700, 16)
    mask = rng.random((70, 700)) < 0.3
    mask[:, 650:] = True  # and every row sees a key in the last block
    check(q, k, v, attn_mask=mask)
    fmask = np.where(rng.random((2, 70, 700)) < 0.5, -np.inf, randn(2, 70, 700)).astype(np.float32)
    fmask[:, :, 699] = 0.0
    check(q, k, v, attn_mask=fmask)


def test_rows_masked_only_in_early_blocks():
    # Note [Online softmax]: rows whose first key blocks are all masked start at m = -inf and must recover
    q, k, v = randn(3, 10, 4), randn(3, 600, 4), randn(3, 600, 3)
    mask = np.zeros((10, 600), bool)
    mask[:, 520:] = True
    mask[3, :] = False
    mask[3, 599] = True
    check(q, k, v, attn_mask=mask)


def test_fully_masked_rows_give_zeros():
    q, k, v = randn(2, 4, 3), randn(2, 5, 3), randn(2, 5, 2)
    mask = np.ones((4, 5), bool)
    mask[1] = False
    got = check(q, k, v, attn_mask=mask)
    assert (got.numpy()[:, 1] == 0).all()
    fmask = np.zeros((4, 5), np.float32)
    fmask[2] = -np.inf
    got = check(q, k, v, attn_mask=fmask)
    assert (got.numpy()[:, 2] == 0).all()


def test_nan_and_extreme_scores():
    q, k, v = randn(1, 3, 4), randn(1, 5, 4), randn(1, 5, 2)
    q[0, 1, 0] = np.nan  # a NaN score poisons its own row only
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v)).numpy()
    assert np.isnan(got[0, 1]).all() and np.isfinite(got[0, [0, 2]]).all()
    big = randn(1, 3, 4) * 1e4  # huge scores: no overflow, the max is subtracted
    check(big, k, v, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hq,hk", [(4, 2), (6, 1), (4, 4), (8, 4)])
def test_enable_gqa(hq, hk):
    q, k, v = randn(2, hq, 5, 8), randn(2, hk, 9, 8), randn(2, hk, 9, 3)
    check(q, k, v, enable_gqa=True)
    check(q, k, v, enable_gqa=True, is_causal=True)


def test_scale():
    q, k, v = randn(2, 6, 8), randn(2, 7, 8), randn(2, 7, 8)
    for scale in (0.0, 0.3, 1.0, -2.0):
        check(q, k, v, scale=scale)


TOL = {"float32": (2e-5, 2e-6), "float64": (1e-12, 1e-13), "float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_dtypes(dtype, causal):
    q, k, v = (tp.tensor(randn(2, 3, *s)).to(getattr(tp, dtype)) for s in ((70, 16), (300, 16), (300, 8)))
    mask = None if causal else tp.tensor(rng.random((70, 300)) < 0.8)
    got = sdpa(q, k, v, mask, is_causal=causal)
    assert got.dtype == getattr(tp, dtype) and got.shape == (2, 3, 70, 8)
    exact = [t.to(tp.float64).numpy() for t in (q, k, v)]  # the inputs after rounding to dtype
    want = reference_attention(*exact, None if mask is None else mask.numpy(), causal)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.to(tp.float64).numpy(), want, rtol=rtol, atol=atol)


def test_float_mask_of_other_dtype():
    q, k, v = randn(2, 4, 8), randn(2, 6, 8), randn(2, 6, 3)
    mask = randn(4, 6).astype(np.float64)
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), tp.tensor(mask))
    assert got.dtype == tp.float32
    np.testing.assert_allclose(got.numpy(), reference_attention(q, k, v, mask), rtol=2e-5, atol=2e-6)


def test_layouts():
    # (B, L, H, D) projections viewed as (B, H, L, D): the usual transformer layout, not copied
    qb, kb, vb = randn(2, 70, 3, 16), randn(2, 300, 3, 16), randn(2, 300, 3, 8)
    q, k, v = (tp.tensor(a).transpose(1, 2) for a in (qb, kb, vb))
    assert not q.is_contiguous()
    want = reference_attention(*(np.swapaxes(a, 1, 2) for a in (qb, kb, vb)))
    np.testing.assert_allclose(sdpa(q, k, v).numpy(), want, rtol=2e-5, atol=2e-6)
    # column-major key (its transpose is contiguous), strided slices, a flipped value, an expanded batch dim
    k_cm = tp.tensor(np.ascontiguousarray(np.swapaxes(kb[:, :, 0], -1, -2))).transpose(-1, -2)
    q_sl = tp.tensor(randn(2, 140, 32))[:, ::2, ::2]
    v_fl = tp.tensor(randn(2, 300, 8)).flip(-1).flip(-2)
    got = sdpa(q_sl, k_cm, v_fl)
    want = reference_attention(q_sl.numpy(), k_cm.numpy(), v_fl.numpy())
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-6)
    k1 = tp.tensor(randn(1, 300, 16)).expand(4, 300, 16)
    q4 = tp.tensor(randn(4, 5, 16))
    np.testing.assert_allclose(
        sdpa(q4, k1, k1).numpy(),
        reference_attention(q4.numpy(), k1.numpy(), k1.numpy()),
        rtol=2e-5,
        atol=2e-6,
    )


def test_batch_dims_broadcast():
    q, k, v = randn(3, 1, 4, 6), randn(1, 2, 5, 6), randn(2, 5, 3)
    got = check(q, k, v)
    assert got.shape == (3, 2, 4, 3)
    check(randn(4, 6), randn(2, 3, 5, 6), randn(5, 3))


@pytest.mark.parametrize(
    "qs,ks,vs",
    [((2, 0, 4), (2, 5, 4), (2, 5, 3)), ((0, 3, 4), (0, 5, 4), (0, 5, 3)), ((2, 3, 4), (2, 0, 4), (2, 0, 3))],
)
def test_size_zero(qs, ks, vs):
    got = check(randn(*qs), randn(*ks), randn(*vs))
    assert got.shape == qs[:-1] + vs[-1:]
    got = check(randn(*qs), randn(*ks), randn(*vs), is_causal=True)


def test_two_d_and_one_row():
    check(randn(1, 4), randn(3, 4), randn(3, 2))
    check(randn(6, 4), randn(1, 4), randn(1, 2), is_causal=True)


def test_meta():
    q = tp.empty(2, 4, 100, 16, device="meta")
    k = tp.empty(2, 2, 300, 16, device="meta")
    v = tp.empty(2, 2, 300, 8, device="meta")
    got = sdpa(q, k, v, enable_gqa=True)
    assert got.device.type == "meta" and got.shape == (2, 4, 100, 8)
    with pytest.raises(RuntimeError, match="same last dim"):
        sdpa(q, tp.empty(2, 4, 300, 8, device="meta"), v)


def test_reference_gemm_path_agrees():
    q, k, v = randn(2, 70, 16), randn(2, 300, 16), randn(2, 300, 8)
    old = tp.ops.call("_set_gemm_blas", False)
    try:
        check(q, k, v, is_causal=True)
    finally:
        tp.ops.call("_set_gemm_blas", old)


def test_large_threaded():
    # 4 x 4 heads x 1024 x 64: the output has 1M elements and the tasks spread over threads
    q, k, v = randn(4, 4, 1024, 64), randn(4, 4, 1024, 64), randn(4, 4, 1024, 64)
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), is_causal=True).numpy()
    for b in range(4):  # reference per batch element, to keep the float64 score matrix small
        want = reference_attention(q[b], k[b], v[b], is_causal=True)
        np.testing.assert_allclose(got[b], want, rtol=2e-4, atol=2e-5)


def test_dropout_uses_the_generator():
    q, k, v = randn(2, 3, 5, 4), randn(2, 3, 6, 4), randn(2, 3, 6, 3)
    p = 0.4
    tp.manual_seed(7)
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), dropout_p=p).numpy()
    tp.manual_seed(7)  # the math path draws bernoulli_(1 - p) over the [2, 3, 5, 6] probabilities
    keep = tp.empty(2, 3, 5, 6).bernoulli_(1 - p).numpy().astype(np.float64)
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / 2.0
    probs = np.exp(s - s.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    want = (probs * keep / (1 - p)) @ v
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert (sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), dropout_p=1.0).numpy() == 0).all()
    # with a causal mask and GQA on the dropout path too: p -> 0+ leaves (almost) the plain result
    q, k, v = randn(1, 4, 5, 4), randn(1, 2, 7, 4), randn(1, 2, 7, 3)
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), dropout_p=1e-12, is_causal=True, enable_gqa=True)
    np.testing.assert_allclose(
        got.numpy(), reference_attention(q, k, v, None, True, None, True), rtol=2e-5, atol=2e-6
    )
    mask = rng.random((5, 7)) < 0.5
    mask[0] = False
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), tp.tensor(mask), dropout_p=1e-12, enable_gqa=True)
    np.testing.assert_allclose(
        got.numpy(), reference_attention(q, k, v, mask, False, None, True), rtol=2e-5, atol=2e-6
    )


def test_errors():
    q, k, v = tp.randn(2, 3, 4), tp.randn(2, 5, 4), tp.randn(2, 5, 6)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        sdpa(q, k.double(), v)
    with pytest.raises(RuntimeError, match="query and key must have the same last dim"):
        sdpa(q, tp.randn(2, 5, 3), v)
    with pytest.raises(RuntimeError, match="key and value must have the same sequence length"):
        sdpa(q, k, tp.randn(2, 4, 6))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        sdpa(q, k, v, tp.ones(3, 5, dtype=tp.bool), is_causal=True)
    with pytest.raises(RuntimeError, match=r"attn_mask of shape \[4, 5\] does not broadcast"):
        sdpa(q, k, v, tp.ones(4, 5, dtype=tp.bool))
    with pytest.raises(RuntimeError, match="attn_mask dtype to be bool or float"):
        sdpa(q, k, v, tp.ones(3, 5, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="floating point"):
        sdpa(q.long(), k.long(), v.long())
    with pytest.raises(
        RuntimeError, match=r"number of key heads \(3\) to divide the number of query heads \(4\)"
    ):
        sdpa(tp.randn(1, 4, 3, 4), tp.randn(1, 3, 5, 4), tp.randn(1, 3, 5, 6), enable_gqa=True)
    with pytest.raises(RuntimeError, match="at least 2 dims"):
        sdpa(tp.randn(4), k, v)
    with pytest.raises(ValueError, match="dropout_p must be in"):
        sdpa(q, k, v, dropout_p=1.5)


# ---- PyTorch, where installed ----------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(7, 7), (5, 11), (11, 5), (130, 300)])
def test_against_torch(L, S, causal):
    torch = pytest.importorskip("torch")
    q, k, v = randn(2, 4, L, 16), randn(2, 2, S, 16), randn(2, 2, S, 8)
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), is_causal=causal, enable_gqa=True).numpy()
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), is_causal=causal, enable_gqa=True
    ).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ndim", [3, 4])
def test_fully_masked_rows_against_torch(ndim):
    torch = pytest.importorskip("torch")
    shape = (2, 3)[: ndim - 2]
    q, k, v = randn(*shape, 4, 8), randn(*shape, 6, 8), randn(*shape, 6, 8)
    mask = rng.random((4, 6)) < 0.5
    mask[1] = False
    fmask = np.where(mask, 0.0, -np.inf).astype(np.float32)
    for m in (mask, fmask):
        got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), tp.tensor(m)).numpy()
        want = torch.nn.functional.scaled_dot_product_attention(
            torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), torch.from_numpy(m)
        ).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_dropout_stream_against_torch():
    torch = pytest.importorskip("torch")
    q, k, v = randn(2, 3, 5, 4), randn(2, 3, 6, 4), randn(2, 3, 6, 3)
    tp.manual_seed(3)
    torch.manual_seed(3)
    got = sdpa(tp.tensor(q), tp.tensor(k), tp.tensor(v), dropout_p=0.3).numpy()
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), dropout_p=0.3
    ).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
