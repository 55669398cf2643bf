"""Generic tests over the op database (tests/opdb): every op x dtype, with the sample loop inside.

For each entry: the forward result against its NumPy/float64 reference (values and result dtype); the Meta
device against CPU (shape and dtype); the in-place form (same values, returns self, or refuses a result it
cannot hold); ``out=`` (same values, returns and fills the given tensor, resizes an empty one, refuses a
dtype it cannot cast to); non-contiguous samples against their contiguous copies; 1M-element inputs on all
threads against one thread; error inputs (type, message, op name). And one test keeps the database complete:
a registered op with no entry fails it unless it is listed in KNOWN_UNCOVERED with a reason.

Where PyTorch is installed, the samples of one float and one integer dtype per op also run through it and
are compared (values and dtype). Runtime: about 30 s on the 2-core dev machine (4,500 cases).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp
from tensorplay_p10.fake_tensor import FakeTensorMode, is_fake

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find tests/opdb

from opdb import OpInfo, SampleInput, numpy_sample, op_db, to_numpy  # noqa: E402
from opdb.samples import from_array, is_noncontiguous, rng_for  # noqa: E402
from opdb.uncovered import KNOWN_UNCOVERED  # noqa: E402


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _params(test: str, ops: list[OpInfo], dtypes_of) -> list:
    """pytest params ``(op, dtype)`` with ids ``name-dtype``; entries' known failures become strict xfails."""
    out = []
    for op in ops:
        for dtype in dtypes_of(op):
            reason = op.xfail_reason(test, dtype)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(pytest.param(op, dtype, id=f"{op.id}-{_dtype_name(dtype)}", marks=marks))
    return out


def _representative(op: OpInfo) -> list:
    """The dtypes the layout-level tests (meta, in-place, out=, non-contiguous, PyTorch) run on: one float and
    one integer where the op has them (float32, int64), else its first dtype. The forward test runs them all;
    these tests check layouts and plumbing, which do not depend on the element type."""
    picks = []
    for group in ([tp.float32, tp.float64, tp.bfloat16], [tp.int64, tp.int32, tp.uint8]):
        found = [d for d in group if d in op.dtypes]
        if found:
            picks.append(found[0])
    return picks or [op.dtypes[0]]


def _all(op: OpInfo) -> list:
    return list(op.dtypes)


def _call(op: OpInfo, sample: SampleInput, **extra):
    return op.op(sample.input, *sample.args, **sample.kwargs, **extra)


def _reference(op: OpInfo, sample: SampleInput):
    if op.ref_cast is not None:
        compute = op.ref_cast(sample, None)
        sample = sample.map_tensors(lambda t: t.to(compute))
    ns = numpy_sample(sample)
    extra = {"_dtype": sample.tensors()[0].dtype} if op.ref_gets_dtype else {}
    # NaN and inf are reference values here (log(-1), nanmean of an all-NaN row), not accidents to warn of.
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return op.ref(ns.input, *ns.args, **ns.kwargs, **extra)


def _round_to(expected: np.ndarray, dtype) -> np.ndarray:
    """The reference rounded once to the result dtype (what a correctly rounded kernel returns)."""
    if dtype.is_floating_point or dtype.is_complex:
        with np.errstate(all="ignore"):
            return to_numpy(from_array(expected, dtype))
    return expected


def assert_matches(op: OpInfo, actual, expected, sample: SampleInput, what: str = "") -> None:
    """``actual`` (tensors, tuples of them, Python numbers) equals ``expected`` within the op's tolerance for
    the result dtype; NaNs must be in the same places, infinities too."""
    where = f"{op.id} {what} on {sample!r}"
    if expected is None:  # an output the reference leaves to OpInfo.check (indices among equal values)
        return
    if isinstance(actual, (tuple, list)):
        assert isinstance(expected, (tuple, list)), where
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_matches(op, a, e, sample, f"{what}[{i}]")
        return
    if not isinstance(actual, tp.Tensor):
        if isinstance(expected, tp.Tensor):
            expected = expected.item()
        if isinstance(actual, float) or isinstance(expected, float):
            assert np.isclose(actual, expected, equal_nan=True), f"{where}: {actual} != {expected}"
        else:
            assert actual == expected, f"{where}: {actual} != {expected}"
        return
    a = to_numpy(actual)
    e = to_numpy(expected) if isinstance(expected, tp.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, f"{where}: shape {a.shape} != {e.shape}"
    rtol, atol = op.tol(actual.dtype)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(a, e, err_msg=where)
    else:
        if not isinstance(expected, tp.Tensor):
            e = _round_to(e, actual.dtype)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)


