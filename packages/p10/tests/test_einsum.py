"""einsum (csrc/kernels/einsum.cpp): parsing, implicit and explicit outputs, ellipsis, diagonals, the greedy
contraction order and explicit paths, all against np.einsum in float64."""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(1)

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit output
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ii->i", [(4, 4)]),  # diagonal
    ("ii", [(4, 4)]),  # trace (implicit: i occurs twice)
    ("iij->j", [(3, 3, 2)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->bk", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(5, 1, 3, 4), (2, 4, 5)]),  # ellipsis broadcasting
    ("i...->...", [(3, 2, 4)]),
    ("...i,...i->...", [(2, 3), (3,)]),
    ("ij,jk,kl->il", [(2, 30), (30, 40), (40, 3)]),
    ("ab,bc,cd,de->ae", [(3, 4), (4, 5), (5, 6), (6, 2)]),
    ("ijk,jl,kl->il", [(2, 3, 4), (3, 5), (4, 5)]),
    ("Ab,bA->A", [(3, 4), (4, 3)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("i,ij->j", [(3,), (3, 4)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]),  # spaces are ignored
]


@pytest.mark.parametrize("eq,shapes", CASES)
def test_einsum_matches_numpy(eq, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    r = tp.einsum(eq, *[tp.tensor(a) for a in arrays])
    ref = np.einsum(eq.replace(" ", ""), *arrays)
    assert r.shape == np.shape(ref)
    np.testing.assert_allclose(r.numpy(), ref, rtol=1e-10, atol=1e-10)
    # the list form of the operands, as in torch.einsum(eq, [a, b])
    np.testing.assert_allclose(
        tp.einsum(eq, [tp.tensor(a) for a in arrays]).numpy(), ref, rtol=1e-10, atol=1e-10
    )


def test_einsum_float32_and_layouts():
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    ta = tp.tensor(np.ascontiguousarray(a.T)).t()
    tb = tp.tensor(np.concatenate([b, b], axis=1))[:, ::2]
    r = tp.einsum("ij,jk->ik", ta, tb)
    assert r.dtype is tp.float32
    ref = a.astype(np.float64) @ np.concatenate([b, b], axis=1)[:, ::2]
    np.testing.assert_allclose(r.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_einsum_explicit_path_gives_the_same_result():
    arrays = [rng.standard_normal(s) for s in [(2, 6), (6, 7), (7, 3)]]
    ts = [tp.tensor(a) for a in arrays]
    ref = np.einsum("ij,jk,kl->il", *arrays)
    for path in ([0, 1, 0, 1], [1, 2, 0, 1], [0, 2, 0, 1]):
        np.testing.assert_allclose(tp.einsum("ij,jk,kl->il", *ts, path=path).numpy(), ref, rtol=1e-10)


def test_einsum_integer_and_size_zero():
    a = tp.tensor([[1, 2], [3, 4]])
    assert tp.einsum("ij,jk->ik", a, a).tolist() == [[7, 10], [15, 22]]
    assert tp.einsum("ii", a).item() == 5
    z = tp.einsum("ij,jk->ik", tp.ones(2, 0), tp.ones(0, 3))
    assert z.shape == (2, 3) and z.tolist() == [[0.0] * 3] * 2


def test_einsum_errors():
    with pytest.raises(RuntimeError, match="more operands were provided than specified"):
        tp.einsum("ij", tp.ones(2, 2), tp.ones(2, 2))
    with pytest.raises(RuntimeError, match="fewer operands were provided than specified"):
        tp.einsum("ij,jk", tp.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"the number of subscripts in the equation \(2\) does not match"):
        tp.einsum("ij", tp.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="output subscript k does not appear"):
        tp.einsum("ij->k", tp.ones(2, 2))
    with pytest.raises(RuntimeError, match="output subscript i appears more than once"):
        tp.einsum("ij->ii", tp.ones(2, 2))
    with pytest.raises(RuntimeError, match="invalid subscript"):
        tp.einsum("i1", tp.ones(2, 2))
    with pytest.raises(RuntimeError, match="subscript i is repeated for operand 0 but the sizes don't match"):
        tp.einsum("ii->i", tp.ones(2, 3))
    with pytest.raises(RuntimeError, match="expected scalar type float32 but found float64"):
        tp.einsum("i,i", tp.ones(2), tp.ones(2, dtype=tp.float64))


def test_einsum_matches_torch_when_available():
    torch = pytest.importorskip("torch")
    for eq, shapes in CASES:
        arrays = [rng.standard_normal(s) for s in shapes]
        ref = torch.einsum(eq, *[torch.from_numpy(a) for a in arrays]).numpy()
        np.testing.assert_allclose(
            tp.einsum(eq, *[tp.tensor(a) for a in arrays]).numpy(), ref, rtol=1e-10, atol=1e-10
        )
