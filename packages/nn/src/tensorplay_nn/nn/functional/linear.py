"""Affine maps in ``nn.functional``: ``linear`` and ``bilinear``.

Where it sits: compositions of P10 ops. ``linear`` folds the leading dimensions into one and calls ``addmm``
(one GEMM with the bias added in its epilogue, and one autograd node), which is both the fastest path on the
CPU and the one whose gradients are cheapest; ``bilinear`` is one ``matmul`` plus a reduction.
"""

from __future__ import annotations

import tensorplay_p10 as tp

__all__ = ["bilinear", "linear"]


def _shape_str(shape: tp.Size | list[int] | tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


def linear(input: tp.Tensor, weight: tp.Tensor, bias: tp.Tensor | None = None) -> tp.Tensor:
    r"""Apply :math:`y = x W^T + b` over the last dimension of ``input``.

    Shapes: ``input`` ``(*, in_features)``, ``weight`` ``(out_features, in_features)`` (or ``(in_features,)``
    for a single output with that dimension dropped), ``bias`` ``(out_features,)`` or broadcastable to the
    output; the result is ``(*, out_features)``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.linear(tp.ones(2, 3), tp.ones(4, 3), tp.zeros(4)).tolist()
        [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    """
    if input.dim() == 0:
        raise RuntimeError("linear(): input must have at least 1 dimension, but got a 0-dimensional tensor")
    if weight.dim() not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, but got shape {_shape_str(weight.shape)}")
    in_features = weight.shape[-1]
    if input.shape[-1] != in_features:
        lead = input.shape[:-1].numel() if input.dim() > 1 else 1
        mat2_shape = weight.t().shape if weight.dim() == 2 else weight.shape
        raise RuntimeError(
            f"linear(): input and weight shapes cannot be multiplied "
            f"({lead}x{input.shape[-1]} and {_shape_str(mat2_shape)})"
        )
    if weight.dim() == 2 and input.dim() >= 2 and bias is not None and bias.dim() <= 1:
        # (*, in) -> (N, in) @ (in, out) + bias in one addmm, then back to (*, out)
        flat = input.reshape(-1, in_features)
        out = tp.addmm(bias, flat, weight.t())
        return out.reshape(*input.shape[:-1], weight.shape[0])
    out = tp.matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


def bilinear(
    input1: tp.Tensor, input2: tp.Tensor, weight: tp.Tensor, bias: tp.Tensor | None = None
) -> tp.Tensor:
    r"""Apply :math:`y_k = x_1^T A_k x_2 + b_k` for each output feature ``k``.

    Shapes: ``input1`` ``(*, in1)``, ``input2`` ``(*, in2)`` with the same leading dimensions, ``weight``
    ``(out, in1, in2)``, ``bias`` ``(out,)``; the result is ``(*, out)``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.bilinear(tp.ones(2, 3), tp.ones(2, 4), tp.ones(5, 3, 4)).shape
        tensorplay.Size([2, 5])
    """
    if weight.dim() != 3:
        raise RuntimeError(
            f"bilinear(): weight must be 3-D (out, in1, in2), but got shape {_shape_str(weight.shape)}"
        )
    out_f, in1, in2 = weight.shape
    if input1.dim() == 0 or input1.shape[-1] != in1:
        raise RuntimeError(
            f"bilinear(): input1's last dimension ({input1.shape[-1] if input1.dim() else 'none'}) "
            "must equal "
            f"weight.size(1) ({in1})"
        )
    if input2.dim() == 0 or input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input2's last dimension ({input2.shape[-1] if input2.dim() else 'none'}) "
            "must equal "
            f"weight.size(2) ({in2})"
        )
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input1 and input2 must have the same leading dimensions, but got "
            f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_f):
        raise RuntimeError(f"bilinear(): bias must have shape ({out_f},), but got {list(bias.shape)}")
    # x1 @ [A_0 | A_1 | ...] gives every x1^T A_k at once: (*, out*in2); then dot each block with x2.
    left = tp.matmul(input1, weight.permute(1, 0, 2).reshape(in1, out_f * in2))
    out = (left.reshape(*input1.shape[:-1], out_f, in2) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias
