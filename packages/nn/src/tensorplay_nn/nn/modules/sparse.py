"""Lookup layers: ``Embedding`` and ``EmbeddingBag``.

Where it sits: modules over ``nn.functional.embedding``/``embedding_bag``. The table starts as
:math:`\\mathcal{N}(0, 1)` (PyTorch's default) with the ``padding_idx`` row zeroed.
"""

from __future__ import annotations

from typing import Any

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import no_grad

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_row(padding_idx: int | None, num_embeddings: int) -> int | None:
    """``padding_idx`` as a row number; out of range is an error (PyTorch raises AssertionError here)."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(
            f"Padding_idx must be within num_embeddings ({num_embeddings}), but got padding_idx={padding_idx}"
        )
    return padding_idx % num_embeddings


def _check_weight(weight: tp.Tensor, num_embeddings: int, embedding_dim: int) -> None:
    if list(weight.shape) != [num_embeddings, embedding_dim]:
        raise AssertionError(
            f"Shape of weight {list(weight.shape)} does not match num_embeddings and embedding_dim "
            f"({num_embeddings}, {embedding_dim})"
        )


class Embedding(Module):
    r"""A table of ``num_embeddings`` vectors of size ``embedding_dim``, indexed by integer tensors:
    ``out[..., :] = weight[input[...], :]``.

    ``padding_idx``: that row starts at zero and receives no gradient. ``max_norm``: looked-up rows longer
    than it (in ``norm_type``-norm) are rescaled in place. Input: any shape of ``int64``/``int32`` indices;
    output: ``input.shape + (embedding_dim,)``.

    Example:
        >>> import tensorplay as tp
        >>> emb = tp.nn.Embedding(10, 3, padding_idx=0)
        >>> emb(tp.tensor([[1, 2, 0]])).shape
        tensorplay.Size([1, 3, 3])
        >>> emb.weight[0].tolist()
        [0.0, 0.0, 0.0]
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: tp.Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_row(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(
                tp.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                requires_grad=not _freeze,
            )
            self.reset_parameters()
        else:
            _check_weight(_weight, num_embeddings, embedding_dim)
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """PyTorch's default: :math:`\\mathcal{N}(0, 1)`, then zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: tp.Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose table is ``embeddings`` (shared, not copied); ``freeze`` turns off its gradient.

        Example:
            >>> import tensorplay as tp
            >>> emb = tp.nn.Embedding.from_pretrained(tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
            >>> emb(tp.tensor([1])).tolist(), emb.weight.requires_grad
            ([[3.0, 4.0]], False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


class EmbeddingBag(Module):
    r"""Sums, means or maxima of bags of embedding rows, without building the rows themselves.

    ``forward(input, offsets=None, per_sample_weights=None)``: a 2-D ``input`` ``(B, N)`` is ``B`` bags of
    ``N`` indices; a 1-D ``input`` is cut into bags starting at ``offsets``. Output ``(B, embedding_dim)``.

    Example:
        >>> import tensorplay as tp
        >>> bag = tp.nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(tp.tensor([1, 2, 4, 5, 4, 3, 2, 9]), tp.tensor([0, 4])).shape
        tensorplay.Size([2, 3])
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: tp.Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, but got {mode!r}")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_row(padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(tp.empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            _check_weight(_weight, num_embeddings, embedding_dim)
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """PyTorch's default: :math:`\\mathcal{N}(0, 1)`, then zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(
        self, input: tp.Tensor, offsets: tp.Tensor | None = None, per_sample_weights: tp.Tensor | None = None
    ) -> tp.Tensor:
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        # PyTorch formats every value of this one with repr(): mode='sum'
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: tp.Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose table is ``embeddings``; ``freeze`` turns off its gradient."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
