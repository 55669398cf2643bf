"""sort, argsort, msort, topk and kthvalue on the GPU (csrc/cuda/ops_sort.cpp, cuda_kernels/sort*.cu).

Every result is compared with the CPU op (values and indices exactly: both are stable sorts by (value,
index) with NaN largest) and with a NumPy reference built from np.lexsort, never with the code under test. The
data has many ties, NaN, inf and -0.0, so stability and the NaN order are exercised. Shapes cover every
algorithm: rows of at most 4096 elements (bitonic, or the block radix sort above 256, one block per row) and
longer rows (the one-sweep radix sort, with one and with two bytes of row number). GPU only: elsewhere these
skip with "needs a CUDA device".
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, REAL, needs_cuda, np_of  # noqa: E402

pytestmark = [pytest.mark.cuda, needs_cuda]


def data(shape, dtype, seed=0) -> tp.Tensor:
    """Values with many ties; floats also get NaN, +-inf and -0.0."""
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return tp.from_numpy(rng.random(shape) < 0.5)
    if dtype is tp.uint8:
        return tp.from_numpy(rng.integers(0, 10, size=shape).astype(np.uint8))
    if dtype in (tp.int8, tp.int16, tp.int32, tp.int64):
        return tp.from_numpy(rng.integers(-5, 5, size=shape)).to(dtype)
    a = rng.integers(-8, 8, size=shape).astype(np.float64) / 2
    flat = a.reshape(-1)
    if flat.size >= 8:
        picks = rng.choice(flat.size, size=max(4, flat.size // 50), replace=False)
        flat[picks[0::4]] = np.nan
        flat[picks[1::4]] = np.inf
        flat[picks[2::4]] = -np.inf
        flat[picks[3::4]] = -0.0
    return tp.from_numpy(a).to(dtype)


def ref_order(a: np.ndarray, descending: bool) -> np.ndarray:
    """Stable order along the last axis, NaN largest (descending: NaN first), -0.0 == 0.0."""
    a = a.astype(np.float64)
    if a.size == 0:
        return np.zeros(a.shape, dtype=np.int64)
    rows = a.reshape(-1, a.shape[-1])
    out = []
    for r in rows:
        nan = np.isnan(r)
        v = np.where(nan, 0.0, r) + 0.0  # + 0.0 turns -0.0 into 0.0
        out.append(np.lexsort((-v, ~nan)) if descending else np.lexsort((v, nan)))
    return np.array(out, dtype=np.int64).reshape(a.shape)


def check_sort(x: tp.Tensor, dim: int, descending: bool):
    v, i = tp.sort(x.to(DEV), dim, descending)
    cv, ci = tp.sort(x, dim, descending)
    assert v.device == i.device == x.to(DEV).device and i.dtype is tp.int64
    assert v.shape == cv.shape and v.stride() == cv.stride()
    np.testing.assert_array_equal(np_of(i), np_of(ci))
    np.testing.assert_array_equal(np_of(v), np_of(cv))
    a = np.moveaxis(np_of(x), dim, -1) if x.dim() else np_of(x).reshape(1)
    order = ref_order(a, descending)
    np.testing.assert_array_equal(
        np.moveaxis(np_of(i), dim, -1) if x.dim() else np_of(i).reshape(1),
        order if x.dim() else order.reshape(1),
    )


@pytest.mark.parametrize("dtype", REAL, ids=str)
@pytest.mark.parametrize(
    "shape,dim,descending",
    [
        ((7, 37), -1, False),
        ((7, 37), -1, True),
        ((4, 6, 9), 1, True),
        ((3, 5000), 1, False),
        ((20000,), 0, True),
    ],
)
def test_sort_matches_cpu_and_numpy(dtype, shape, dim, descending):
    check_sort(data(shape, dtype), dim, descending)


@pytest.mark.parametrize("dtype", [tp.float32, tp.int64, tp.float16], ids=str)
def test_sort_long_rows_and_many_rows(dtype):
    # 300 rows of 4500: the radix sort with two bytes of row number; 4096 / 4097: the two algorithms' border
    check_sort(data((300, 4500), dtype, seed=1), 1, False)
    check_sort(data((2, 4096), dtype, seed=2), 1, True)
    check_sort(data((2, 4097), dtype, seed=3), 1, True)


@pytest.mark.parametrize("dtype", [tp.float32, tp.bfloat16, tp.int8, tp.bool], ids=str)
@pytest.mark.parametrize("length", [256, 257, 512, 513, 1024, 2049, 4096])
def test_sort_rows_by_block_radix(dtype, length):
    # above 256 elements, keys of <= 32 bits: the block radix sort, 256 threads of 2, 4, 8 or 16 items
    check_sort(data((3, length), dtype, seed=length), 1, length % 2 == 1)


@pytest.mark.parametrize("dtype", [tp.float32, tp.int16, tp.float64], ids=str)
def test_sort_one_sweep_tiles(dtype):
    # the one-sweep radix sort: whole tiles of 4096, one more element, and a long look-back chain (65 tiles)
    check_sort(data((2, 8192), dtype, seed=9), 1, False)
    check_sort(data((8193,), dtype, seed=10), 0, True)
    check_sort(data(((1 << 18) + 5,), dtype, seed=11), 0, False)
    check_sort(data((5, 6000), dtype, seed=12).t(), 0, True)  # a non-contiguous input, 5 rows


def test_sort_layouts_and_edge_shapes():
    x = data((9, 13), tp.float32, seed=4)
    check_sort(x.t(), 1, False)  # transposed
    check_sort(x[:, ::2], 1, True)  # strided
    check_sort(x.flip(1), 1, False)
    check_sort(x, 0, False)  # a non-last dim
    for shape in [(0, 5), (5, 0), (1, 1), (5, 1), (1, 5)]:
        check_sort(data(shape, tp.float32), -1, False)
    check_sort(tp.tensor(2.5), 0, False)  # 0-d


def test_argsort_msort_and_stable():
    x = data((5, 40), tp.int32, seed=5)
    xc = x.to(DEV)
    np.testing.assert_array_equal(np_of(tp.argsort(xc, 1, True)), np_of(tp.argsort(x, 1, True)))
    np.testing.assert_array_equal(np_of(tp.msort(xc)), np_of(tp.msort(x)))
    v, i = tp.sort(xc, stable=True)
    np.testing.assert_array_equal(np_of(i), ref_order(np_of(x), False))
    with pytest.raises(IndexError):
        tp.sort(xc, 2)


@pytest.mark.parametrize("dtype", [tp.int16, tp.bfloat16, tp.float32, tp.float64], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_cpu_and_numpy(dtype, largest):
    # [64, 32000] and [1, 20000]: the radix select (ties galore: 16 distinct numbers); k = 1024 is its
    # largest k, 1025 goes to the radix sort
    cases = [((5, 100), 7, 1), ((30, 8), 3, 0), ((64, 32000), 50, -1), ((6, 10), 10, 1), ((6, 10), 0, 1)]
    cases += [((1, 20000), 5, 1), ((3, 5000), 1024, 1), ((3, 5000), 1025, 1), ((2, 4097), 1, 1)]
    cases += [((4, 1000), 10, 1)]  # the block radix sort, keeping 10
    for shape, k, dim in cases:
        x = data(shape, dtype, seed=k)
        v, i = tp.topk(x.to(DEV), k, dim, largest)
        cv, ci = tp.topk(x, k, dim, largest)
        assert v.shape == cv.shape
        np.testing.assert_array_equal(np_of(i), np_of(ci))
        np.testing.assert_array_equal(np_of(v), np_of(cv))
        ref = np.moveaxis(ref_order(np.moveaxis(np_of(x), dim, -1), largest)[..., :k], -1, dim)
        np.testing.assert_array_equal(np_of(i), ref)


def check_topk(x: tp.Tensor, k: int, largest: bool):
    v, i = tp.topk(x.to(DEV), k, -1, largest)
    cv, ci = tp.topk(x, k, -1, largest)
    np.testing.assert_array_equal(np_of(i), np_of(ci))
    np.testing.assert_array_equal(np_of(v), np_of(cv))
    np.testing.assert_array_equal(np_of(i), ref_order(np_of(x), largest)[..., :k])


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.bfloat16, tp.int32], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_select_few_candidates(dtype, largest):
    # spread-out values: few elements share the k-th one's top key byte, so the radix select keeps them in
    # shared memory after its first histogram (the fast path); float16 has ties among them
    rng = np.random.default_rng(13)
    if dtype is tp.int32:
        x = tp.from_numpy(rng.integers(-(2**31), 2**31 - 1, size=(6, 32000), dtype=np.int64).astype(np.int32))
    else:
        x = tp.from_numpy(rng.standard_normal((6, 32000)).astype(np.float32)).to(dtype)
    check_topk(x, 50, largest)
    check_topk(x[:, :5000], 1024, largest)


@pytest.mark.parametrize("extra", [0, 1])
def test_topk_select_candidate_limit(extra):
    # 2048 elements share the largest top byte (the fast path's limit), 2049 take the general path
    rng = np.random.default_rng(14)
    a = rng.integers(0, 1 << 24, size=(2, 10000))
    a[:, : 2048 + extra] = rng.integers(1 << 24, 1 << 25, size=(2, 2048 + extra))
    a = rng.permuted(a, axis=1)
    a[:, 100:110] = a[:, 90:100]  # ties among the candidates
    x = tp.from_numpy(a.astype(np.int32))
    check_topk(x, 5, True)
    check_topk(x, 700, True)


def test_topk_edge_cases_and_errors():
    x = data((4, 9), tp.float32).to(DEV)
    v, i = tp.topk(x, 3, sorted=False)  # always returned in order, as on the CPU
    np.testing.assert_array_equal(np_of(i), np_of(tp.topk(x.cpu(), 3, sorted=False)[1]))
    v, i = tp.topk(tp.tensor(3.0).to(DEV), 1)
    assert v.shape == () and float(v.cpu()) == 3.0 and int(i.cpu()) == 0
    with pytest.raises(RuntimeError, match="out of range"):
        tp.topk(x, 10)


@pytest.mark.parametrize("dtype", [tp.uint8, tp.int64, tp.float16, tp.float32], ids=str)
def test_kthvalue(dtype):
    x = data((6, 9, 5), dtype, seed=6)
    for k, dim, keepdim in [(1, 1, False), (4, 1, True), (9, 1, False), (6, 0, True), (5, -1, False)]:
        v, i = tp.kthvalue(x.to(DEV), k, dim, keepdim)
        cv, ci = tp.kthvalue(x, k, dim, keepdim)
        assert v.shape == cv.shape and i.shape == ci.shape
        np.testing.assert_array_equal(np_of(v), np_of(cv))
        np.testing.assert_array_equal(np_of(i), np_of(ci))
    long = data((3, 6000), tp.float32, seed=7)
    for k in (2999, 5):  # the radix sort, the radix select
        np.testing.assert_array_equal(np_of(tp.kthvalue(long.to(DEV), k)[1]), np_of(tp.kthvalue(long, k)[1]))
    v, i = tp.kthvalue(tp.tensor(1.5).to(DEV), 1)
    assert v.shape == () and float(v.cpu()) == 1.5 and int(i.cpu()) == 0
    with pytest.raises(RuntimeError, match="out of range"):
        tp.kthvalue(x.to(DEV), 10, 1)


def test_sort_and_topk_backward_match_cpu():
    pytest.importorskip("tensorplay_tpx.autograd")  # the autograd engine; backward scatters on the device
    base = tp.from_numpy(np.random.default_rng(8).standard_normal((4, 50)).astype(np.float32))
    grads = []
    for dev in ("cpu", DEV):
        x = base.to(dev).detach().requires_grad_(True)
        v, _ = tp.sort(x, 1, True)
        t, _ = tp.topk(x, 5, 1)
        w = tp.arange(50.0, device=dev)
        ((v * w).sum() + (t * w[:5]).sum()).backward()
        grads.append(np_of(x.grad))
    np.testing.assert_array_equal(grads[0], grads[1])
