"""`LinearStateCache`: the decoding state of the recurrent (linear-attention) mixers, `GatedDeltaNet` and
`KimiDeltaAttention` — a short window of convolution inputs and one fixed-size matrix per layer.

Where it sits: beside the key/value caches of nn/cache/, but not a `Cache`: a recurrent mixer keeps no keys or
values, so there is no `update`/`get_seq_length`. Its memory does not grow with the sequence
(shared/reference/llm-api.md, "LinearStateCache", is the contract).
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

__all__ = ["LinearStateCache"]


class LinearStateCache:
    """Per-layer state of recurrent token mixers, filed under each mixer's `layer_idx`.

    * `conv_states[i]` `[B, conv_dim, kernel_size - 1]`: the last inputs of layer `i`'s causal short
      convolution, so that the next call's first outputs see them.
    * `recurrent_states[i]` `[B, heads, Dk, Dv]` (float32): the delta-rule state matrix after the last token.

    Both are constant in the sequence length. Known quirk (kept for compatibility): a prefill shorter than
    `kernel_size - 1` stores a narrower window, and the next call ignores a window that is not exactly
    `kernel_size - 1` wide (it does not concatenate), so those first inputs drop out of the convolution.

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.cache import LinearStateCache
        >>> cache = LinearStateCache()
        >>> cache.update_conv_state(0, tp.ones(1, 6, 5), kernel_size=4).shape
        tensorplay.Size([1, 6, 5])
        >>> cache.update_conv_state(0, tp.ones(1, 6, 1), kernel_size=4).shape  # 3 stored inputs prepended
        tensorplay.Size([1, 6, 4])
        >>> cache.has_previous_state(0), cache.has_previous_state(1)
        (True, False)
    """

    def __init__(self) -> None:
        self.conv_states: dict[int, Tensor] = {}
        self.recurrent_states: dict[int, Tensor] = {}

    def has_previous_state(self, layer_idx: int = 0) -> bool:
        """True once `layer_idx` has stored a conv window or a recurrent state."""
        return layer_idx in self.conv_states or layer_idx in self.recurrent_states

    def update_conv_state(self, layer_idx: int, conv_state: Tensor, kernel_size: int) -> Tensor:
        """Take the new conv inputs `[B, conv_dim, T]`; return them with the stored window of
        `kernel_size - 1` inputs prepended (when one of exactly that width exists), and store the trailing
        `kernel_size - 1` columns of the result (fewer if it is shorter)."""
        if conv_state.dim() != 3:
            raise ValueError(
                f"LinearStateCache.update_conv_state: conv_state must be [B, conv_dim, T], "
                f"got {tuple(conv_state.shape)}"
            )
        if not isinstance(kernel_size, int) or kernel_size <= 0:
            raise ValueError(
                f"LinearStateCache.update_conv_state: kernel_size must be a positive int, got {kernel_size!r}"
            )
        keep = kernel_size - 1
        stored = self.conv_states.get(layer_idx)
        if stored is not None and int(stored.shape[2]) == keep:
            if tuple(stored.shape[:2]) != tuple(conv_state.shape[:2]):
                raise ValueError(
                    f"LinearStateCache.update_conv_state: layer {layer_idx} holds a window of shape "
                    f"{tuple(stored.shape)}, cannot continue with inputs {tuple(conv_state.shape)}"
                )
            # pad + add is cat([stored, conv_state], 2); cat's derivative misplaces the new inputs' gradient
            # when the stored window needs none (a prefill under no_grad followed by training steps).
            t = int(conv_state.shape[2])
            conv_state = tp.pad(stored, [0, t]) + tp.pad(conv_state, [keep, 0])
        width = int(conv_state.shape[2])
        # An explicit start index: a slice [-0:] would keep everything when kernel_size == 1.
        self.conv_states[layer_idx] = conv_state[:, :, max(width - keep, 0) :].contiguous()
        return conv_state

    def update_recurrent_state(self, layer_idx: int, state: Tensor) -> Tensor:
        """Store `state` `[B, heads, Dk, Dv]` for `layer_idx` as it is (the same object) and return it."""
        self.recurrent_states[layer_idx] = state
        return state

    def reset(self) -> None:
        """Forget every layer's windows and states."""
        self.conv_states.clear()
        self.recurrent_states.clear()

    def __repr__(self) -> str:
        return f"LinearStateCache(layers={sorted(set(self.conv_states) | set(self.recurrent_states))})"
