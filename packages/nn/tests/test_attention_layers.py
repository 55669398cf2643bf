"""Tests of nn.MultiheadAttention and F.multi_head_attention_forward against a NumPy float64 reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import assert_param_grads_match

import tensorplay as tp
import tensorplay.nn.functional as F
from tensorplay import nn
from tensorplay.autograd import gradcheck


def _np(t: tp.Tensor | None) -> np.ndarray | None:
    return None if t is None else t.numpy(force=True).astype(np.float64)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _additive(mask: np.ndarray) -> np.ndarray:
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask


def np_mha(mha: nn.MultiheadAttention, q, k, v, key_padding_mask=None, attn_mask=None):  # type: ignore[no-untyped-def]
    """Sequence-first [L, N, E] multi-head attention from the paper's equations, with PyTorch's mask rules."""
    E, H = mha.embed_dim, mha.num_heads
    d = E // H
    if mha.in_proj_weight is not None:
        wq, wk, wv = np.split(_np(mha.in_proj_weight), 3)
    else:
        wq, wk, wv = _np(mha.q_proj_weight), _np(mha.k_proj_weight), _np(mha.v_proj_weight)
    bq, bk, bv = np.split(_np(mha.in_proj_bias), 3) if mha.in_proj_bias is not None else (0, 0, 0)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    L, N, _ = Q.shape
    extra = 0
    if mha.bias_k is not None:
        K = np.concatenate([K, np.broadcast_to(_np(mha.bias_k), (1, N, E))])
        V = np.concatenate([V, np.broadcast_to(_np(mha.bias_v), (1, N, E))])
        extra += 1
    Q, K, V = (t.reshape(t.shape[0], N, H, d) for t in (Q, K, V))
    if mha.add_zero_attn:
        K = np.concatenate([K, np.zeros((1, N, H, d))])
        V = np.concatenate([V, np.zeros((1, N, H, d))])
        extra += 1
    S = K.shape[0]
    scores = np.einsum("lnhd,snhd->nhls", Q, K) / math.sqrt(d)
    mask = np.zeros((N, H, L, S))
    if attn_mask is not None:
        m = _additive(attn_mask)
        mask[..., : S - extra] += m if m.ndim == 2 else m.reshape(N, H, L, S - extra)
    if key_padding_mask is not None:
        mask[..., : S - extra] += _additive(key_padding_mask)[:, None, None, :]
    w = _softmax(scores + mask)
    out = np.einsum("nhls,snhd->lnhd", w, V).reshape(L, N, E)
    out = out @ _np(mha.out_proj.weight).T + (_np(mha.out_proj.bias) if mha.out_proj.bias is not None else 0)
    return out, w


def _make(*args, **kwargs) -> nn.MultiheadAttention:  # type: ignore[no-untyped-def]
    tp.manual_seed(0)
    mha = nn.MultiheadAttention(*args, **kwargs).double()
    with tp.no_grad():  # nonzero biases, so that the tests see them
        for p in mha.parameters():
            if p.dim() == 1:
                p.uniform_(-0.5, 0.5)
    return mha


def _t(a: np.ndarray) -> tp.Tensor:
    return tp.tensor(a)


RNG = np.random.default_rng(0)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_self_attention_matches_numpy(need_weights: bool, batch_first: bool) -> None:
    mha = _make(8, 2, batch_first=batch_first)
    x = RNG.standard_normal((5, 3, 8))
    want, w = np_mha(mha, x, x, x)
    xin = _t(x.transpose(1, 0, 2) if batch_first else x)
    out, weights = mha(xin, xin, xin, need_weights=need_weights)
    got = out.numpy(force=True).transpose(1, 0, 2) if batch_first else out.numpy(force=True)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if need_weights:
        np.testing.assert_allclose(weights.numpy(force=True), w.mean(1), rtol=1e-10, atol=1e-12)
    else:
        assert weights is None


def test_cross_attention_with_kdim_vdim_and_per_head_weights() -> None:
    mha = _make(6, 3, kdim=4, vdim=5)
    assert mha.in_proj_weight is None and tuple(mha.k_proj_weight.shape) == (6, 4)
    q, k, v = RNG.standard_normal((2, 3, 6)), RNG.standard_normal((7, 3, 4)), RNG.standard_normal((7, 3, 5))
    want, w = np_mha(mha, q, k, v)
    out, weights = mha(_t(q), _t(k), _t(v), average_attn_weights=False)
    np.testing.assert_allclose(out.numpy(force=True), want, rtol=1e-10, atol=1e-12)
    assert tuple(weights.shape) == (3, 3, 2, 7)
    np.testing.assert_allclose(weights.numpy(force=True), w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        mha(_t(q), _t(k), _t(v), need_weights=False)[0].numpy(force=True), want, rtol=1e-10, atol=1e-12
    )


def test_distinct_query_key_value_with_packed_weights() -> None:
    mha = _make(4, 2)
    q, k, v = (RNG.standard_normal((s, 2, 4)) for s in (3, 5, 5))
    want, _ = np_mha(mha, q, k, v)
    np.testing.assert_allclose(mha(_t(q), _t(k), _t(v))[0].numpy(force=True), want, rtol=1e-10, atol=1e-12)


MASKS = {
    "bool_2d": lambda L, S, N, H: (None, RNG.random((L, S)) < 0.3),
    "float_3d": lambda L, S, N, H: (None, RNG.standard_normal((N * H, L, S))),
    "kpm_bool": lambda L, S, N, H: (np.array([[False] * (S - 1) + [True], [True] + [False] * (S - 1)]), None),
    "kpm_float_and_float_2d": lambda L, S, N, H: (RNG.standard_normal((N, S)), RNG.standard_normal((L, S))),
}


@pytest.mark.parametrize("kind", list(MASKS))
@pytest.mark.parametrize("need_weights", [True, False])
def test_masks_match_numpy(kind: str, need_weights: bool) -> None:
    mha = _make(4, 2)
    L, S, N = 3, 4, 2
    q, kv = RNG.standard_normal((L, N, 4)), RNG.standard_normal((S, N, 4))
    kpm, am = MASKS[kind](L, S, N, 2)
    want, w = np_mha(mha, q, kv, kv, kpm, am)
    out, weights = mha(
        _t(q),
        _t(kv),
        _t(kv),
        key_padding_mask=None if kpm is None else _t(kpm),
        attn_mask=None if am is None else _t(am),
        need_weights=need_weights,
    )
    np.testing.assert_allclose(out.numpy(force=True), want, rtol=1e-10, atol=1e-12)
    if need_weights:
        np.testing.assert_allclose(weights.numpy(force=True), w.mean(1), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("add_bias_kv,add_zero_attn", [(True, False), (False, True), (True, True)])
def test_bias_kv_and_zero_attn_with_masks(add_bias_kv: bool, add_zero_attn: bool) -> None:
    mha = _make(4, 2, add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn)
    assert (mha.bias_k is not None) == add_bias_kv
    q, kv = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((5, 2, 4))
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[0, -2:] = True
    am = RNG.random((3, 5)) < 0.2
    want, w = np_mha(mha, q, kv, kv, kpm, am)
    for need_weights in (True, False):
        out, _ = mha(
            _t(q), _t(kv), _t(kv), key_padding_mask=_t(kpm), attn_mask=_t(am), need_weights=need_weights
        )
        np.testing.assert_allclose(out.numpy(force=True), want, rtol=1e-10, atol=1e-12)


def test_unbatched() -> None:
    mha = _make(4, 2)
    q, kv = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 4))
    kpm = np.array([False, False, True, False, False])
    want, w = np_mha(mha, q[:, None], kv[:, None], kv[:, None], kpm[None])
    out, weights = mha(_t(q), _t(kv), _t(kv), key_padding_mask=_t(kpm))
    assert tuple(out.shape) == (3, 4) and tuple(weights.shape) == (3, 5)
    np.testing.assert_allclose(out.numpy(force=True), want[:, 0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights.numpy(force=True), w.mean(1)[0], rtol=1e-10, atol=1e-12)


def test_is_causal_hint_equals_explicit_mask() -> None:
    mha = _make(4, 2)
    x = _t(RNG.standard_normal((5, 2, 4)))
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=tp.float64)
    want, _ = np_mha(
        mha,
        x.numpy(force=True),
        x.numpy(force=True),
        x.numpy(force=True),
        attn_mask=np.triu(np.ones((5, 5)), 1) > 0,
    )
    for need_weights in (True, False):
        out, _ = mha(x, x, x, attn_mask=causal, is_causal=True, need_weights=need_weights)
        np.testing.assert_allclose(out.numpy(force=True), want, rtol=1e-10, atol=1e-12)


def test_no_bias_and_dropout() -> None:
    mha = _make(4, 2, bias=False)
    assert mha.in_proj_bias is None and mha.out_proj.bias is None
    x = RNG.standard_normal((3, 1, 4))
    np.testing.assert_allclose(
        mha(_t(x), _t(x), _t(x))[0].numpy(force=True), np_mha(mha, x, x, x)[0], rtol=1e-10, atol=1e-12
    )
    drop = _make(4, 2, dropout=1.0)  # every attention weight dropped: only the output bias is left
    out, _ = drop(_t(x), _t(x), _t(x))
    np.testing.assert_allclose(out.numpy(force=True), np.broadcast_to(_np(drop.out_proj.bias), (3, 1, 4)))
    drop.eval()
    np.testing.assert_allclose(
        drop(_t(x), _t(x), _t(x))[0].numpy(force=True), np_mha(drop, x, x, x)[0], rtol=1e-10, atol=1e-12
    )


def test_gradcheck() -> None:
    mha = _make(4, 2, add_bias_kv=True)
    q = tp.tensor(RNG.standard_normal((2, 2, 4)), requires_grad=True)
    kv = tp.tensor(RNG.standard_normal((3, 2, 4)), requires_grad=True)
    am = tp.tensor(RNG.standard_normal((2, 3)))
    assert gradcheck(lambda a, b: mha(a, b, b, attn_mask=am), (q, kv))
    assert gradcheck(lambda a, b: mha(a, b, b, need_weights=False)[0], (q, kv))


def test_functional_form_matches_module() -> None:
    mha = _make(4, 2)
    x = _t(RNG.standard_normal((3, 2, 4)))
    out, w = F.multi_head_attention_forward(
        x,
        x,
        x,
        4,
        2,
        mha.in_proj_weight,
        mha.in_proj_bias,
        None,
        None,
        False,
        0.0,
        mha.out_proj.weight,
        mha.out_proj.bias,
    )
    want, want_w = mha(x, x, x)
    np.testing.assert_array_equal(out.numpy(force=True), want.numpy(force=True))
    np.testing.assert_array_equal(w.numpy(force=True), want_w.numpy(force=True))
    assert F.scaled_dot_product_attention is tp.scaled_dot_product_attention


def test_parameters_and_init() -> None:
    tp.manual_seed(1)
    mha = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    names = [n for n, _ in mha.named_parameters()]
    assert names == ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"]
    assert float(mha.in_proj_bias.abs().sum()) == 0 and float(mha.out_proj.bias.abs().sum()) == 0
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform_ of a [24, 8] weight
    assert float(mha.in_proj_weight.abs().max()) <= bound
    assert float(mha.in_proj_weight.abs().max()) > 0.8 * bound
    sep = nn.MultiheadAttention(8, 2, kdim=3, vdim=5)
    assert [n for n, _ in sep.named_parameters()][:3] == ["q_proj_weight", "k_proj_weight", "v_proj_weight"]


def test_errors() -> None:
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0, got embed_dim=0"):
        nn.MultiheadAttention(0, 1)
    mha = nn.MultiheadAttention(4, 2)
    x = tp.zeros(3, 2, 4)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(
        RuntimeError,
        match=r"The shape of the 2D attn_mask is tensorplay.Size\(\[3, 4\]\), but should be \(3, 3\)\.",
    ):
        mha(x, x, x, attn_mask=tp.zeros(3, 4))
    with pytest.raises(
        RuntimeError,
        match=r"The shape of the 3D attn_mask is tensorplay.Size\(\[2, 3, 3\]\), but should be \(4, 3, 3\)\.",
    ):
        mha(x, x, x, attn_mask=tp.zeros(2, 3, 3))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask are supported"):
        mha(x, x, x, attn_mask=tp.zeros(3, 3, dtype=tp.int64))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
        mha(tp.zeros(3, 2, 5), tp.zeros(3, 2, 5), tp.zeros(3, 2, 5))
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D but found 2-D and 3-D"):
        mha(x, tp.zeros(3, 4), x)
    with pytest.raises(
        AssertionError, match="query should be unbatched 2D or batched 3D tensor but received 4-D"
    ):
        mha(tp.zeros(1, 3, 2, 4), x, x)
    with pytest.raises(AssertionError, match=r"Expected key_padded_mask.shape\[1\] to be 3, but got 5"):
        mha(x, x, x, key_padding_mask=tp.zeros(2, 5, dtype=tp.bool))
    with pytest.warns(
        UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"
    ):
        mha(x, x, x, key_padding_mask=tp.zeros(2, 3, dtype=tp.bool), attn_mask=tp.zeros(3, 3))


def test_matches_torch_outputs_and_gradients() -> None:
    torch = pytest.importorskip("torch")
    kwargs = {
        "embed_dim": 6,
        "num_heads": 3,
        "add_bias_kv": True,
        "add_zero_attn": True,
        "kdim": 4,
        "vdim": 5,
    }
    ours = _make(**kwargs)
    theirs = torch.nn.MultiheadAttention(**kwargs).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy(force=True)) for k, v in ours.state_dict().items()})
    q, k, v = RNG.standard_normal((3, 2, 6)), RNG.standard_normal((4, 2, 4)), RNG.standard_normal((4, 2, 5))
    kpm = np.array([[False, False, True, False], [False, False, False, False]])
    am = RNG.standard_normal((3, 4))
    o_q, t_q = tp.tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
    o_out, o_w = ours(o_q, _t(k), _t(v), key_padding_mask=_t(kpm), attn_mask=_t(am))
    t_out, t_w = theirs(
        t_q, torch.tensor(k), torch.tensor(v), key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(am)
    )
    np.testing.assert_allclose(o_out.numpy(force=True), t_out.numpy(force=True), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(o_w.numpy(force=True), t_w.numpy(force=True), rtol=1e-10, atol=1e-12)
    (o_out * o_out).sum().backward()
    (t_out * t_out).sum().backward()
    np.testing.assert_allclose(o_q.grad.numpy(force=True), t_q.grad.numpy(force=True), rtol=1e-9, atol=1e-11)
    assert_param_grads_match(ours, theirs, rtol=1e-9, atol=1e-11)


def test_same_seed_same_weights_as_torch() -> None:
    torch = pytest.importorskip("torch")
    tp.manual_seed(5)
    torch.manual_seed(5)
    ours, theirs = (
        nn.MultiheadAttention(8, 2, add_bias_kv=True),
        torch.nn.MultiheadAttention(8, 2, add_bias_kv=True),
    )
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert n1 == n2
        np.testing.assert_array_equal(p1.numpy(force=True), p2.numpy(force=True))


@pytest.mark.parametrize("name", ["modules.multihead_attention", "functional.attention"])
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    module = importlib.import_module(f"tensorplay_nn.nn.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
