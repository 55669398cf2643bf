"""Kernels of other pillars: a .cu file outside P10 compiles by absolute path (Note [Kernels of other pillars]
in tensorplay_p10/cuda/_compiler.py), the route of the C ABI's cuda_launch. No GPU needed (NVRTC only); skips
where NVRTC is not installed.
"""

import re

import pytest

from tensorplay_p10.cuda import _compiler

SOURCE = """
#include "common.cuh"   // P10's, found through its include path
#include "mine.cuh"     // the file's own, beside it
extern "C" __global__ void twice(int64 n, float *x) {
  for (int64 i = threadIdx.x; i < n; i += blockDim.x) x[i] = scale2(x[i]);
}
"""


@pytest.fixture
def module(tmp_path):
    try:
        _compiler.nvrtc()
    except RuntimeError as e:
        pytest.skip(f"NVRTC is not installed (pip install nvidia-cuda-nvrtc): {e}")
    (tmp_path / "mine.cuh").write_text("__device__ inline float scale2(float v) { return 2.0f * v; }\n")
    path = tmp_path / "external.cu"
    path.write_text(SOURCE)
    return path


def test_an_absolute_path_compiles_with_both_include_dirs(module):
    ptx = _compiler.compile_ptx(str(module), arch=80)
    assert re.search(rb"\.entry\s+twice\(", ptx)


def test_its_cache_key_follows_its_own_headers(module):
    version = _compiler.nvrtc().version
    k0 = _compiler.cache_key(str(module), "sm_90", version)
    assert k0 == _compiler.cache_key(str(module), "sm_90", version)
    (module.parent / "mine.cuh").write_text("__device__ inline float scale2(float v) { return v + v; }\n")
    assert _compiler.cache_key(str(module), "sm_90", version) != k0


def test_a_missing_file_names_the_path(tmp_path):
    with pytest.raises(RuntimeError, match="no CUDA kernel source .*absent.cu"):
        _compiler.compile_ptx(str(tmp_path / "absent.cu"))
