"""The kernel names the elementwise CUDA ops request exist: no GPU needed, only NVRTC.

csrc/cuda/elementwise.cpp builds names as <family>_<form>_<dtype> (forms contig and strided, and scalar for
two-input families) for the modules unary_math.cu, activation.cu, binary_math.cu, logical.cu, ternary.cu and
close.cu, plus any_zero_<int dtype> and any_false; ops_compare.cpp asks compare.cu for the same names as
before its 16-byte packs. Each .cu here is compiled to PTX and every name the C++ can ask for must be an
`.entry` of it, so a missing instantiation fails in CI instead of on the GPU.
"""

import sys
from pathlib import Path

import pytest

from tensorplay_p10.cuda import _compiler

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import kernel_entries, nvrtc_or_skip  # noqa: E402

F = ["float16", "bfloat16", "float32", "float64"]
I = ["uint8", "int8", "int16", "int32", "int64"]  # noqa: E741
ALL = ["bool", *I, *F]
ONE, TWO, THREE = ("contig", "strided"), ("contig", "scalar", "strided"), ("contig", "strided")

# module -> [(families, dtypes, forms)]
EXPECTED = {
    "unary_math.cu": [
        (
            "erfc erfinv lgamma digamma frac nan_to_num isnan isinf isfinite signbit angle",
            F,
            ONE,
        ),
        ("square sgn", F + I, ONE),
        ("signbit", ["int8", "int16", "int32", "int64"], ONE),
    ],
    "activation.cu": [
        ("mish hardsigmoid hardswish softshrink hardshrink log_sigmoid", F, ONE),
        ("threshold hardtanh", F + I, ONE),
        ("heaviside", ALL, TWO),
        (
            "leaky_relu_backward elu_backward elu_backward_result mish_backward softplus_backward"
            " hardtanh_backward",
            F,
            TWO,
        ),
    ],
    "binary_math.cu": [
        ("true_divide atan2 hypot copysign logaddexp logaddexp2 xlogy nextafter", F, TWO),
        ("floor_divide trunc_divide remainder fmod", F + I, TWO),
        ("fmax fmin", ALL, TWO),
        ("float_power", ["float64"], TWO),
    ],
    "logical.cu": [
        ("logical_and logical_or logical_xor", ALL, TWO),
        ("logical_not", ALL, ONE),
        ("bitwise_and bitwise_or bitwise_xor", ["bool", *I], TWO),
        ("bitwise_not", ["bool", *I], ONE),
        ("bitwise_left_shift bitwise_right_shift", I, TWO),
    ],
    "ternary.cu": [
        ("lerp_scalar", F, TWO),
        ("lerp_tensor addcdiv", F, THREE),
        ("addcmul", F + I, THREE),
    ],
    "close.cu": [("isclose", F, TWO)],
    "compare.cu": [
        ("eq ne lt le gt ge maximum minimum pow", ALL, TWO),
        ("where", ALL, ("contig", "strided")),
    ],
}


@pytest.fixture(scope="module")
def entries():
    nvrtc_or_skip()
    cache: dict[str, set[str]] = {}

    def get(module: str) -> set[str]:
        if module not in cache:
            cache[module] = kernel_entries(module)
        return cache[module]

    return get


@pytest.mark.parametrize("module", sorted(EXPECTED))
def test_kernel_names_match_what_the_ops_request(entries, module):
    got = entries(module)
    want = {
        f"{fam}_{form}_{t}"
        for families, dtypes, forms in EXPECTED[module]
        for fam in families.split()
        for t in dtypes
        for form in forms
    }
    missing = sorted(want - got)
    assert not missing, f"{module} lacks {missing[:10]} ({len(missing)} in all)"


def test_checks_behind_one_value_read_back(entries):
    assert {f"any_zero_{t}" for t in I} <= entries("binary_math.cu")
    assert "any_false" in entries("close.cu")


def test_packed_loops_use_16_byte_loads():
    """Note [16-byte packs]: the contiguous compare, where and maximum kernels load float32 as v4."""
    try:
        _compiler.nvrtc()
    except RuntimeError as e:
        pytest.skip(f"NVRTC is not installed: {e}")
    ptx = _compiler.compile_ptx("compare.cu", arch=80).decode(errors="replace")

    def body(name: str) -> str:
        start = ptx.index(f".entry {name}(")
        end = ptx.find(".entry", start + 10)
        return ptx[start : end if end > 0 else None]

    for name in ("gt_scalar_float32", "maximum_contig_float32", "where_contig_float32"):
        assert "ld.global.v4.f32" in body(name), name
    assert "st.global.v4.u8" in body("gt_scalar_float32")  # 4 bools stored by one instruction
