"""Activations of ``tensorplay.nn.functional``: the ReLU family, sigmoid-like and shrink functions, GLU,
PReLU, RReLU, and softmax / log_softmax / softmin / gumbel_softmax.

Where it sits: each activation is one P10 op (``packages/p10/csrc/kernels/activation*.cpp``, derivatives in
TPX); this file gives them PyTorch's Python signatures, including the ``inplace`` flags (which call the
op's in-place form ``<name>_``) and the in-place functional spellings (``F.relu_``). ``tanhshrink`` and
``softsign`` are one-line compositions, as in PyTorch; ``gumbel_softmax`` draws from P10's generator, which
follows PyTorch's CPU stream, so a seeded call returns PyTorch's sample.
"""

from __future__ import annotations

import warnings

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor, dtype

__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    r""":math:`y = x` where :math:`x > \text{threshold}`, else ``value``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.threshold(tp.tensor([-1.0, 0.5, 2.0]), 1.0, 0.0)
        tensor([0., 0., 2.])
    """
    return tp.threshold_(input, threshold, value) if inplace else tp.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return tp.threshold_(input, threshold, value)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    r""":math:`\mathrm{ReLU}(x) = \max(0, x)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.relu(tp.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """
    return tp.relu_(input) if inplace else tp.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return tp.relu_(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    r""":math:`\mathrm{clamp}(x, \text{min\_val}, \text{max\_val})`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.hardtanh(tp.tensor([-3.0, 0.5, 3.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return tp.hardtanh_(input, min_val, max_val) if inplace else tp.hardtanh(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    r""":math:`\min(\max(0, x), 6)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.relu6(tp.tensor([-1.0, 3.0, 8.0]))
        tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    r""":math:`x` for :math:`x > 0`, else :math:`\alpha (e^x - 1)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.elu(tp.tensor([-1.0, 2.0]))
        tensor([-0.6321,  2.0000])
    """
    return tp.elu_(input, alpha) if inplace else tp.elu(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`."""
    return tp.elu_(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    r""":math:`\lambda\, \mathrm{ELU}_\alpha(x)` with :math:`\alpha \approx 1.6733`,
    :math:`\lambda \approx 1.0507` (self-normalising).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.selu(tp.tensor([1.0]))
        tensor([1.0507])
    """
    return tp.selu_(input) if inplace else tp.selu(input)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return tp.selu_(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    r""":math:`\max(0, x) + \min(0, \alpha (e^{x/\alpha} - 1))`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.celu(tp.tensor([-2.0]), alpha=2.0)
        tensor([-1.2642])
    """
    return tp.celu_(input, alpha) if inplace else tp.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return tp.celu_(input, alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    r""":math:`x` for :math:`x \ge 0`, else :math:`\text{negative\_slope} \cdot x`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.leaky_relu(tp.tensor([-2.0, 2.0]), 0.1)
        tensor([-0.2000,  2.0000])
    """
    return tp.leaky_relu_(input, negative_slope) if inplace else tp.leaky_relu(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu`."""
    return tp.leaky_relu_(input, negative_slope)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    r""":math:`x` for :math:`x \ge 0`, else :math:`a_c x`, the slope ``weight`` either one value or one per
    channel (dim 1).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.prelu(tp.tensor([-2.0, 2.0]), tp.tensor([0.25]))
        tensor([-0.5000,  2.0000])
    """
    return tp.prelu(input, weight)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    r"""Randomised leaky ReLU: in training the negative slope of each element is drawn from
    :math:`U(\text{lower}, \text{upper})`; in evaluation it is :math:`(\text{lower} + \text{upper}) / 2`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.rrelu(tp.tensor([-3.0, 1.0]), 0.1, 0.3)
        tensor([-0.6000,  1.0000])
    """
    return tp.rrelu_(input, lower, upper, training) if inplace else tp.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place :func:`rrelu`."""
    return tp.rrelu_(input, lower, upper, training)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    r"""Gated linear unit: split ``input`` in halves :math:`a, b` along ``dim``; :math:`a \otimes \sigma(b)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.glu(tp.tensor([2.0, 0.0]))
        tensor([1.])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return tp.glu(input, dim)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    r""":math:`x \Phi(x)` (:math:`\Phi` the standard normal CDF); ``approximate='tanh'`` uses
    :math:`0.5 x (1 + \tanh(\sqrt{2/\pi} (x + 0.044715 x^3)))`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.gelu(tp.tensor([1.0]))
        tensor([0.8413])
    """
    return tp.gelu(input, approximate=approximate)


def logsigmoid(input: Tensor) -> Tensor:
    r""":math:`\log \sigma(x) = -\log(1 + e^{-x})`, computed without overflow.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.logsigmoid(tp.tensor([0.0]))
        tensor([-0.6931])
    """
    return tp.log_sigmoid(input)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    r""":math:`x` where :math:`|x| > \lambda`, else 0.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.hardshrink(tp.tensor([-1.0, 0.2, 0.7]))
        tensor([-1.0000,  0.0000,  0.7000])
    """
    return tp.hardshrink(input, lambd)


def tanhshrink(input: Tensor) -> Tensor:
    r""":math:`x - \tanh(x)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.tanhshrink(tp.tensor([0.0]))
        tensor([0.])
    """
    return input - input.tanh()


def softsign(input: Tensor) -> Tensor:
    r""":math:`x / (1 + |x|)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.softsign(tp.tensor([1.0, -3.0]))
        tensor([ 0.5000, -0.7500])
    """
    return input / (input.abs() + 1)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    r""":math:`\frac1\beta \log(1 + e^{\beta x})`, and :math:`x` itself where
    :math:`\beta x > \text{threshold}`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.softplus(tp.tensor([0.0]))
        tensor([0.6931])
    """
    return tp.softplus(input, beta, threshold)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    r""":math:`x - \lambda` for :math:`x > \lambda`, :math:`x + \lambda` for :math:`x < -\lambda`, else 0.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.softshrink(tp.tensor([-1.0, 0.2, 0.7]))
        tensor([-0.5000,  0.0000,  0.2000])
    """
    return tp.softshrink(input, lambd)


def tanh(input: Tensor) -> Tensor:
    r""":math:`\tanh(x)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.tanh(tp.tensor([0.0]))
        tensor([0.])
    """
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    r""":math:`\sigma(x) = 1 / (1 + e^{-x})`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.sigmoid(tp.tensor([0.0]))
        tensor([0.5000])
    """
    return input.sigmoid()


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    r""":math:`\mathrm{clamp}(x / 6 + 1/2, 0, 1)`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.hardsigmoid(tp.tensor([-4.0, 0.0, 4.0]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    return tp.hardsigmoid_(input) if inplace else tp.hardsigmoid(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    r""":math:`x \sigma(x)` (also called swish).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.silu(tp.tensor([1.0]))
        tensor([0.7311])
    """
    return tp.silu_(input) if inplace else tp.silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    r""":math:`x \tanh(\mathrm{softplus}(x))`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.mish(tp.tensor([1.0]))
        tensor([0.8651])
    """
    return tp.mish_(input) if inplace else tp.mish(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    r""":math:`x \cdot \mathrm{clamp}(x + 3, 0, 6) / 6`.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.hardswish(tp.tensor([-4.0, 1.0, 4.0]))
        tensor([-0.0000,  0.6667,  4.0000])
    """
    return tp.hardswish_(input) if inplace else tp.hardswish(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    # PyTorch's legacy guess when dim is not given: 0 for 0-, 1- and 3-dim inputs, else 1; it warns.
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: dtype | None = None
) -> Tensor:
    r""":math:`\mathrm{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}` along ``dim``; ``dtype`` casts the input
    first (to compute a float16 input in float32, say).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.softmax(tp.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return tp.softmax(input, dim, dtype)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: dtype | None = None
) -> Tensor:
    r""":math:`\mathrm{softmin}(x) = \mathrm{softmax}(-x)` along ``dim``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.softmin(tp.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return tp.softmax(-input, dim, dtype)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: dtype | None = None
) -> Tensor:
    r""":math:`\log \mathrm{softmax}(x)_i = x_i - \log \sum_j e^{x_j}` along ``dim``, computed stably.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.log_softmax(tp.tensor([0.0, 0.0]), dim=0)
        tensor([-0.6931, -0.6931])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return tp.log_softmax(input, dim, dtype)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    r"""A differentiable sample from the categorical distribution ``softmax(logits)``:
    :math:`\mathrm{softmax}((x + g) / \tau)` with Gumbel noise :math:`g = -\log E`,
    :math:`E \sim \mathrm{Exp}(1)`.
    ``hard=True`` returns the one-hot of the sample's argmax in the forward pass and the soft sample's
    gradient in the backward pass (straight-through).

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> _ = tp.manual_seed(0)
        >>> F.gumbel_softmax(tp.zeros(3), hard=True).sum()
        tensor(1.)
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -tp.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = tp.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
