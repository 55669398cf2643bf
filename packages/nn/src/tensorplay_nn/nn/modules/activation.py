"""Activation modules: every activation ``torch.nn`` has as a layer (ReLU ... Mish, GLU, PReLU, Threshold,
Softmax / LogSoftmax / Softmin / Softmax2d), each calling the matching ``nn.functional`` function.

Where it sits: thin ``Module`` wrappers over ``nn/functional/activation.py`` (where the maths is), with
PyTorch's constructor signatures and its ``extra_repr`` text (``ReLU(inplace=True)``,
``LeakyReLU(negative_slope=0.01)``, ``GELU(approximate='none')``). Only ``PReLU`` has a parameter (its
slopes, initialised to 0.25). ``MultiheadAttention`` lives in ``multihead_attention.py``.
"""

from __future__ import annotations

import warnings

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.grad_mode import no_grad

from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "PReLU",
    "RReLU",
    "ReLU",
    "ReLU6",
    "SELU",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


def _inplace(inplace: bool, first: bool = True) -> str:
    # PyTorch's repr shows the flag only when set: "inplace=True" alone, or ", inplace=True" after others.
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class Threshold(Module):
    r""":math:`y = x` where :math:`x > \text{threshold}`, else ``value``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Threshold(0.1, 20.0)(tp.tensor([0.0, 0.5]))
        tensor([20.0000,  0.5000])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace(self.inplace, False)}"


class ReLU(Module):
    r""":math:`\max(0, x)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReLU()(tp.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class RReLU(Module):
    r"""Randomised leaky ReLU: negative slopes drawn from :math:`U(\text{lower}, \text{upper})` in training,
    :math:`(\text{lower} + \text{upper}) / 2` in evaluation.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.RReLU(0.1, 0.3).eval()(tp.tensor([-1.0, 2.0]))
        tensor([-0.2000,  2.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace(self.inplace, False)}"


class Hardtanh(Module):
    r""":math:`\mathrm{clamp}(x, \text{min\_val}, \text{max\_val})`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Hardtanh(-2.0, 2.0)(tp.tensor([-3.0, 1.0, 3.0]))
        tensor([-2.,  1.,  2.])
    """

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and renamed to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and renamed to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self.inplace, False)}"


class ReLU6(Hardtanh):
    r""":math:`\min(\max(0, x), 6)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ReLU6()(tp.tensor([-1.0, 8.0]))
        tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class Sigmoid(Module):
    r""":math:`\sigma(x) = 1 / (1 + e^{-x})`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Sigmoid()(tp.tensor([0.0]))
        tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return tp.sigmoid(input)


class Hardsigmoid(Module):
    r""":math:`\mathrm{clamp}(x / 6 + 1/2, 0, 1)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Hardsigmoid()(tp.tensor([0.0]))
        tensor([0.5000])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Tanh(Module):
    r""":math:`\tanh(x)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Tanh()(tp.tensor([0.0]))
        tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return tp.tanh(input)


class SiLU(Module):
    r""":math:`x \sigma(x)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.SiLU()(tp.tensor([1.0]))
        tensor([0.7311])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class Mish(Module):
    r""":math:`x \tanh(\mathrm{softplus}(x))`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Mish()(tp.tensor([1.0]))
        tensor([0.8651])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class Hardswish(Module):
    r""":math:`x \cdot \mathrm{clamp}(x + 3, 0, 6) / 6`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Hardswish()(tp.tensor([4.0]))
        tensor([4.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class ELU(Module):
    r""":math:`x` for :math:`x > 0`, else :math:`\alpha (e^x - 1)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.ELU()(tp.tensor([-1.0, 2.0]))
        tensor([-0.6321,  2.0000])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace, False)}"


class CELU(Module):
    r""":math:`\max(0, x) + \min(0, \alpha (e^{x/\alpha} - 1))`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.CELU(2.0)(tp.tensor([-2.0]))
        tensor([-1.2642])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace, False)}"


class SELU(Module):
    r""":math:`\lambda\, \mathrm{ELU}_\alpha(x)`, :math:`\alpha \approx 1.6733`,
    :math:`\lambda \approx 1.0507`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.SELU()(tp.tensor([1.0]))
        tensor([1.0507])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class GLU(Module):
    r"""Gated linear unit :math:`a \otimes \sigma(b)`, ``input`` split in halves along ``dim``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.GLU()(tp.tensor([2.0, 0.0]))
        tensor([1.])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    r""":math:`x \Phi(x)`; ``approximate='tanh'`` for the tanh approximation.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.GELU()
        GELU(approximate='none')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    r""":math:`x` where :math:`|x| > \lambda`, else 0.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Hardshrink()(tp.tensor([0.2, 1.0]))
        tensor([0., 1.])
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class LeakyReLU(Module):
    r""":math:`x` for :math:`x \ge 0`, else :math:`\text{negative\_slope} \cdot x`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.LeakyReLU(0.1)(tp.tensor([-2.0, 2.0]))
        tensor([-0.2000,  2.0000])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace(self.inplace, False)}"


class LogSigmoid(Module):
    r""":math:`\log \sigma(x)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.LogSigmoid()(tp.tensor([0.0]))
        tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softplus(Module):
    r""":math:`\frac1\beta \log(1 + e^{\beta x})`, linear above ``threshold``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Softplus()(tp.tensor([0.0]))
        tensor([0.6931])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    r""":math:`x \mp \lambda` outside :math:`[-\lambda, \lambda]`, else 0.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Softshrink()(tp.tensor([0.2, 1.0]))
        tensor([0.0000, 0.5000])
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class PReLU(Module):
    r""":math:`x` for :math:`x \ge 0`, else :math:`a x` with a learnt slope :math:`a` (one, or one per channel
    with ``num_parameters = C``), initialised to ``init``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.PReLU()(tp.tensor([-2.0, 2.0])).tolist()
        [-0.5, 2.0]
    """

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: object = None, dtype: object = None
    ) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(tp.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope set to ``init``."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    r""":math:`x / (1 + |x|)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Softsign()(tp.tensor([1.0]))
        tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    r""":math:`x - \tanh(x)`.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Tanhshrink()(tp.tensor([0.0]))
        tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class Softmin(Module):
    r""":math:`\mathrm{softmax}(-x)` along ``dim``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Softmin(dim=0)(tp.tensor([0.0, 0.0]))
        tensor([0.5000, 0.5000])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(Module):
    r""":math:`e^{x_i} / \sum_j e^{x_j}` along ``dim``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Softmax(dim=-1)(tp.tensor([0.0, 0.0]))
        tensor([0.5000, 0.5000])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    r"""Softmax over the channels (dim -3) of ``[N, C, H, W]`` or ``[C, H, W]``, at every pixel.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.Softmax2d()(tp.zeros(2, 1, 1)).flatten()
        tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(Module):
    r""":math:`x_i - \log \sum_j e^{x_j}` along ``dim``.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> nn.LogSoftmax(dim=-1)(tp.tensor([0.0, 0.0]))
        tensor([-0.6931, -0.6931])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
