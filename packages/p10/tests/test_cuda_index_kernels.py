"""The kernels of the indexing, join, rearrange, factory and embedding_bag families compile through NVRTC
(no GPU needed), and every kernel name their C++ ops request is an entry point of the PTX.

Runs in CI. The names: csrc/cuda/ops_index.cpp, ops_index_advanced.cpp, index_common.cpp, ops_join.cpp,
ops_rearrange.cpp, ops_factory.cpp and ops_embedding.cpp build <kind>_b<bytes> (kinds that only move
elements), <kind>_<dtype> (kinds that compute) and a few fixed names; the fixed names written as literals in
the C++ are also read from the sources, so a renamed kernel fails here rather than on a GPU.
"""

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import kernel_entries  # noqa: E402

REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
CSRC = Path(__file__).resolve().parents[1] / "csrc" / "cuda"
FILES = ["index.cu", "join.cu", "rearrange.cu", "factory.cu", "embedding.cu", "copy.cu"]


@pytest.fixture(scope="module")
def entries() -> dict[str, set[str]]:
    return {name: kernel_entries(name) for name in FILES}


def test_index_kernels(entries):
    k = entries["index.cu"]
    assert {
        f"{kind}_b{n}" for kind in ("gather", "masked_fill", "select_rows") for n in (1, 2, 4, 8, 16)
    } <= k
    assert {f"{kind}_b{n}" for kind in ("gather_fast", "gather_rows") for n in (1, 2, 4, 8, 16)} <= k
    assert {f"{kind}_{t}" for kind in ("scatter", "scatter_mean", "scatter_fast") for t in REAL} <= k
    assert {
        "index_offsets",
        "exclusive_scan_int64",
        "nonzero_count",
        "nonzero_write",
        "repeat_interleave_index",
        "index_wrap",
    } <= k


def test_join_rearrange_factory_kernels(entries):
    assert {f"cat_b{n}" for n in (1, 2, 4, 8, 16)} <= entries["join.cu"]
    assert {
        f"{kind}_b{n}" for kind in ("triangle", "triangle_packs", "triangle_rows") for n in (1, 2, 4, 8)
    } <= (entries["rearrange.cu"])
    f = entries["factory.cu"]
    assert {f"{kind}_{t}" for kind in ("arange", "linspace", "logspace") for t in REAL if t != "bool"} <= f
    assert {f"eye_b{n}" for n in (1, 2, 4, 8)} <= f
    e = entries["embedding.cu"]
    assert {"embedding_bag_check", "embedding_bag_offset2bag", "embedding_renorm_mark"} <= e
    assert {f"{kind}_{t}" for kind in ("embedding_bag", "embedding_renorm") for t in REAL[6:]} <= e


def test_fast_strided_copy_kernels(entries):
    # ops_copy.cpp's packed strided copy (Note [Packed strided copy]): units of 1..16 bytes, flips of 1..8
    c = entries["copy.cu"]
    assert {f"copy_fast_b{n}" for n in (1, 2, 4, 8, 16)} <= c
    assert {f"copy_flip_b{n}" for n in (1, 2, 4, 8)} <= c


def test_literal_kernel_names_in_the_sources_exist(entries):
    found = 0
    for cpp in (
        "ops_index.cpp",
        "ops_index_advanced.cpp",
        "index_common.cpp",
        "ops_join.cpp",
        "ops_rearrange.cpp",
        "ops_factory.cpp",
    ):
        text = (CSRC / cpp).read_text()
        for module, name in re.findall(r'kernel\(dev, "(\w+\.cu)",\s*"(\w+)"\)', text):
            assert name in entries[module], f"{cpp} asks {module} for {name}"
            found += 1
        for module, prefix in re.findall(r'kernel\(dev, "(\w+\.cu)",\s*(?:kname\(|)"(\w+?)(?:_b)?"', text):
            assert any(e.startswith(prefix) for e in entries[module]), f"{cpp}: no {prefix}* in {module}"
    assert found >= 6
