"""Variable-length sequences for recurrent layers: `PackedSequence` and the pack / pad helpers.

Where it sits: `tensorplay.nn.utils.rnn`, as `torch.nn.utils.rnn`. A batch of sequences of different lengths
is either *padded* (one `[T, B, *]` tensor, shorter sequences filled with `padding_value`) or *packed*: the
valid time steps only, laid out time-major in one `[sum(lengths), *]` tensor. RNN/LSTM/GRU accept a
`PackedSequence` and then never compute, nor return, anything for the padding (nn/modules/rnn.py). Everything
here is slicing, `cat` and `index_select`, so gradients flow through packing and unpacking.

Note [Packed layout]
  Sort the sequences by decreasing length (`sorted_indices[i]` is the original index of the i-th longest).
  `batch_sizes[t]` is how many sequences are still running at step t, a non-increasing int64 CPU tensor with
  one entry per step of the longest sequence. `data` holds step 0 of the `batch_sizes[0]` sequences, then step
  1 of the first `batch_sizes[1]`, and so on: at every step the running sequences are a prefix of the sorted
  batch. `unsorted_indices` is the inverse permutation, which puts results back in the caller's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """A batch of variable-length sequences in the packed layout (Note [Packed layout]).

    Made by `pack_padded_sequence` or `pack_sequence`, never by hand in ordinary code. Fields: `data`
    (`[sum(lengths), *]`), `batch_sizes` (int64, one entry per time step), `sorted_indices` and
    `unsorted_indices` (None when the batch was already sorted by decreasing length).

    Example::

        >>> import tensorplay as tp
        >>> from tensorplay.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([tp.tensor([1, 2, 3]), tp.tensor([4, 5])])
        >>> p.data.tolist(), p.batch_sizes.tolist()
        ([1, 4, 2, 5, 3], [2, 2, 1])
    """

    def __new__(
        cls,
        data: Tensor | tuple[Tensor, ...],
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                    "created manually. They should be instantiated by functions like pack_sequence and "
                    "pack_padded_sequences in nn.utils.rnn."
                )
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        # PyTorch also accepts the (data, batch_sizes) pair as the first argument
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise TypeError(f"PackedSequence: expected data and batch_sizes, got {type(data).__name__}")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """`data.to(...)`, and the index tensors to the same device; `batch_sizes` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices, unsorted_indices = (
            None if t is None else t.to(data.device) for t in (self.sorted_indices, self.unsorted_indices)
        )
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to(dtype=tp.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=tp.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=tp.float16)

    def bfloat16(self) -> PackedSequence:
        return self.to(dtype=tp.bfloat16)

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of `0..n-1`: `out[permutation[i]] = i`."""
    if permutation is None:
        return None
    n = permutation.numel()
    return tp.empty_like(permutation).scatter_(0, permutation, tp.arange(n, device=permutation.device))


def _lengths_list(lengths: Tensor | Sequence[int] | Iterable[int]) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"pack_padded_sequence: lengths must be a 1-D tensor, got {lengths.dim()}-D")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch `[T, B, *]` (`[B, T, *]` with `batch_first`) of sequences of the given lengths.

    With `enforce_sorted=True` the lengths must be non-increasing; otherwise the batch is sorted here and the
    permutation kept in the result so that `pad_packed_sequence` and the RNNs restore the caller's order.

    Example::

        >>> import tensorplay as tp
        >>> x = tp.tensor([[1, 4], [2, 5], [3, 0]])            # T=3, B=2; the second sequence has length 2
        >>> pack_padded_sequence(x, [3, 2]).data.tolist()
        [1, 4, 2, 5, 3]
    """
    lens = _lengths_list(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:], strict=False)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                "requirement if you do not need ONNX exportability."
            )
        sorted_indices = None
    else:
        # a stable sort, so that equal lengths keep their order (PyTorch's sort gives the same permutation)
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = tp.tensor(order, dtype=tp.int64, device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.dim() < 2:
        raise RuntimeError(f"pack_padded_sequence: input must have at least 2 dims, got {input.dim()}")
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch_size = input.size(1)
    if len(lens) != batch_size:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
            f"(batch_size={batch_size})"
        )
    if lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if lens[0] > input.size(0):
        raise RuntimeError(
            f"pack_padded_sequence: a length of {lens[0]} is longer than the {input.size(0)} time steps "
            "of input"
        )
    # One slice per run of equal batch size: steps [prev, length) all have the same running prefix.
    chunks, batch_sizes, prev = [], [], 0
    for b in range(batch_size - 1, -1, -1):
        length = lens[b]
        if length > prev:
            block = input[prev:length, : b + 1]
            chunks.append(block.reshape((length - prev) * (b + 1), *input.shape[2:]))
            batch_sizes.extend([b + 1] * (length - prev))
            prev = length
    data = tp.cat(chunks) if len(chunks) > 1 else chunks[0]
    return PackedSequence(data, tp.tensor(batch_sizes, dtype=tp.int64), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo `pack_padded_sequence`: the padded batch and the int64 lengths, both in the caller's order.

    `total_length` pads the time dimension beyond the longest sequence (it must not be shorter).

    Example::

        >>> import tensorplay as tp
        >>> p = pack_sequence([tp.tensor([1, 2, 3]), tp.tensor([4, 5])])
        >>> padded, lengths = pad_packed_sequence(p, batch_first=True)
        >>> padded.tolist(), lengths.tolist()
        ([[1, 2, 3], [4, 5, 0]], [3, 2])
    """
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_len}"
            )
    else:
        total_length = max_len
    batch = batch_sizes[0] if batch_sizes else 0
    feature = tuple(data.shape[1:])

    def filler(steps: int, rows: int) -> Tensor:
        return tp.full((steps, rows, *feature), padding_value, dtype=data.dtype, device=data.device)

    # Each run of equal batch size is one [steps, bs, *] block, padded on the right to the full batch.
    blocks, offset, t = [], 0, 0
    while t < max_len:
        bs, start = batch_sizes[t], t
        while t < max_len and batch_sizes[t] == bs:
            t += 1
        steps = t - start
        block = data[offset : offset + steps * bs].reshape(steps, bs, *feature)
        offset += steps * bs
        blocks.append(block if bs == batch else tp.cat([block, filler(steps, batch - bs)], 1))
    if total_length > max_len:
        blocks.append(filler(total_length - max_len, batch))
    padded = tp.cat(blocks) if len(blocks) > 1 else blocks[0]
    # lengths[i] = the number of steps at which sorted sequence i is still running
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    lengths_t = tp.tensor(lengths, dtype=tp.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths_t = lengths_t.index_select(0, sequence.unsorted_indices.to("cpu"))
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths_t


def pad_sequence(
    sequences: Tensor | Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences `[L_i, *]` into one `[max L, B, *]` tensor (`[B, max L, *]` with `batch_first`).

    Shorter sequences are filled with `padding_value` on the right (or on the left with
    `padding_side="left"`).

    Example::

        >>> import tensorplay as tp
        >>> pad_sequence([tp.tensor([1, 2, 3]), tp.tensor([4])], batch_first=True).tolist()
        [[1, 2, 3], [4, 0, 0]]
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(
                f"pad_sequence: every sequence must have the trailing shape {list(trailing)} of the first, "
                f"got {list(s.shape)}"
            )
    max_len = max(s.size(0) for s in sequences)
    rows = []
    for s in sequences:
        missing = max_len - s.size(0)
        if missing:
            pad = tp.full((missing, *trailing), padding_value, dtype=s.dtype, device=s.device)
            s = tp.cat([s, pad] if padding_side == "right" else [pad, s])
        rows.append(s)
    return tp.stack(rows, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into its sequences (the inverse of `pad_sequence` with right padding)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [
        seq[:length] for seq, length in zip(padded_sequences.unbind(0), _lengths_list(lengths), strict=True)
    ]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences `[L_i, *]` (`pad_sequence` then `pack_padded_sequence`)."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a `PackedSequence` holds, in the caller's order (inverse of `pack_sequence`)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
