"""``nn.init``: in-place initialisation of parameters (``uniform_``, ``xavier_*``, ``kaiming_*``, ...).

Where it sits: every layer's ``reset_parameters`` calls these. Each function fills its tensor in place under
``no_grad`` with P10's random ops (``uniform_``, ``normal_``), which draw the same numbers as PyTorch's CPU
generator for the same seed: with ``tp.manual_seed(s)`` a layer starts with exactly the weights that
``torch.manual_seed(s)`` gives the same PyTorch layer (the draws are made in the same order, on tensors of the
same shape, as in ``torch.nn.init``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import no_grad

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    r"""The gain that keeps activations' variance stable through ``nonlinearity``.

    ``linear``/``conv*``/``sigmoid``: 1; ``tanh``: 5/3; ``relu``: :math:`\sqrt 2`; ``leaky_relu``:
    :math:`\sqrt{2/(1+a^2)}` with negative slope ``param`` (default 0.01); ``selu``: 3/4.

    Example:
        >>> from tensorplay import nn
        >>> round(nn.init.calculate_gain("relu"), 4)
        1.4142
    """
    if nonlinearity in _LINEAR_FNS:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: tp.Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight ``(out, in, *kernel)``: ``in``, ``out`` times ``prod(kernel)``."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field_size, tensor.shape[0] * receptive_field_size


def _calculate_correct_fan(tensor: tp.Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: tp.Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> tp.Tensor:
    r"""Fill with draws from :math:`\mathcal{U}(a, b)`.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.nn.init.uniform_(tp.empty(3, 5), -1.0, 1.0)
        >>> bool((w.abs() <= 1).all())
        True
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: tp.Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> tp.Tensor:
    r"""Fill with draws from :math:`\mathcal{N}(\text{mean}, \text{std}^2)`.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.normal_(tp.empty(3, 5)).shape
        tensorplay.Size([3, 5])
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(
    tensor: tp.Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> tp.Tensor:
    r"""Fill with draws from :math:`\mathcal{N}(\text{mean}, \text{std}^2)` truncated to :math:`[a, b]`.

    Rejection sampling, as PyTorch 2.13 does, so that equal seeds give equal values: when the interval holds
    more than 30% of the mass, draw normals and redraw those outside :math:`[a, b]`; otherwise draw uniforms
    on :math:`[a, b]` and accept each with probability :math:`\phi(x) / \phi(\text{mode})`, redrawing the
    rejected ones.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.nn.init.trunc_normal_(tp.empty(100), std=0.02, a=-0.04, b=0.04)
        >>> bool((w.abs() <= 0.04).all())
        True
    """

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        mass = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if mass > 0.3:
            # the bounds in the tensor's dtype, so that the test agrees with the values it tests
            lo, hi = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                result = tp.where(
                    outside, tp.empty_like(result).normal_(mean, std, generator=generator), result
                )
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        # little mass inside: uniform proposals on [a, b], accepted with probability pdf(x) / pdf(mode)
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates, accept_buf = tp.empty_like(tensor), tp.empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = tp.where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                pending = tp.where(
                    pending, accept_buf.uniform_(generator=generator).log_().gt(candidates), pending
                )
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def constant_(tensor: tp.Tensor, val: float) -> tp.Tensor:
    """Fill with ``val``.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.constant_(tp.empty(2), 0.3).tolist()
        [0.30000001192092896, 0.30000001192092896]
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: tp.Tensor) -> tp.Tensor:
    """Fill with ones.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.ones_(tp.empty(2)).tolist()
        [1.0, 1.0]
    """
    with no_grad():
        return tensor.fill_(1)


def zeros_(tensor: tp.Tensor) -> tp.Tensor:
    """Fill with zeros.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.zeros_(tp.empty(2)).tolist()
        [0.0, 0.0]
    """
    with no_grad():
        return tensor.zero_()


def eye_(tensor: tp.Tensor) -> tp.Tensor:
    """Fill a 2-D tensor with the identity (ones on the main diagonal); keeps the identity of inputs in
    linear layers.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.eye_(tp.empty(2, 3)).tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(
            tp.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype, device=tensor.device)
        )


def dirac_(tensor: tp.Tensor, groups: int = 1) -> tp.Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: the convolution passes its input through
    (per group, as many channels as fit).

    Example:
        >>> import tensorplay as tp
        >>> w = tp.nn.init.dirac_(tp.empty(2, 2, 3))
        >>> w[:, :, 1].tolist(), w.sum().item()
        ([[1.0, 0.0], [0.0, 1.0]], 2.0)
    """
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_per_group + d, d, *centre)] = 1
    return tensor


def xavier_uniform_(tensor: tp.Tensor, gain: float = 1.0, generator: Any = None) -> tp.Tensor:
    r"""Glorot uniform: :math:`\mathcal{U}(-a, a)` with :math:`a = \text{gain}\sqrt{6/(\text{fan\_in} +
    \text{fan\_out})}`.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.nn.init.xavier_uniform_(tp.empty(3, 5))
        >>> bool((w.abs() <= (6 / 8) ** 0.5).all())
        True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: tp.Tensor, gain: float = 1.0, generator: Any = None) -> tp.Tensor:
    r"""Glorot normal: :math:`\mathcal{N}(0, \sigma^2)` with
    :math:`\sigma = \text{gain}\sqrt{2/(\text{fan\_in} + \text{fan\_out})}`.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.xavier_normal_(tp.empty(3, 5)).shape
        tensorplay.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: tp.Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> tp.Tensor:
    r"""He uniform: :math:`\mathcal{U}(-b, b)` with :math:`b = \text{gain}\sqrt{3/\text{fan}}`, ``fan`` the
    ``mode``'s fan and ``gain = calculate_gain(nonlinearity, a)``.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.kaiming_uniform_(tp.empty(3, 5), mode="fan_in", nonlinearity="relu").shape
        tensorplay.Size([3, 5])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: tp.Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> tp.Tensor:
    r"""He normal: :math:`\mathcal{N}(0, \sigma^2)` with :math:`\sigma = \text{gain}/\sqrt{\text{fan}}`.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.init.kaiming_normal_(tp.empty(3, 5), mode="fan_out", nonlinearity="relu").shape
        tensorplay.Size([3, 5])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: tp.Tensor, gain: float = 1, generator: Any = None) -> tp.Tensor:
    r"""Fill with a (semi-)orthogonal matrix times ``gain``: the Q of the QR decomposition of a standard
    normal matrix, with signs fixed by R's diagonal so that Q is uniformly (Haar) distributed. Dimensions
    after the first are flattened.

    Example:
        >>> import tensorplay as tp
        >>> w = tp.nn.init.orthogonal_(tp.empty(3, 5))
        >>> bool(((w @ w.t()) - tp.eye(3)).abs().max() < 1e-5)
        True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened = flattened.t()
    q, r = tp.linalg.qr(flattened)
    q = q * tp.diagonal(r, 0).sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: tp.Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> tp.Tensor:
    r"""Fill a 2-D tensor with :math:`\mathcal{N}(0, \text{std}^2)` and zero ``ceil(sparsity * rows)`` random
    entries in every column (Martens 2010).

    Example:
        >>> import tensorplay as tp
        >>> w = tp.nn.init.sparse_(tp.empty(4, 3), sparsity=0.5)
        >>> [int((w[:, j] == 0).sum()) for j in range(3)]
        [2, 2, 2]
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            zero_indices = tp.randperm(rows)[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor
