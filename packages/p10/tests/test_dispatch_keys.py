"""The dispatch key table (Note [Dispatch key table] in csrc/dispatch/dispatch_key.h) and what is derived
from it: names, priorities, ABI codes, masks, the ABI bitset translation, the thread-local sets, tp.ops.info's
kernel names and tp.explain's key sets. Expected values come from the table's rows and from tp_abi.h, never
from the masks or strings under test.
"""

import itertools
import re
from pathlib import Path

import pytest

import tensorplay_p10 as tp
from tensorplay_p10 import _C

HEADER = Path(__file__).resolve().parents[3] / "native" / "include" / "tensorplay" / "tp_abi.h"
ROWS = _C._dispatch_keys()
RUNTIME = [r for r in ROWS if r["priority"] is not None]
SLOTS = [r for r in ROWS if r["priority"] is None]


def header_key_codes() -> dict[str, int]:
    return {n: int(v) for n, v in re.findall(r"\b(TP_KEY_[A-Z0-9_]+)\s*=\s*(\d+)", HEADER.read_text())}


def bit(row: dict) -> int:
    return 1 << row["priority"]


def bits_of(rows) -> int:
    return sum(bit(r) for r in rows)


# ---- the table itself ----


def test_rows_have_unique_names_and_codes_and_known_kinds():
    assert len({r["name"] for r in ROWS}) == len(ROWS)
    assert len({r["abi_code"] for r in ROWS}) == len(ROWS)
    assert {r["kind"] for r in ROWS} == {"backend", "wrapper", "slot"}
    assert all(r["doc"] and r["name"].isidentifier() for r in ROWS)


def test_priority_is_row_order_and_slots_come_last():
    assert [r["priority"] for r in RUNTIME] == list(range(len(RUNTIME)))
    assert ROWS[: len(RUNTIME)] == RUNTIME  # no runtime row after a slot row
    assert all(r["kind"] == "slot" for r in SLOTS) and all(r["kind"] != "slot" for r in RUNTIME)


def test_every_backend_sits_below_every_wrapper():
    backends = [r["priority"] for r in RUNTIME if r["kind"] == "backend"]
    wrappers = [r["priority"] for r in RUNTIME if r["kind"] == "wrapper"]
    assert backends and wrappers and max(backends) < min(wrappers)


def test_abi_codes_are_the_header_constants():
    codes = header_key_codes()
    assert {r["abi_name"] for r in ROWS} == set(codes)  # every row is in the header, every constant a row
    for r in ROWS:
        assert codes[r["abi_name"]] == r["abi_code"], r["name"]


def test_existing_abi_codes_keep_their_numbers():
    # The frozen numbers of ABI 1.0: a client built then must still name the same keys (Note [ABI evolution]).
    frozen = {
        "TP_KEY_PRIVATEUSE1": 0, "TP_KEY_META": 1, "TP_KEY_CPU": 2, "TP_KEY_CUDA": 3, "TP_KEY_AUTOGRAD": 4,
        "TP_KEY_AUTOCAST": 5, "TP_KEY_TRACER": 6, "TP_KEY_PYTHON": 7, "TP_KEY_COMPOSITE": 8,
        "TP_KEY_ANY_BACKEND": 9,
    }  # fmt: skip
    codes = header_key_codes()
    assert {n: codes[n] for n in frozen} == frozen


def test_library_keys_come_from_the_table():
    by_priority = sorted(RUNTIME, key=lambda r: -r["priority"])
    assert tp.library.KEYS == tuple(r["name"] for r in by_priority + SLOTS)


# ---- masks derived from the kinds ----


def test_masks_are_the_rows_of_each_kind():
    masks = _C._key_masks()
    assert masks["backend"] == bits_of(r for r in RUNTIME if r["kind"] == "backend")
    assert masks["wrapper"] == bits_of(r for r in RUNTIME if r["kind"] == "wrapper")
    assert masks["runtime"] == bits_of(RUNTIME) == masks["backend"] | masks["wrapper"]
    assert masks["backend"] & masks["wrapper"] == 0


@pytest.mark.parametrize("row", RUNTIME, ids=lambda r: r["name"])
def test_at_or_above_is_every_runtime_key_from_the_row_up(row):
    expected = bits_of(r for r in RUNTIME if r["priority"] >= row["priority"])
    assert _C._keys_at_or_above(row["name"]) == expected


def test_key_bit_is_the_priority_bit():
    for r in RUNTIME:
        assert _C._key_bit(r["name"]) == bit(r)


def test_key_set_prints_highest_priority_first():
    names = [r["name"] for r in sorted(RUNTIME, key=lambda r: -r["priority"])]
    assert _C._keyset_str(bits_of(RUNTIME)) == "{" + ", ".join(names) + "}"
    assert _C._keyset_str(0) == "{}"


# ---- the ABI bitset translation (one function each way) ----


