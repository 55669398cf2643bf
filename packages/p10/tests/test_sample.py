"""tp.sample (kernels/sample.cpp): greedy decoding, and the temperature / top-k / top-p draw of Note
[Sampling rule].

The distributions are checked by chi-square over many draws against probabilities filtered here with NumPy
in float64, independently of the kernel; greedy mode is also in the op database (opdb/sampling.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp

# 99.9% points of the chi-square distribution, by degrees of freedom (a correct sampler fails 1 in 1000).
_CHI2_999 = {1: 10.83, 2: 13.82, 3: 16.27, 4: 18.47, 5: 20.52, 6: 22.46, 7: 24.32, 8: 26.12, 9: 27.88}


def _filtered(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """The sampling distribution of one row, from the definition: softmax, then top-k (ties kept), then the
    shortest most-likely-first prefix reaching top_p."""
    z = logits.astype(np.float64) / temperature
    p = np.exp(z - z.max())
    v = z.size
    if 0 < top_k < v:
        kth = np.sort(z)[::-1][top_k - 1]
        p[z < kth] = 0
    p /= p.sum()
    if top_p < 1:
        order = sorted(range(v), key=lambda i: (-p[i], i))
        cum, keep = 0.0, []
        for i in order:
            if p[i] == 0:
                break
            keep.append(i)
            cum += p[i]
            if cum >= top_p:
                break
        mask = np.zeros(v, bool)
        mask[keep] = True
        p[~mask] = 0
        p /= p.sum()
    return p


def test_greedy_is_argmax():
    logits = tp.randn(16, 50)
    want = np.argmax(logits.numpy(), axis=-1)
    for t in (0.0, 1e-5, 1e-7):
        got = tp.sample(logits, t)
        assert got.dtype is tp.int64 and tuple(got.shape) == (16,)
        np.testing.assert_array_equal(got.numpy(), want)
    one = tp.sample(logits[3], 0.0)
    assert one.dim() == 0 and one.item() == want[3]


def test_top_k_one_is_greedy():
    logits = tp.randn(32, 20, dtype=tp.float64)
    want = np.argmax(logits.numpy(), axis=-1)
    for seed in range(3):
        tp.manual_seed(seed)
        np.testing.assert_array_equal(tp.sample(logits, 1.3, top_k=1).numpy(), want)


def test_the_most_likely_token_survives_any_top_p():
    logits = tp.randn(64, 10)
    got = tp.sample(logits, 1.0, top_p=1e-9, generator=tp.Generator().manual_seed(0))
    np.testing.assert_array_equal(got.numpy(), np.argmax(logits.numpy(), axis=-1))


CASES = [
    ("plain softmax", [1.0, 0.5, 0.0, -0.5, -1.0, 2.0], 1.0, 0, 1.0),
    ("cold", [1.0, 0.5, 0.0, -0.5, -1.0, 2.0], 0.5, 0, 1.0),
    ("hot, top_k=3", [1.0, 0.5, 0.0, -0.5, -1.0, 2.0], 2.0, 3, 1.0),
    ("top_p=0.7", [1.0, 0.5, 0.0, -0.5, -1.0, 2.0], 1.0, 0, 0.7),
    ("top_k=4 then top_p=0.8", [0.3, 1.2, -0.4, 0.9, 2.0, 0.1, -1.5], 1.5, 4, 0.8),
    ("ties at the top_k boundary are kept", [2.0, 1.0, 1.0, 1.0, 0.0], 1.0, 2, 1.0),
    ("-inf logits are never drawn", [0.0, -np.inf, 1.0, -np.inf, 0.5], 1.0, 0, 1.0),
]


@pytest.mark.parametrize("name,logits,temperature,top_k,top_p", CASES, ids=[c[0] for c in CASES])
def test_draws_follow_the_filtered_distribution(name, logits, temperature, top_k, top_p):
    n = 40_000
    row = np.asarray(logits, np.float32).astype(np.float64)  # the values the kernel sees
    p = _filtered(row, temperature, top_k, top_p)
    batch = tp.tensor(np.tile(row.astype(np.float32), (n, 1)))  # one draw per row: n independent draws
    draws = tp.sample(batch, temperature, top_k, top_p, generator=tp.Generator().manual_seed(1234)).numpy()
    counts = np.bincount(draws, minlength=row.size)
    assert counts[p == 0].sum() == 0, f"filtered-out tokens were drawn: {counts}"
    kept = p > 0
    expected = n * p[kept]
    chi2 = ((counts[kept] - expected) ** 2 / expected).sum()
    df = int(kept.sum()) - 1
    if df > 0:
        assert chi2 < _CHI2_999[df], f"{name}: chi2={chi2:.2f}, counts={counts}, expected={n * p}"


def test_a_draw_is_multinomial_of_the_filtered_probabilities():
    """Step 4 of the rule: under one seed, a row's draw is tp.multinomial(p_filtered, 1) in float64."""
    rng = np.random.default_rng(5)
    for seed in range(5):
        row = rng.standard_normal(12)
        p = _filtered(row, 0.8, 6, 0.9)
        tp.manual_seed(seed)
        got = tp.sample(tp.tensor(row), 0.8, 6, 0.9).item()
        tp.manual_seed(seed)
        want = tp.multinomial(tp.tensor(p), 1).item()
        assert got == want


def test_seeds_make_it_reproducible():
    logits = tp.randn(8, 30)
    tp.manual_seed(42)
    a = tp.sample(logits, 0.9, 10, 0.95)
    tp.manual_seed(42)
    b = tp.sample(logits, 0.9, 10, 0.95)
    c = tp.sample(logits, 0.9, 10, 0.95, generator=tp.Generator().manual_seed(42))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), c.numpy())
    assert tp.sample(logits.to("meta"), 0.9).shape == (8,)


@pytest.mark.parametrize(
    "args,kwargs,error,match",
    [
        ((tp.zeros(2, 3, 4),), {}, RuntimeError, r"sample\(\): expected logits of shape \[V\] or \[B, V\]"),
        ((tp.zeros(()),), {}, RuntimeError, r"got 0-d logits"),
        ((tp.zeros(2, 3, dtype=tp.int32),), {}, RuntimeError, "floating-point logits, got int32"),
        ((tp.zeros(2, 3),), {"top_p": 0.0}, ValueError, r"top_p must be in \(0, 1\], got 0"),
        ((tp.zeros(2, 3),), {"top_p": 1.01}, ValueError, r"top_p must be in \(0, 1\], got 1.01"),
        ((tp.zeros(2, 3),), {"top_p": float("nan")}, ValueError, r"top_p must be in \(0, 1\]"),
        ((tp.zeros(2, 3),), {"temperature": -0.5}, ValueError, "temperature must be >= 0, got -0.5"),
        ((tp.tensor([[0.0, float("nan")]]),), {}, RuntimeError, "row 0 contains NaN"),
        ((tp.tensor([[0.0, 1.0], [-float("inf")] * 2]),), {}, RuntimeError, "every logit of row 1 is -inf"),
    ],
)
def test_invalid_inputs_raise(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        tp.sample(*args, **kwargs)
