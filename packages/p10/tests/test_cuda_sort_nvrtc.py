"""The sort-family kernel files compile through NVRTC, and every kernel name their C++ ops ask for exists.

Runs in CI with no GPU (NVRTC from the nvidia-cuda-nvrtc wheel; skipped, saying so, where it is missing). The
ops are csrc/cuda/ops_sort.cpp, ops_order_stats.cpp and ops_search.cpp; the kernels sort.cu, sort_radix.cu,
order_stats.cu and search.cu. Besides the explicit lists, every ``kname("base", ...)`` and plain kernel-name
string in those .cpp files is checked against the PTX, so a renamed kernel fails here rather than on the GPU.
"""

import pathlib
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import kernel_entries  # noqa: E402

REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
MODULES = ("sort.cu", "sort_radix.cu", "order_stats.cu", "search.cu")
CSRC = pathlib.Path(__file__).resolve().parents[1] / "csrc" / "cuda"
OPS = ("ops_sort.cpp", "ops_order_stats.cpp", "ops_search.cpp")


@pytest.fixture(scope="module")
def entries() -> dict[str, set[str]]:
    return {m: kernel_entries(m) for m in MODULES}


def test_sort_kernels(entries):
    k = entries["sort.cu"]
    assert {f"{b}_{t}" for b in ("bitonic", "radix_init", "radix_gather", "topk_select") for t in REAL} <= k
    assert {f"radix_{s}_{w}" for s in ("hist", "scatter") for w in ("k32", "k64")} <= k
    assert {"scan_tile_sums", "scan_sums", "scan_tiles"} <= k
    radix = entries["sort_radix.cu"]
    assert {f"onesweep_{b}_{t}" for b in ("hist", "pass") for t in REAL} <= radix
    narrow = [t for t in REAL if t not in ("int64", "float64")]  # keys of at most 32 bits
    assert {f"radix_rows{n}_{t}" for n in (2, 4, 8, 16) for t in narrow} <= radix


def test_order_stats_kernels(entries):
    k = entries["order_stats.cu"]
    assert {f"median_pick_{t}" for t in REAL if t != "bool"} <= k  # median refuses bool, as on the CPU
    assert {f"mode_rows_{t}" for t in REAL} <= k
    assert {"quantile_rows_float32", "quantile_rows_float64"} <= k


def test_search_kernels(entries):
    k = entries["search.cu"]
    assert {f"{b}_{t}" for b in ("unique_flags", "unique_scatter", "searchsorted") for t in REAL} <= k
    assert {f"{b}_{t}" for b in ("minmax_partial", "histc_count") for t in FLOATS} <= k
    assert {"unique_counts", "sorter_check", "minmax_final", "bincount_stats", "bincount_count"} <= k
    assert "bincount_weighted" in k


def test_every_name_the_ops_request_exists(entries):
    every = set().union(*entries.values())
    for name in OPS:
        src = (CSRC / name).read_text()
        for base in re.findall(r'kname\(\s*"(\w+)"', src):
            assert any(e.startswith(base + "_") for e in every), f"{name}: no kernel {base}_<dtype>"
        for plain in re.findall(r'kernel\(dev, (?:"\w+\.cu"|kSearch), "(\w+)"\)', src):
            assert plain in every, f"{name}: no kernel {plain}"
        for prefix in re.findall(r'std::string\("(\w+)"\) \+ kw', src):
            assert {prefix + "k32", prefix + "k64"} <= every, f"{name}: no kernel {prefix}k32/k64"
