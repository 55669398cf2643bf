"""Exception types: the calls PyTorch code catches by type raise what PyTorch raises.

Where it sits: across P10's error paths — the dtype-dispatch refusal (Note [Unsupported dtype errors] in
csrc/core/scalar_type.cpp), the index checks (Note [Index error types] in csrc/kernels/index_helpers.h),
einsum's equation checks, tp.tensor's dtype inference. Each call is checked against its expected type here,
and, with torch installed, against torch's type for the same call.
"""

import pytest

import tensorplay_p10 as tp

# (call written for module `m`, the type PyTorch 2.13 raises). Each fails on TensorPlay before its fix.
CASES = [
    ("m.randn(3, dtype=m.int64)", NotImplementedError),
    ("m.rand(3, dtype=m.int64)", NotImplementedError),
    ("m.empty(3, dtype=m.int64).normal_()", NotImplementedError),
    ("m.bitwise_and(m.ones(3), m.ones(3))", NotImplementedError),
    ("m.bitwise_or(m.ones(3), m.ones(3))", NotImplementedError),
    ("m.bitwise_xor(m.ones(3), m.ones(3))", NotImplementedError),
    ("m.bitwise_not(m.ones(3))", NotImplementedError),
    ("m.bitwise_left_shift(m.ones(3), m.ones(3))", NotImplementedError),
    ("m.bitwise_right_shift(m.ones(3), m.ones(3))", NotImplementedError),
    ("m.ones(3) << 1", NotImplementedError),
    ("m.ones(3) & 1", NotImplementedError),
    ("~m.ones(3)", TypeError),
    ("m.lt(m.tensor([1 + 1j]), m.tensor([2 + 1j]))", NotImplementedError),
    ("m.tensor([1 + 1j]) < 1", NotImplementedError),
    ("m.floor(m.tensor([1 + 1j]))", NotImplementedError),
    ("m.relu(m.tensor([1 + 1j]))", NotImplementedError),
    ("m.clamp(m.tensor([1 + 1j]), 0, 1)", NotImplementedError),
    ("m.sign(m.tensor([1 + 1j]))", NotImplementedError),
    ("m.softmax(m.arange(3), 0)", NotImplementedError),
    ("m.log_softmax(m.arange(3), 0)", NotImplementedError),
    ("m.randint(0, 3, (2,), dtype=m.complex64)", RuntimeError),
    ("m.tensor(None)", RuntimeError),
    ("m.tensor([1, None])", RuntimeError),
    ("m.einsum('i,i', m.ones(3))", RuntimeError),
    ("m.einsum('ij', m.ones(2, 2), m.ones(2, 2))", RuntimeError),
    ("m.einsum('i#', m.ones(3))", RuntimeError),
    ("m.einsum('i->j', m.ones(3))", RuntimeError),
    ("m.einsum('i->ii', m.ones(3))", RuntimeError),
    ("m.einsum('i.j', m.ones(3))", RuntimeError),
    ("m.gather(m.ones(3), 0, m.tensor([5]))", RuntimeError),
    ("m.gather(m.ones(3), 0, m.tensor([-1]))", RuntimeError),
    ("m.zeros(3).scatter(0, m.tensor([5]), m.ones(1))", RuntimeError),
    ("m.zeros(3).scatter(0, m.tensor([5]), 1.0)", RuntimeError),
    ("m.zeros(3).scatter_add(0, m.tensor([5]), m.ones(1))", RuntimeError),
    ("m.zeros(3).scatter_reduce(0, m.tensor([5]), m.ones(1), 'sum')", RuntimeError),
    # PyTorch keeps IndexError for these
    ("m.index_select(m.ones(3), 0, m.tensor([5]))", IndexError),
    ("m.zeros(3).index_add(0, m.tensor([5]), m.ones(1))", IndexError),
    ("m.zeros(3).index_copy(0, m.tensor([5]), m.ones(1))", IndexError),
    ("m.zeros(3).index_fill(0, m.tensor([5]), 1.0)", IndexError),
    ("m.take(m.zeros(3), m.tensor([5]))", IndexError),
    ("m.ones(3)[10]", IndexError),
    ("m.ones(3)[m.tensor([10])]", IndexError),
]


@pytest.mark.parametrize("call, error", CASES, ids=[c for c, _ in CASES])
def test_exception_type(call, error):
    with pytest.raises(error) as info:
        eval(call, {"m": tp})
    assert type(info.value) is error  # not a subclass: PyTorch code tells these apart


@pytest.mark.parametrize("call, error", CASES, ids=[c for c, _ in CASES])
def test_exception_type_matches_torch(call, error):
    torch = pytest.importorskip("torch")
    types = []
    for m in (torch, tp):
        try:
            eval(call, {"m": m})
            types.append(None)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            types.append(type(e))
    assert types[0] is error, f"torch raised {types[0]} (the table's expectation is stale)"
    assert types[1] is types[0], f"{call}: torch raises {types[0].__name__}, tensorplay {types[1]}"


def test_unsupported_dtype_message_names_op_and_dtype():
    with pytest.raises(
        NotImplementedError, match=r"^\"normal_\" not implemented for 'Long' \(dtype int64\)$"
    ):
        tp.randn(3, dtype=tp.int64)
    with pytest.raises(NotImplementedError, match="\"bitwise_and\" not implemented for 'Float'"):
        tp.ones(2) & tp.ones(2)
    with pytest.raises(NotImplementedError, match="\"lt\" not implemented for 'ComplexFloat'"):
        tp.lt(tp.tensor([1j]), tp.tensor([2j]))


def test_meta_tensors_raise_the_same_dtype_error():
    # Meta kernels are the CPU kernels' shape code (CUDA ops run them first), so they refuse alike.
    with pytest.raises(NotImplementedError, match="bitwise_and"):
        tp.ones(2, device="meta") & tp.ones(2, device="meta")


def test_index_errors_name_the_op():
    with pytest.raises(
        RuntimeError, match=r"gather\(\): index 5 is out of bounds for dimension 0 with size 3"
    ):
        tp.gather(tp.ones(3), 0, tp.tensor([5]))
    with pytest.raises(IndexError, match=r"index_add_\(\): index 5 is out of bounds"):
        tp.zeros(3).index_add_(0, tp.tensor([5]), tp.ones(1))
    with pytest.raises(IndexError, match=r"index_copy_\(\): index 5 is out of bounds"):
        tp.zeros(3).index_copy_(0, tp.tensor([5]), tp.ones(1))
