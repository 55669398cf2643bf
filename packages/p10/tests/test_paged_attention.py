"""paged_attention (kernels/paged_attention.cpp) against a float64 NumPy reference.

The reference gathers each row's tokens from the pools with NumPy fancy indexing and applies a masked softmax
over the whole row at once (Note [Paged attention semantics]); the kernel reads block by block with an online
softmax. Checked: block sizes 1 .. 16 and rows that end mid-block, GQA ratios, T from 1 (decode) to S_b
(prefill), Dv != D, scale, the same answers as scaled_dot_product_attention on the gathered cache, invariance
under moving blocks in the pool, table entries past a row's blocks never read, non-contiguous inputs,
16-bit dtypes, the threaded path, the reference op, gradients (gradcheck, gradgradcheck) and errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def ref(q, key_pool, value_pool, table, lens, scale=None):
    B, H, T, D = q.shape
    bs, Hkv = key_pool.shape[1:3]
    out = np.zeros((B, H, T, value_pool.shape[-1]))
    sc = 1 / math.sqrt(D) if scale is None else scale
    for b in range(B):
        s = np.arange(lens[b])
        blocks, slots = table[b, s // bs], s % bs
        K = np.repeat(key_pool[blocks, slots].transpose(1, 0, 2), H // Hkv, axis=0)  # [H, S, D]
        V = np.repeat(value_pool[blocks, slots].transpose(1, 0, 2), H // Hkv, axis=0)
        scores = q[b] @ K.transpose(0, 2, 1) * sc  # [H, T, S]
        visible = s[None, :] <= lens[b] - T + np.arange(T)[:, None]  # bottom-right causal
        scores = np.where(visible, scores, -np.inf)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        out[b] = (p / p.sum(-1, keepdims=True)) @ V
    return out


def make(B, H, Hkv, T, D, Dv, bs, lens, spare=3, seed=0):
    """query and pools (float64 arrays) and a block table that scatters each row's blocks over the pool in a
    random order, with `spare` unused pool blocks and -1 padding past each row's blocks."""
    r = np.random.default_rng(seed)
    per_row = [max(1, -(-n // bs)) for n in lens]
    bpr = max(per_row)
    N = sum(per_row) + spare
    order = r.permutation(N)
    table = np.full((B, bpr), -1, dtype=np.int64)
    used = 0
    for b, n in enumerate(per_row):
        table[b, :n] = order[used : used + n]
        used += n
    q = r.standard_normal((B, H, T, D))
    kp, vp = r.standard_normal((N, bs, Hkv, D)), r.standard_normal((N, bs, Hkv, Dv))
    return q, kp, vp, table, np.array(lens, dtype=np.int64)


def call(q, kp, vp, table, lens, dtype=tp.float64, op=None, **kw):
    f = op or tp.paged_attention
    return f(tp.tensor(q).to(dtype), tp.tensor(kp).to(dtype), tp.tensor(vp).to(dtype), tp.tensor(table),
             tp.tensor(lens), **kw)  # fmt: skip


@pytest.mark.parametrize("bs", [1, 3, 16])
@pytest.mark.parametrize(("H", "Hkv"), [(4, 4), (4, 2), (6, 1)])
@pytest.mark.parametrize("T", [1, 2, 5])
def test_matches_numpy(bs, H, Hkv, T) -> None:
    args = make(3, H, Hkv, T, 8, 5, bs, [T, 17, 40])
    np.testing.assert_allclose(call(*args).numpy(), ref(*args), rtol=1e-12, atol=1e-13)


def test_scale_and_float32() -> None:
    args = make(2, 4, 2, 3, 16, 16, 4, [9, 30])
    np.testing.assert_allclose(call(*args, scale=0.1).numpy(), ref(*args, scale=0.1), rtol=1e-12, atol=1e-13)
    out = call(*args, dtype=tp.float32)
    assert out.dtype is tp.float32
    np.testing.assert_allclose(out.numpy(), ref(*args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_16_bit_inputs_compute_in_float32(dtype) -> None:
    q, kp, vp, table, lens = make(1, 4, 2, 2, 8, 8, 4, [11])
    rounded = [tp.tensor(x).to(dtype).to(tp.float64).numpy() for x in (q, kp, vp)]
    out = call(q, kp, vp, table, lens, dtype=dtype)
    assert out.dtype is dtype
    tol = 4e-3 if dtype is tp.float16 else 3e-2
    np.testing.assert_allclose(out.to(tp.float64).numpy(), ref(*rounded, table, lens), rtol=tol, atol=tol)


def test_equals_sdpa_on_the_gathered_cache() -> None:
    """T = S is causal self-attention, T = 1 attends to the whole row: both are plain SDPA calls."""
    S = 21
    q, kp, vp, table, lens = make(1, 4, 2, S, 8, 8, 4, [S])
    s = np.arange(S)
    K = tp.tensor(kp[table[0, s // 4], s % 4].transpose(1, 0, 2))[None]
    V = tp.tensor(vp[table[0, s // 4], s % 4].transpose(1, 0, 2))[None]
    full = tp.scaled_dot_product_attention(tp.tensor(q), K, V, is_causal=True, enable_gqa=True)
    assert tp.allclose(call(q, kp, vp, table, lens), full, rtol=1e-12, atol=1e-13)
    last = tp.scaled_dot_product_attention(tp.tensor(q[:, :, -1:]), K, V, enable_gqa=True)
    assert tp.allclose(call(q[:, :, -1:], kp, vp, table, lens), last, rtol=1e-12, atol=1e-13)


def test_moving_blocks_in_the_pool_changes_nothing() -> None:
    q, kp, vp, table, lens = make(2, 2, 1, 2, 4, 4, 3, [8, 5])
    perm = rng.permutation(kp.shape[0])  # block i moves to position inv[i]
    inv = np.argsort(perm)
    moved_table = np.where(table >= 0, inv[np.maximum(table, 0)], -1)
    a = call(q, kp, vp, table, lens)
    b = call(q, kp[perm], vp[perm], moved_table, lens)
    assert tp.allclose(a, b, rtol=1e-13, atol=1e-14)


def test_entries_past_a_rows_blocks_are_not_read() -> None:
    q, kp, vp, table, lens = make(2, 2, 2, 1, 4, 4, 4, [4, 16])
    wild = table.copy()
    wild[0, 1:] = 10**9  # row 0 uses one block: whatever follows is padding
    assert tp.equal(call(q, kp, vp, table, lens), call(q, kp, vp, wild, lens))


def test_pool_values_outside_the_row_do_not_matter() -> None:
    """Slots past S_b in a row's last block and blocks no row uses may hold garbage (inf, NaN)."""
    q, kp, vp, table, lens = make(1, 2, 1, 2, 4, 4, 4, [6], spare=2)
    want = ref(q, kp, vp, table, lens)
    kp2, vp2 = kp.copy(), vp.copy()
    last = table[0, 1]
    kp2[last, 2:], vp2[last, 2:] = np.inf, np.nan
    unused = sorted(set(range(kp.shape[0])) - set(table[0].tolist()))
    kp2[unused], vp2[unused] = np.nan, np.inf
    np.testing.assert_allclose(call(q, kp2, vp2, table, lens).numpy(), want, rtol=1e-12, atol=1e-13)


def test_non_contiguous_inputs() -> None:
    q, kp, vp, table, lens = make(2, 4, 2, 3, 6, 5, 4, [7, 12])
    want = ref(q, kp, vp, table, lens)
    tq = tp.tensor(np.ascontiguousarray(q.swapaxes(1, 2))).transpose(1, 2)
    tk = tp.tensor(np.concatenate([kp, kp], -1))[..., ::2]
    tk.copy_(tp.tensor(kp))
    tv = tp.tensor(np.ascontiguousarray(vp.swapaxes(-1, -2))).transpose(-1, -2)
    tt = tp.tensor(np.ascontiguousarray(table.T)).t()
    tl = tp.tensor(np.repeat(lens, 2))[::2]
    assert not any(t.is_contiguous() for t in (tq, tk, tv, tt, tl))
    np.testing.assert_allclose(tp.paged_attention(tq, tk, tv, tt, tl).numpy(), want, rtol=1e-12, atol=1e-13)


def test_one_thread_equals_many() -> None:
    args = make(3, 8, 2, 2, 32, 32, 16, [100, 250, 64])
    many = call(*args, dtype=tp.float32)
    threads = tp.get_num_threads()
    tp.set_num_threads(1)
    try:
        one = call(*args, dtype=tp.float32)
    finally:
        tp.set_num_threads(threads)
    assert tp.equal(many, one)  # one task per (row, kv head) in either case: the same arithmetic


def test_reference_op_matches() -> None:
    args = make(2, 4, 2, 3, 8, 6, 4, [3, 14])
    np.testing.assert_allclose(
        call(*args, op=tp.ops._paged_attention_reference).numpy(), ref(*args), rtol=1e-12, atol=1e-13
    )


def test_meta_tensors_give_the_shape() -> None:
    out = tp.paged_attention(
        tp.empty(2, 8, 1, 64, device="meta", dtype=tp.bfloat16),
        tp.empty(10, 16, 2, 64, device="meta", dtype=tp.bfloat16),
        tp.empty(10, 16, 2, 32, device="meta", dtype=tp.bfloat16),
        tp.empty(2, 5, device="meta", dtype=tp.int64),
        tp.empty(2, device="meta", dtype=tp.int64),
    )
    assert out.shape == (2, 8, 1, 32) and out.dtype is tp.bfloat16


def test_gradcheck_query_and_pools() -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    q, kp, vp, table, lens = make(2, 2, 1, 2, 2, 3, 2, [3, 4], spare=1)
    leaves = tuple(tp.tensor(x).requires_grad_(True) for x in (q, kp, vp))
    t, n = tp.tensor(table), tp.tensor(lens)
    assert autograd.gradcheck(lambda a, b, c: tp.paged_attention(a, b, c, t, n, scale=0.8), leaves)
    assert autograd.gradgradcheck(lambda a, b, c: tp.paged_attention(a, b, c, t, n), leaves)


def test_gradient_reaches_only_the_blocks_a_row_uses() -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    q, kp, vp, table, lens = make(1, 2, 2, 1, 4, 4, 4, [5], spare=2)
    kt, vt = tp.tensor(kp).requires_grad_(True), tp.tensor(vp).requires_grad_(True)
    out = tp.paged_attention(tp.tensor(q), kt, vt, tp.tensor(table), tp.tensor(lens))
    dk, dv = autograd.grad(out.sum(), (kt, vt))
    touched = np.abs(dk.numpy()).sum((1, 2, 3)) + np.abs(dv.numpy()).sum((1, 2, 3))
    assert set(np.nonzero(touched)[0]) == set(table[0, :2].tolist())
    assert np.all(dv.numpy()[table[0, 1], 1:] == 0)  # slots past S_b = 5 in the row's last block


def test_errors_name_the_op_and_values() -> None:
    q, kp, vp = tp.ones(1, 4, 1, 8), tp.ones(3, 4, 2, 8), tp.ones(3, 4, 2, 6)
    with pytest.raises(IndexError, match=r"paged_attention: block_table\[0, 1\] = 7 is not a block .* N = 3"):
        tp.paged_attention(q, kp, vp, tp.tensor([[0, 7]]), tp.tensor([6]))
    with pytest.raises(
        RuntimeError, match=r"paged_attention: seq_lens\[1\] = 9 exceeds .* 2 blocks x block_size 4"
    ):
        tp.paged_attention(tp.ones(2, 4, 1, 8), kp, vp, tp.tensor([[0, 1], [2, 0]]), tp.tensor([3, 9]))
    with pytest.raises(
        RuntimeError, match=r"paged_attention: the number of query heads \(4\) .* key/value heads \(3\)"
    ):
        tp.paged_attention(q, tp.ones(3, 4, 3, 8), tp.ones(3, 4, 3, 6), tp.tensor([[0]]), tp.tensor([2]))
    with pytest.raises(RuntimeError, match="paged_attention: expected query of shape"):
        tp.paged_attention(tp.ones(4, 1, 8), kp, vp, tp.tensor([[0]]), tp.tensor([2]))
    with pytest.raises(RuntimeError, match="paged_attention: expected an int64 block_table"):
        tp.paged_attention(q, kp, vp, tp.tensor([[0.0]]), tp.tensor([2]))


def test_matches_torch_sdpa_on_the_gathered_cache_with_gradients() -> None:
    torch = pytest.importorskip("torch")
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    q, kp, vp, table, lens = make(1, 4, 2, 3, 8, 6, 4, [10])
    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (q, kp, vp))
    ids = torch.tensor(table[0, :3])
    K = tk[ids].flatten(0, 1)[:10].transpose(0, 1)[None]
    V = tv[ids].flatten(0, 1)[:10].transpose(0, 1)[None]
    mask = torch.ones(3, 10, dtype=torch.bool).tril(10 - 3)  # bottom-right causal
    want = torch.nn.functional.scaled_dot_product_attention(tq, K, V, attn_mask=mask, enable_gqa=True)
    want.square().sum().backward()
    xs = tuple(tp.tensor(x).requires_grad_(True) for x in (q, kp, vp))
    got = tp.paged_attention(*xs, tp.tensor(table), tp.tensor(lens))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-13)
    grads = autograd.grad(got.square().sum(), xs)
    for g, t in zip(grads, (tq, tk, tv), strict=True):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
