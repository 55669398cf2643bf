"""Recurrent layers: RNN (tanh / relu), LSTM (with projections) and GRU over whole sequences.

Where it sits: `tensorplay.nn.RNN`, `LSTM`, `GRU`, as in `torch.nn`; the single-step cells, which share the
step functions defined here, are in rnn_cell.py. Plain Python over TensorPlay ops (STYLE.md rule 11): autograd
differentiates through the time loop, so there is no hand-written backward. Parameter names, shapes, gate
order and initialisation follow PyTorch, so a PyTorch `state_dict` loads here and the same seed gives the
same weights.

Note [Recurrent equations]
  With x_t the input, h the previous hidden state and sigma the logistic sigmoid (PyTorch's gate order):
    RNN : h' = act(W_ih x_t + b_ih + W_hh h + b_hh),  act = tanh or relu
    LSTM: i, f, g, o = split4(W_ih x_t + b_ih + W_hh h + b_hh);  i, f, o = sigma(.);  g = tanh(g)
          c' = f * c + i * g;   h' = o * tanh(c');   with proj_size > 0:  h' = W_hr h'
    GRU : r, z, n_x = split3(W_ih x_t + b_ih);  r_h, z_h, n_h = split3(W_hh h + b_hh)
          r = sigma(r + r_h);  z = sigma(z + z_h);  n = tanh(n_x + r * n_h);  h' = (1 - z) * n + z * h
  The input term W_ih x_t + b_ih does not depend on h, so one matmul computes it for every time step of a
  layer before the loop; only the W_hh h product stays inside. For RNN and LSTM b_hh is folded into that
  up-front term too; for GRU it cannot be, since r multiplies b_hn.

Note [One backward for the pieces]
  The loop reads the input term of step t as a piece of the one up-front product, and each step splits its
  gate pre-activations into gate blocks. Each piece as its own view (`xw[a:b]`) would get its own backward
  node scattering its gradient into a zero tensor of the whole's size: O(T^2) in the input term (measured:
  700 ms for a 64-step LSTM that PyTorch runs in under 50). `Tensor.split` is one P10 op with one autograd
  node for all the pieces (Note [One op for all the pieces] in P10's kernels/view.cpp), whose backward
  concatenates their gradients once, so the loop takes its pieces with `split`.

Note [Packed time loop]
  Padded and packed input run through one loop over the packed layout (nn/utils/rnn.py, Note [Packed layout]):
  a padded [T, B, *] batch is the packed layout with batch_sizes = [B] * T. At step t only the first
  batch_sizes[t] rows of the hidden state are live. Going forward, rows that stop (batch size drops) are set
  aside as those sequences' final state; going backward (the reverse direction starts at the last step), rows
  join from the initial state as their sequences begin. So no padding step is ever computed.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}

# One step of a recurrence (Note [Recurrent equations]): (input term, h, c, w_hh^T, b_hh, w_hr^T) -> (h', c').
# `xw` already holds W_ih x_t + b_ih (and b_hh where it could be folded in); c is None except for LSTM.
_Step = Callable[
    [Tensor, Tensor, Tensor | None, Tensor, Tensor | None, Tensor | None], tuple[Tensor, Tensor | None]
]


def _chunk(t: Tensor, n: int) -> tuple[Tensor, ...]:
    """The gate blocks of `[B, n*H]` pre-activations, in PyTorch's gate order."""
    return t.split(t.size(1) // n, 1)


def _hidden_term(h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None) -> Tensor:
    return h.matmul(w_hh_t) if b_hh is None else tp.addmm(b_hh, h, w_hh_t)


def _tanh_step(
    xw: Tensor, h: Tensor, c: Tensor | None, w_hh_t: Tensor, b_hh: Tensor | None, w_hr_t: Tensor | None
) -> tuple[Tensor, Tensor | None]:
    return tp.tanh(tp.addmm(xw, h, w_hh_t)), None


def _relu_step(
    xw: Tensor, h: Tensor, c: Tensor | None, w_hh_t: Tensor, b_hh: Tensor | None, w_hr_t: Tensor | None
) -> tuple[Tensor, Tensor | None]:
    return tp.relu(tp.addmm(xw, h, w_hh_t)), None


def _lstm_step(
    xw: Tensor, h: Tensor, c: Tensor | None, w_hh_t: Tensor, b_hh: Tensor | None, w_hr_t: Tensor | None
) -> tuple[Tensor, Tensor | None]:
    i, f, g, o = _chunk(tp.addmm(xw, h, w_hh_t), 4)
    assert c is not None  # an LSTM always carries its cell state
    c = tp.sigmoid(f) * c + tp.sigmoid(i) * tp.tanh(g)
    h = tp.sigmoid(o) * tp.tanh(c)
    return (h if w_hr_t is None else h.matmul(w_hr_t)), c


def _gru_step(
    xw: Tensor, h: Tensor, c: Tensor | None, w_hh_t: Tensor, b_hh: Tensor | None, w_hr_t: Tensor | None
) -> tuple[Tensor, Tensor | None]:
    xr, xz, xn = _chunk(xw, 3)
    hr, hz, hn = _chunk(_hidden_term(h, w_hh_t, b_hh), 3)
    r = tp.sigmoid(xr + hr)
    z = tp.sigmoid(xz + hz)
    n = tp.tanh(xn + r * hn)
    return n + z * (h - n), None


_STEPS: dict[str, _Step] = {
    "RNN_TANH": _tanh_step,
    "RNN_RELU": _relu_step,
    "LSTM": _lstm_step,
    "GRU": _gru_step,
}


def _input_term(mode: str, x: Tensor, w_ih: Tensor, b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor:
    """W_ih x + b_ih for every row of x at once, plus b_hh where the step adds it unchanged."""
    bias = b_ih
    if mode != "GRU" and b_hh is not None:
        bias = b_hh if bias is None else bias + b_hh
    return F.linear(x, w_ih, bias)


def _run_direction(
    mode: str,
    xw: Tensor,
    batch_sizes: list[int],
    h0: Tensor,
    c0: Tensor | None,
    w_hh: Tensor,
    b_hh: Tensor | None,
    w_hr: Tensor | None,
    reverse: bool,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """One direction of one layer over packed input terms `xw` (Note [Packed time loop]).

    Returns the packed outputs, the final hidden state and (LSTM) the final cell state, all in sorted order.
    """
    step = _STEPS[mode]
    w_hh_t = w_hh.t()
    w_hr_t = None if w_hr is None else w_hr.t()
    # GRU adds b_hh inside the step; RNN/LSTM had it folded into xw
    b_step = b_hh if mode == "GRU" else None
    outputs: list[Tensor] = []
    steps = xw.split(list(batch_sizes)) if batch_sizes else ()
    if not reverse:
        h, c, done_h, done_c = h0, c0, [], []
        for bs, xw_t in zip(batch_sizes, steps, strict=True):
            if bs < h.size(0):  # the sequences past row bs have ended: their state is final
                done_h.append(h[bs:])
                h = h[:bs]
                if c is not None:
                    done_c.append(c[bs:])
                    c = c[:bs]
            h, c = step(xw_t, h, c, w_hh_t, b_step, w_hr_t)
            outputs.append(h)
        h_n = tp.cat([h, *reversed(done_h)]) if done_h else h
        c_n = None if c is None else (tp.cat([c, *reversed(done_c)]) if done_c else c)
    else:
        last = batch_sizes[-1] if batch_sizes else h0.size(0)
        h, c = h0[:last], None if c0 is None else c0[:last]
        for bs, xw_t in zip(reversed(batch_sizes), reversed(steps), strict=True):
            if bs > h.size(0):  # sequences that are shorter start here, from their initial state
                h = tp.cat([h, h0[h.size(0) : bs]])
                if c is not None and c0 is not None:
                    c = tp.cat([c, c0[c.size(0) : bs]])
            h, c = step(xw_t, h, c, w_hh_t, b_step, w_hr_t)
            outputs.append(h)
        outputs.reverse()
        h_n, c_n = h, c
    return tp.cat(outputs), h_n, c_n


class RNNBase(Module):
    """The shared machinery of `RNN`, `LSTM` and `GRU`: parameters, checks and the layer / direction loop.

    `mode` is "RNN_TANH", "RNN_RELU", "LSTM" or "GRU". For layer k and direction suffix s ("" forward,
    "_reverse" backward) it holds `weight_ih_l{k}{s}` [G*H, in], `weight_hh_l{k}{s}` [G*H, H_out],
    `bias_ih_l{k}{s}`, `bias_hh_l{k}{s}` [G*H] and, for an LSTM with `proj_size`, `weight_hr_l{k}{s}`
    [proj_size, H], with G gates (1, 4, 3) and H_out = proj_size or hidden_size. Every parameter starts
    uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)], drawn in this order.
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if (
            not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1  # type: ignore[operator]
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element "
                "being zeroed"
            )
        if dropout > 0 and num_layers == 1:  # type: ignore[operator]
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size != 0 and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)  # type: ignore[arg-type]
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes, strict=True):
                    setattr(self, name, Parameter(tp.empty(shape, **factory)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)] (PyTorch's order)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction: [[w_ih, w_hh, b_ih, b_hh, (w_hr)], ...]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch compatibility (cuDNN's flat weight buffer does not exist here)."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- checks (PyTorch's messages) ----

    def _check_input(self, input: Tensor, batch_sizes: list[int] | None) -> None:
        weight_dtype = getattr(self, self._flat_weights_names[0]).dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})"
            )
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.size(-1)}"
            )

    def _hidden_shape(self, mini_batch: int, size: int) -> tuple[int, int, int]:
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, size)

    @staticmethod
    def _check_hidden_size(
        hx: Tensor, expected: tuple[int, ...], msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    # ---- the layer loop ----

    def _run(
        self, x: Tensor, batch_sizes: list[int], h0: Tensor, c0: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """All layers and directions over packed rows `x` [N, in]; h0/c0 [L*D, B, *] in sorted order."""
        num_directions = 2 if self.bidirectional else 1
        h_n: list[Tensor] = []
        c_n: list[Tensor] = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                index = layer * num_directions + direction
                params = self.all_weights[index]
                w_ih, w_hh = params[0], params[1]
                b_ih, b_hh = (params[2], params[3]) if self.bias else (None, None)
                w_hr = params[-1] if self.proj_size > 0 else None
                xw = _input_term(self.mode, x, w_ih, b_ih, b_hh)
                out, h, c = _run_direction(
                    self.mode,
                    xw,
                    batch_sizes,
                    h0[index],
                    None if c0 is None else c0[index],
                    w_hh,
                    b_hh,
                    w_hr,
                    reverse=direction == 1,
                )
                outs.append(out)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            x = tp.cat(outs, -1) if num_directions == 2 else outs[0]
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = tp.dropout(x, self.dropout, True)
        return x, tp.stack(h_n), tp.stack(c_n) if c_n else None

    def _forward(
        self, input: Tensor | PackedSequence, hx: Tensor | tuple[Tensor, Tensor] | None
    ) -> tuple[Tensor | PackedSequence, Tensor | tuple[Tensor, Tensor]]:
        name = "LSTM" if self.mode == "LSTM" else "GRU" if self.mode == "GRU" else "RNN"
        is_lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        sorted_indices = unsorted_indices = None
        if packed:
            data, batch_sizes = input.data, [int(b) for b in input.batch_sizes.tolist()]
            sorted_indices, unsorted_indices = input.sorted_indices, input.unsorted_indices
            is_batched, batch = True, 0
            self._check_input(data, batch_sizes)
        else:
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                    + (" tensor instead" if name == "RNN" else " instead")
                )
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
            self._check_input(input, None)
            if input.size(0) == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            steps, batch = input.size(0), input.size(1)
            data, batch_sizes = input.reshape(steps * batch, input.size(2)), [batch] * steps
        hs: list[Tensor] | None = None
        if hx is not None:
            hs = list(hx) if is_lstm else [hx]  # type: ignore[arg-type]
            if not packed:
                dims = [t.dim() for t in hs]
                want = 3 if is_batched else 2
                if any(d != want for d in dims):
                    kind = "batched 3-D" if is_batched else "unbatched 2-D"
                    if is_lstm:
                        raise RuntimeError(
                            f"For {kind} input, hx and cx should also be {want}-D but got "
                            f"({dims[0]}-D, {dims[1]}-D) tensors"
                        )
                    raise RuntimeError(
                        f"For {kind} input, hx should also be {want}-D but got {dims[0]}-D tensor"
                    )
                if not is_batched:
                    hs = [t.unsqueeze(1) for t in hs]
            if sorted_indices is not None:  # into the packed (sorted) batch order
                hs = [t.index_select(1, sorted_indices) for t in hs]
        # the largest batch of any step: the first of the packed layout, the batch of a padded input
        mini_batch = batch_sizes[0] if packed and batch_sizes else batch
        h_size, c_size = (
            self._hidden_shape(mini_batch, real_hidden),
            self._hidden_shape(mini_batch, self.hidden_size),
        )
        if hs is None:
            zeros = {"dtype": data.dtype, "device": data.device}
            hs = (
                [tp.zeros(h_size, **zeros), tp.zeros(c_size, **zeros)]
                if is_lstm
                else [tp.zeros(h_size, **zeros)]
            )
        elif is_lstm:
            self._check_hidden_size(hs[0], h_size, "Expected hidden[0] size {}, got {}")
            self._check_hidden_size(hs[1], c_size, "Expected hidden[1] size {}, got {}")
        else:
            self._check_hidden_size(hs[0], h_size)
        out, h_n, c_n = self._run(data, batch_sizes, hs[0], hs[1] if is_lstm else None)
        if packed:
            output: Tensor | PackedSequence = PackedSequence(
                out, input.batch_sizes, sorted_indices, unsorted_indices
            )
        else:
            output = out.reshape(len(batch_sizes), batch, num_directions * real_hidden)
            if not is_batched:
                output = output.squeeze(1)
            elif self.batch_first:
                output = output.transpose(0, 1)
        finals = [h_n] if c_n is None else [h_n, c_n]
        if unsorted_indices is not None:
            finals = [t.index_select(1, unsorted_indices) for t in finals]
        if not is_batched:
            finals = [t.squeeze(1) for t in finals]
        return output, (finals[0], finals[1]) if is_lstm else finals[0]


class RNN(RNNBase):
    r"""A multi-layer Elman RNN: :math:`h_t = \tanh(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    `nonlinearity="relu"` uses relu instead of tanh. Input `[T, N, input_size]` (`[N, T, input_size]` with
    `batch_first`, `[T, input_size]` unbatched, or a `PackedSequence`); `h_0`
    `[num_layers * D, N, hidden_size]` (zeros if omitted), D = 2 if bidirectional. Returns `output`
    `[T, N, D * hidden_size]` (the last layer's h_t for every t, both directions concatenated) and `h_n`
    (every layer's final state). With `num_layers > 1` each layer reads the previous one's output, with
    `dropout` applied between layers in training.

    Example::

        >>> import tensorplay as tp
        >>> rnn = tp.nn.RNN(10, 20, num_layers=2)
        >>> output, h_n = rnn(tp.randn(5, 3, 10), tp.randn(2, 3, 20))
        >>> output.shape, h_n.shape
        (tensorplay.Size([5, 3, 20]), tensorplay.Size([2, 3, 20]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(
            mode,
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            0,
            device,
            dtype,
        )
        self.nonlinearity = nonlinearity

    def forward(
        self, input: Tensor | PackedSequence, hx: Tensor | None = None
    ) -> tuple[Tensor | PackedSequence, Tensor]:
        return self._forward(input, hx)  # type: ignore[return-value]


class LSTM(RNNBase):
    r"""A multi-layer long short-term memory RNN (equations in Note [Recurrent equations] of this file).

    .. math::
        i, f, g, o = \sigma, \sigma, \tanh, \sigma(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh}) \\
        c_t = f \odot c_{t-1} + i \odot g, \quad h_t = o \odot \tanh(c_t)

    With `proj_size > 0`, `h_t = W_{hr} h_t` has `proj_size` features (and `W_hh` reads those). Input as in
    `RNN`; `(h_0, c_0)` default to zeros. Returns `output, (h_n, c_n)`.

    Example::

        >>> import tensorplay as tp
        >>> lstm = tp.nn.LSTM(10, 20, batch_first=True, bidirectional=True)
        >>> output, (h_n, c_n) = lstm(tp.randn(3, 5, 10))
        >>> output.shape, h_n.shape, c_n.shape
        (tensorplay.Size([3, 5, 40]), tensorplay.Size([2, 3, 20]), tensorplay.Size([2, 3, 20]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device,
            dtype,
        )

    def forward(
        self, input: Tensor | PackedSequence, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor | PackedSequence, tuple[Tensor, Tensor]]:
        return self._forward(input, hx)  # type: ignore[return-value]


class GRU(RNNBase):
    r"""A multi-layer gated recurrent unit RNN (PyTorch's formulation, where r gates `W_hn h + b_hn`).

    .. math::
        r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr}), \quad
        z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz}) \\
        n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn})), \quad h' = (1 - z) \odot n + z \odot h

    Input and outputs as in `RNN`.

    Example::

        >>> import tensorplay as tp
        >>> gru = tp.nn.GRU(10, 20, 2)
        >>> output, h_n = gru(tp.randn(5, 3, 10))
        >>> output.shape, h_n.shape
        (tensorplay.Size([5, 3, 20]), tensorplay.Size([2, 3, 20]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            0,
            device,
            dtype,
        )

    def forward(
        self, input: Tensor | PackedSequence, hx: Tensor | None = None
    ) -> tuple[Tensor | PackedSequence, Tensor]:
        return self._forward(input, hx)  # type: ignore[return-value]
