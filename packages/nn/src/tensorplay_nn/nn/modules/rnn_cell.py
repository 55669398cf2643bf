"""Single-step recurrent cells: RNNCell, LSTMCell, GRUCell, as in `torch.nn`.

Where it sits: `tensorplay.nn.RNNCell`, `LSTMCell`, `GRUCell`. One call is one time step of the recurrences in
rnn.py (Note [Recurrent equations] there), computed by the same step functions; the caller writes the time
loop. Parameter names (`weight_ih`, `weight_hh`, `bias_ih`, `bias_hh`), gate order and initialisation follow
PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .. import init
from ..parameter import Parameter
from .module import Module
from .rnn import _STEPS, _input_term

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(Module):
    """Parameters and checks shared by the cells: `weight_ih` [G*H, in], `weight_hh` [G*H, H], `bias_ih`,
    `bias_hh` [G*H], uniform in [-1/sqrt(H), 1/sqrt(H)] in that order."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        factory = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(tp.empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(tp.empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(tp.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(tp.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(
        self, name: str, input: Tensor, hx: list[Tensor] | None, labels: list[str]
    ) -> tuple[Tensor, list[Tensor], bool]:
        """Checks ranks and sizes (PyTorch's messages), batches an unbatched call and makes the zero state."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for label, h in zip(labels, hx, strict=True):
                if h.dim() not in (1, 2):
                    what = "hidden" if len(labels) == 1 else f"hx[{label}]"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}"
            )
        if hx is None:
            hx = [tp.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)] * len(
                labels
            )
        else:
            hx = [h if is_batched else h.unsqueeze(0) for h in hx]
            for label, h in zip(labels, hx, strict=True):
                if h.dim() != 2 or input.size(0) != h.size(0):
                    raise RuntimeError(
                        f"Input batch size {input.size(0)} doesn't match hidden{label} batch size {h.size(0)}"
                    )
                if h.size(1) != self.hidden_size:
                    raise RuntimeError(
                        f"hidden{label} has inconsistent hidden_size: got {h.size(1)}, "
                        f"expected {self.hidden_size}"
                    )
        return input, hx, is_batched

    def _step(self, mode: str, input: Tensor, h: Tensor, c: Tensor | None) -> tuple[Tensor, Tensor | None]:
        xw = _input_term(mode, input, self.weight_ih, self.bias_ih, self.bias_hh)
        b_step = self.bias_hh if mode == "GRU" else None
        return _STEPS[mode](xw, h, c, self.weight_hh.t(), b_step, None)


class RNNCell(RNNCellBase):
    r"""One step of an Elman RNN: :math:`h' = \tanh(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})` (or relu).

    Input `[N, input_size]` or `[input_size]`; `hx` the same leading shape with `hidden_size` (zeros if
    omitted). Returns `h'`.

    Example::

        >>> import tensorplay as tp
        >>> cell = tp.nn.RNNCell(10, 20)
        >>> h = tp.zeros(3, 20)
        >>> for x in tp.randn(6, 3, 10):
        ...     h = cell(x, h)
        >>> h.shape
        tensorplay.Size([3, 20])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, (h,), is_batched = self._prepare("RNNCell", input, None if hx is None else [hx], ["0"])
        h, _ = self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, h, None)
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""One LSTM step: :math:`i, f, g, o` gates from `W_ih x + b_ih + W_hh h + b_hh`, then
    :math:`c' = f c + i g`, :math:`h' = o \tanh(c')` (gate order i, f, g, o as in PyTorch).

    Input `[N, input_size]` or `[input_size]`; `hx = (h, c)` (zeros if omitted). Returns `(h', c')`.

    Example::

        >>> import tensorplay as tp
        >>> cell = tp.nn.LSTMCell(10, 20)
        >>> h, c = cell(tp.randn(3, 10))
        >>> h.shape, c.shape
        (tensorplay.Size([3, 20]), tensorplay.Size([3, 20]))
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        input, (h, c), is_batched = self._prepare(
            "LSTMCell", input, None if hx is None else list(hx), ["0", "1"]
        )
        h, c = self._step("LSTM", input, h, c)
        assert c is not None
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    r"""One GRU step: :math:`r, z = \sigma(\cdot)`,
    :math:`n = \tanh(W_{in} x + b_{in} + r (W_{hn} h + b_{hn}))`,
    :math:`h' = (1 - z) n + z h` (gate order r, z, n as in PyTorch).

    Example::

        >>> import tensorplay as tp
        >>> cell = tp.nn.GRUCell(10, 20)
        >>> cell(tp.randn(3, 10)).shape
        tensorplay.Size([3, 20])
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), is_batched = self._prepare("GRUCell", input, None if hx is None else [hx], ["0"])
        h, _ = self._step("GRU", input, h, None)
        return h if is_batched else h.squeeze(0)
