"""Tests of CrossAttention and CausalEncoderDecoder (modules/causal_encoder_decoder.py): attributes and
errors, float64 NumPy references for the cross-attention and for a whole model built with a custom
mixer_factory, the wiring of the default (GQA) model, backprop to every parameter, what is and is not
causal, MLA mixers, and the runnable code of docs/mixers/encoder_decoder.md."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn.modules import causal_encoder_decoder
from tensorplay.nn.modules.causal_attention import GroupedQueryAttention
from tensorplay.nn.modules.causal_encoder_decoder import CausalEncoderDecoder, CrossAttention
from tensorplay.nn.modules.latent_attention import MultiheadLatentAttention
from tensorplay.nn.modules.modern_block import TransformerBlock

DOC = Path(__file__).resolve().parents[3] / "docs" / "mixers" / "encoder_decoder.md"


def _np(t: tp.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def _lin(layer, x: np.ndarray) -> np.ndarray:
    y = x @ _np(layer.weight).T
    return y if layer.bias is None else y + _np(layer.bias)


def _rms(norm, x: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + norm.eps) * _np(norm.weight)


def _np_cross(m: CrossAttention, x: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """Unmasked multi-head attention of x over memory in float64, one head at a time."""
    b, t, _ = x.shape
    s, h, d = memory.shape[1], m.num_heads, m.head_dim
    q = _lin(m.q_proj, x).reshape(b, t, h, d)
    k = _lin(m.k_proj, memory).reshape(b, s, h, d)
    v = _lin(m.v_proj, memory).reshape(b, s, h, d)
    out = np.empty((b, t, h, d))
    for head in range(h):
        scores = q[:, :, head] @ k[:, :, head].transpose(0, 2, 1) / np.sqrt(d)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        out[:, :, head] = (w / w.sum(-1, keepdims=True)) @ v[:, :, head]
    return _lin(m.o_proj, out.reshape(b, t, h * d))


def _x(b: int, t: int, c: int, seed: int = 0, dtype=tp.float32) -> tp.Tensor:
    return tp.tensor(np.random.default_rng(seed).standard_normal((b, t, c)), dtype=dtype)


def test_cross_attention_attributes_defaults_and_errors() -> None:
    m = CrossAttention(24, 4)
    assert (m.hidden_size, m.num_heads, m.head_dim, m.kv_dim, m.scaling) == (24, 4, 6, 24, 6**-0.5)
    assert tuple(m.q_proj.weight.shape) == (24, 24) and tuple(m.k_proj.weight.shape) == (24, 24)
    assert m.q_proj.bias is None and tuple(m.o_proj.weight.shape) == (24, 24)
    m = CrossAttention(24, 4, head_dim=5, kv_dim=10, bias=True)
    assert tuple(m.q_proj.weight.shape) == (20, 24) and tuple(m.v_proj.weight.shape) == (20, 10)
    assert tuple(m.o_proj.weight.shape) == (24, 20) and m.k_proj.bias is not None
    with pytest.raises(
        ValueError, match=r"CrossAttention: hidden_size \(30\) must be divisible by num_heads \(4\)"
    ):
        CrossAttention(30, 4)
    with pytest.raises(ValueError, match=r"expected x \[B, T, 24\], got \(2, 3, 8\)"):
        m(tp.zeros(2, 3, 8), tp.zeros(2, 3, 10))
    with pytest.raises(ValueError, match=r"expected memory \[2, S, 10\], got \(2, 3, 24\)"):
        m(tp.zeros(2, 3, 24), tp.zeros(2, 3, 24))
    with pytest.raises(ValueError, match=r"expected memory \[2, S, 10\], got \(1, 3, 10\)"):
        m(tp.zeros(2, 3, 24), tp.zeros(1, 3, 10))


@pytest.mark.parametrize(
    "head_dim,kv_dim,bias,t,s", [(None, None, False, 5, 7), (5, 10, True, 4, 3), (None, 12, False, 1, 1)]
)
def test_cross_attention_matches_numpy(head_dim, kv_dim, bias, t, s) -> None:
    tp.manual_seed(0)
    m = CrossAttention(24, 4, head_dim=head_dim, kv_dim=kv_dim, bias=bias, dtype=tp.float64)
    x = _x(2, t, 24, seed=1, dtype=tp.float64)
    memory = _x(2, s, m.kv_dim, seed=2, dtype=tp.float64)
    np.testing.assert_allclose(
        m(x, memory).detach().numpy(), _np_cross(m, x.numpy(), memory.numpy()), atol=1e-12
    )
    m32 = CrossAttention(24, 4, head_dim=head_dim, kv_dim=kv_dim, bias=bias)
    x32, mem32 = x.float(), memory.float()
    np.testing.assert_allclose(
        m32(x32, mem32).detach().numpy(), _np_cross(m32, _np(x32), _np(mem32)), atol=2e-5
    )


def test_cross_attention_non_contiguous_inputs_and_gradcheck() -> None:
    tp.manual_seed(3)
    m = CrossAttention(8, 2, kv_dim=6, dtype=tp.float64)
    x = _x(3, 2, 8, seed=4, dtype=tp.float64).transpose(0, 1)  # [2, 3, 8], not contiguous
    memory = _x(4, 2, 6, seed=5, dtype=tp.float64).transpose(0, 1)
    assert not x.is_contiguous()
    np.testing.assert_allclose(
        m(x, memory).detach().numpy(), _np_cross(m, x.numpy(), memory.numpy()), atol=1e-12
    )
    x = x.contiguous().requires_grad_(True)
    memory = memory.contiguous().requires_grad_(True)
    assert tp.autograd.gradcheck(m, (x, memory))


class _TokenLinear(nn.Module):
    """A mixer without time mixing (y_t = W x_t): makes the whole model computable in NumPy."""

    def __init__(self, hidden_size: int, layer_idx: int = 0) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(hidden_size, hidden_size, bias=False, dtype=tp.float64)

    def forward(self, hidden_states, position_ids=None, past_key_values=None):
        return self.proj(hidden_states)


def _np_block(block: TransformerBlock, x: np.ndarray) -> np.ndarray:
    h = x + _lin(block.mixer.proj, _rms(block.input_norm, x))
    n = _rms(block.post_norm, h)
    g, u = _lin(block.mlp.gate_proj, n), _lin(block.mlp.up_proj, n)
    return h + _lin(block.mlp.down_proj, g / (1 + np.exp(-g)) * u)


def test_custom_mixer_factory_model_matches_numpy() -> None:
    tp.manual_seed(6)
    made = []

    def factory(hidden_size: int, layer_idx: int) -> nn.Module:
        made.append((hidden_size, layer_idx))
        return _TokenLinear(hidden_size, layer_idx)

    model = CausalEncoderDecoder(
        16,
        4,
        n_encoder_layers=3,
        n_decoder_layers=2,
        mixer_factory=factory,
        mlp_intermediate_size=20,
        rms_norm_eps=1e-5,
        dtype=tp.float64,
    )
    assert made == [(16, 0), (16, 1), (16, 2), (16, 0), (16, 1)]  # layer indices restart per stack
    with tp.no_grad():
        model.encoder_final_norm.weight.copy_(tp.linspace(0.5, 1.5, 16))
    assert model.encoder[0].mlp.intermediate_size == 20 and model.decoder[1].post_norm.eps == 1e-5
    assert model.encoder_final_norm.eps == 1e-5
    x = np.random.default_rng(7).standard_normal((2, 5, 16))
    e = x
    for block in model.encoder:
        e = _np_block(block, e)
    memory = _lin(model.memory_proj, _rms(model.encoder_final_norm, e))
    d = memory
    for block, cross in zip(model.decoder, model.cross_attention, strict=True):
        d = _np_block(block, d)
        d = d + _np_cross(cross, d, memory)
    got = model(tp.tensor(x, dtype=tp.float64)).detach().numpy()
    np.testing.assert_allclose(got, d, atol=1e-11)


def test_default_model_structure() -> None:
    model = CausalEncoderDecoder(32, 4, n_encoder_layers=3, num_kv_heads=2)
    assert len(model.encoder) == 3 and len(model.decoder) == 2 and len(model.cross_attention) == 2
    for stack in (model.encoder, model.decoder):
        for i, block in enumerate(stack):
            assert isinstance(block, TransformerBlock) and isinstance(block.mixer, GroupedQueryAttention)
            assert (block.mixer.layer_idx, block.mixer.num_heads, block.mixer.num_kv_heads) == (i, 4, 2)
    for cross in model.cross_attention:
        assert isinstance(cross, CrossAttention) and (cross.hidden_size, cross.num_heads, cross.kv_dim) == (
            32,
            4,
            32,
        )
    assert isinstance(model.encoder_final_norm, nn.RMSNorm) and model.encoder_final_norm.eps == 1e-6
    assert tuple(model.memory_proj.weight.shape) == (32, 32) and model.memory_proj.bias is None
    assert model.encoder[0].mixer.num_kv_heads == 2
    assert CausalEncoderDecoder(32, 4).decoder[0].mixer.num_kv_heads == 4  # num_kv_heads=None: MHA


def test_default_model_wiring_matches_its_parts() -> None:
    # The forward equals the documented composition of its own submodules (each part has its own tests).
    tp.manual_seed(8)
    model = CausalEncoderDecoder(16, 4, n_encoder_layers=1, n_decoder_layers=3, num_kv_heads=1)
    x = _x(2, 6, 16, seed=9)
    states = model.encoder[0](x)
    memory = model.memory_proj(model.encoder_final_norm(states))
    states = memory
    for block, cross in zip(model.decoder, model.cross_attention, strict=True):
        states = block(states)
        states = states + cross(states, memory)
    np.testing.assert_allclose(model(x).detach().numpy(), states.detach().numpy(), atol=1e-6)


def test_value_errors() -> None:
    msg = r"CausalEncoderDecoder: hidden_size \(30\) must be divisible by num_heads \(4\)"
    with pytest.raises(ValueError, match=msg):
        CausalEncoderDecoder(30, 4, mixer_factory=lambda size, i: _TokenLinear(size, i))
    with pytest.raises(ValueError, match=msg):
        CausalEncoderDecoder(30, 4, n_decoder_layers=0)
    with pytest.raises(
        ValueError, match=r"CausalEncoderDecoder: expected hidden_states \[B, T, 16\], got \(2, 16\)"
    ):
        CausalEncoderDecoder(16, 2)(tp.zeros(2, 16))


def test_backprop_reaches_every_parameter() -> None:
    tp.manual_seed(10)
    model = CausalEncoderDecoder(16, 4, num_kv_heads=2, mlp_intermediate_size=24)
    x = _x(2, 5, 16, seed=11).requires_grad_(True)
    model(x).square().mean().backward()
    params = dict(model.named_parameters())
    assert any(name.startswith("encoder.1.") for name in params) and "memory_proj.weight" in params
    for name, param in params.items():
        assert param.grad is not None, name
        assert bool(tp.isfinite(param.grad).all()) and float(param.grad.abs().sum()) > 0, name
    assert bool(tp.isfinite(x.grad).all())


def test_memory_is_causal_but_the_unmasked_cross_attention_reads_the_future() -> None:
    tp.manual_seed(12)
    model = CausalEncoderDecoder(16, 4, num_kv_heads=2)
    x = _x(1, 8, 16, seed=13)
    x2 = x.clone()
    x2[:, 5:] = 30.0  # change the future of position 4

    def memory(inp):
        for block in model.encoder:
            inp = block(inp)
        return model.memory_proj(model.encoder_final_norm(inp)).detach().numpy()

    m1, m2 = memory(x), memory(x2)
    np.testing.assert_allclose(m2[:, :5], m1[:, :5], atol=1e-6)  # encoder and memory: causal
    y1, y2 = model(x).detach().numpy(), model(x2).detach().numpy()
    assert np.abs(y2[:, :5] - y1[:, :5]).max() > 1e-3  # every output position reads the whole memory
    # Without the cross-attentions' contribution the model is causal: they are the only path to the future.
    with tp.no_grad():
        for cross in model.cross_attention:
            cross.o_proj.weight.zero_()
    y1, y2 = model(x).detach().numpy(), model(x2).detach().numpy()
    np.testing.assert_allclose(y2[:, :5], y1[:, :5], atol=1e-6)


def test_mla_mixers_in_an_encoder_decoder() -> None:
    tp.manual_seed(14)

    def mla(hidden_size: int, layer_idx: int) -> nn.Module:
        return MultiheadLatentAttention(hidden_size, 4, 8, 4, 4, layer_idx=layer_idx)

    model = CausalEncoderDecoder(16, 4, mixer_factory=mla)
    assert [b.mixer.layer_idx for b in model.decoder] == [0, 1]
    assert all(isinstance(b.mixer, MultiheadLatentAttention) for b in model.encoder)
    x = _x(2, 6, 16, seed=15)
    y = model(x)
    assert y.shape == (2, 6, 16)
    y.sum().backward()
    assert all(p.grad is not None and bool(tp.isfinite(p.grad).all()) for p in model.parameters())


def test_trains_to_copy_a_shifted_sequence() -> None:
    # Each output position must reproduce the input one step back: the model learns it (loss falls).
    tp.manual_seed(16)
    model = CausalEncoderDecoder(16, 2, n_encoder_layers=1, n_decoder_layers=1, mlp_intermediate_size=32)
    x = _x(8, 6, 16, seed=17)
    target = tp.cat([tp.zeros(8, 1, 16), x[:, :-1]], 1)
    opt = tp.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(60):
        loss = (model(x) - target).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses[::10]


def test_docstring_examples_run() -> None:
    result = doctest.testmod(
        causal_encoder_decoder, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0 and result.attempted > 0


def test_doc_page_code_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert blocks, f"{DOC} has no python code block"
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {})
