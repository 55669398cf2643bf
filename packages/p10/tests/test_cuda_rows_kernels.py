"""The row-kernel files (softmax.cu, norm.cu, cross_entropy.cu, loss.cu) compile through NVRTC and define
every kernel name their C++ ops ask for (csrc/cuda/ops_softmax.cpp, ops_norm.cpp, ops_cross_entropy.cpp,
ops_loss.cpp, with the forms of cuda/rows.h). No GPU needed: they run in CI and skip only without the
nvidia-cuda-nvrtc wheel. The register forms must also keep their rows in registers (no local memory) and load
16-byte packs with one vector instruction (Note [Register rows] in rows_common.cuh).
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import entries, ptx_of  # noqa: E402

FLOATS = ["float16", "bfloat16", "float32", "float64"]
FILES = ["softmax.cu", "norm.cu", "cross_entropy.cu", "loss.cu"]


@pytest.fixture(scope="module")
def ptx() -> dict[str, str]:
    return {name: ptx_of(name) for name in FILES}


def body(text: str, name: str) -> str:
    start = text.index(f".entry {name}(")
    end = text.find(".entry ", start + 1)
    return text[start : end if end > 0 else None]


def register_forms(op: str, forms) -> set[str]:
    return {f"{op}_{f}_{p}_{t}" for f in forms for p in ("vec", "scalar") for t in FLOATS} | {
        f"{op}_long_{t}" for t in FLOATS
    }


def test_softmax_names(ptx):
    for op in ("softmax", "log_softmax"):
        assert register_forms(op, ("warp8", "warp32", "block16")) <= entries(ptx["softmax.cu"])


def test_norm_names(ptx):
    names = entries(ptx["norm.cu"])
    for op in ("layer_norm", "rms_norm"):
        assert register_forms(op, ("warp8", "warp32", "block16")) <= names
        assert register_forms(f"{op}_backward", ("warp8", "block16")) <= names  # no warp32 (two rows held)
        assert {f"{op}_block32_vec_{t}" for t in ("float16", "bfloat16")} <= names  # 16-bit rows of <= 4096
    assert {f"norm_columns_{s}_{t}" for s in ("partial", "final", "reduce") for t in FLOATS} <= names


def test_cross_entropy_and_loss_names(ptx):
    forms = ("thread", "warp", "block", "reduce")
    assert {f"class_loss_{f}_{t}" for f in forms for t in FLOATS} <= entries(ptx["cross_entropy.cu"])
    losses = ("mse", "l1", "smooth_l1", "huber", "bce", "bce_logits", "kl_div", "final")
    assert {f"loss_{n}_{t}" for n in losses for t in FLOATS} <= entries(ptx["loss.cu"])


def test_register_rows_stay_in_registers_and_load_16_bytes(ptx):
    for name in FILES:
        assert ".local" not in ptx[name], f"{name} spills to local memory"
    text = ptx["softmax.cu"]
    b = body(text, "softmax_block16_vec_float32")
    assert b.count("ld.global.v4.f32") == 4 and b.count("st.v4.b32") == 4  # 16 floats a thread, 4 packs
    b = body(text, "log_softmax_warp32_vec_bfloat16")
    assert b.count("ld.global.v4.u32") == 4 and b.count("st.v4.b32") == 4  # 32 bf16 a lane, 4 packs of 8
    b = body(ptx["norm.cu"], "layer_norm_block16_vec_float32")
    assert b.count("ld.global.v4.f32") == 12  # x, weight and bias: 4 packs each
    b = body(ptx["norm.cu"], "layer_norm_block32_vec_bfloat16")
    assert b.count("ld.global.v4.u32") == 12 and b.count("st.v4.b32") == 4  # 32 bf16 a thread: 4 packs of 8
    b = body(ptx["norm.cu"], "rms_norm_backward_block16_vec_bfloat16")
    assert b.count("ld.global.v4.u32") == 6  # x and dy: 2 packs of 8 each; weight: 2 packs
