"""Cross-pillar tests of P10's C ABI table (native/include/tensorplay/tp_abi.h, docs/design.md §2).

Each native module (tensorplay_tpx._C, tensorplay_stax._C, tensorplay_nn._C) imports the table at init; the
`_abi_*` functions they export exercise it from the consumer side:
- nn defines a brand-new op from a schema string and registers a boxed CPU kernel for it;
- tpx registers a boxed wrapper kernel at the Tracer key that counts calls and redispatches below itself;
- stax reads a tensor's metadata through the handle getters, names dispatch keys by code (key_count, key_name,
  key_find) and reads and writes the thread-local key sets as bitsets of TP_KEY_* codes.
Constants (ABI version, dtype and device codes) are parsed from the header, never typed in by hand.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import tensorplay_nn
import tensorplay_p10
import tensorplay_stax
import tensorplay_tpx

HEADER = Path(__file__).resolve().parents[1] / "native" / "include" / "tensorplay" / "tp_abi.h"
PILLARS: list[ModuleType] = [tensorplay_tpx, tensorplay_stax, tensorplay_nn]


def header_constants() -> dict[str, int]:
    """`#define TP_ABI_*` values and `TP_* = N` enumerators from tp_abi.h."""
    text = HEADER.read_text()
    consts = {name: int(value) for name, value in re.findall(r"#define\s+(TP_ABI_\w+)\s+(\d+)", text)}
    consts.update({name: int(value) for name, value in re.findall(r"\b(TP_[A-Z0-9_]+)\s*=\s*(\d+)", text)})
    return consts


C = header_constants()


# ---- every pillar imported the table ----


@pytest.mark.parametrize("pillar", PILLARS, ids=lambda m: m.__name__)
def test_pillar_imported_the_table_of_the_header_version(pillar: ModuleType) -> None:
    major, minor, struct_size = pillar._C._abi_info()
    assert (major, minor) == (C["TP_ABI_MAJOR"], C["TP_ABI_MINOR"])
    assert struct_size > 0


def test_all_pillars_see_the_same_table() -> None:
    assert len({pillar._C._abi_info() for pillar in PILLARS}) == 1


def test_importing_a_pillar_imports_p10_first() -> None:
    assert all(hasattr(pillar, "_C") for pillar in PILLARS)
    assert hasattr(tensorplay_p10._C, "_tp_abi")  # the capsule every pillar imported


# ---- nn: define a new op and call it through P10's dispatcher ----


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_define_and_call_a_new_op(dtype_name: str) -> None:
    name = tensorplay_nn._C._abi_define_scale_op()
    assert tensorplay_nn._C._abi_define_scale_op() == name  # a second call is harmless
    values = np.array([1.0, 2.0, 3.0], dtype=dtype_name)
    x = tensorplay_p10.tensor(values.tolist(), dtype=getattr(tensorplay_p10, dtype_name))
    y = tensorplay_p10.ops.call("nn_abi_test::scale", x, 2.5)
    np.testing.assert_array_equal(y.numpy(), values * 2.5)
    assert y.numpy().dtype == values.dtype
    np.testing.assert_array_equal(x.numpy(), values)  # the input is untouched


def test_new_op_rejects_a_wrong_dtype_with_type_error() -> None:
    tensorplay_nn._C._abi_define_scale_op()
    x = tensorplay_p10.tensor([1, 2, 3])  # int64
    with pytest.raises(TypeError, match="float32 or float64"):
        tensorplay_p10.ops.call("nn_abi_test::scale", x, 2.0)


# ---- tpx: a wrapper kernel at the Tracer key hands on with op_redispatch ----

# Runs in a fresh interpreter: a kernel registered for a real op stays for the life of the process, and a
# counting wrapper left at the Tracer key for `neg` would stand in front of Stax's capture in later tests.
WRAPPER_PROGRAM = """
import numpy as np
import tensorplay_p10
import tensorplay_tpx

tensorplay_tpx._C._abi_register_counting_wrapper("neg")
tensorplay_tpx._C._abi_register_counting_wrapper("neg")  # a second registration is harmless
values = np.array([1.0, -2.0, 3.0], dtype=np.float32)
x = tensorplay_p10.tensor(values.tolist())

before = tensorplay_tpx._C._abi_wrapper_calls()
with tensorplay_p10.library.include_keys("Tracer"):
    y = tensorplay_p10.neg(x)
assert tensorplay_tpx._C._abi_wrapper_calls() == before + 1, "wrapper ran once inside the block"
np.testing.assert_array_equal(y.numpy(), -values)