def _first(result):
    return result[0] if isinstance(result, (tuple, list)) else result


# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,dtype", _params("forward", [o for o in op_db if o.compare_values], _all))
def test_forward_matches_reference(op: OpInfo, dtype):
    checked = 0
    for sample in op.samples(dtype):
        actual = _call(op, sample)
        if op.result_dtype is not None:
            want = op.result_dtype(sample, dtype)
            assert _first(actual).dtype is want, (
                f"{op.id} on {sample!r}: dtype {_first(actual).dtype} != {want}"
            )
        if op.ref is not None:
            assert_matches(op, actual, _reference(op, sample), sample)
        if op.check is not None:
            op.check(sample, actual)
        checked += 1
    assert checked, f"{op.id} has no samples for {dtype}"


@pytest.mark.parametrize("op,dtype", _params("meta", [o for o in op_db if o.meta], _representative))
def test_meta_matches_cpu_shape_and_dtype(op: OpInfo, dtype):
    for sample in op.samples(dtype):
        if sample.data_dependent:
            continue
        cpu = _call(op, sample)
        meta = _call(op, sample.map_tensors(lambda t: t.to("meta")))
        cpu_list = list(cpu) if isinstance(cpu, (tuple, list)) else [cpu]
        meta_list = list(meta) if isinstance(meta, (tuple, list)) else [meta]
        assert len(cpu_list) == len(meta_list), f"{op.id} on {sample!r}"
        for c, m in zip(cpu_list, meta_list, strict=True):
            if not isinstance(c, tp.Tensor):
                continue
            assert m.device.type == "meta", f"{op.id} on {sample!r}"
            assert tuple(m.shape) == tuple(c.shape), (
                f"{op.id} on {sample!r}: {tuple(m.shape)} != {tuple(c.shape)}"
            )
            assert m.dtype is c.dtype, f"{op.id} on {sample!r}: {m.dtype} != {c.dtype}"


@pytest.mark.parametrize("op,dtype", _params("meta", [o for o in op_db if o.meta], _representative))
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_fake_matches_cpu_shape_dtype_and_device(op: OpInfo, dtype, device):
    """Fake tensors (Note [Fake tensors]) run the Meta kernels and carry the device they stand for; a fake
    CUDA call may refuse only what the CUDA backend refuses (NotImplementedError naming CUDA)."""
    mode = FakeTensorMode()
    for sample in op.samples(dtype):
        if sample.data_dependent:
            continue
        cpu = _call(op, sample)
        fake_sample = sample.map_tensors(lambda t: mode.from_tensor(t, device=device if t.dim() else "cpu"))
        try:
            fake = _call(op, fake_sample)
        except NotImplementedError as e:
            assert device == "cuda" and "CUDA" in str(e), f"{op.id} on {sample!r}: {e}"
            continue
        cpu_list = list(cpu) if isinstance(cpu, (tuple, list)) else [cpu]
        fake_list = list(fake) if isinstance(fake, (tuple, list)) else [fake]
        assert len(cpu_list) == len(fake_list), f"{op.id} on {sample!r}"
        for c, f in zip(cpu_list, fake_list, strict=True):
            if not isinstance(c, tp.Tensor):
                continue
            assert is_fake(f), f"{op.id} on {sample!r}: a real result from fake inputs"
            views = [t for t in fake_sample.tensors() if f._shares_storage(t)]  # a view keeps its base's
            want = (
                views[0].device.type if views else device if any(t.dim() for t in sample.tensors()) else "cpu"
            )
            assert f.device.type == want, f"{op.id} on {sample!r}: on {f.device}, not {want}"
            assert tuple(f.shape) == tuple(c.shape), (
                f"{op.id} on {sample!r}: {tuple(f.shape)} != {tuple(c.shape)}"
            )
            assert f.dtype is c.dtype, f"{op.id} on {sample!r}: {f.dtype} != {c.dtype}"


