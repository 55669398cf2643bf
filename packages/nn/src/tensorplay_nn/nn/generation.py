"""tensorplay_nn.nn.generation — autoregressive text generation with a key/value cache.

Where it sits: on top of any causal language model with the contract
`model(input_ids [B, T], position_ids=None, past_key_values=None) -> logits [B, T, V]` (the README's TinyLM,
or anything built from `TransformerBlock`). `generate` runs one prefill over the prompt and then one token per
step through the cache (shared/reference/llm-api.md, "Generation", is the contract). Sampling itself is the
core op `tensorplay.sample(logits, temperature, top_k, top_p)`; the helpers here serve the repetition-penalty
path, which needs the filtered distribution in Python.
"""

from __future__ import annotations

from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd import no_grad

from .cache import Cache, DynamicCache

__all__ = ["generate", "top_k_top_p_filtering"]

# Below this temperature sampling is indistinguishable from argmax, so generate takes the greedy path.
_GREEDY_TEMPERATURE = 1e-5


def top_k_top_p_filtering(logits: Tensor, top_k: int = 0, top_p: float = 1.0) -> Tensor:
    """Return a copy of `logits` `[..., V]` with the tokens outside the top-k / top-p set at `-inf`.

    * top-k: with `0 < top_k <= V`, every logit strictly below the k-th largest is removed (ties survive).
    * top-p (nucleus): with `0 < top_p < 1`, sort by probability `p = softmax(logits)` and remove the low tail
      whose cumulative probability is `<= 1 - top_p`; the most likely token always survives.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.generation import top_k_top_p_filtering
        >>> top_k_top_p_filtering(tp.tensor([[1.0, 3.0, 2.0]]), top_k=2).tolist()
        [[-inf, 3.0, 2.0]]
    """
    logits = logits.clone()
    vocab = int(logits.shape[-1])
    if 0 < top_k <= vocab:
        kth = tp.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if 0.0 < top_p < 1.0:
        # Ascending sort: the tail to drop is a prefix whose cumulative probability stays <= 1 - top_p.
        sorted_logits, sorted_idx = tp.sort(logits, dim=-1, descending=False)
        cumulative = tp.softmax(sorted_logits, -1).cumsum(-1)
        drop_sorted = cumulative <= 1.0 - top_p
        drop_sorted[..., -1] = False  # the most likely token always survives
        drop = tp.zeros_like(drop_sorted).scatter(-1, sorted_idx, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def _apply_repetition_penalty(logits: Tensor, sequences: Tensor, penalty: float) -> Tensor:
    """Penalise every token already in each row of `sequences` `[B, L]`: logits `[B, V]` > 0 are divided by
    `penalty`, the others multiplied by it (CTRL, Keskar et al. 2019). `penalty == 1.0` returns `logits`."""
    if penalty == 1.0:
        return logits
    if penalty <= 0.0:
        raise ValueError(f"generate: repetition_penalty must be positive, got {penalty}")
    seen = tp.gather(logits, 1, sequences)
    seen = tp.where(seen > 0, seen / penalty, seen * penalty)
    return logits.scatter(1, sequences, seen)


def _next_tokens(
    logits: Tensor,
    sequences: Tensor,
    do_sample: bool,
    temperature: float,
    top_k: int,
    top_p: float,
    repetition_penalty: float,
) -> Tensor:
    """Choose one token per row from the last-position logits `[B, V]`; returns int64 `[B]`."""
    if not do_sample or temperature <= _GREEDY_TEMPERATURE:
        return logits.argmax(-1)
    if repetition_penalty != 1.0:
        # Penalised logits go through Python filtering and multinomial; temperature is not applied here.
        filtered = top_k_top_p_filtering(
            _apply_repetition_penalty(logits.float(), sequences, repetition_penalty), top_k, top_p
        )
        return tp.multinomial(tp.softmax(filtered, -1), 1).squeeze(-1)
    return tp.sample(logits, temperature=temperature, top_k=top_k, top_p=top_p)


def generate(
    model: Any,
    input_ids: Tensor,
    max_new_tokens: int = 20,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    repetition_penalty: float = 1.0,
    eos_token_id: int | None = None,
    pad_token_id: int | None = None,
    use_cache: bool = True,
    past_key_values: Cache | None = None,
) -> Tensor:
    """Extend each row of `input_ids` `[B, T0]` by up to `max_new_tokens` tokens; returns `[B, T0 + n]`.

    One prefill over the prompt, then one token per step: with `use_cache` the model sees only the newest
    token (its keys and values for earlier positions come from the cache), otherwise the whole sequence again.
    At each step, with `L` the current length, `position_ids = arange(L - t, L)` for the `t` tokens fed.

    * `do_sample=False` (or `temperature <= 1e-5`): greedy, `argmax` of the last logits.
    * `do_sample=True`: `tensorplay.sample(logits, temperature, top_k, top_p)`, i.e. sample from
      `softmax(filter(logits / temperature))`; with `repetition_penalty != 1` the penalised logits are
      filtered by `top_k_top_p_filtering` and sampled with `multinomial` (no temperature on that path).
    * `eos_token_id`: a row that has produced it emits `pad_token_id` from then on (default: `eos_token_id`,
      else 0); when every row has, generation stops early.

    Runs without grad. With `use_cache` and no `past_key_values`, the cache is `model.create_empty_cache()` if
    the model defines it, else a `DynamicCache()`.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.generation import generate
        >>> class Counter:  # logits that always favour "previous token + 1"
        ...     def __call__(self, input_ids, position_ids=None, past_key_values=None):
        ...         return tp.one_hot((input_ids + 1) % 10, 10).float()
        >>> generate(Counter(), tp.tensor([[3]]), max_new_tokens=4, use_cache=False).tolist()
        [[3, 4, 5, 6, 7]]
    """
    if not isinstance(input_ids, Tensor) or input_ids.dim() != 2:
        shape = tuple(input_ids.shape) if isinstance(input_ids, Tensor) else type(input_ids).__name__
        raise ValueError(f"generate: input_ids must be a 2-D [batch, seq] tensor, got {shape}")
    if max_new_tokens <= 0:
        return input_ids
    if pad_token_id is None:
        pad_token_id = eos_token_id if eos_token_id is not None else 0
    cache = past_key_values
    if use_cache and cache is None:
        make = getattr(model, "create_empty_cache", None)
        cache = make() if callable(make) else DynamicCache()

    with no_grad():
        batch = int(input_ids.shape[0])
        sequences = input_ids
        next_input = input_ids
        finished = tp.zeros(batch, dtype=tp.bool) if eos_token_id is not None else None
        for _ in range(max_new_tokens):
            length, fed = int(sequences.shape[1]), int(next_input.shape[1])
            position_ids = tp.arange(length - fed, length, dtype=tp.int64).expand(batch, fed)
            logits = model(next_input, position_ids=position_ids, past_key_values=cache)
            token = _next_tokens(
                logits[:, -1, :], sequences, do_sample, temperature, top_k, top_p, repetition_penalty
            ).to(input_ids.dtype)
            if finished is not None:
                token = tp.where(finished, tp.full_like(token, pad_token_id), token)
                finished = finished | (token == eos_token_id)
            sequences = tp.cat([sequences, token[:, None]], 1)
            next_input = token[:, None] if use_cache else sequences
            if finished is not None and bool(finished.all()):
                break
    return sequences
