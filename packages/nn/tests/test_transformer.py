"""Tests of the Transformer family (encoder / decoder layers, stacks, Transformer) against NumPy float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import assert_param_grads_match

import tensorplay as tp
from tensorplay import nn

RNG = np.random.default_rng(0)
_erf = np.vectorize(math.erf)


def _np(t: tp.Tensor | None) -> np.ndarray | float:
    return 0.0 if t is None else t.numpy(force=True).astype(np.float64)


def _layer_norm(x: np.ndarray, norm: nn.LayerNorm) -> np.ndarray:
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + norm.eps) * _np(norm.weight) + _np(norm.bias)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _mha(mha: nn.MultiheadAttention, q: np.ndarray, kv: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """[L, N, E] attention with an additive [L, S] mask (or None)."""
    E, H = mha.embed_dim, mha.num_heads
    d = E // H
    wq, wk, wv = np.split(_np(mha.in_proj_weight), 3)
    bq, bk, bv = np.split(_np(mha.in_proj_bias), 3) if mha.in_proj_bias is not None else (0, 0, 0)
    L, N, S = q.shape[0], q.shape[1], kv.shape[0]
    Q = (q @ wq.T + bq).reshape(L, N, H, d)
    K = (kv @ wk.T + bk).reshape(S, N, H, d)
    V = (kv @ wv.T + bv).reshape(S, N, H, d)
    scores = np.einsum("lnhd,snhd->nhls", Q, K) / math.sqrt(d) + (0 if mask is None else mask)
    out = np.einsum("nhls,snhd->lnhd", _softmax(scores), V).reshape(L, N, E)
    return out @ _np(mha.out_proj.weight).T + _np(mha.out_proj.bias)


def _ff(layer: nn.Module, x: np.ndarray, act: str) -> np.ndarray:
    h = x @ _np(layer.linear1.weight).T + _np(layer.linear1.bias)
    h = np.maximum(h, 0) if act == "relu" else 0.5 * h * (1 + _erf(h / math.sqrt(2)))
    return h @ _np(layer.linear2.weight).T + _np(layer.linear2.bias)


def np_encoder_layer(layer, x, mask, act):  # type: ignore[no-untyped-def]
    if layer.norm_first:
        x = x + _mha(layer.self_attn, _layer_norm(x, layer.norm1), _layer_norm(x, layer.norm1), mask)
        return x + _ff(layer, _layer_norm(x, layer.norm2), act)
    x = _layer_norm(x + _mha(layer.self_attn, x, x, mask), layer.norm1)
    return _layer_norm(x + _ff(layer, x, act), layer.norm2)


def np_decoder_layer(layer, x, mem, tgt_mask, act):  # type: ignore[no-untyped-def]
    if layer.norm_first:
        n1 = _layer_norm(x, layer.norm1)
        x = x + _mha(layer.self_attn, n1, n1, tgt_mask)
        x = x + _mha(layer.multihead_attn, _layer_norm(x, layer.norm2), mem, None)
        return x + _ff(layer, _layer_norm(x, layer.norm3), act)
    x = _layer_norm(x + _mha(layer.self_attn, x, x, tgt_mask), layer.norm1)
    x = _layer_norm(x + _mha(layer.multihead_attn, x, mem, None), layer.norm2)
    return _layer_norm(x + _ff(layer, x, act), layer.norm3)


def _randomise(module: nn.Module) -> nn.Module:
    """Random LayerNorm weights and biases too, so that the tests see every parameter."""
    module.double().eval()
    with tp.no_grad():
        for p in module.parameters():
            if p.dim() == 1:
                p.copy_(tp.tensor(RNG.uniform(0.5, 1.5, tuple(p.shape))))
    return module


def _causal(n: int) -> np.ndarray:
    return np.triu(np.full((n, n), -np.inf), 1)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("act", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_matches_numpy(norm_first: bool, act: str, batch_first: bool) -> None:
    tp.manual_seed(0)
    layer = _randomise(
        nn.TransformerEncoderLayer(8, 2, 16, activation=act, norm_first=norm_first, batch_first=batch_first)
    )
    x = RNG.standard_normal((5, 3, 8))
    want = np_encoder_layer(layer, x, None, act)
    got = layer(tp.tensor(x.transpose(1, 0, 2) if batch_first else x)).numpy(force=True)
    np.testing.assert_allclose(got.transpose(1, 0, 2) if batch_first else got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_numpy_with_causal_mask(norm_first: bool) -> None:
    tp.manual_seed(0)
    layer = _randomise(nn.TransformerDecoderLayer(8, 4, 12, norm_first=norm_first))
    x, mem = RNG.standard_normal((4, 2, 8)), RNG.standard_normal((6, 2, 8))
    want = np_decoder_layer(layer, x, mem, _causal(4), "relu")
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=tp.float64)
    for causal in (False, True):
        got = layer(tp.tensor(x), tp.tensor(mem), tgt_mask=mask, tgt_is_causal=causal)
        np.testing.assert_allclose(got.numpy(force=True), want, rtol=1e-10, atol=1e-12)


def test_callable_activation_and_no_bias() -> None:
    tp.manual_seed(0)
    layer = _randomise(nn.TransformerEncoderLayer(4, 2, 8, activation=tp.gelu, bias=False))
    assert layer.linear1.bias is None and layer.norm1.bias is None
    x = RNG.standard_normal((3, 2, 4))
    np.testing.assert_allclose(
        layer(tp.tensor(x)).numpy(force=True),
        np_encoder_layer(layer, x, None, "gelu"),
        rtol=1e-10,
        atol=1e-12,
    )


def test_encoder_stack_with_padding_mask_and_final_norm() -> None:
    tp.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 8)
    enc = _randomise(nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(4)))
    assert len(enc.layers) == 3 and enc.layers[0] is not enc.layers[1]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    x = RNG.standard_normal((5, 2, 4))
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[1, 3:] = True
    want = x
    for i in range(3):
        mask = np.where(kpm, -np.inf, 0.0)[:, None, None, :]  # [N, 1, 1, S] over [N, H, L, S]
        want = np_encoder_layer_kpm(enc.layers[i], want, mask)
    want = _layer_norm(want, enc.norm)
    got = enc(tp.tensor(x), src_key_padding_mask=tp.tensor(kpm))
    np.testing.assert_allclose(got.numpy(force=True), want, rtol=1e-10, atol=1e-12)


def np_encoder_layer_kpm(layer, x, mask):  # type: ignore[no-untyped-def]
    # post-norm with a [N, 1, 1, S] additive mask: _mha adds it to the [N, H, L, S] scores
    x = _layer_norm(x + _mha(layer.self_attn, x, x, mask), layer.norm1)
    return _layer_norm(x + _ff(layer, x, "relu"), layer.norm2)


@pytest.mark.parametrize("norm_first", [False, True])
def test_full_transformer_matches_numpy(norm_first: bool) -> None:
    tp.manual_seed(0)
    model = _randomise(nn.Transformer(8, 2, 2, 2, 16, norm_first=norm_first, batch_first=True))
    src, tgt = RNG.standard_normal((2, 6, 8)), RNG.standard_normal((2, 4, 8))
    mem = src.transpose(1, 0, 2)
    for layer in model.encoder.layers:
        mem = np_encoder_layer(layer, mem, None, "relu")
    mem = _layer_norm(mem, model.encoder.norm)
    out = tgt.transpose(1, 0, 2)
    for layer in model.decoder.layers:
        out = np_decoder_layer(layer, out, mem, _causal(4), "relu")
    want = _layer_norm(out, model.decoder.norm).transpose(1, 0, 2)
    mask = model.generate_square_subsequent_mask(4, dtype=tp.float64)
    got = model(tp.tensor(src), tp.tensor(tgt), tgt_mask=mask)
    np.testing.assert_allclose(got.numpy(force=True), want, rtol=1e-10, atol=1e-12)


def test_unbatched_input() -> None:
    tp.manual_seed(0)
    layer = _randomise(nn.TransformerEncoderLayer(4, 2, 8))
    x = RNG.standard_normal((3, 4))
    got = layer(tp.tensor(x))
    np.testing.assert_allclose(
        got.numpy(force=True), np_encoder_layer(layer, x[:, None], None, "relu")[:, 0], rtol=1e-10, atol=1e-12
    )


def test_transformer_init_and_structure() -> None:
    tp.manual_seed(0)
    model = nn.Transformer(8, 2, 1, 1, 16)
    names = dict(model.named_parameters())
    assert (
        "encoder.layers.0.self_attn.in_proj_weight" in names
        and "decoder.layers.0.multihead_attn.out_proj.weight" in names
    )
    assert "decoder.norm.weight" in names and "encoder.layers.0.norm2.bias" in names
    w = names["encoder.layers.0.linear1.weight"]  # xavier_uniform_ on [16, 8]
    assert float(w.abs().max()) <= math.sqrt(6 / 24)
    m = nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(m.numpy(force=True), _causal(3).astype(np.float32))
    assert m.dtype == tp.float32


def test_dropout_only_in_training() -> None:
    tp.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.5).double()
    x = tp.tensor(RNG.standard_normal((3, 2, 4)))
    layer.train()
    a, b = layer(x), layer(x)
    assert not np.allclose(a.numpy(force=True), b.numpy(force=True))
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(force=True), layer(x).numpy(force=True))


def test_encoder_layer_trains_with_default_dropout() -> None:
    # Default dropout (0.1) in train mode reaches scaled_dot_product_attention with dropout_p > 0, whose
    # backward must exist (tpx's Note [Attention with dropout under autograd]).
    tp.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    layer.train()
    x = tp.tensor(RNG.standard_normal((4, 5, 8)).astype(np.float32))
    target = tp.tensor(RNG.standard_normal((4, 5, 8)).astype(np.float32))
    opt = tp.optim.Adam(layer.parameters(), lr=1e-2)
    losses = []
    for _ in range(15):
        opt.zero_grad()
        loss = (layer(x) - target).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert layer.self_attn.in_proj_weight.grad is not None
    assert np.mean(losses[-3:]) < 0.8 * np.mean(losses[:3]), losses


def test_gradients_flow_to_every_parameter() -> None:
    tp.manual_seed(0)
    model = nn.Transformer(4, 2, 1, 1, 8, dropout=0.0).double()
    src, tgt = tp.tensor(RNG.standard_normal((3, 2, 4))), tp.tensor(RNG.standard_normal((2, 2, 4)))
    model(src, tgt).pow(2).sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name


def test_gradcheck_layers() -> None:
    from tensorplay.autograd import gradcheck

    tp.manual_seed(0)
    enc = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double()
    dec = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0).double()
    x = tp.tensor(RNG.standard_normal((3, 1, 4)), requires_grad=True)
    mem = tp.tensor(RNG.standard_normal((2, 1, 4)), requires_grad=True)
    assert gradcheck(lambda a: enc(a), (x,))
    assert gradcheck(lambda a, m: dec(a, m), (x, mem))


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    model = nn.Transformer(4, 2, 1, 1, 8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(tp.zeros(3, 2, 4), tp.zeros(3, 1, 4))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(tp.zeros(3, 2, 4), tp.zeros(3, 2, 5))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        nn.TransformerEncoderLayer(4, 2, 8)(tp.zeros(3, 2, 4), is_causal=True)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_torch(norm_first: bool) -> None:
    torch = pytest.importorskip("torch")
    kwargs = {
        "d_model": 8,
        "nhead": 2,
        "num_encoder_layers": 2,
        "num_decoder_layers": 1,
        "dim_feedforward": 12,
        "dropout": 0.0,
        "norm_first": norm_first,
        "activation": "gelu",
    }
    tp.manual_seed(0)
    ours = _randomise(nn.Transformer(**kwargs))
    theirs = torch.nn.Transformer(**kwargs).double().eval()
    theirs.load_state_dict({k: torch.tensor(v.numpy(force=True)) for k, v in ours.state_dict().items()})
    src, tgt = RNG.standard_normal((5, 2, 8)), RNG.standard_normal((3, 2, 8))
    kpm = np.array([[False] * 5, [False, False, False, True, True]])
    o_src, t_src = tp.tensor(src, requires_grad=True), torch.tensor(src, requires_grad=True)
    o = ours(
        o_src,
        tp.tensor(tgt),
        tgt_mask=ours.generate_square_subsequent_mask(3, dtype=tp.float64),
        src_key_padding_mask=tp.tensor(kpm),
        memory_key_padding_mask=tp.tensor(kpm),
    )
    t = theirs(
        t_src,
        torch.tensor(tgt),
        tgt_mask=theirs.generate_square_subsequent_mask(3, dtype=torch.float64),
        src_key_padding_mask=torch.tensor(kpm),
        memory_key_padding_mask=torch.tensor(kpm),
    )
    np.testing.assert_allclose(o.numpy(force=True), t.numpy(force=True), rtol=1e-9, atol=1e-11)
    (o * o).sum().backward()
    (t * t).sum().backward()
    np.testing.assert_allclose(
        o_src.grad.numpy(force=True), t_src.grad.numpy(force=True), rtol=1e-8, atol=1e-10
    )
    assert_param_grads_match(ours, theirs, rtol=1e-8, atol=1e-10)


def test_docstring_examples() -> None:
    import doctest
    import importlib

    module = importlib.import_module("tensorplay_nn.nn.modules.transformer")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