def _private_copy(t):
    """A fresh tensor with ``t``'s shape, strides and values: samples may share tensors, so an in-place call
    must not write into the sample itself (and non-contiguous layouts must stay non-contiguous)."""
    c = tp.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype)
    c.copy_(t)
    return c


def _overlaps(t) -> bool:
    """An expanded tensor (stride 0 over a dim of size > 1) cannot be written in place."""
    return any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape, strict=True))


@pytest.mark.parametrize("op,dtype", _params("inplace", [o for o in op_db if o.inplace], _representative))
def test_inplace_matches_and_returns_self(op: OpInfo, dtype):
    tested = refused = 0
    for sample in op.samples(dtype):
        if not isinstance(sample.input, tp.Tensor) or _overlaps(sample.input):
            continue
        target = SampleInput(_private_copy(sample.input), sample.args, sample.kwargs, sample.name)
        x = target.input
        expected = _call(op, sample)
        if not isinstance(expected, tp.Tensor) or tuple(expected.shape) != tuple(x.shape):
            continue
        if not tp.can_cast(expected.dtype, x.dtype) or (
            op.inplace_exact_dtype and expected.dtype is not x.dtype
        ):
            with pytest.raises(RuntimeError, match="can't be cast|result requires dtype"):
                op.inplace(x, *target.args, **target.kwargs)
            refused += 1
            continue
        result = op.inplace(x, *target.args, **target.kwargs)
        assert result is x, f"{op.id}_ on {target!r} did not return self"
        assert_matches(op, result, expected.to(x.dtype), target, "in-place")
        tested += 1
    assert tested + refused, f"{op.id}: no sample to run in place"


@pytest.mark.parametrize("op,dtype", _params("out", [o for o in op_db if o.out], _representative))
def test_out_matches_and_writes_the_given_tensor(op: OpInfo, dtype):
    for sample in op.samples(dtype):
        expected = _call(op, sample)
        if isinstance(expected, (tuple, list)):
            outs = tuple(tp.empty(0, dtype=e.dtype) for e in expected)
            result = _call(op, sample, out=outs)
            for r, o, e in zip(result, outs, expected, strict=True):
                assert r is o, f"{op.id} on {sample!r}: out= result is not the given tensor"
                assert_matches(op, o, e, sample, "out= (resized)")
            continue
        # An out of the right shape is written; an empty one is resized (as PyTorch resizes size-0 outs).
        for out in (tp.empty(tuple(expected.shape), dtype=expected.dtype), tp.empty(0, dtype=expected.dtype)):
            result = _call(op, sample, out=out)
            assert result is out, f"{op.id} on {sample!r}: out= result is not the given tensor"
            assert_matches(op, out, expected, sample, "out=")
        # A float result into an int64 out: elementwise ops and products refuse (PyTorch's rule);
        # reductions and scans compute in the out's dtype instead (OpInfo.out_casts).
        if expected.dtype.is_floating_point and not op.out_casts:
            with pytest.raises(RuntimeError, match="can't be cast|dtype"):
                _call(op, sample, out=tp.empty(0, dtype=tp.int64))


@pytest.mark.parametrize(
    "op,dtype", _params("noncontiguous", [o for o in op_db if o.layout_invariant], _representative)
)
def test_noncontiguous_matches_contiguous(op: OpInfo, dtype):
    for sample in op.samples(dtype):
        if not is_noncontiguous(sample):
            continue
        contiguous = sample.map_tensors(lambda t: t.contiguous())
        assert not is_noncontiguous(contiguous)
        assert_matches(op, _call(op, sample), _call(op, contiguous), sample, "vs contiguous")


