"""`QuantizedCache`: a key/value cache that stores int8 codes with one float32 scale per cached vector, a
quarter of the bytes of a float32 `DynamicCache` (plus 4 bytes of scale per head and position).

Where it sits: beside the other caches in nn/cache/ (the `Cache` protocol is in base.py). Attention mixers
call `update` as with any cache and attend over the dequantised float32 state it returns.
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .base import Cache, check_continues, check_key_value, grow_slots

__all__ = ["QuantizedCache"]

# A vector of zeros still gets a usable (non-zero) scale, so that dividing by it stays finite.
_MIN_SCALE = 1e-8


def quantize_int8(x: Tensor) -> tuple[Tensor, Tensor]:
    """Symmetric per-vector int8 quantisation of `x` `[..., D]`: returns `(codes int8 [..., D], scale float32
    [..., 1])` with `scale = max(absmax(x) / 127, 1e-8)` and `codes = round(x / scale)` (half to even), so
    `|codes * scale - x| <= scale / 2` elementwise."""
    x = x.detach().float()
    scale = (x.abs().amax(-1, keepdim=True) / 127.0).clamp(min=_MIN_SCALE)
    codes = (x / scale).round().clamp(-127.0, 127.0).to(tp.int8)
    return codes, scale


def dequantize_int8(codes: Tensor, scale: Tensor) -> Tensor:
    """The float32 values `codes * scale` that `quantize_int8` approximates."""
    return codes.float() * scale


class QuantizedCache(Cache):
    """A cache that keeps keys and values as int8 codes plus a float32 scale per `(row, head, position)`.

    Each `update` call quantises its block and appends it as one chunk: per layer `i`, `key_codes[i]` is a
    list with one int8 `[B, H, t, Dk]` per call and `key_scales[i]` the matching float32 `[B, H, t, 1]`
    (the same for values). For a vector `x` of width `D`::

        scale = max(max_j |x_j| / 127, 1e-8),   code_j = round(x_j / scale) in [-127, 127]
        x̂_j  = code_j · scale,                 |x̂_j − x_j| <= scale / 2 <= max_j |x_j| / 254

    so the error of every element is at most ~0.4% of its vector's largest magnitude. `update` returns the
    layer's whole dequantised state `[B, H, S, D]` in float32 (whatever the input dtype); `get_seq_length`
    sums the chunk lengths.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.cache import QuantizedCache
        >>> cache = QuantizedCache()
        >>> k, v = cache.update(tp.tensor([[[[1.0, -0.5, 0.25]]]]), tp.zeros(1, 1, 1, 2))
        >>> cache.key_codes[0][0].tolist(), k.tolist()
        ([[[[127, -64, 32]]]], [[[[1.0, -0.5039370059967041, 0.25196850299835205]]]])
    """

    def __init__(self) -> None:
        self.key_codes: list[list[Tensor] | None] = []
        self.key_scales: list[list[Tensor] | None] = []
        self.value_codes: list[list[Tensor] | None] = []
        self.value_scales: list[list[Tensor] | None] = []
        self._lengths: list[int] = []

    def update(self, key: Tensor, value: Tensor, layer_idx: int = 0) -> tuple[Tensor, Tensor]:
        """Quantise `key`/`value` `[B, H, T, D]` as one more chunk of `layer_idx`; return the whole float32
        state `[B, H, S, D]`, dequantised."""
        check_key_value("QuantizedCache", key, value, layer_idx)
        slots = (self.key_codes, self.key_scales, self.value_codes, self.value_scales)
        for per_layer in slots:
            grow_slots(per_layer, layer_idx)
        while len(self._lengths) <= layer_idx:
            self._lengths.append(0)
        if self.key_codes[layer_idx] is None:
            for per_layer in slots:
                per_layer[layer_idx] = []
        else:
            check_continues("QuantizedCache", self.key_codes[layer_idx][0], key, "keys", layer_idx)
            check_continues("QuantizedCache", self.value_codes[layer_idx][0], value, "values", layer_idx)
        key_codes, key_scale = quantize_int8(key)
        value_codes, value_scale = quantize_int8(value)
        self.key_codes[layer_idx].append(key_codes)
        self.key_scales[layer_idx].append(key_scale)
        self.value_codes[layer_idx].append(value_codes)
        self.value_scales[layer_idx].append(value_scale)
        self._lengths[layer_idx] += int(key.shape[2])
        return (
            self._dequantize(self.key_codes[layer_idx], self.key_scales[layer_idx]),
            self._dequantize(self.value_codes[layer_idx], self.value_scales[layer_idx]),
        )

    @staticmethod
    def _dequantize(codes: list[Tensor], scales: list[Tensor]) -> Tensor:
        """All chunks of one layer, dequantised and joined along the sequence axis."""
        parts = [dequantize_int8(c, s) for c, s in zip(codes, scales, strict=True)]
        return parts[0] if len(parts) == 1 else tp.cat(parts, 2)

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Positions stored for `layer_idx` (the sum of its chunk lengths; 0 if it was never written)."""
        return self._lengths[layer_idx] if layer_idx < len(self._lengths) else 0

    def reset(self) -> None:
        """Drop every layer's chunks and length."""
        for per_layer in (self.key_codes, self.key_scales, self.value_codes, self.value_scales):
            per_layer.clear()
        self._lengths.clear()

    def __len__(self) -> int:
        return len(self.key_codes)

    def __repr__(self) -> str:
        return f"QuantizedCache(layers={len(self)}, seq_length={self.get_seq_length(0)})"
