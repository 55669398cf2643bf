"""Tensor creation: tp.tensor, Tensor(...), zeros/ones/full/empty, arange/linspace/logspace/eye, out=."""

import numpy as np
import pytest

import tensorplay_p10 as tp


def test_tensor_infers_dtype_like_pytorch():
    assert tp.tensor([1, 2]).dtype is tp.int64
    assert tp.tensor([1, 2.5]).dtype is tp.float32
    assert tp.tensor([True, False]).dtype is tp.bool
    assert tp.tensor([1, 1j]).dtype is tp.complex64
    assert tp.tensor(3.5).dim() == 0
    assert tp.tensor([]).shape == (0,) and tp.tensor([]).dtype is tp.float32
    assert tp.tensor(np.arange(3, dtype=np.float64)).dtype is tp.float64
    assert tp.tensor([[1, 2], [3, 4]], dtype=tp.float16).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tp.tensor([1.5, -2.25], dtype=tp.bfloat16).tolist() == [1.5, -2.25]


def test_tensor_copies_data():
    a = np.ones(3, dtype=np.float32)
    t = tp.tensor(a)
    a[0] = 5
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_tensor_errors():
    with pytest.raises(ValueError):
        tp.tensor([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="Could not infer dtype of object"):
        tp.tensor([object()])
    with pytest.raises(RuntimeError, match="Could not infer dtype of NoneType"):
        tp.tensor(None)


def test_Tensor_constructor():
    x = tp.Tensor([[1, 2], [3, 4]])
    assert x.dtype is tp.float32 and x.shape == (2, 2)
    assert tp.Tensor(2, 3).shape == (2, 3)
    assert tp.Tensor().shape == (0,)
    assert tp.Tensor([1.0], requires_grad=True).requires_grad


@pytest.mark.parametrize("size", [(), (0,), (1,), (2, 3), (2, 0, 4)])
def test_zeros_ones_full(size):
    assert np.array_equal(tp.zeros(size).numpy(), np.zeros(size, np.float32))
    assert np.array_equal(tp.ones(*size, dtype=tp.int32).numpy(), np.ones(size, np.int32))
    assert np.array_equal(tp.full(size, 7).numpy(), np.full(size, 7, np.int64))
    assert tp.full(size, 7).dtype is tp.int64
    assert tp.full(size, True).dtype is tp.bool
    assert tp.full(size, 2.5).dtype is tp.float32
    assert tp.empty(size).shape == size


def test_negative_size_raises():
    with pytest.raises(RuntimeError, match="negative dimension"):
        tp.zeros(2, -1)


@pytest.mark.parametrize("args", [(5,), (1, 4), (0, 1, 0.25), (10, 0, -3), (0, 0), (-2.5, 2.5, 0.5)])
def test_arange_matches_numpy(args):
    ref = np.arange(*args)
    got = tp.arange(*args)
    assert got.dtype is (tp.int64 if ref.dtype.kind == "i" else tp.float32)
    np.testing.assert_allclose(got.numpy(), ref.astype(got.numpy().dtype), rtol=1e-6)


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tp.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        tp.arange(5, 0, 1)


@pytest.mark.parametrize("steps", [0, 1, 2, 5, 100])
def test_linspace_logspace(steps):
    np.testing.assert_allclose(
        tp.linspace(-1, 3, steps).numpy(), np.linspace(-1, 3, steps), rtol=1e-6, atol=1e-7
    )
    np.testing.assert_allclose(
        tp.logspace(0, 2, steps, dtype=tp.float64).numpy(), np.logspace(0, 2, steps), rtol=1e-12
    )
    if steps > 1:  # both endpoints are exact
        t = tp.linspace(0.1, 0.7, steps, dtype=tp.float64).numpy()
        assert t[0] == 0.1 and t[-1] == 0.7


def test_eye():
    assert np.array_equal(tp.eye(3).numpy(), np.eye(3, dtype=np.float32))
    assert np.array_equal(tp.eye(2, 4, dtype=tp.int64).numpy(), np.eye(2, 4, dtype=np.int64))
    assert tp.eye(0).shape == (0, 0)


def test_like_and_out():
    x = tp.ones(2, 3, dtype=tp.float64)
    assert tp.zeros_like(x).dtype is tp.float64 and tp.zeros_like(x).shape == (2, 3)
    assert tp.full_like(x, 4).tolist() == [[4.0] * 3] * 2
    assert tp.ones_like(x, dtype=tp.int8).dtype is tp.int8
    assert tp.empty_like(x).shape == x.shape
    out = tp.empty(4)
    r = tp.arange(4.0, out=out)
    assert r is out and out.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_empty_strided():
    t = tp.empty_strided((2, 3), (1, 2))
    assert t.stride() == (1, 2) and t.shape == (2, 3)


# Sizes whose byte count (elements × itemsize, or the strided extent) wraps past 2**64 or int64: each used to
# allocate a few bytes and write far past them (a segfault), or return a tensor over too little memory.
# Note [Storage size] in csrc/core/tensor.h.
_OVERFLOWING = [
    "tp.zeros(2**62)",
    "tp.full((2**62,), 1.0)",
    "tp.randn(2**31, 2**31)",
    "tp.arange(0, 2**62)",
    "tp.eye(2**31, 2**31)",
    "tp.linspace(0, 1, 2**62)",
    "tp.zeros(1).expand(2**62).clone()",
    "tp.ones_like(tp.zeros(1).expand(2**62))",
    "tp.empty(2**62)",
    "tp.empty(2**40, 2**40)",
    "tp.empty(2**62, device='meta')",
    "tp.zeros(1).new_empty((2**62,))",
    "tp.empty_strided((2**62,), (1,))",
    "tp.empty_strided((2**32,), (2**40,))",
    "tp.empty_strided((2, 2**62), (2**62, 1))",
    "tp.zeros(4).as_strided((2**62,), (4,))",
    "tp.zeros(4).as_strided((2**40, 2**40), (2**40, 1))",
    "tp.zeros(1).repeat(2**40, 2**40)",
    "tp.zeros(4).view(2**62 + 1, 4)",
]
_NEGATIVE = [
    "tp.zeros(1).new_empty((-1,))",
    "tp.empty_strided((-1,), (1,))",
    "tp.zeros(4).as_strided((-1,), (1,))",
    "tp.zeros(4).view(-2, -2)",
    "tp.zeros(4).reshape(-2, 2)",
    "tp.empty(2, -3)",
]


@pytest.mark.parametrize("call", _OVERFLOWING + _NEGATIVE)
def test_sizes_that_overflow_or_are_negative_raise(call):
    with pytest.raises(RuntimeError, match="overflow|negative|invalid shape|is invalid for input"):
        eval(call, {"tp": tp})


def test_storage_size_overflow_message_names_sizes_and_strides():
    with pytest.raises(
        RuntimeError, match=r"Storage size calculation overflowed with sizes=\[4611686018427387904\]$"
    ):
        tp.empty(2**62)
    with pytest.raises(
        RuntimeError, match=r"overflowed with sizes=\[4294967296\] and strides=\[1099511627776\]"
    ):
        tp.empty_strided((2**32,), (2**40,))


def test_sizes_that_overflow_raise_in_a_subprocess():
    # The same calls in a child process: a regression that crashes shows up as this test failing, with the
    # call that crashed, instead of killing pytest.
    import subprocess
    import sys

    script = "\n".join(
        ["import tensorplay_p10 as tp"]
        + [
            f"try:\n    {c}\n    print('returned:', {c!r})\nexcept RuntimeError:\n    pass"
            for c in _OVERFLOWING
        ]
        + ["print('all raised')"]
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "all raised", (r.returncode, r.stdout, r.stderr[-2000:])


def test_allocation_the_system_cannot_satisfy_raises():
    # 2**50 bytes (1 PiB) does not overflow, but no machine has it: PyTorch's RuntimeError, not a crash (and
    # nothing is written before the allocation succeeds, so no page is touched).
    n = 2**48
    with pytest.raises(
        RuntimeError, match=f"DefaultCPUAllocator: not enough memory: you tried to allocate {4 * n} bytes"
    ):
        tp.zeros(n)
    with pytest.raises(RuntimeError, match="not enough memory"):
        tp.empty(n, dtype=tp.float64)
    with pytest.raises(RuntimeError, match="not enough memory"):
        tp.full((n,), 1.0)


def test_large_strided_views_in_bounds_still_work():
    x = tp.arange(12.0)
    v = x.as_strided((3, 2), (4, 1), 2)
    assert v.tolist() == [[2.0, 3.0], [6.0, 7.0], [10.0, 11.0]]
    assert tp.empty_strided((3, 0), (2**62, 1)).shape == (
        3,
        0,
    )  # no element: no storage, whatever the strides
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 48"):
        x.as_strided((3, 2), (4, 1), 3)
