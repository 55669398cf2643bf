"""Flat views of a model's parameters: ``parameters_to_vector`` and ``vector_to_parameters``.

Where it sits: helpers for algorithms that treat all parameters as one vector (line searches, second-order
methods, evolution strategies). They concatenate or copy with P10 ops.
"""

from __future__ import annotations

from collections.abc import Iterable

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(params: list[tp.Tensor]) -> None:
    devices = {p.device for p in params}
    if len(devices) > 1:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")


def parameters_to_vector(parameters: Iterable[tp.Tensor]) -> tp.Tensor:
    r"""Concatenate the parameters, each flattened, into one 1-D tensor (differentiable).

    Example:
        >>> import tensorplay as tp
        >>> lin = tp.nn.Linear(3, 2)
        >>> tp.nn.utils.parameters_to_vector(lin.parameters()).shape
        tensorplay.Size([8])
    """
    params = list(parameters)
    _check_same_device(params)
    if not params:
        raise RuntimeError("parameters_to_vector(): expected a non-empty iterable of Tensors")
    return tp.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: tp.Tensor, parameters: Iterable[tp.Tensor]) -> None:
    r"""Copy consecutive slices of the 1-D ``vec`` into the parameters, in order (in place, without grad).

    PyTorch rebinds each parameter's ``.data`` to a view of ``vec``; here the values are copied, so the
    parameters keep their own storage (and the optimisers holding them stay valid).

    Example:
        >>> import tensorplay as tp
        >>> lin = tp.nn.Linear(2, 1)
        >>> tp.nn.utils.vector_to_parameters(tp.tensor([1.0, 2.0, 3.0]), lin.parameters())
        >>> lin.weight.tolist(), lin.bias.tolist()
        ([[1.0, 2.0]], [3.0])
    """
    if not isinstance(vec, tp.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    _check_same_device(params)
    total = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() < total:
        raise RuntimeError(
            f"vector_to_parameters(): vec must be 1-D with at least {total} elements "
            "(the parameters' total), "
            f"but got shape {list(vec.shape)}"
        )
    pointer = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[pointer : pointer + n].view_as(p))
            pointer += n