@pytest.mark.parametrize("op", [pytest.param(o, id=o.id) for o in op_db if o.large is not None])
def test_threaded_matches_one_thread(op: OpInfo):
    """A 1M-element input takes the threaded path; one thread must give the same result (tolerance: sums may
    be split differently)."""
    sample = op.large(op)
    threads = tp.get_num_threads()
    many = _call(op, sample)
    tp.set_num_threads(1)
    try:
        one = _call(op, sample)
    finally:
        tp.set_num_threads(threads)
    assert_matches(op, many, one, sample, "threads vs one thread")


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(
            o,
            id=o.id,
            marks=[pytest.mark.xfail(reason=o.xfail_reason("errors", None), strict=True)]
            if o.xfail_reason("errors", None)
            else [],
        )
        for o in op_db
        if o.error_inputs is not None
    ],
)
def test_error_inputs_raise_naming_the_op(op: OpInfo):
    for err in op.error_inputs(op):
        with pytest.raises(err.error, match=err.match) as info:
            _call(op, err.sample)
        if err.names_op:
            assert op.name in str(info.value), f"{op.id}: message does not name the op: {info.value}"


# ---------------------------------------------------------------------------------------------------------
def _registered_ops() -> set[str]:
    """Built-in op names (overloads folded: add.out -> add), from a fresh interpreter so that custom ops other
    tests register (mylib::…) do not count."""
    code = "import json, tensorplay_p10 as tp; print(json.dumps([d['name'] for d in tp.ops.list()]))"
    names = json.loads(
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    )
    return {n.split(".")[0] for n in names}


def test_every_registered_op_is_in_the_database():
    registered = _registered_ops()
    covered = {o.name for o in op_db} | {c.split(".")[0] for o in op_db for c in o.covers}
    missing = sorted(registered - covered - set(KNOWN_UNCOVERED))
    assert not missing, (
        f"ops without an OpInfo (add one in tests/opdb, or list them in uncovered.py): {missing}"
    )
    stale = sorted(set(KNOWN_UNCOVERED) & covered)
    assert not stale, f"listed as uncovered but in the database: {stale}"
    unknown = sorted(set(KNOWN_UNCOVERED) - registered)
    assert not unknown, f"listed as uncovered but not a registered op: {unknown}"
    assert all(reason.strip() for reason in KNOWN_UNCOVERED.values())


def test_database_entries_are_well_formed():
    for op in op_db:
        assert callable(op.op), op.id
        assert op.dtypes, op.id
        assert op.ref is not None or not op.compare_values or op.result_dtype is not None, op.id
        for dtype in op.dtypes:
            assert any(True for _ in op.samples(dtype)), f"{op.id}: no samples for {dtype}"


# ---------------------------------------------------------------------------------------------------------
# PyTorch, where installed: the same samples, compared in values and result dtype.
def _to_torch(torch, v):
    if isinstance(v, tp.Tensor):
        if v.dtype is tp.bfloat16:  # bit for bit: torch's float32 -> bfloat16 cast flips the sign of NaN
            f32 = np.asarray(v.to(tp.float32).numpy(), np.float32)
            bits = np.asarray((f32.view(np.uint32) >> 16).astype(np.uint16)).view(np.int16)
            return torch.from_numpy(bits.copy()).view(torch.bfloat16)
        return torch.from_numpy(v.numpy().copy())
    if isinstance(v, tp.dtype):
        return getattr(torch, _dtype_name(v))
    if isinstance(v, tuple):
        return tuple(_to_torch(torch, x) for x in v)
    if isinstance(v, list):
        return [_to_torch(torch, x) for x in v]
    if isinstance(v, dict):
        return {k: _to_torch(torch, x) for k, x in v.items()}
    return v


