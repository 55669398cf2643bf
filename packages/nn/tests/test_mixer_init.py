"""Every token mixer nn exports, exactly as constructed (no weights loaded, nothing re-initialised), gets a
gradient on every parameter from one forward + backward, and a 2-layer model of it learns.

test_mixer_zoo.py checks the mixers' behaviour in depth; this file guards their initialisation: a parameter
initialised so that a path is dead (GatedDeltaNet's and KimiDeltaAttention's short-convolution filter once
started at zero, which zeroed q, k, v, the output and every gradient of the layer) makes a model that cannot
learn. References: NumPy for the losses and for the best loss a model blind to context can reach.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_mixer_zoo import HIDDEN, MIXERS, VOCAB, Mixer, ZooLM, _np_bigram_loss, _np_cross_entropy

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import functional as F
from tensorplay.nn.modules.causal_encoder_decoder import CrossAttention
from tensorplay.nn.modules.latent_attention import MultiheadLatentAttention


class CausalSelfAttention(nn.Module):
    """`nn.MultiheadAttention` (PyTorch's layer, batch first) as a causal self-attention token mixer."""

    def __init__(self, hidden_size: int, num_heads: int) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(hidden_size, num_heads, batch_first=True)

    def forward(self, hidden_states, position_ids=None, past_key_values=None):
        t = int(hidden_states.shape[1])
        future = tp.ones(t, t, dtype=tp.bool).triu(1)
        return self.attn(hidden_states, hidden_states, hidden_states, attn_mask=future, need_weights=False)[0]


def _no_cache(mixer: nn.Module) -> None:
    return None


# The zoo's mixers (test_mixer_zoo.py: GQA, MLA with the explicit path, CSA, GatedDeltaNet, Kimi), plus what
# the zoo leaves out because it has no cache tests to run: MLA's fused SDPA path (v_head_dim == nope + rope,
# full-rank queries) and PyTorch's nn.MultiheadAttention.
ALL_MIXERS = [
    *MIXERS,
    Mixer(
        "mla_fused",
        lambda c, i: MultiheadLatentAttention(
            c, 4, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=12, layer_idx=i
        ),
        _no_cache,
        (),
    ),
    Mixer("multihead_attention", lambda c, i: CausalSelfAttention(c, 4), _no_cache, ()),
]
mixers = pytest.mark.parametrize("mixer", ALL_MIXERS, ids=lambda m: m.name)


def _check_every_parameter_has_a_nonzero_gradient(mixer: Mixer, module: nn.Module) -> None:
    """Non-zero, finite gradients everywhere but in `mixer.no_grad_parts` (CSA's indexer), which get none."""
    for name, p in module.named_parameters():
        if any(part in f".{name}" for part in mixer.no_grad_parts):
            assert p.grad is None, f"{mixer.name}: {name} was expected to get no gradient"
            continue
        assert p.grad is not None, f"{mixer.name}: no gradient reached {name}"
        g = p.grad.numpy()
        assert np.isfinite(g).all(), f"{mixer.name}: non-finite gradient in {name}"
        assert np.abs(g).max() > 0, f"{mixer.name}: the gradient of {name} is zero right after construction"


@mixers
def test_every_parameter_gets_a_gradient_right_after_construction(mixer: Mixer) -> None:
    tp.manual_seed(0)
    module = mixer.make(HIDDEN, 0)
    x = tp.randn(2, 12, HIDDEN)  # 12 tokens: CSA uses both its window and its compressed entries
    out = module(x)
    assert np.abs(out.detach().numpy()).max() > 1e-3, f"{mixer.name}: the mixer's output is (near) zero"
    (out * tp.randn(2, 12, HIDDEN)).sum().backward()
    _check_every_parameter_has_a_nonzero_gradient(mixer, module)


def test_cross_attention_gets_a_gradient_on_every_parameter_right_after_construction() -> None:
    tp.manual_seed(0)
    module = CrossAttention(HIDDEN, 4, kv_dim=24)
    out = module(tp.randn(2, 5, HIDDEN), tp.randn(2, 7, 24))
    (out * tp.randn(2, 5, HIDDEN)).sum().backward()
    _check_every_parameter_has_a_nonzero_gradient(Mixer("cross_attention", None, _no_cache, ()), module)


@mixers
def test_a_fresh_two_layer_model_learns_a_repeated_sequence(mixer: Mixer) -> None:
    # 0 is followed by 1, 2 or 3 in turn, so what follows a 0 depends on the token before it: a model that
    # cannot mix tokens (a dead mixer leaves embeddings + MLPs, a bigram model) is stuck at the bigram bound.
    period = np.array([0, 1, 0, 2, 0, 3])
    rows = np.stack([np.tile(period, 4), np.roll(np.tile(period, 4), 2)])  # 2 rows of 24 tokens
    bound = _np_bigram_loss(rows)
    tp.manual_seed(0)
    model = ZooLM(mixer)  # embedding, two TransformerBlocks around fresh mixers, norm, lm head
    opt = tp.optim.AdamW(model.parameters(), lr=1e-2)
    batch = tp.tensor(rows)

    def np_loss() -> float:
        with tp.no_grad():
            return _np_cross_entropy(model(batch[:, :-1]).numpy(), rows[:, 1:])

    before = np_loss()
    for _ in range(40):
        loss = F.cross_entropy(model(batch[:, :-1]).reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = np_loss()
    assert before > 0.8 * np.log(VOCAB), before  # starts near chance
    # below what ignoring the context allows, with a margin (nn.MultiheadAttention has no positions, so it
    # tells the three successors of 0 apart only by the tokens it has seen: the slowest to get there)
    assert after < 0.75 * bound, (mixer.name, before, bound, after)
