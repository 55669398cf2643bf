"""Tensors on the GPU: devices, copies, casts, fill, add/sub/mul/div, sum, streams, events and memory.

Every result is compared with NumPy computed from the same inputs on the host (float64 where the op sums), so
these tests check the CUDA kernels, not the CPU ones. They need a GPU: elsewhere they skip with the reason
"no CUDA device". They were run on the lent H200 (docs/cuda.md has the command, docs/gpu-runs.md the runs).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import REAL, needs_cuda, np_of, sample  # noqa: E402

pytestmark = [pytest.mark.cuda, needs_cuda]


ARITH = [t for t in REAL if t is not tp.bool]


# ---- devices -----------------------------------------------------------------------------------------------
def test_device_queries():
    n = tp.cuda.device_count()
    assert n >= 1 and 0 <= tp.cuda.current_device() < n
    p = tp.cuda.get_device_properties(0)
    assert p.total_memory > 1 << 30 and p.multi_processor_count > 0 and p.warp_size == 32
    assert tp.cuda.get_device_capability(0) == (p.major, p.minor)
    assert tp.cuda.get_device_name() == p.name and p.name
    assert tp.cuda.driver_version() >= 12000
    with tp.cuda.device(0):
        assert tp.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match=f"invalid device ordinal {n}"):
        tp.cuda.set_device(n)
    tp.cuda.synchronize()


def test_tensor_reports_its_device():
    x = tp.ones(3, device="cuda")
    assert x.device == tp.device("cuda", tp.cuda.current_device()) and x.is_cuda
    assert "device='cuda:0'" in repr(tp.zeros(2, device="cuda:0"))
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tp.ones(1).to(f"cuda:{tp.cuda.device_count()}")


# ---- copies ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_round_trip_every_dtype(dtype):
    x = sample((5, 7), dtype)
    y = x.cuda()
    assert y.dtype is dtype and y.shape == (5, 7)
    np.testing.assert_array_equal(np_of(y), np_of(x))


@pytest.mark.parametrize("src", REAL, ids=str)
@pytest.mark.parametrize("dst", [tp.float32, tp.int64, tp.float16, tp.bool, tp.bfloat16, tp.uint8], ids=str)
def test_cast_on_device_matches_cpu_cast(src, dst):
    x = sample((33,), src, seed=1)
    if src in (tp.float16, tp.bfloat16, tp.float32, tp.float64) and dst is tp.uint8:
        x = x.abs()  # negative float -> uint8 is undefined behaviour in C++ (and differs between CPU and GPU)
    np.testing.assert_array_equal(np_of(x.cuda().to(dst)), np_of(x.to(dst)))


def test_non_contiguous_copies_both_ways():
    base = sample((6, 8, 5), tp.float32)
    for view in (base.transpose(0, 2), base[:, ::2, 1:], base.permute(1, 2, 0)[2:5]):
        d = view.cuda()  # keeps a dense view's layout (PyTorch's preserve_format), else contiguous
        np.testing.assert_array_equal(np_of(d), np_of(view))
    g = base.cuda()
    np.testing.assert_array_equal(np_of(g.transpose(0, 2).contiguous()), np_of(base.transpose(0, 2)))
    np.testing.assert_array_equal(np_of(g[:, 1::3].clone()), np_of(base[:, 1::3]))
    out = tp.zeros(8, 6)
    out.t().copy_(g[:, :, 0])  # device -> strided host view
    np.testing.assert_array_equal(out.t().numpy(), np_of(base[:, :, 0]))


def test_copy_into_strided_device_view_with_broadcast_and_cast():
    d = tp.zeros(4, 6, device="cuda")
    d[:, ::2].copy_(tp.arange(3, dtype=tp.int64))  # a host int row broadcast into a strided float view
    expect = np.zeros((4, 6), np.float32)
    expect[:, ::2] = np.arange(3)
    np.testing.assert_array_equal(np_of(d), expect)


def test_size_zero_and_size_one():
    e = tp.empty(0, 3).cuda()
    assert e.shape == (0, 3) and np_of(e).shape == (0, 3)
    assert tp.tensor(2.5).cuda().item() == 2.5
    assert tp.tensor([7]).cuda().item() == 7


def test_pin_memory_and_non_blocking_copies():
    x = sample((1000,), tp.float32)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned()
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    d = tp.empty(1000, device="cuda")
    d.copy_(p, non_blocking=True)
    back = tp.empty(1000).pin_memory()
    back.copy_(d, non_blocking=True)
    tp.cuda.synchronize()
    np.testing.assert_array_equal(back.numpy(), x.numpy())


# ---- fill and factories ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_factories(dtype):
    np.testing.assert_array_equal(np_of(tp.zeros(3, 4, dtype=dtype, device="cuda")), np.zeros((3, 4)))
    np.testing.assert_array_equal(np_of(tp.ones(5, dtype=dtype, device="cuda")), np.ones(5))
    v = True if dtype is tp.bool else 3
    np.testing.assert_array_equal(np_of(tp.full((2, 2), v, dtype=dtype, device="cuda")), np.full((2, 2), v))


def test_fill_strided_view():
    d = tp.zeros(5, 6, device="cuda")
    d[1:4, ::3].fill_(-2.5)
    expect = np.zeros((5, 6), np.float32)
    expect[1:4, ::3] = -2.5
    np.testing.assert_array_equal(np_of(d), expect)


# ---- add / sub / mul / div ---------------------------------------------------------------------------------
OPS = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.true_divide),
}


def tol(dtype):
    return {tp.float16: 2e-3, tp.bfloat16: 1.6e-2, tp.float32: 1e-6, tp.float64: 1e-12}.get(dtype, 0)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ARITH, ids=str)
def test_binary_matches_numpy(op, dtype):
    f, ref = OPS[op]
    a, b = sample((7, 130), dtype, 2), sample((7, 130), dtype, 3)
    if op == "div":
        b = b + (b == 0).to(dtype)  # no division by zero in integer inputs
    out = f(a.cuda(), b.cuda())
    want = ref(np_of(a).astype(np.float64), np_of(b).astype(np.float64))
    expected_dtype = (
        tp.get_default_dtype()
        if op == "div" and dtype not in (tp.float16, tp.bfloat16, tp.float32, tp.float64)
        else dtype
    )
    assert out.dtype is expected_dtype and out.device.type == "cuda"
    if tol(out.dtype) == 0:  # integers: exact, wrapping like the CPU
        np.testing.assert_array_equal(np_of(out), np_of(f(a, b)))
    else:
        np.testing.assert_allclose(np_of(out), want, rtol=tol(out.dtype), atol=tol(out.dtype))


@pytest.mark.parametrize("shapes", [((4, 1, 5), (3, 1)), ((1,), (6, 2)), ((2, 3), ()), ((0, 3), (1, 3))])
def test_binary_broadcasting(shapes):
    a, b = sample(shapes[0], tp.float32, 4), sample(shapes[1], tp.float32, 5)
    for op, (f, ref) in OPS.items():
        got = np_of(f(a.cuda(), b.cuda()))
        np.testing.assert_allclose(got, ref(np_of(a).astype(np.float64), np_of(b)), rtol=1e-6, err_msg=op)


def test_binary_type_promotion_and_python_numbers():
    i = tp.arange(6, dtype=tp.int32).cuda()
    h = tp.arange(6, dtype=tp.float16).cuda()
    assert (i + h).dtype is tp.float16
    assert (i * 2.5).dtype is tp.float32 and (i * 2).dtype is tp.int32
    assert (h + tp.tensor(1.0, dtype=tp.float64)).dtype is tp.float16  # a 0-d tensor does not lift the dtype
    assert (i + tp.arange(6, dtype=tp.int64).cuda()).dtype is tp.int64
    np.testing.assert_array_equal(np_of(i * 2), np.arange(6) * 2)
    np.testing.assert_allclose(np_of(i * 2.5), np.arange(6) * 2.5)
    np.testing.assert_allclose(np_of(3 - h), 3 - np.arange(6))
    np.testing.assert_allclose(np_of(1.0 / (h + 1)), 1 / (np.arange(6) + 1), rtol=1e-3)
    np.testing.assert_allclose(np_of(tp.add(i, i, alpha=3)), np.arange(6) * 4)
    np.testing.assert_allclose(np_of(tp.sub(h, 1, alpha=2)), np.arange(6) - 2)


def test_x_cuda_times_2_matches_cpu():
    x = sample((1 << 16,), tp.float32, 6)
    np.testing.assert_array_equal(np_of(x.cuda() * 2), np_of(x * 2))
    np.testing.assert_array_equal(np_of(x.cuda()[1:] * 2), np_of(x[1:] * 2))  # unaligned: the scalar loop


def test_binary_non_contiguous_and_unaligned_inputs():
    a, b = sample((64, 33), tp.float32, 7), sample((33, 64), tp.float32, 8)
    got = a.cuda() + b.cuda().t()
    np.testing.assert_allclose(np_of(got), np_of(a) + np_of(b).T, rtol=1e-6)
    x = sample((1001,), tp.float32, 9).cuda()
    np.testing.assert_allclose(np_of(x[1:] + x[:-1]), np_of(x)[1:] + np_of(x)[:-1], rtol=1e-6)


def test_in_place_and_out_forms():
    a = sample((5, 4), tp.float32, 10)
    d = a.cuda()
    v = d._version
    d.add_(tp.ones(4).cuda(), alpha=2)
    assert d._version > v
    np.testing.assert_allclose(np_of(d), np_of(a) + 2, rtol=1e-6)
    d.t().mul_(3)  # in place through a transposed view
    np.testing.assert_allclose(np_of(d), (np_of(a) + 2) * 3, rtol=1e-6)
    d.div_(2)
    out = tp.empty(5, 4, dtype=tp.float64, device="cuda")
    tp.sub(d, 1, out=out)
    assert out.dtype is tp.float64
    np.testing.assert_allclose(np_of(out), (np_of(a).astype(np.float64) + 2) * 1.5 - 1, rtol=1e-6)


# An op with a CPU kernel only: tp.ops' own ops gain CUDA kernels over time, this one never does.
_only_cpu = tp.library.Library("cuda_ops_test")
_only_cpu.define("only_cpu(Tensor x) -> Tensor")
_only_cpu.impl("only_cpu", lambda x: x + 1, "CPU")


def test_binary_errors():
    i = tp.ones(3, dtype=tp.int64).cuda()
    with pytest.raises(
        RuntimeError, match="result type float32 can't be cast to the desired output type int64"
    ):
        i.add_(tp.ones(3).cuda())
    with pytest.raises(RuntimeError, match="same device.*cuda.*cpu"):
        tp.ones(3).cuda() + tp.ones(3)
    with pytest.raises(RuntimeError, match=r"size|shape"):
        tp.ones(3).cuda() + tp.ones(4).cuda()
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        tp.add(i, i, alpha=0.5)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):  # integer division by zero, as on the CPU
        tp.div(i, i - 1, rounding_mode="floor")
    with pytest.raises(NotImplementedError, match="complex"):
        tp.ones(2, dtype=tp.complex64).cuda()
    with pytest.raises(NotImplementedError, match="only_cpu.*CUDA"):  # an op with no CUDA kernel
        tp.ops.cuda_ops_test.only_cpu(tp.eye(2).cuda())


# ---- sum ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_sum_all_matches_float64_numpy(dtype):
    x = sample((3, 1000, 7), dtype, 11)
    s = x.cuda().sum()
    want = np_of(x).astype(np.float64).sum()
    is_float = dtype in (tp.float16, tp.bfloat16, tp.float32, tp.float64)
    assert s.dtype is (dtype if is_float else tp.int64) and s.shape == ()
    rel = {tp.float16: 5e-3, tp.bfloat16: 2e-2, tp.float32: 1e-5, tp.float64: 1e-12}.get(dtype, 0)
    assert abs(s.item() - want) <= rel * np.abs(np_of(x).astype(np.float64)).sum()


def test_sum_of_a_long_row_uses_the_whole_grid():
    x = tp.from_numpy(np.random.default_rng(12).standard_normal(3_000_001).astype(np.float32))
    got = x.cuda().sum().item()
    ref = x.numpy().astype(np.float64)
    assert abs(got - ref.sum()) <= 1e-5 * np.abs(ref).sum()
    assert x.cuda()[1:].sum().item() == pytest.approx(ref[1:].sum(), rel=1e-4, abs=1e-2)  # unaligned start


@pytest.mark.parametrize(
    "dim,keepdim",
    [(0, False), (1, True), (-1, False), ((0, 2), False), ((2, 0), True), ((), False), (None, True)],
)
def test_sum_over_dims(dim, keepdim):
    x = sample((4, 5, 6), tp.float32, 13)
    kw = {} if dim is None else {"dim": dim}
    got = x.cuda().sum(**kw, keepdim=keepdim)
    np_dim = None if dim in (None, ()) else dim
    want = np_of(x).astype(np.float64).sum(axis=np_dim, keepdims=keepdim)
    assert got.shape == want.shape
    np.testing.assert_allclose(np_of(got), want, rtol=1e-5, atol=1e-5)


def test_sum_edge_cases():
    x = sample((6, 4), tp.float32, 14)
    np.testing.assert_allclose(np_of(x.cuda().t().sum(1)), np_of(x).sum(0), rtol=1e-5)  # non-contiguous
    assert np_of(tp.zeros(0, 3).cuda().sum(0)).tolist() == [0.0, 0.0, 0.0]
    assert tp.zeros(3, 0).cuda().sum(0).shape == (0,)
    i = tp.arange(10, dtype=tp.int32).cuda()
    assert i.sum(dtype=tp.float64).dtype is tp.float64 and i.sum(dtype=tp.float64).item() == 45.0
    assert i.sum(dtype=tp.int32).dtype is tp.int32
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.cuda().sum((0, 0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.cuda().sum(2)


def test_a_plus_b_sum_matches_cpu():
    a, b = sample((256, 1024), tp.float32, 15), sample((256, 1024), tp.float32, 16)
    got = (a.cuda() + b.cuda()).sum().item()
    ref = (np_of(a).astype(np.float64) + np_of(b)).sum()
    assert abs(got - ref) <= 1e-5 * np.abs(np_of(a) + np_of(b)).sum()


# ---- streams, events, memory -------------------------------------------------------------------------------
def test_streams_and_events():
    s = tp.cuda.Stream()
    assert tp.cuda.current_stream() == tp.cuda.default_stream()
    start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)
    with tp.cuda.stream(s):
        assert tp.cuda.current_stream() == s
        x = tp.ones(1 << 22, device="cuda")
        start.record()
        for _ in range(10):
            x = x * 1.0001
        end.record()
    assert tp.cuda.current_stream() == tp.cuda.default_stream()
    end.synchronize()
    assert end.query() and s.query()
    assert start.elapsed_time(end) > 0
    tp.cuda.current_stream().wait_stream(s)
    assert x.sum().item() == pytest.approx((1 << 22) * 1.0001**10, rel=1e-4)
    with pytest.raises(RuntimeError, match="enable_timing"):
        tp.cuda.Event().elapsed_time(end)


def test_record_stream_keeps_memory_until_the_stream_is_done():
    s = tp.cuda.Stream()
    x = tp.ones(1 << 20, device="cuda")
    s.wait_stream(tp.cuda.current_stream())  # x is filled on the default stream; s must see it done
    with tp.cuda.stream(s):
        y = x * 2
    x.record_stream(s)
    del x
    tp.cuda.synchronize()
    assert y.sum().item() == 2 * (1 << 20)


def test_memory_statistics_follow_tensors():
    tp.cuda.synchronize()
    tp.cuda.empty_cache()
    base = tp.cuda.memory_allocated()
    tp.cuda.reset_peak_memory_stats()
    x = tp.empty(1 << 20, device="cuda")  # 4 MiB
    assert tp.cuda.memory_allocated() - base == 4 << 20
    assert tp.cuda.memory_reserved() >= tp.cuda.memory_allocated()
    del x
    assert tp.cuda.memory_allocated() == base
    assert tp.cuda.max_memory_allocated() >= base + (4 << 20)
    stats = tp.cuda.memory_stats()
    assert stats["allocation.all.allocated"] >= 1 and "num_ooms" in stats
    free, total = tp.cuda.mem_get_info()
    assert 0 < free <= total
    reserved = tp.cuda.memory_reserved()
    tp.cuda.empty_cache()
    assert tp.cuda.memory_reserved() <= reserved


def test_out_of_memory_raises_with_figures():
    total = tp.cuda.get_device_properties().total_memory
    with pytest.raises(tp.cuda.OutOfMemoryError, match="CUDA out of memory. Tried to allocate"):
        tp.empty(2 * total // 4 + (1 << 30), dtype=tp.float32, device="cuda")
    assert tp.cuda.memory_stats()["num_ooms"] >= 1
    assert (tp.ones(4, device="cuda") + 1).sum().item() == 8.0  # the device still works