def _from_torch(torch, v):
    if isinstance(v, torch.Tensor):
        if v.dtype == torch.bfloat16:
            return tp.tensor(v.float().numpy()).to(tp.bfloat16)
        return tp.tensor(v.resolve_conj().numpy().copy()).to(getattr(tp, str(v.dtype).rsplit(".", 1)[-1]))
    if isinstance(v, (tuple, list)):
        return [_from_torch(torch, x) for x in v]
    return v


def _torch_fn(torch, op: OpInfo):
    """OpInfo.torch, or ``torch.<name>``, or the method ``Tensor.<name>`` (view, expand, …)."""
    if callable(op.torch):
        return op.torch(torch)
    if hasattr(torch, op.name):
        return getattr(torch, op.name)
    return lambda x, *a, **k: getattr(x, op.name)(*a, **k)


def _self_consistent(torch, fn, ts: SampleInput, theirs, dtype):
    """PyTorch's float32 result with the elements where its vectorised CPU kernels disagree with PyTorch
    itself replaced by its float64 answer: gelu(inf) is NaN in torch's AVX-512 float32 loop but inf in its
    float64 and scalar paths. Only NaNs that float64 does not produce are replaced, so every other value still
    comes from the float32 call, and ours must equal PyTorch's own answer there."""
    if dtype is not tp.float32 or not isinstance(theirs, tp.Tensor) or theirs.dtype is not tp.float32:
        return theirs
    t32 = theirs.numpy()
    if not np.isnan(t32).any():
        return theirs

    def up(v):
        if isinstance(v, torch.Tensor) and v.dtype == torch.float32:
            return v.double()
        if isinstance(v, (tuple, list)):
            return type(v)(up(x) for x in v)
        if isinstance(v, dict):
            return {k: up(x) for k, x in v.items()}
        return v

    try:
        t64 = fn(up(ts.input), *up(ts.args), **up(ts.kwargs))
    except (TypeError, RuntimeError, ValueError, IndexError):
        return theirs
    if not isinstance(t64, torch.Tensor) or tuple(t64.shape) != t32.shape:
        return theirs
    t64 = t64.float().numpy()
    fixed = np.where(np.isnan(t32) & ~np.isnan(t64), t64, t32)
    return tp.from_numpy(np.array(fixed, dtype=np.float32))  # np.array keeps a 0-d result 0-d


@pytest.mark.parametrize("op,dtype", _params("torch", [o for o in op_db if o.torch], _representative))
def test_matches_torch(op: OpInfo, dtype):
    """Values and result dtype against PyTorch 2.13. Samples PyTorch itself rejects (a Python number where
    its signature wants a tensor, say) are skipped: NumPy stays the reference for those."""
    torch = pytest.importorskip("torch")
    fn = _torch_fn(torch, op)
    compared = 0
    for sample in op.samples(dtype):
        ts = SampleInput(*(_to_torch(torch, v) for v in (sample.input, sample.args, sample.kwargs)))
        try:
            with (
                warnings.catch_warnings()
            ):  # PyTorch's deprecation notes (scatter's reduce=, cross without dim)
                warnings.simplefilter("ignore", UserWarning)
                theirs = fn(ts.input, *ts.args, **ts.kwargs)
        except (TypeError, RuntimeError, ValueError, IndexError):
            continue
        mine = _call(op, sample)
        theirs = _self_consistent(torch, fn, ts, _from_torch(torch, theirs), dtype)
        if isinstance(_first(mine), tp.Tensor) and op.result_dtype is not None:
            assert _first(mine).dtype is _first(theirs).dtype, f"{op.id} on {sample!r}: dtype vs torch"
        if op.compare_values:
            assert_matches(op, mine, theirs, sample, "vs torch")
        compared += 1
    assert compared or op.torch_may_reject, f"{op.id}: PyTorch rejected every sample"


def test_samples_are_deterministic():
    """Samples come from generators seeded by op and dtype, so a failure reproduces in a single test."""
    op = op_db[0]
    a = [to_numpy(s.input) for s in op.samples(tp.float32)]
    b = [to_numpy(s.input) for s in op.samples(tp.float32)]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert rng_for("x").random() == rng_for("x").random()
