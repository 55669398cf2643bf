"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
``clip_grads_with_norm_``.

Where it sits: called between ``loss.backward()`` and ``optimizer.step()``; works in place on the ``.grad``
of the given parameters with P10 ops (``linalg_vector_norm``, ``mul_``, ``clamp_``), under ``no_grad``.
P10 has no multi-tensor ("foreach") kernels, so ``foreach`` is accepted for PyTorch compatibility and the
per-tensor loop is used either way: the results are the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

_TensorOrTensors = tp.Tensor | Iterable[tp.Tensor]


def _as_list(tensors: _TensorOrTensors) -> list[tp.Tensor]:
    return [tensors] if isinstance(tensors, tp.Tensor) else list(tensors)


def get_total_norm(
    tensors: _TensorOrTensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> tp.Tensor:
    r"""The ``norm_type``-norm of all ``tensors`` together, as if concatenated into one vector:
    :math:`\lVert (\lVert g_1 \rVert_p, \dots, \lVert g_n \rVert_p) \rVert_p` (``inf``: the largest
    absolute value). Zero for an empty list.

    Example:
        >>> import tensorplay as tp
        >>> tp.nn.utils.get_total_norm([tp.tensor([3.0]), tp.tensor([4.0])]).item()
        5.0
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tp.tensor(0.0)
    with no_grad():
        norms = [tp.linalg_vector_norm(t, norm_type) for t in tensors]
        total = tp.linalg_vector_norm(tp.stack([n.to(norms[0].device) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(
    parameters: _TensorOrTensors, max_norm: float, total_norm: tp.Tensor, foreach: bool | None = None
) -> None:
    r"""Scale every gradient by :math:`\min(1, \text{max\_norm} / (\text{total\_norm} + 10^{-6}))`, in place.

    Example:
        >>> import tensorplay as tp
        >>> p = tp.nn.Parameter(tp.zeros(2)); p.grad = tp.tensor([3.0, 4.0])
        >>> tp.nn.utils.clip_grads_with_norm_([p], 1.0, tp.tensor(5.0))
        >>> [round(v, 4) for v in p.grad.tolist()]
        [0.6, 0.8]
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        clip_coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef.to(g.device))


def clip_grad_norm_(
    parameters: _TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> tp.Tensor:
    r"""Rescale the gradients of ``parameters`` so that their total ``norm_type``-norm is at most
    ``max_norm``.

    Returns the total norm before clipping (a 0-d tensor). ``error_if_nonfinite=True`` raises
    ``RuntimeError`` instead of scaling by a NaN or infinite norm.

    Example:
        >>> import tensorplay as tp
        >>> p = tp.nn.Parameter(tp.zeros(2)); p.grad = tp.tensor([3.0, 4.0])
        >>> tp.nn.utils.clip_grad_norm_([p], max_norm=1.0).item()
        5.0
        >>> [round(v, 4) for v in p.grad.tolist()]
        [0.6, 0.8]
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters: _TensorOrTensors, clip_value: float, foreach: bool | None = None) -> None:
    r"""Clamp every gradient element to :math:`[-\text{clip\_value}, \text{clip\_value}]`, in place.

    Example:
        >>> import tensorplay as tp
        >>> p = tp.nn.Parameter(tp.zeros(3)); p.grad = tp.tensor([-2.0, 0.5, 3.0])
        >>> tp.nn.utils.clip_grad_value_([p], 1.0); p.grad.tolist()
        [-1.0, 0.5, 1.0]
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
