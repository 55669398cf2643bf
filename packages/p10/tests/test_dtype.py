"""dtypes, promotion (tp.promote_types / result_type / can_cast), finfo / iinfo, the default dtype."""

import numpy as np
import pytest

import tensorplay_p10 as tp

ALL = [
    tp.bool,
    tp.uint8,
    tp.int8,
    tp.int16,
    tp.int32,
    tp.int64,
    tp.float16,
    tp.bfloat16,
    tp.float32,
    tp.float64,
    tp.complex64,
    tp.complex128,
]


def test_dtype_objects():
    assert repr(tp.float32) == "tensorplay.float32"
    assert (
        tp.float is tp.float32 and tp.double is tp.float64 and tp.long is tp.int64 and tp.half is tp.float16
    )
    assert [d.itemsize for d in ALL] == [1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16]
    assert tp.float16.is_floating_point and not tp.int32.is_floating_point and tp.complex64.is_complex
    assert tp.complex64.to_real() is tp.float32 and tp.float64.to_complex() is tp.complex128


# Cells of PyTorch's promotion table that are not "the larger of the two" (Note [Promotion lattice]).
@pytest.mark.parametrize(
    "a,b,expected",
    [
        (tp.uint8, tp.int8, tp.int16),
        (tp.bool, tp.uint8, tp.uint8),
        (tp.float16, tp.bfloat16, tp.float32),
        (tp.int64, tp.float16, tp.float16),
        (tp.complex64, tp.float64, tp.complex128),
        (tp.bool, tp.bool, tp.bool),
        (tp.int32, tp.bfloat16, tp.bfloat16),
        (tp.uint8, tp.int64, tp.int64),
        (tp.complex64, tp.int64, tp.complex64),
    ],
)
def test_promote_types_special_cells(a, b, expected):
    assert tp.promote_types(a, b) is expected
    assert tp.promote_types(b, a) is expected


def test_promote_types_matches_numpy_where_numpy_agrees():
    # NumPy and PyTorch agree on every pair of bool/ints/float32/float64/complex except int+float and
    # uint8/int8 handled above, where PyTorch stays at the float dtype; check the rest against NumPy.
    np_types = {
        tp.bool: np.bool_,
        tp.uint8: np.uint8,
        tp.int8: np.int8,
        tp.int16: np.int16,
        tp.int32: np.int32,
        tp.int64: np.int64,
        tp.float32: np.float32,
        tp.float64: np.float64,
        tp.complex64: np.complex64,
        tp.complex128: np.complex128,
    }
    for a, na in np_types.items():
        for b, nb in np_types.items():
            mixed_int_float = (a.is_floating_point or a.is_complex) != (b.is_floating_point or b.is_complex)
            if mixed_int_float:
                continue
            ref = np.promote_types(na, nb)
            assert np.dtype(np_types[tp.promote_types(a, b)]) == ref, (a, b)


def test_promote_types_against_torch():
    torch = pytest.importorskip("torch")
    names = [repr(d).split(".")[1] for d in ALL]
    for a, na in zip(ALL, names, strict=True):
        for b, nb in zip(ALL, names, strict=True):
            want = repr(torch.promote_types(getattr(torch, na), getattr(torch, nb))).split(".")[1]
            assert repr(tp.promote_types(a, b)) == "tensorplay." + want


def test_result_type_tiers():
    i = tp.tensor([1, 2], dtype=tp.int32)
    assert tp.result_type(i, 2.5) is tp.float32  # a Python float lifts the category to the default float
    assert tp.result_type(i, 2) is tp.int32  # a Python int does not widen
    h = tp.tensor([1.0], dtype=tp.float16)
    assert tp.result_type(h, tp.tensor(1.0, dtype=tp.float64)) is tp.float16  # zero-dim ranks below dims
    assert tp.result_type(tp.tensor(1, dtype=tp.uint8), 1000) is tp.uint8
    assert tp.result_type(i, 1j) is tp.complex64
    with pytest.raises(TypeError):
        tp.result_type("a", i)


def test_can_cast():
    assert tp.can_cast(tp.int32, tp.float16)
    assert not tp.can_cast(tp.float32, tp.int64)
    assert not tp.can_cast(tp.complex64, tp.float64)
    assert tp.can_cast(tp.bool, tp.uint8)


def test_finfo_iinfo():
    assert tp.finfo(tp.float32).eps == np.finfo(np.float32).eps
    assert tp.finfo(tp.float64).max == np.finfo(np.float64).max
    assert tp.finfo(tp.float16).tiny == float(np.finfo(np.float16).smallest_normal)
    assert tp.finfo(tp.bfloat16).eps == 2.0**-7 and tp.finfo(tp.bfloat16).bits == 16
    assert tp.finfo(tp.complex64).dtype == "float32"
    assert tp.finfo().dtype == "float32"
    assert (tp.iinfo(tp.int16).min, tp.iinfo(tp.int16).max) == (-32768, 32767)
    assert tp.iinfo(tp.uint8).max == 255
    with pytest.raises(TypeError):
        tp.finfo(tp.int32)
    with pytest.raises(TypeError):
        tp.iinfo(tp.float32)


def test_default_dtype():
    assert tp.get_default_dtype() is tp.float32
    try:
        tp.set_default_dtype(tp.float64)
        assert tp.tensor([1.5]).dtype is tp.float64
        assert tp.zeros(2).dtype is tp.float64
        assert tp.tensor([1j]).dtype is tp.complex128
    finally:
        tp.set_default_dtype(tp.float32)
    with pytest.raises(TypeError):
        tp.set_default_dtype(tp.int64)


def test_type_as_casts_to_the_other_tensors_dtype():
    x = tp.tensor([1.5, -2.5, 3.0])
    assert x.type_as(tp.zeros(1)) is x  # already that dtype and device: self, as PyTorch
    y = x.type_as(tp.zeros(2, dtype=tp.int64))
    assert y.dtype is tp.int64 and y.tolist() == np.array([1.5, -2.5, 3.0]).astype(np.int64).tolist()
    z = tp.tensor([1, 0]).type_as(tp.zeros((), dtype=tp.float64))
    assert z.dtype is tp.float64 and z.device == x.device and z.tolist() == [1.0, 0.0]
    torch = pytest.importorskip("torch")
    assert str(torch.tensor([1.5]).type_as(torch.zeros(1, dtype=torch.int64)).dtype) == "torch.int64"
