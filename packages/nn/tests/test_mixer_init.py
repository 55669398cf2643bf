"""Every token mixer nn exports, exactly as constructed (no weights loaded, nothing re-initialised), gets a
gradient on every parameter from one forward + backward, and a 2-layer model of it learns.

test_mixer_zoo.py checks the mixers' behaviour in depth; this file guards their initialisation: a parameter
initialised so that a path is dead (GatedDeltaNet's and KimiDeltaAttention's short-convolution filter once
started at zero, which zeroed q, k, v, the output and every gradient of the layer) makes a model that cannot
learn. References: NumPy for the losses and for the best loss a model blind to context can reach.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import functional as F
from tensorplay.nn.modules.causal_attention import GroupedQueryAttention
from tensorplay.nn.modules.causal_encoder_decoder import CrossAttention
from tensorplay.nn.modules.compressed_attention import CompressedSparseAttention
from tensorplay.nn.modules.gated_delta import GatedDeltaNet
from tensorplay.nn.modules.kimi_delta import KimiDeltaAttention
from tensorplay.nn.modules.latent_attention import MultiheadLatentAttention

HIDDEN, VOCAB = 32, 8


class CausalSelfAttention(nn.Module):
    """`nn.MultiheadAttention` (PyTorch's layer, batch first) as a causal self-attention token mixer."""

    def __init__(self, hidden_size: int, num_heads: int) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(hidden_size, num_heads, batch_first=True)

    def forward(self, hidden_states, position_ids=None, past_key_values=None):
        t = int(hidden_states.shape[1])
        future = tp.ones(t, t, dtype=tp.bool).triu(1)
        return self.attn(hidden_states, hidden_states, hidden_states, attn_mask=future, need_weights=False)[0]


# name -> (hidden_size, layer_idx) -> a mixer with the contract forward(hidden_states, position_ids=...,
# past_key_values=...).
MIXERS: dict[str, Callable[[int, int], nn.Module]] = {
    "gqa": lambda c, i: GroupedQueryAttention(c, 4, num_kv_heads=2, qk_norm=True, layer_idx=i),
    # v_head_dim != nope + rope: the explicit masked path, with low-rank queries
    "mla": lambda c, i: MultiheadLatentAttention(
        c,
        4,
        kv_lora_rank=16,
        qk_nope_head_dim=8,
        qk_rope_head_dim=4,
        v_head_dim=6,
        q_lora_rank=12,
        layer_idx=i,
    ),
    # v_head_dim == nope + rope: the fused SDPA path, full-rank queries
    "mla_fused": lambda c, i: MultiheadLatentAttention(
        c, 4, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=12, layer_idx=i
    ),
    "gated_delta": lambda c, i: GatedDeltaNet(c, num_v_heads=4, num_k_heads=2, head_k_dim=8, layer_idx=i),
    "kimi_delta": lambda c, i: KimiDeltaAttention(c, num_heads=4, head_dim=8, layer_idx=i),
    # window 4, rate 4: sequences of 12 tokens use both the window and the compressed entries
    "csa": lambda c, i: CompressedSparseAttention(
        c,
        num_heads=4,
        head_dim=8,
        q_lora_rank=16,
        compress_rate=4,
        window_size=4,
        index_n_heads=2,
        index_head_dim=8,
        index_topk=2,
        layer_idx=i,
    ),
    "multihead_attention": lambda c, i: CausalSelfAttention(c, 4),
}
# CSA's lightning indexer only chooses which compressed entries are visible (top-k: a 0 / -inf mask), a
# discrete choice with no gradient; DeepSeek-V3.2 trains it with a separate distillation loss.
NO_GRADIENT_BY_DESIGN = {"csa": ("indexer.",)}
mixers = pytest.mark.parametrize("name", list(MIXERS))


def _check_every_parameter_has_a_nonzero_gradient(name: str, module: nn.Module) -> None:
    skip = NO_GRADIENT_BY_DESIGN.get(name, ())
    for pname, p in module.named_parameters():
        if any(pname.startswith(s) for s in skip):
            assert p.grad is None, f"{name}: {pname} was expected to get no gradient"
            continue
        assert p.grad is not None, f"{name}: no gradient reached {pname}"
        g = p.grad.numpy()
        assert np.isfinite(g).all(), f"{name}: non-finite gradient in {pname}"
        assert np.abs(g).max() > 0, f"{name}: the gradient of {pname} is zero right after construction"


@mixers
def test_every_parameter_gets_a_gradient_right_after_construction(name: str) -> None:
    tp.manual_seed(0)
    mixer = MIXERS[name](HIDDEN, 0)
    x = tp.randn(2, 12, HIDDEN)
    out = mixer(x)
    assert np.abs(out.detach().numpy()).max() > 1e-3, f"{name}: the mixer's output is (near) zero"
    (out * tp.randn(2, 12, HIDDEN)).sum().backward()
    _check_every_parameter_has_a_nonzero_gradient(name, mixer)


def test_cross_attention_gets_a_gradient_on_every_parameter_right_after_construction() -> None:
    tp.manual_seed(0)
    mixer = CrossAttention(HIDDEN, 4, kv_dim=24)
    out = mixer(tp.randn(2, 5, HIDDEN), tp.randn(2, 7, 24))
    (out * tp.randn(2, 5, HIDDEN)).sum().backward()
    _check_every_parameter_has_a_nonzero_gradient("cross_attention", mixer)


class TwoLayerLM(nn.Module):
    """Embedding, two TransformerBlocks around fresh mixers, a final RMSNorm and an lm head."""

    def __init__(self, make: Callable[[int, int], nn.Module]) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList(
            nn.TransformerBlock(HIDDEN, make(HIDDEN, i), mlp_intermediate_size=48) for i in range(2)
        )
        self.norm = nn.RMSNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=None, past_key_values=None)
        return self.head(self.norm(x))


def _np_cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    z = logits.reshape(-1, VOCAB).astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-logp[np.arange(targets.size), targets.ravel()].mean())


def _np_bigram_bound(rows: np.ndarray) -> float:
    """The lowest cross-entropy of a model that sees only the current token: H(next | current)."""
    prev, nxt = rows[:, :-1].ravel(), rows[:, 1:].ravel()
    counts = np.zeros((VOCAB, VOCAB))
    np.add.at(counts, (prev, nxt), 1)
    p = counts / np.maximum(counts.sum(1, keepdims=True), 1)
    return float(-np.log(p[prev, nxt]).mean())


@mixers
def test_a_fresh_two_layer_model_learns_a_repeated_sequence(name: str) -> None:
    # 0 is followed by 1, 2 or 3 in turn, so what follows a 0 depends on the token before it: a model that
    # cannot mix tokens (a dead mixer leaves embeddings + MLPs, a bigram model) is stuck at the bigram bound.
    period = np.array([0, 1, 0, 2, 0, 3])
    rows = np.stack([np.tile(period, 4), np.roll(np.tile(period, 4), 2)])  # 2 rows of 24 tokens
    bound = _np_bigram_bound(rows)
    tp.manual_seed(0)
    model = TwoLayerLM(MIXERS[name])
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
    assert after < 0.75 * bound, (name, before, bound, after)
