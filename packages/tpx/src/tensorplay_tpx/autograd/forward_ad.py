"""Forward-mode AD: push a tangent through a computation alongside its values (PyTorch's ``forward_ad``).

Where it sits: inside ``dual_level()``, every op passes through TPX's recording kernel, which computes the
outputs' tangents from the inputs' (csrc/forward_ad.cpp, Note [JVP from the VJP] in formulas/__init__.py).

    >>> import tensorplay as tp
    >>> import tensorplay.autograd.forward_ad as fwAD
    >>> x = tp.tensor([1.0, 2.0])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, tp.tensor([1.0, 0.0])).sin() * 3
    ...     primal, tangent = fwAD.unpack_dual(y)
    >>> tangent  # 3 cos(x) * [1, 0]
    tensor([1.6209, -0.0000])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import tensorplay_p10 as tp

from .. import _C

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

Tensor = tp.Tensor


class UnpackedDualTensor(NamedTuple):
    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Open the (single) dual level; ops start carrying tangents."""
    if _C._forward_ad_enabled():
        raise RuntimeError("Nested forward mode AD is not supported: a dual level is already open")
    _C._set_forward_ad(True)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent attached inside it is dropped."""
    _C._exit_dual_level()


class dual_level:
    """Context manager for a dual level (tangents exist only inside it)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient."""
    if not _C._forward_ad_enabled():
        raise RuntimeError("make_dual: forward AD needs an open dual level (use `with dual_level():`)")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            f"Trying to set a forward gradient that has a different size than that of the original Tensor, "
            f"this is not supported. Tensor is of size {tuple(tensor.shape)} while the given forward "
            f"gradient "
            f"is of size {tuple(tangent.shape)}."
        )
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"make_dual: expected a floating point or complex tensor, got {tensor.dtype}")
    _C._set_forward_ad(False)
    try:
        dual = tensor.view_as(tensor)
    finally:
        _C._set_forward_ad(True)
    _C._set_fw_grad(dual, tangent.to(tensor.dtype))
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent): the primal is a view of ``tensor`` without the tangent."""
    tangent = _C._get_fw_grad(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    enabled = _C._forward_ad_enabled()
    _C._set_forward_ad(False)
    try:
        primal = tensor.view_as(tensor)
    finally:
        _C._set_forward_ad(enabled)
    return UnpackedDualTensor(primal, tangent)
