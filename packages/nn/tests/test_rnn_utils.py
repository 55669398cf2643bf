"""Tests of nn.utils.rnn: PackedSequence and the pack / pad helpers, against hand-built NumPy layouts."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay as tp
from tensorplay.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def _np_pack(seqs: list[np.ndarray]) -> tuple[np.ndarray, list[int], list[int]]:
    """Packed data, batch sizes and sort order by the definition: sort by length, then step by step."""
    order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
    rows, sizes = [], []
    for t in range(len(seqs[order[0]])):
        running = [i for i in order if len(seqs[i]) > t]
        sizes.append(len(running))
        rows += [seqs[i][t] for i in running]
    return np.stack(rows), sizes, order


def _seqs(lengths: list[int], feature: tuple[int, ...] = (3,), seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, *feature)) for n in lengths]


@pytest.mark.parametrize("lengths", [[4, 3, 3, 1], [2], [1, 1, 1], [5, 2, 4, 2, 1]])
@pytest.mark.parametrize("feature", [(3,), (2, 2), ()])
def test_pack_sequence_matches_definition(lengths: list[int], feature: tuple[int, ...]) -> None:
    seqs = _seqs(lengths, feature)
    want, sizes, order = _np_pack(seqs)
    packed = pack_sequence([tp.tensor(s) for s in seqs], enforce_sorted=False)
    assert isinstance(packed, PackedSequence)
    np.testing.assert_array_equal(packed.data.numpy(), want)
    assert packed.batch_sizes.tolist() == sizes and packed.batch_sizes.dtype == tp.int64
    assert packed.sorted_indices.tolist() == order
    assert packed.unsorted_indices.tolist() == list(np.argsort(order))


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_then_pad_packed_round_trip(batch_first: bool) -> None:
    lengths = [2, 5, 3]
    seqs = _seqs(lengths)
    padded = np.zeros((3, 5, 3))
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = s
    x = tp.tensor(padded if batch_first else padded.transpose(1, 0, 2))
    packed = pack_padded_sequence(x, tp.tensor(lengths), batch_first=batch_first, enforce_sorted=False)
    np.testing.assert_array_equal(packed.data.numpy(), _np_pack(seqs)[0])
    out, out_lengths = pad_packed_sequence(
        packed, batch_first=batch_first, padding_value=-1.0, total_length=7
    )
    want = np.full((3, 7, 3), -1.0)
    for b, s in enumerate(seqs):
        want[b, : len(s)] = s
    np.testing.assert_array_equal(out.numpy(), want if batch_first else want.transpose(1, 0, 2))
    assert out_lengths.tolist() == lengths and out_lengths.dtype == tp.int64


def test_pack_padded_sorted_keeps_no_permutation_and_accepts_list() -> None:
    x = tp.arange(12.0).reshape(3, 2, 2)  # T=3, B=2
    packed = pack_padded_sequence(x, [3, 1])
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    assert packed.batch_sizes.tolist() == [2, 1, 1]
    np.testing.assert_array_equal(packed.data.numpy(), x.numpy()[[0, 0, 1, 2], [0, 1, 0, 0]])


def test_pack_and_pad_non_contiguous_input() -> None:
    base = tp.tensor(np.random.default_rng(1).standard_normal((3, 4, 2)))
    x = base.transpose(0, 1)  # [T=4, B=3, 2], not contiguous
    assert not x.is_contiguous()
    packed = pack_padded_sequence(x, [4, 2, 1])
    out, _ = pad_packed_sequence(packed)
    want = x.numpy().copy()
    want[2:, 1] = 0
    want[1:, 2] = 0
    np.testing.assert_array_equal(out.numpy(), want)


def test_gradient_flows_through_pack_and_pad() -> None:
    x = tp.tensor(np.random.default_rng(2).standard_normal((4, 3, 2)), requires_grad=True)
    packed = pack_padded_sequence(x, [4, 3, 1])
    (packed.data * packed.data).sum().backward()
    want = 2 * x.detach().numpy()
    want[3:, 1] = 0
    want[1:, 2] = 0
    np.testing.assert_allclose(x.grad.numpy(), want)
    # and through pad_packed_sequence: the padding gets no gradient
    data = packed.data.detach().requires_grad_(True)
    out, _ = pad_packed_sequence(PackedSequence(data, packed.batch_sizes))
    out.sum().backward()
    np.testing.assert_array_equal(data.grad.numpy(), np.ones(data.shape))


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence(side: str, batch_first: bool) -> None:
    seqs = _seqs([2, 4, 1], (2,))
    want = np.full((3, 4, 2), 7.0)
    for b, s in enumerate(seqs):
        if side == "right":
            want[b, : len(s)] = s
        else:
            want[b, 4 - len(s) :] = s
    got = pad_sequence([tp.tensor(s) for s in seqs], batch_first, 7.0, side)
    np.testing.assert_array_equal(got.numpy(), want if batch_first else want.transpose(1, 0, 2))


def test_pad_sequence_errors() -> None:
    with pytest.raises(RuntimeError, match="padding_side to be one of left or right, but got middle"):
        pad_sequence([tp.zeros(2)], padding_side="middle")
    with pytest.raises(RuntimeError, match="trailing shape"):
        pad_sequence([tp.zeros(2, 3), tp.zeros(2, 4)])


def test_unpad_and_unpack_give_the_sequences_back() -> None:
    seqs = [tp.tensor(s) for s in _seqs([3, 1, 2])]
    for got in (
        unpack_sequence(pack_sequence(seqs, enforce_sorted=False)),
        unpad_sequence(pad_sequence(seqs), [3, 1, 2]),
    ):
        assert len(got) == 3
        for g, s in zip(got, seqs, strict=True):
            np.testing.assert_array_equal(g.numpy(), s.numpy())


def test_pack_errors() -> None:
    x = tp.zeros(3, 2, 1)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order"):
        pack_padded_sequence(x, [1, 3])
    with pytest.raises(
        RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 3 \(batch_size=2\)"
    ):
        pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        pack_padded_sequence(x, [3, 0])
    with pytest.raises(RuntimeError, match="longer than the 3 time steps"):
        pack_padded_sequence(x, [4, 2])
    with pytest.raises(RuntimeError, match="Cannot pack empty tensors"):
        pack_padded_sequence(tp.zeros(3, 2, 0), [3, 2])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        pad_packed_sequence(pack_padded_sequence(x, [3, 2]), total_length=2)


def test_invert_permutation_and_to() -> None:
    perm = tp.tensor([2, 0, 3, 1])
    assert invert_permutation(perm).tolist() == [1, 3, 0, 2]
    assert invert_permutation(None) is None
    packed = pack_sequence([tp.ones(2, 1), tp.ones(3, 1)], enforce_sorted=False)
    assert packed.double().data.dtype == tp.float64
    assert packed.to(tp.float32) is packed
    assert packed.sorted_indices.tolist() == [1, 0]


def test_pack_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.utils import rnn as trnn

    seqs = _seqs([2, 5, 3, 5])
    ours = pack_sequence([tp.tensor(s) for s in seqs], enforce_sorted=False)
    theirs = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(ours.data.numpy(), theirs.data.numpy())
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    ours_padded, _ = pad_packed_sequence(ours, batch_first=True)
    theirs_padded, _ = trnn.pad_packed_sequence(theirs, batch_first=True)
    np.testing.assert_array_equal(ours_padded.numpy(), theirs_padded.numpy())