@pytest.mark.parametrize("row", RUNTIME, ids=lambda r: r["name"])
def test_one_key_translates_to_its_abi_code_bit(row):
    assert _C._keyset_to_abi(bit(row)) == 1 << row["abi_code"]
    assert _C._keyset_from_abi(1 << row["abi_code"]) == bit(row)


def test_every_set_of_runtime_keys_round_trips():
    for n in range(len(RUNTIME) + 1):
        for subset in itertools.combinations(RUNTIME, n):
            internal = bits_of(subset)
            abi = sum(1 << r["abi_code"] for r in subset)
            assert _C._keyset_to_abi(internal) == abi
            assert _C._keyset_from_abi(abi) == internal


def test_abi_bits_of_slots_and_unknown_codes_are_dropped():
    used = {r["abi_code"] for r in ROWS}
    unknown = next(c for c in range(31, -1, -1) if c not in used)
    slot_bits = sum(1 << r["abi_code"] for r in SLOTS)
    assert _C._keyset_from_abi(slot_bits | (1 << unknown)) == 0
    cpu = next(r for r in RUNTIME if r["name"] == "CPU")
    assert _C._keyset_from_abi((1 << cpu["abi_code"]) | (1 << unknown)) == bit(cpu)


# ---- thread-local sets through Python ----


def test_include_and_exclude_keys_set_the_tls_bits_and_restore_them():
    before = (_C._tls_included(), _C._tls_excluded())
    with tp.library.include_keys("Tracer", "Autocast"):
        assert _C._tls_included() == before[0] | _C._key_bit("Tracer") | _C._key_bit("Autocast")
        with tp.library.exclude_keys("Autograd"):
            assert _C._tls_excluded() == before[1] | _C._key_bit("Autograd")
        assert _C._tls_excluded() == before[1]
    assert (_C._tls_included(), _C._tls_excluded()) == before


@pytest.mark.parametrize("slot", [r["name"] for r in SLOTS])
def test_include_keys_of_a_kernel_slot_is_a_value_error(slot):
    # A slot is never in a key set: including it used to be silently dropped.
    with pytest.raises(ValueError, match=f"include_keys: '{slot}' is a kernel slot"):
        with tp.library.include_keys(slot):
            pass
    with pytest.raises(ValueError, match=f"exclude_keys: '{slot}' is a kernel slot"):
        with tp.library.exclude_keys(slot):
            pass


def test_redispatch_below_a_kernel_slot_is_a_value_error():
    # Redispatching "below Composite" used to mask out nothing and run the op again from the top.
    with pytest.raises(ValueError, match="redispatch: 'Composite' is a kernel slot"):
        tp.library.redispatch("neg", "Composite", tp.ones(2))


def test_fallback_at_a_non_wrapper_key_names_the_wrapper_keys():
    with pytest.raises(ValueError, match="only wrapper keys") as e:
        tp.library.fallback("CPU", lambda *a: None)
    msg = str(e.value)
    assert all((r["name"] in msg) == (r["kind"] == "wrapper") for r in RUNTIME if r["name"] != "CPU")


# ---- tp.ops.info and tp.explain read the same names ----

klib = tp.library.Library("disp_keys")
klib.define("every_slot(Tensor x) -> Tensor")
for _row in ROWS:
    klib.impl("every_slot", lambda x: x, _row["name"])


def test_ops_info_names_each_slot_by_its_table_name_in_table_order():
    kernels = tp.ops.info("disp_keys::every_slot")["kernels"]
    assert list(kernels) == [r["name"] for r in ROWS]
    assert all(src.rsplit(":", 1)[0] == __file__ for src in kernels.values())


def test_unknown_key_error_lists_every_key_of_the_table():
    with pytest.raises(ValueError, match="unknown dispatch key 'GPU'") as e:
        klib.impl("every_slot", lambda x: x, "GPU")
    assert all(r["name"] in str(e.value) for r in ROWS)


def test_explain_shows_wrapper_then_backend_key_sets():
    wlib = tp.library.Library("disp_keys_wrap")
    wlib.define("ident(Tensor x) -> Tensor")
    wlib.impl("ident", lambda x: x.neg(), "CPU")
    wlib.impl("ident", lambda x: tp.library.redispatch("disp_keys_wrap::ident", "Tracer", x), "Tracer")
    x = tp.ones(2)
    with tp.library.include_keys("Tracer"):
        report = tp.explain(lambda: tp.ops.disp_keys_wrap.ident(x), quiet=True)
    rows = [(r.op, r.keys, r.ran, r.depth) for r in report]
    assert rows == [
        ("disp_keys_wrap::ident", "{Tracer, CPU}", "Tracer", 0),
        ("disp_keys_wrap::ident", "{CPU}", "CPU", 1),  # redispatch masked Tracer out
        ("neg", "{CPU}", "CPU", 2),  # and kept it excluded inside (Note [Redispatch])
    ]
    line = str(report).splitlines()[0]
    assert line.startswith("disp_keys_wrap::ident") and "  keys={Tracer, CPU}  ran=Tracer  at " in line
