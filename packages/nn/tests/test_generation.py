"""Tests of tensorplay.nn.generation: greedy decoding against argmax by full recompute, cached against
uncached, EOS/pad handling, batches, and the sampling knobs (temperature, top_k, top_p, repetition_penalty)
against NumPy references. The models here are tiny stand-ins built from tensor ops, so these tests need no
nn.Module; the README's TinyLM is exercised in test_llm_blocks.py and tests/test_readme.py."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay as tp
from tensorplay.nn.cache import DynamicCache, SlidingWindowCache, StaticCache
from tensorplay.nn.generation import _apply_repetition_penalty, generate, top_k_top_p_filtering

VOCAB = 11


class TinyCausalModel:
    """Embedding + one head of causal mean-free attention + readout, with the generation model contract."""

    def __init__(self, seed: int = 0, width: int = 8) -> None:
        rng = np.random.default_rng(seed)
        self.tok = tp.tensor(rng.standard_normal((VOCAB, width)).astype(np.float32))
        self.pos = tp.tensor(rng.standard_normal((64, width)).astype(np.float32))
        self.out = tp.tensor(rng.standard_normal((width, VOCAB)).astype(np.float32) * 2.0)
        self.calls: list[int] = []

    def __call__(self, input_ids, position_ids=None, past_key_values=None):
        b, t = input_ids.shape
        self.calls.append(int(t))
        if position_ids is None:
            position_ids = tp.arange(t).expand(b, t)
        h = self.tok[input_ids] + self.pos[position_ids]  # [B, T, C]
        k = v = h[:, None]  # [B, 1, T, C]
        if past_key_values is not None:
            k, v = past_key_values.update(k, v, 0)
        ctx = tp.scaled_dot_product_attention(h[:, None], k, v, is_causal=t > 1 and t == k.shape[2])
        return (h + ctx[:, 0]) @ self.out


class Counter:
    """Logits that make "previous token + 1 (mod VOCAB)" the argmax; ignores the cache."""

    def __call__(self, input_ids, position_ids=None, past_key_values=None):
        return tp.one_hot((input_ids + 1) % VOCAB, VOCAB).float() * 5.0


class FixedLogits:
    """The same last-position logits for every row and step."""

    def __init__(self, logits: np.ndarray) -> None:
        self.logits = tp.tensor(logits.astype(np.float32))

    def __call__(self, input_ids, position_ids=None, past_key_values=None):
        b, t = input_ids.shape
        return self.logits.expand(b, t, VOCAB)


def _greedy_by_full_recompute(model, prompt: tp.Tensor, n: int) -> np.ndarray:
    seq = prompt.numpy()
    for _ in range(n):
        logits = model(tp.tensor(seq)).numpy()[:, -1]
        seq = np.concatenate([seq, logits.argmax(-1)[:, None]], 1)
    return seq


def _prompt(b: int = 3, t: int = 4, seed: int = 1) -> tp.Tensor:
    return tp.tensor(np.random.default_rng(seed).integers(0, VOCAB, (b, t)))


@pytest.mark.parametrize(
    "make_cache", [None, DynamicCache, lambda: StaticCache(32), lambda: SlidingWindowCache(64)], ids=str
)
def test_greedy_equals_argmax_by_full_recompute(make_cache) -> None:
    model = TinyCausalModel()
    prompt = _prompt()
    expected = _greedy_by_full_recompute(model, prompt, 10)
    cache = make_cache() if make_cache else None
    out = generate(model, prompt, max_new_tokens=10, past_key_values=cache)
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.dtype == tp.int64
    # One prefill over the prompt, then one token per step.
    model.calls.clear()
    generate(model, prompt, max_new_tokens=5)
    assert model.calls == [4, 1, 1, 1, 1]


def test_cached_equals_uncached_and_uncached_feeds_the_whole_sequence() -> None:
    model = TinyCausalModel(seed=3)
    prompt = _prompt(2, 5, seed=4)
    cached = generate(model, prompt, max_new_tokens=12)
    model.calls.clear()
    uncached = generate(model, prompt, max_new_tokens=12, use_cache=False)
    np.testing.assert_array_equal(cached.numpy(), uncached.numpy())
    assert model.calls == list(range(5, 17))
    np.testing.assert_array_equal(cached.numpy()[:, :5], prompt.numpy())


def test_a_given_cache_is_filled_and_create_empty_cache_is_used() -> None:
    model = TinyCausalModel()
    cache = DynamicCache()
    generate(model, _prompt(), max_new_tokens=6, past_key_values=cache)
    # Prompt (4) plus the first five new tokens were fed; the sixth never goes through the model.
    assert cache.get_seq_length(0) == 9
    made: list[StaticCache] = []

    def create_empty_cache() -> StaticCache:
        made.append(StaticCache(16))
        return made[-1]

    model.create_empty_cache = create_empty_cache
    generate(model, _prompt(), max_new_tokens=3)
    assert len(made) == 1 and made[0].get_seq_length() == 6


def test_batched_rows_equal_rows_generated_alone() -> None:
    model = TinyCausalModel(seed=5)
    prompt = _prompt(4, 3, seed=6)
    batched = generate(model, prompt, max_new_tokens=7).numpy()
    for i in range(4):
        alone = generate(model, prompt[i : i + 1], max_new_tokens=7).numpy()
        np.testing.assert_array_equal(batched[i : i + 1], alone)


def test_eos_stops_early_and_finished_rows_emit_pad() -> None:
    prompt = tp.tensor([[1], [5]])
    out = generate(Counter(), prompt, max_new_tokens=20, eos_token_id=3, pad_token_id=9)
    # Row 1 reaches 3 after 9 steps (6, 7, ..., 10, 0, 1, 2, 3): generation stops there.
    assert out.tolist() == [[1, 2, 3] + [9] * 7, [5, 6, 7, 8, 9, 10, 0, 1, 2, 3]]
    # pad_token_id defaults to eos_token_id.
    out = generate(Counter(), tp.tensor([[1], [0]]), max_new_tokens=20, eos_token_id=2)
    assert out.tolist() == [[1, 2, 2], [0, 1, 2]]
    # Without EOS every step runs.
    assert generate(Counter(), prompt, max_new_tokens=4).shape == (2, 5)


def test_argument_errors_and_trivial_calls() -> None:
    ids = _prompt()
    assert generate(Counter(), ids, max_new_tokens=0) is ids
    assert generate(Counter(), ids, max_new_tokens=-2) is ids
    with pytest.raises(
        ValueError, match=r"generate: input_ids must be a 2-D \[batch, seq\] tensor, got \(4,\)"
    ):
        generate(Counter(), ids[0])
    with pytest.raises(ValueError, match=r"got list"):
        generate(Counter(), [[1, 2]])


def test_generate_runs_without_grad() -> None:
    model = TinyCausalModel()
    model.out.requires_grad_(True)
    seen = []

    def spy(*args, **kwargs):
        logits = TinyCausalModel.__call__(model, *args, **kwargs)
        seen.append(logits.requires_grad)
        return logits

    generate(spy, _prompt(), max_new_tokens=3)
    assert seen == [False, False, False]


def _np_filter(logits: np.ndarray, top_k: int, top_p: float) -> np.ndarray:
    out = logits.astype(np.float64).copy()
    v = out.shape[-1]
    for row in out.reshape(-1, v):
        if 0 < top_k <= v:
            kth = np.sort(row)[::-1][top_k - 1]
            row[row < kth] = -np.inf
        if 0 < top_p < 1:
            order = np.argsort(row, kind="stable")
            finite = np.where(np.isfinite(row), row, -np.inf)
            p = np.exp(finite - finite.max())
            p /= p.sum()
            cum = np.cumsum(p[order])
            drop = cum <= 1 - top_p
            drop[-1] = False
            row[order[drop]] = -np.inf
    return out


@pytest.mark.parametrize(
    "top_k,top_p",
    [
        (0, 1.0),
        (3, 1.0),
        (VOCAB, 1.0),
        (VOCAB + 5, 1.0),
        (-1, 1.0),
        (0, 0.5),
        (0, 0.9),
        (0, 0.01),
        (4, 0.7),
        (0, 0.0),
    ],
)
def test_top_k_top_p_filtering_matches_numpy(top_k: int, top_p: float) -> None:
    logits = np.random.default_rng(7).standard_normal((2, 3, VOCAB)).astype(np.float32) * 3
    x = tp.tensor(logits)
    got = top_k_top_p_filtering(x, top_k=top_k, top_p=top_p).numpy()
    np.testing.assert_array_equal(np.isinf(got), np.isinf(_np_filter(logits, top_k, top_p)))
    kept = ~np.isinf(got)
    np.testing.assert_array_equal(got[kept], logits[kept])
    assert kept.any(-1).all()  # the most likely token always survives
    np.testing.assert_array_equal(x.numpy(), logits)  # input untouched


def test_top_k_keeps_ties() -> None:
    got = top_k_top_p_filtering(tp.tensor([[1.0, 3.0, 2.0, 3.0, 2.0]]), top_k=2)
    assert got.tolist() == [[-np.inf, 3.0, -np.inf, 3.0, -np.inf]]
    got = top_k_top_p_filtering(tp.tensor([[1.0, 3.0, 2.0, 3.0, 2.0]]), top_k=3)
    assert got.tolist() == [[-np.inf, 3.0, 2.0, 3.0, 2.0]]


def test_repetition_penalty_matches_numpy() -> None:
    rng = np.random.default_rng(8)
    logits = rng.standard_normal((3, VOCAB)).astype(np.float32)
    seqs = rng.integers(0, VOCAB, (3, 6))
    ref = logits.copy()
    for b in range(3):
        for tok in set(seqs[b].tolist()):
            ref[b, tok] = ref[b, tok] / 1.7 if ref[b, tok] > 0 else ref[b, tok] * 1.7
    got = _apply_repetition_penalty(tp.tensor(logits), tp.tensor(seqs), 1.7)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6)
    x = tp.tensor(logits)
    assert _apply_repetition_penalty(x, tp.tensor(seqs), 1.0) is x


def test_repetition_penalty_is_honoured_when_sampling() -> None:
    logits = np.zeros(VOCAB)
    logits[2], logits[5] = 4.0, 3.0
    model = FixedLogits(logits)
    prompt = tp.full((200, 1), 2, dtype=tp.int64)
    tp.manual_seed(0)
    plain = generate(model, prompt, max_new_tokens=1, do_sample=True, top_k=2, repetition_penalty=1.0001)
    tp.manual_seed(0)
    penalised = generate(model, prompt, max_new_tokens=1, do_sample=True, top_k=2, repetition_penalty=4.0)
    # p(2) = 1/(1+e^-1) ~ 0.73 without the penalty; with it, 4/4 = 1 < 3, so p(2) = 1/(1+e^2) ~ 0.12.
    frac_plain = (plain[:, 1] == 2).float().mean().item()
    frac_penalised = (penalised[:, 1] == 2).float().mean().item()
    assert 0.6 < frac_plain < 0.85 and 0.03 < frac_penalised < 0.22
    assert set(penalised[:, 1].tolist()) <= {2, 5}  # top_k=2 kept only the two best


needs_sample = pytest.mark.skipif(not hasattr(tp, "sample"), reason="tp.sample lands with branch act")


@needs_sample
def test_sampling_with_tiny_temperature_top_k_1_or_small_top_p_is_greedy() -> None:
    model = TinyCausalModel(seed=9)
    prompt = _prompt(3, 4, seed=10)
    greedy = generate(model, prompt, max_new_tokens=6).numpy()
    for kwargs in ({"temperature": 1e-6}, {"top_k": 1}, {"top_p": 1e-4}):
        out = generate(model, prompt, max_new_tokens=6, do_sample=True, **kwargs)
        np.testing.assert_array_equal(out.numpy(), greedy, err_msg=str(kwargs))


@needs_sample
@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_sampling_frequencies_follow_the_tempered_softmax(temperature: float) -> None:
    logits = np.linspace(-1.0, 1.5, VOCAB)
    n = 4000
    tp.manual_seed(1)
    out = generate(
        FixedLogits(logits),
        tp.zeros(n, 1, dtype=tp.int64),
        max_new_tokens=1,
        do_sample=True,
        temperature=temperature,
    )
    freq = np.bincount(out[:, 1].numpy(), minlength=VOCAB) / n
    p = np.exp(logits / temperature)
    p /= p.sum()
    # 4 standard errors of a binomial proportion, per token.
    np.testing.assert_array_less(np.abs(freq - p), 4 * np.sqrt(p * (1 - p) / n) + 1e-3)


@needs_sample
def test_top_k_and_top_p_restrict_the_support() -> None:
    logits = np.linspace(0.0, 2.0, VOCAB)  # token VOCAB-1 most likely
    prompt = tp.zeros(500, 1, dtype=tp.int64)
    tp.manual_seed(2)
    out = generate(FixedLogits(logits), prompt, max_new_tokens=1, do_sample=True, top_k=3)
    assert set(out[:, 1].tolist()) == {VOCAB - 3, VOCAB - 2, VOCAB - 1}
    p = np.exp(logits) / np.exp(logits).sum()
    keep = int((np.cumsum(np.sort(p)) > 1 - 0.5).sum())  # nucleus of mass 0.5
    out = generate(FixedLogits(logits), prompt, max_new_tokens=1, do_sample=True, top_p=0.5)
    assert set(out[:, 1].tolist()) == set(range(VOCAB - keep, VOCAB))
