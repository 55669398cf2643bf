"""Reduction and scan kernels compile through NVRTC and hold every name the C++ ops ask for (no GPU needed).

csrc/cuda/ops_reduce_plan.cpp asks for `<base>_{inner,cols,colsv,final}_<dtype>` (reduce_sums.cu,
reduce_order.cu, reduce_stats.cu) and csrc/cuda/ops_scan.cpp for `<base>_{rows,warps,cols}_<dtype>`
(scan.cu); the bases and dtypes below are the ones those files and ops_reduce{,_sums,_order,_stats}.cpp pass.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import kernel_entries  # noqa: E402

REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]

REDUCE = {
    "reduce_sums.cu": {"sum": REAL, "nansum": FLOATS, "prod": REAL, "all_any": REAL, "count_nonzero": REAL},
    "reduce_order.cu": {"amax": REAL, "amin": REAL, "argmax": REAL, "argmin": REAL},
    "reduce_stats.cu": {"var": FLOATS, "logsumexp": FLOATS, "norm": FLOATS},
}
SCAN = {"cumsum": REAL, "cumprod": REAL, "cummax": REAL, "cummin": REAL, "logcumsumexp": FLOATS}


@pytest.mark.parametrize("module", sorted(REDUCE))
def test_reduce_kernel_names_match_what_the_ops_request(module):
    entries = kernel_entries(module)
    want = {
        f"{b}_{form}_{t}"
        for b, dts in REDUCE[module].items()
        for form in ("inner", "cols", "colsv", "final")
        for t in dts
    }
    assert not want - entries, sorted(want - entries)


def test_scan_kernel_names_match_what_the_ops_request():
    entries = kernel_entries("scan.cu")
    want = {
        f"{b}_{form}_{t}"
        for b, dts in SCAN.items()
        for form in ("rows", "warps", "cols", "segtotals", "segs")
        for t in dts
    }
    assert not want - entries, sorted(want - entries)
