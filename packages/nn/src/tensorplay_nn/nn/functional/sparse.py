"""Lookups in ``nn.functional``: ``embedding``, ``embedding_bag``, ``one_hot``.

Where it sits: thin wrappers over P10's ``embedding`` (a row gather whose backward scatters into the table),
``embedding_bag`` and ``one_hot`` ops, adding ``torch.nn.functional``'s argument order and its Python-side
checks (``padding_idx`` range, ``max_norm`` renormalisation of the looked-up rows, done in place on the table
under ``no_grad`` exactly as PyTorch does).
"""

from __future__ import annotations

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import no_grad

__all__ = ["embedding", "embedding_bag", "one_hot"]


def _normalize_padding_idx(padding_idx: int | None, num_embeddings: int, who: str) -> int:
    """``padding_idx`` as a row number (negative counts from the end); ``-1`` when there is none."""
    if padding_idx is None:
        return -1
    if padding_idx >= 0:
        if padding_idx >= num_embeddings:
            raise ValueError(
                f"{who}: padding_idx must be within num_embeddings ({num_embeddings}), but got {padding_idx}"
            )
        return padding_idx
    if padding_idx < -num_embeddings:
        raise ValueError(
            f"{who}: padding_idx must be within num_embeddings ({num_embeddings}), but got {padding_idx}"
        )
    return num_embeddings + padding_idx


def embedding(
    input: tp.Tensor,
    weight: tp.Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> tp.Tensor:
    r"""Look up rows of ``weight``: ``out[..., :] = weight[input[...], :]``.

    ``padding_idx``: that row gets no gradient. ``max_norm``: every looked-up row whose ``norm_type``-norm
    exceeds it is rescaled to that norm first — in place, in ``weight``. ``scale_grad_by_freq`` divides each
    row's gradient by how often it occurs in ``input``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> table = tp.arange(6.0).reshape(3, 2)
        >>> F.embedding(tp.tensor([[2, 0]]), table).tolist()
        [[[4.0, 5.0], [0.0, 1.0]]]
    """
    if weight.dim() != 2:
        raise RuntimeError(f"embedding(): weight must be 2-D, but got a {weight.dim()}-D tensor")
    if input.dtype not in (tp.int64, tp.int32):
        raise RuntimeError(
            "embedding(): Expected tensor for argument #1 'indices' to have one of the following "
            "scalar types: "
            f"Long, Int; but got {input.dtype} instead"
        )
    pad = _normalize_padding_idx(padding_idx, weight.shape[0], "embedding()")
    if max_norm is not None:
        with no_grad():
            tp.embedding_renorm_(weight, input.contiguous().reshape(-1), max_norm, norm_type)
    return tp.embedding(weight, input, pad, scale_grad_by_freq, sparse)


def embedding_bag(
    input: tp.Tensor,
    weight: tp.Tensor,
    offsets: tp.Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: tp.Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tp.Tensor:
    r"""Sum, mean or max of bags of rows of ``weight``, without materialising the rows.

    A 2-D ``input`` ``(B, N)`` is ``B`` bags of ``N`` indices; a 1-D ``input`` is cut into bags at
    ``offsets``.
    ``per_sample_weights`` (mode ``"sum"`` only) weighs each row. Rows equal to ``padding_idx`` are skipped
    and an empty bag gives zeros.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> table = tp.arange(6.0).reshape(3, 2)
        >>> F.embedding_bag(tp.tensor([0, 2, 1]), table, tp.tensor([0, 2]), mode="sum").tolist()
        [[4.0, 6.0], [2.0, 3.0]]
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag(): mode has to be one of sum, mean or max, but got {mode!r}")
    if padding_idx is not None:
        padding_idx = _normalize_padding_idx(padding_idx, weight.shape[0], "embedding_bag()")
    return tp.embedding_bag(
        input,
        weight,
        offsets,
        max_norm,
        norm_type,
        scale_grad_by_freq,
        mode,
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )


def one_hot(tensor: tp.Tensor, num_classes: int = -1) -> tp.Tensor:
    r"""``int64`` one-hot encoding: ``out[..., c] = (tensor[...] == c)``; ``num_classes=-1`` uses
    ``tensor.max() + 1``.

    Example:
        >>> import tensorplay as tp
        >>> import tensorplay.nn.functional as F
        >>> F.one_hot(tp.tensor([0, 2]), 3).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """
    return tp.one_hot(tensor, num_classes)
