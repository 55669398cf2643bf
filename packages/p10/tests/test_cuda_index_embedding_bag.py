"""_embedding_bag and embedding_renorm_ on the GPU (csrc/cuda/ops_embedding.cpp, embedding.cu) through
tp.embedding_bag and the ops themselves, against the CPU op and NumPy (a loop over bags; row norms).

Covered: modes sum / mean / max, per_sample_weights, padding_idx, empty bags, include_last_offset, 2-D input
(fixed bags, offsets from the CUDA arange), a transposed weight, float16 / bfloat16 / float64 weights, the
extra outputs (offset2bag, bag_size, max_indices), the data errors found on the device and raised with the
CPU's messages (Note [Bag checks on the device]), the weight gradient against the CPU's, and max_norm
(embedding_renorm_ with norm types 1, 2, inf and 3; repeated rows scaled once).
TP_CUDA_TEST_DEVICE=cpu runs the checks on the CPU alone.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_device, np_of  # noqa: E402

pytestmark = needs_device

TOL = {tp.float16: 2e-3, tp.bfloat16: 1.6e-2, tp.float32: 1e-6, tp.float64: 1e-12}


def reference(w, idx, off, mode, psw=None, pad=-1):
    out = np.zeros((len(off), w.shape[1]))
    for b, s in enumerate(off):
        e = off[b + 1] if b + 1 < len(off) else len(idx)
        rows = [(w[idx[i]] * (1.0 if psw is None else psw[i])) for i in range(s, e) if idx[i] != pad]
        if rows:
            out[b] = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode](np.array(rows, np.float64), axis=0)
    return out


def close(got, cpu, want=None, tol=1e-6):
    assert got.device.type == DEV and got.dtype is cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    np.testing.assert_allclose(
        np_of(got).astype(np.float64), np_of(cpu).astype(np.float64), rtol=tol, atol=tol
    )
    if want is not None:
        np.testing.assert_allclose(np_of(got).astype(np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_modes_and_dtypes(dtype, mode):
    rng = np.random.default_rng(0)
    w = tp.from_numpy(rng.standard_normal((12, 40))).to(dtype)
    idx = np.array([3, 1, 3, 11, 0, 7, 7, 2, 5])
    off = np.array([0, 2, 2, 6])  # bag 1 is empty
    args = (tp.from_numpy(idx), tp.from_numpy(off))
    got = tp.embedding_bag(args[0].to(DEV), w.to(DEV), args[1].to(DEV), mode=mode)
    close(
        got, tp.embedding_bag(args[0], w, args[1], mode=mode), reference(np_of(w), idx, off, mode), TOL[dtype]
    )
    wt = (
        tp.from_numpy(np.ascontiguousarray(rng.standard_normal((40, 12)))).to(dtype).t()
    )  # a transposed weight
    got = tp.embedding_bag(args[0].to(DEV), wt.to(DEV), args[1].to(DEV), mode=mode, padding_idx=7)
    want = reference(np_of(wt), idx, off, mode, pad=7)
    close(got, tp.embedding_bag(args[0], wt, args[1], mode=mode, padding_idx=7), want, TOL[dtype])


def test_extra_outputs_weights_and_2d():
    rng = np.random.default_rng(1)
    w = tp.from_numpy(rng.standard_normal((9, 5)).astype(np.float32))
    idx, off = tp.tensor([1, 8, 8, 0, 4, 2, 6]), tp.tensor([0, 3, 3, 5])
    for mode in (0, 1, 2):
        for last in (False, True):
            cpu = tp.ops._embedding_bag(w, idx, off, False, mode, False, None, last, 8)
            got = tp.ops._embedding_bag(
                w.to(DEV), idx.to(DEV), off.to(DEV), False, mode, False, None, last, 8
            )
            for g, c in zip(got, cpu, strict=True):
                close(g, c)
    psw = tp.from_numpy(rng.standard_normal(7).astype(np.float32))
    got = tp.embedding_bag(idx.to(DEV), w.to(DEV), off.to(DEV), mode="sum", per_sample_weights=psw.to(DEV))
    want = reference(np_of(w), idx.numpy(), off.numpy(), "sum", psw.numpy())
    close(got, tp.embedding_bag(idx, w, off, mode="sum", per_sample_weights=psw), want)
    x2 = tp.tensor([[1, 2, 3], [4, 4, 0]])
    close(tp.embedding_bag(x2.to(DEV), w.to(DEV), mode="max"), tp.embedding_bag(x2, w, mode="max"))


def test_data_errors_raise_the_cpu_messages():
    w = tp.ones((4, 3)).to(DEV)
    cases = [
        (tp.tensor([0, 4]), tp.tensor([0]), IndexError, "index 4 is out of bounds"),
        (tp.tensor([0, 1]), tp.tensor([1]), RuntimeError, "offsets\\[0\\] has to be 0"),
        (tp.tensor([0, 1]), tp.tensor([0, 3]), RuntimeError, "can not be greater than input's length"),
        (tp.tensor([0, 1, 2]), tp.tensor([0, 2, 1]), RuntimeError, "non-decreasing"),
    ]
    for idx, off, err, msg in cases:
        with pytest.raises(err, match=msg):
            tp.embedding_bag(idx.to(DEV), w, off.to(DEV), mode="sum")


def test_weight_gradient_matches_the_cpu():
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    w = tp.from_numpy(np.random.default_rng(2).standard_normal((9, 5)).astype(np.float32))
    idx, off = tp.tensor([1, 8, 8, 0, 4, 2, 6]), tp.tensor([0, 3, 3, 5])
    grads = []
    for dev in ("cpu", DEV):
        wd = w.to(dev).requires_grad_(True)
        out = tp.embedding_bag(idx.to(dev), wd, off.to(dev), mode="mean")
        grads.append(autograd.grad((out * out).sum(), [wd])[0])
    close(grads[1], grads[0])


@pytest.mark.parametrize("norm_type", [1.0, 2.0, float("inf"), 3.0])
@pytest.mark.parametrize("dtype", [tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_embedding_renorm(dtype, norm_type):
    rng = np.random.default_rng(3)
    w = tp.from_numpy(rng.standard_normal((8, 300)) * 2).to(dtype)
    idx = tp.tensor([5, 1, 5, 7, 1])
    want = np_of(w).astype(np.float64)
    for r in {5, 1, 7}:
        norm = np.linalg.norm(want[r], ord=norm_type)
        if norm > 1.5:
            want[r] *= 1.5 / (norm + 1e-7)
    got, cpu = w.clone().to(DEV), w.clone()
    tp.ops.embedding_renorm_(got, idx.to(DEV), 1.5, norm_type)
    tp.ops.embedding_renorm_(cpu, idx, 1.5, norm_type)
    close(got, cpu, want, 2 * TOL[dtype] if dtype is not tp.float32 else 1e-5)
    with pytest.raises(IndexError, match="index 8 is out of bounds"):
        tp.ops.embedding_renorm_(w.clone().to(DEV), tp.tensor([8]).to(DEV), 1.0, 2.0)
    x = tp.tensor([[1, 5], [7, 7]])
    close(
        tp.embedding_bag(x.to(DEV), w.clone().to(DEV), mode="sum", max_norm=1.5),
        tp.embedding_bag(x, w.clone(), mode="sum", max_norm=1.5),
        tol=4 * TOL[dtype] if dtype is not tp.float32 else 1e-5,
    )
