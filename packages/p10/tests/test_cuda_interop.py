"""CUDA tensors across library borders and streams: DLPack both ways, ``to(non_blocking=True)``.

Where it sits: the GPU side of test_interop.py (csrc/python/py_dlpack.cpp, cuda/_dlpack.py, the `to` op in
csrc/cuda/ops_copy.cpp). DLPack shares device memory, so a value written on one side is seen on the other;
where PyTorch is installed (the GPU machine has it), the exchange is checked with it in both directions. They
need a GPU and skip elsewhere ("needs a CUDA device").
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import needs_cuda  # noqa: E402

pytestmark = needs_cuda


def test_dlpack_round_trip_shares_gpu_memory() -> None:
    x = tp.arange(12.0).reshape(3, 4).to("cuda")
    assert x.__dlpack_device__() == (2, x.device.index)
    y = tp.from_dlpack(x)
    assert y.device == x.device and tuple(y.shape) == (3, 4)
    y.fill_(7.0)
    np.testing.assert_array_equal(x.cpu().numpy(), np.full((3, 4), 7.0, np.float32))
    t = x.t()  # strides travel too
    z = tp.from_dlpack(t)
    assert z.stride() == t.stride()


def test_dlpack_stream_argument() -> None:
    x = tp.ones(4, device="cuda")
    s = tp.cuda.Stream()
    cap = x.__dlpack__(stream=s.cuda_stream)  # the consumer's stream waits for ours (an event, no host sync)
    assert tp.from_dlpack(cap).cpu().tolist() == [1.0] * 4
    with pytest.raises(ValueError, match="stream=0"):
        x.__dlpack__(stream=0)
    with pytest.raises(BufferError, match="DLPack device"):
        x.__dlpack__(dl_device=(1, 0))


def test_dlpack_with_pytorch_on_the_gpu() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    a = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
    t = tp.from_dlpack(a)  # PyTorch -> TensorPlay, same memory
    assert t.device.type == "cuda" and t.cpu().tolist() == a.cpu().tolist()
    t.mul_(2)
    torch.cuda.synchronize()
    assert a.cpu().tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    b = torch.from_dlpack(tp.full((2, 2), 3, dtype=tp.int64, device="cuda"))  # TensorPlay -> PyTorch
    assert b.is_cuda and b.dtype == torch.int64 and b.cpu().tolist() == [[3, 3], [3, 3]]
    h = tp.ones(2, 3, dtype=tp.bfloat16, device="cuda")
    assert torch.from_dlpack(h).dtype == torch.bfloat16


def test_to_non_blocking_round_trip() -> None:
    host = tp.arange(1 << 20, dtype=tp.float32).pin_memory()
    g = host.to("cuda", non_blocking=True)
    back = g.to("cpu", non_blocking=True)
    assert back.is_pinned()  # a non_blocking download lands in pinned memory, as in PyTorch
    tp.cuda.synchronize()
    np.testing.assert_array_equal(back.numpy(), host.numpy())
    c = tp.arange(5.0).cuda(non_blocking=True)
    assert c.device.type == "cuda" and c.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert not g.to("cpu").is_pinned()  # a blocking one does not


def test_tolist_and_item_copy_from_the_gpu() -> None:
    x = tp.tensor([[1.5, -2.0], [3.0, 4.25]], device="cuda")
    assert x.tolist() == [[1.5, -2.0], [3.0, 4.25]]
    assert x[1, 1].item() == 4.25
    with pytest.raises(TypeError):
        x.numpy()  # as PyTorch: numpy() needs a CPU tensor (.cpu() first)