outside = tensorplay_p10.neg(x)
assert tensorplay_tpx._C._abi_wrapper_calls() == before + 1, "wrapper did not run outside the block"
np.testing.assert_array_equal(outside.numpy(), -values)
print("ok")
"""


def test_wrapper_key_redispatch_runs_once_and_only_when_included() -> None:
    result = subprocess.run([sys.executable, "-c", WRAPPER_PROGRAM], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "ok"


def test_wrapper_for_an_unknown_op_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no_such_op"):
        tensorplay_tpx._C._abi_register_counting_wrapper("no_such_op")


# ---- stax: tensor metadata through the handle getters ----


def test_tensor_meta_through_the_abi() -> None:
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tensorplay_p10.tensor(values.tolist())
    sizes, strides, offset, dtype, device = tensorplay_stax._C._abi_tensor_meta(x)
    assert sizes == values.shape
    assert strides == tuple(s // values.itemsize for s in values.strides)
    assert offset == 0
    assert dtype == C["TP_FLOAT32"]
    assert device == C["TP_DEVICE_CPU"]


def test_tensor_meta_of_a_transposed_view_has_transposed_strides() -> None:
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tensorplay_p10.tensor(values.tolist())
    t = x.transpose(0, 1)
    sizes, strides, offset, _, _ = tensorplay_stax._C._abi_tensor_meta(t)
    assert sizes == values.T.shape
    assert strides == tuple(s // values.itemsize for s in values.T.strides)  # (1, 3): a view, not a copy
    assert offset == 0


def test_tensor_meta_of_a_non_tensor_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        tensorplay_stax._C._abi_tensor_meta([1.0, 2.0])


# ---- stax: dispatch keys by code, and the thread-local key sets as TP_KEY_* bitsets ----
# P10 keeps priorities to itself (Note [Dispatch key table]): across the ABI a key is its TP_KEY_* code and a
# key set a bitset of codes, whatever bit P10 gives the key inside.
KEY_ROWS = tensorplay_p10._C._dispatch_keys()


def test_key_names_by_code_through_the_abi() -> None:
    by_code = {r["abi_code"]: r["name"] for r in KEY_ROWS}
    assert tensorplay_stax._C._abi_keys() == [(c, by_code.get(c)) for c in range(max(by_code) + 1)]
    for r in KEY_ROWS:
        assert C[r["abi_name"]] == r["abi_code"]
        assert tensorplay_stax._C._abi_key_find(r["name"]) == r["abi_code"]
    assert tensorplay_stax._C._abi_key_find("NoSuchKey") == -1


def test_tls_key_sets_cross_the_abi_as_code_bits() -> None:
    p10 = tensorplay_p10._C
    saved = tensorplay_stax._C._abi_tls_keys()
    try:
        with tensorplay_p10.library.include_keys("Tracer"), tensorplay_p10.library.exclude_keys("Autocast"):
            included, excluded = tensorplay_stax._C._abi_tls_keys()
            assert included == saved[0] | 1 << C["TP_KEY_TRACER"]
            assert excluded == saved[1] | 1 << C["TP_KEY_AUTOCAST"]
        tensorplay_stax._C._abi_set_tls_keys(1 << C["TP_KEY_PYTHON"], 1 << C["TP_KEY_AUTOGRAD"])
        assert p10._tls_included() == p10._key_bit("Python")
        assert p10._tls_excluded() == p10._key_bit("Autograd")
        # Codes of kernel slots (never in a key set) and codes P10 does not know are dropped on the way in.
        unknown = next(c for c in range(31, -1, -1) if c not in {r["abi_code"] for r in KEY_ROWS})
        tensorplay_stax._C._abi_set_tls_keys(1 << C["TP_KEY_COMPOSITE"] | 1 << unknown, 0)
        assert (p10._tls_included(), p10._tls_excluded()) == (0, 0)
    finally:
        tensorplay_stax._C._abi_set_tls_keys(*saved)
    assert tensorplay_stax._C._abi_tls_keys() == saved


def test_tpx_grad_mode_is_the_autograd_code_bit() -> None:
    # tpx keeps grad mode as TP_KEY_BIT(TP_KEY_AUTOGRAD) in the excluded set; P10 must read it as Autograd.
    autograd = tensorplay_p10._C._key_bit("Autograd")
    assert not tensorplay_p10._C._tls_excluded() & autograd
    with tensorplay_tpx.autograd.no_grad():
        assert tensorplay_p10._C._tls_excluded() & autograd
        assert tensorplay_stax._C._abi_tls_keys()[1] & 1 << C["TP_KEY_AUTOGRAD"]
    assert not tensorplay_p10._C._tls_excluded() & autograd
