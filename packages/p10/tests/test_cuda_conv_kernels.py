"""The window kernels (im2col.cu, pool.cu, upsample.cu) compile through NVRTC and export every name the C++
asks for; no GPU needed (they skip only where the nvidia-cuda-nvrtc wheel is missing).

The names are those csrc/cuda/ops_im2col.cpp, ops_conv.cpp, ops_pool.cpp, ops_pool_adaptive.cpp and
ops_upsample.cpp build with kname(<base>, dtype): <base>_<dtype>, for the dtypes each op takes (the CPU op's).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import kernel_entries  # noqa: E402

REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


def test_im2col_kernels():
    names = kernel_entries("im2col.cu")
    assert {f"{k}_{t}" for k in ("im2col", "im2col_rows", "col2im", "col2im32") for t in REAL} <= names


def test_pool_kernels():
    names = kernel_entries("pool.cu")
    assert {f"{k}_{t}" for k in ("max_pool", "max_pool32") for t in INTS + FLOATS} <= names
    assert {f"avg_pool_{t}" for t in ["int64"] + FLOATS} <= names
    assert {f"adaptive_{k}_pool_{t}" for k in ("avg", "max") for t in FLOATS} <= names


def test_upsample_kernels():
    names = kernel_entries("upsample.cu")
    assert {f"upsample_nearest_{t}" for t in ["uint8"] + FLOATS} <= names
    modes = ("linear", "bilinear", "bicubic", "trilinear")
    assert {f"upsample_{m}_{t}" for m in modes for t in FLOATS} <= names
