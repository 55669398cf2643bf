"""Tests of rotary position embedding (tensorplay.nn.modules.rotary) against a NumPy float64 reference:
both pair layouts, partial rotation, the inverse through -sin, RotaryEmbedding's tables, and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay as tp
from tensorplay.autograd import gradcheck
from tensorplay.nn.modules.rotary import RotaryEmbedding, apply_rotary_emb


def _np_tables(pos: np.ndarray, dim: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    inv_freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    ang = pos[..., None].astype(np.float64) * inv_freq
    return np.cos(ang), np.sin(ang)


def _np_rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """Rotate each channel pair explicitly, one pair at a time (no vectorised halves trick)."""
    out = x.astype(np.float64).copy()
    half = cos.shape[-1]
    c, s = cos[:, None], sin[:, None]  # broadcast over heads
    for i in range(half):
        a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        out[..., a] = x[..., a] * c[..., i] - x[..., b] * s[..., i]
        out[..., b] = x[..., b] * c[..., i] + x[..., a] * s[..., i]
    return out


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("rot", [8, 4])  # all channels, or the first half only
def test_apply_rotary_emb_matches_numpy(interleaved: bool, rot: int) -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 4, 5, 8))
    k = rng.standard_normal((2, 2, 5, 8))  # fewer heads than q
    pos = rng.integers(0, 100, (2, 5))
    cos, sin = _np_tables(pos, rot)
    q2, k2 = apply_rotary_emb(
        tp.tensor(q), tp.tensor(k), tp.tensor(cos), tp.tensor(sin), interleaved=interleaved
    )
    np.testing.assert_allclose(q2.numpy(), _np_rotate(q, cos, sin, interleaved), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k2.numpy(), _np_rotate(k, cos, sin, interleaved), rtol=1e-12, atol=1e-12)
    # The channels past r pass through untouched.
    np.testing.assert_array_equal(q2.numpy()[..., rot:], q[..., rot:])


@pytest.mark.parametrize("interleaved", [False, True])
def test_minus_sin_is_the_inverse_and_norms_are_kept(interleaved: bool) -> None:
    rng = np.random.default_rng(1)
    q, k = tp.tensor(rng.standard_normal((1, 3, 6, 4))), tp.tensor(rng.standard_normal((1, 1, 6, 4)))
    cos, sin = (tp.tensor(t) for t in _np_tables(np.arange(6)[None] * 7, 4))
    q2, k2 = apply_rotary_emb(q, k, cos, sin, interleaved)
    np.testing.assert_allclose(
        np.linalg.norm(q2.numpy(), axis=-1), np.linalg.norm(q.numpy(), axis=-1), rtol=1e-12
    )
    q3, k3 = apply_rotary_emb(q2, k2, cos, -sin, interleaved)
    np.testing.assert_allclose(q3.numpy(), q.numpy(), atol=1e-12)
    np.testing.assert_allclose(k3.numpy(), k.numpy(), atol=1e-12)


def test_rotation_makes_scores_depend_on_relative_position_only() -> None:
    rng = np.random.default_rng(2)
    qv, kv = rng.standard_normal(8), rng.standard_normal(8)
    rope = RotaryEmbedding(8)

    def score(i: int, j: int) -> float:
        pos = tp.tensor([[i, j]])
        cos, sin = rope(tp.zeros(1, dtype=tp.float64), pos)
        x = tp.tensor(np.stack([qv, kv])[None, None])
        r, _ = apply_rotary_emb(x, x, cos, sin)
        return float(r[0, 0, 0] @ r[0, 0, 1])

    assert score(3, 1) == pytest.approx(score(12, 10), rel=1e-6)  # tables are float32
    assert score(3, 1) != pytest.approx(score(3, 2), rel=1e-3)


def test_non_contiguous_inputs() -> None:
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 5, 3, 8))  # [B, T, H, D], viewed as [B, H, T, D]
    cos, sin = _np_tables(np.tile(np.arange(5), (2, 1)), 8)
    qt = tp.tensor(q).transpose(1, 2)
    assert not qt.is_contiguous()
    q2, _ = apply_rotary_emb(qt, qt, tp.tensor(cos), tp.tensor(sin))
    np.testing.assert_allclose(q2.numpy(), _np_rotate(q.transpose(0, 2, 1, 3), cos, sin, False), atol=1e-12)


def test_apply_rotary_emb_errors() -> None:
    q = tp.zeros(1, 1, 2, 4)
    with pytest.raises(ValueError, match=r"cos/sin cover 6 channels but the input has only 4"):
        apply_rotary_emb(q, q, tp.zeros(1, 2, 3), tp.zeros(1, 2, 3))
    with pytest.raises(ValueError, match=r"cos and sin must both be \[B, T, r/2\]"):
        apply_rotary_emb(q, q, tp.zeros(1, 2, 2), tp.zeros(1, 2, 1))


def test_rotary_embedding_tables_match_numpy() -> None:
    rope = RotaryEmbedding(16, base=500.0)
    assert (rope.dim, rope.base, rope.interleaved) == (16, 500.0, False)
    assert isinstance(rope.base, float)
    np.testing.assert_allclose(rope.inv_freq.numpy(), 500.0 ** (-np.arange(0, 16, 2) / 16), rtol=1e-6)
    assert rope.inv_freq.dtype == tp.float32 and tuple(rope.inv_freq.shape) == (8,)
    assert "inv_freq" not in rope.state_dict()  # a non-persistent buffer
    pos = np.array([[0, 1, 2, 1000], [5, 5, 6, 7]])
    cos, sin = rope(tp.zeros(2, 4, 16), tp.tensor(pos))
    ref_cos, ref_sin = _np_tables(pos, 16, 500.0)
    assert tuple(cos.shape) == (2, 4, 8) and cos.dtype == tp.float32
    np.testing.assert_allclose(cos.numpy(), ref_cos, atol=2e-4)
    np.testing.assert_allclose(sin.numpy(), ref_sin, atol=2e-4)


def test_rotary_embedding_casts_to_the_input_dtype() -> None:
    rope = RotaryEmbedding(4, interleaved=True)
    assert rope.interleaved is True
    cos, sin = rope(tp.zeros(1, dtype=tp.float64), tp.tensor([[0, 3]]))
    assert cos.dtype == tp.float64 and sin.dtype == tp.float64
    cos16, _ = rope(tp.zeros(1, dtype=tp.bfloat16), tp.tensor([[0, 3]]))
    assert cos16.dtype == tp.bfloat16


def test_rotary_embedding_errors() -> None:
    with pytest.raises(ValueError, match=r"RotaryEmbedding: dim must be a positive even number, got 7"):
        RotaryEmbedding(7)
    with pytest.raises(ValueError, match=r"position_ids must be \[batch, seq\], got shape \(3,\)"):
        RotaryEmbedding(4)(tp.zeros(1), tp.arange(3))


@pytest.mark.parametrize("interleaved", [False, True])
def test_gradcheck(interleaved: bool) -> None:
    rng = np.random.default_rng(4)
    q = tp.tensor(rng.standard_normal((1, 2, 3, 6)), requires_grad=True)
    k = tp.tensor(rng.standard_normal((1, 1, 3, 6)), requires_grad=True)
    cos, sin = (tp.tensor(t) for t in _np_tables(np.arange(3)[None], 4))
    assert gradcheck(lambda a, b: apply_rotary_emb(a, b, cos, sin, interleaved), (q, k))
