"""The CUDA attention kernels compile through NVRTC and export every name the C++ ops request (no GPU needed).

csrc/cuda/ops_attention.cpp asks attention.cu for ``attn_fwd_<dtype>`` and, for float16/bfloat16 head dims up
to 256, ``attn_fwd_mma_d<D>_<dtype>``; csrc/cuda/ops_attention_backward.cpp asks attention_backward.cu for
``attn_bwd_{delta,dkdv,dq}_<dtype>`` and, for 16-bit head dims up to 128,
``attn_bwd_{dkdv,dq}_mma_d<D>_<dtype>``. For float32 both ask attention_simt.cu (Note [Attention on CUDA
cores]) for ``attn_fwd_simt_d<D>_float32`` (D = 16/32/64) and ``attn_bwd_{dkdv,dq}_simt_d<D>_float32``
(D = 16/32). A name that is missing would only fail on a GPU, at the first call.
"""

import re
import sys
from pathlib import Path

import pytest

from tensorplay_p10.cuda import _compiler

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import kernel_entries  # noqa: E402

FLOATS = ["float16", "bfloat16", "float32", "float64"]
CSRC = Path(__file__).resolve().parents[1] / "csrc" / "cuda"


@pytest.fixture(scope="module")
def ptx() -> dict[str, set[str]]:
    return {
        name: kernel_entries(name) for name in ("attention.cu", "attention_backward.cu", "attention_simt.cu")
    }


def test_forward_kernels_exist(ptx):
    fwd = ptx["attention.cu"]
    assert {f"attn_fwd_{t}" for t in FLOATS} <= fwd
    assert {f"attn_fwd_mma_d{d}_{t}" for d in (16, 32, 64, 128, 256) for t in ("float16", "bfloat16")} <= fwd


def test_backward_kernels_exist(ptx):
    bwd = ptx["attention_backward.cu"]
    assert {f"attn_bwd_{k}_{t}" for k in ("delta", "dkdv", "dq") for t in FLOATS} <= bwd
    assert {
        f"attn_bwd_{k}_mma_d{d}_{t}"
        for k in ("dkdv", "dq")
        for d in (16, 32, 64, 128)
        for t in ("float16", "bfloat16")
    } <= bwd


def test_simt_kernels_exist(ptx):
    simt = ptx["attention_simt.cu"]
    assert {f"attn_fwd_simt_d{d}_float32" for d in (16, 32, 64)} <= simt
    assert {f"attn_bwd_{k}_simt_d{d}_float32" for k in ("dkdv", "dq") for d in (16, 32)} <= simt
    # the largest head dims the host sends there are the ones compiled
    header = (CSRC / "attention.h").read_text()
    assert "kAttnSimtMaxFwd = 64, kAttnSimtMaxBwd = 32" in header


def test_the_ops_request_only_these_names(ptx):
    # every kernel base name spelled in the two op files is one the checks above cover
    fwd_src = (CSRC / "ops_attention.cpp").read_text()
    bwd_src = (CSRC / "ops_attention_backward.cpp").read_text()
    assert set(re.findall(r'"(attn_\w+)"', fwd_src)) == {"attn_fwd", "attn_fwd_mma_d", "attn_fwd_simt_d"}
    assert set(re.findall(r'"(attn_\w+)"', bwd_src)) == {"attn_bwd_delta", "attn_bwd_dkdv", "attn_bwd_dq"}
    assert (
        '"_simt_d"' in bwd_src and '"_mma_d"' in bwd_src and "width <= 128 ? 128 : 0" in bwd_src
    )  # mma backward: D up to 128
    # the mma head dims the host picks from are the ones compiled
    assert "{16, 32, 64, 128, 256}" in fwd_src


def test_param_struct_layouts_agree():
    # attention.h's static_assert fixes the host size; the device struct lists the same fields in order
    cuh = (Path(_compiler._loader.KERNEL_DIR) / "attention_common.cuh").read_text()
    host = (CSRC / "attention.h").read_text()
    dev_fields = re.search(r"struct AttnParams \{(.*?)\n\};", cuh, re.S).group(1)
    host_fields = re.search(r"struct AttnParams \{(.*?)\n\};", host, re.S).group(1)

    def names(block: str) -> list[str]:
        block = re.sub(r"//[^\n]*", "", block)
        block = re.sub(r"=\s*[^,;]+", "", block)
        return re.findall(r"\b(\w+)\s*(?:\[[^\]]*\])?\s*(?=[,;])", block)

    assert names(dev_fields) == names(host_fields)
