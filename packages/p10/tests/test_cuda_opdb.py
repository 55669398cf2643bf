"""The op database on the GPU: every op x dtype x sample on CUDA against the same call on the CPU.

Where it sits: the CUDA twin of test_opdb.py, over the same entries (tests/opdb). The CPU op is the oracle
(it is itself checked against NumPy/float64 references by test_opdb.py), so a CUDA kernel is right when it
gives the CPU's values, dtype and shape for every sample, keeps the same layout rules, writes its in-place and
``out=`` forms, and raises the CPU's exception type on the error inputs. Samples keep their layout on the GPU
(strides, transposes, broadcasts): only flipped (negative-stride) tensors are rebuilt as flips of a GPU copy.

Tolerances: the op's own per-dtype tolerance, doubled — the GPU sums in another order than the CPU, and both
round once. An op whose CUDA kernel does not exist yet raises NotImplementedError naming CUDA; that case is
skipped with the op's name (``pytest -rs`` lists them all), so the file runs to the end on a
partly ported backend. They need a GPU and skip elsewhere ("needs a CUDA device"). The CUDA ops the
database cannot express (random ops, backward kernels, number-first and alias overloads) have cases of their
own at the end: random ones are checked by distribution-free properties (support, dtype, shape) and seeding
(the same seed repeats the values, another seed or the next call does not).

Emulated (TP_CUDA_EMULATED=1, as test_cuda_opdb_emulated.py runs this file in CI): "cuda" is the stand-in
driver (cuda_emu/fake_cuda.c) with the CPU emulator, so every case runs its CUDA host path with launches
checked (Note [What the stand-in checks]); a refused call fails the test naming the op. Values are compared
only when every kernel of the call ran in the emulator; otherwise (cuda_testing.NOT_EMULATED) the result is
checked for device, dtype and shape (not the shape of a data-dependent sample), and an error input whose
error a recorded kernel would have found on the device passes unraised. See cuda_emu/emulated_run.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find tests/opdb

from opdb import OpInfo, SampleInput, op_db, to_numpy  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "cuda_emu"))
import emulated_run  # noqa: E402

EMULATED = emulated_run.active()
if EMULATED:
    emulated_run.install()
    _checked_launches = pytest.fixture(autouse=True)(emulated_run.checked_launches)

pytestmark = pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a CUDA device")


def to_cuda(t: tp.Tensor) -> tp.Tensor:
    """``t`` on the GPU with the same sizes and strides: a flip of a GPU copy where strides are negative, an
    expand of a GPU copy where they are 0, else an empty_strided GPU tensor written through."""
    flips = [d for d, s in enumerate(t.stride()) if s < 0]
    if flips:
        return to_cuda(t.flip(flips)).flip(flips)
    zeros = [d for d, (st, n) in enumerate(zip(t.stride(), t.shape, strict=True)) if st == 0 and n > 1]
    if zeros:
        index = tuple(slice(0, 1) if d in zeros else slice(None) for d in range(t.dim()))
        return to_cuda(t[index].contiguous()).expand(*t.shape)
    if t.is_contiguous():
        return t.to("cuda")
    try:
        return tp.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="cuda").copy_(t)
    except RuntimeError:  # overlapping strides (as_strided samples): a dense copy
        return t.to("cuda")


def _call(op: OpInfo, sample: SampleInput, **extra):
    return op.op(sample.input, *sample.args, **sample.kwargs, **extra)


def _call_reference(op: OpInfo, sample: SampleInput):
    """The CPU call the GPU result is compared with: with the CUDA op's defaults where they differ."""
    extra = {k: v for k, v in op.cuda_reference_kwargs.items() if k not in sample.kwargs}
    return _call(op, sample, **extra)


def _on_cuda(sample: SampleInput) -> SampleInput:
    """The sample with its tensors on the GPU; a factory (no tensor in the call, and not a list of tensors
    that happens to be empty, as in ``cat([])``) gets device="cuda"."""
    if not sample.tensors() and not isinstance(sample.input, list):
        return SampleInput(sample.input, sample.args, {**sample.kwargs, "device": "cuda"}, sample.name)
    return sample.map_tensors(to_cuda)


def _run_or_skip(op: OpInfo | None, fn):
    """Run ``fn``; a missing CUDA kernel skips the test, naming the op (pytest -rs lists them). Emulated: the
    launches it makes decide whether its values mean anything (emulated_run.values_known)."""
    try:
        if EMULATED:
            return emulated_run.watch(fn)
        return fn()
    except NotImplementedError as e:
        if "CUDA" not in str(e):
            raise
        pytest.skip(f"no CUDA kernel yet: {e}")


def _as_list(r) -> list:
    return list(r) if isinstance(r, (tuple, list)) else [r]


def assert_same(op: OpInfo, got, want, sample: SampleInput, what: str = "", values=None) -> None:
    """The GPU result ``got`` equals the CPU result ``want``: devices, dtypes, shapes, values (per dtype);
    only the outputs numbered in ``values`` are compared by value when it is given."""
    where = f"{op.id} {what} on {sample!r}"
    got_l, want_l = _as_list(got), _as_list(want)
    assert len(got_l) == len(want_l), where
    for i, (g, w) in enumerate(zip(got_l, want_l, strict=True)):
        if not isinstance(w, tp.Tensor):
            if isinstance(w, float) or isinstance(g, float):
                assert np.isclose(g, w, equal_nan=True), f"{where}: {g} != {w}"
            else:
                assert g == w, f"{where}: {g} != {w}"
            continue
        assert isinstance(g, tp.Tensor), where
        assert g.device.type == "cuda", f"{where}: result on {g.device}"
        assert g.dtype is w.dtype, f"{where}: dtype {g.dtype} != {w.dtype}"
        known = not EMULATED or emulated_run.values_known()
        if known or not sample.data_dependent:
            assert tuple(g.shape) == tuple(w.shape), f"{where}: shape {tuple(g.shape)} != {tuple(w.shape)}"
        if not known or not op.compare_values or (values is not None and i not in values):
            continue
        a, e = to_numpy(g.cpu()), to_numpy(w)
        rtol, atol = op.tol(w.dtype)
        if rtol == 0 and atol == 0:
            np.testing.assert_array_equal(a, e, err_msg=where)
        else:
            np.testing.assert_allclose(a, e, rtol=2 * rtol, atol=2 * atol, equal_nan=True, err_msg=where)


def _cpu(r):
    if isinstance(r, (tuple, list)):
        return type(r)(_cpu(x) for x in r) if isinstance(r, list) else tuple(_cpu(x) for x in r)
    return r.cpu() if isinstance(r, tp.Tensor) else r


def _params(ops, dtypes_of) -> list:
    return [pytest.param(o, d, id=f"{o.id}-{str(d).rsplit('.', 1)[-1]}") for o in ops for d in dtypes_of(o)]


def _representative(op: OpInfo) -> list:
    picks = []
    for group in ([tp.float32, tp.float64, tp.bfloat16], [tp.int64, tp.int32, tp.uint8]):
        found = [d for d in group if d in op.dtypes]
        if found:
            picks.append(found[0])
    return picks or [op.dtypes[0]]


def _real_dtypes(op: OpInfo) -> list:
    return [d for d in op.dtypes if not d.is_complex]  # complex dtypes have no CUDA kernels (check_real)


# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,dtype", _params(op_db, _real_dtypes))
def test_cuda_matches_cpu(op: OpInfo, dtype):
    checked = 0
    for sample in op.samples(dtype):
        want = _call_reference(op, sample)
        got = _run_or_skip(op, lambda s=sample: _call(op, _on_cuda(s)))
        if op.check is not None:  # indices among ties, signs of singular vectors: the entry's own check
            if not EMULATED or emulated_run.values_known():
                op.check(sample, _cpu(got))
            assert_same(op, got, want, sample, values=op.unique_outputs)
        else:
            assert_same(op, got, want, sample)
        checked += 1
    assert checked, f"{op.id} has no samples for {dtype}"


@pytest.mark.parametrize("op,dtype", _params([o for o in op_db if o.inplace], _representative))
def test_cuda_inplace_matches_cpu(op: OpInfo, dtype):
    for sample in op.samples(dtype):
        x = sample.input
        if not isinstance(x, tp.Tensor) or any(
            st == 0 and n > 1 for st, n in zip(x.stride(), x.shape, strict=True)
        ):
            continue
        want_x = x.clone()
        try:
            op.inplace(want_x, *sample.args, **sample.kwargs)
        except RuntimeError:
            continue  # the CPU refuses this one in place (a result dtype self cannot hold)
        cuda = _on_cuda(SampleInput(x.clone(), sample.args, sample.kwargs, sample.name))
        result = _run_or_skip(op, lambda c=cuda: op.inplace(c.input, *c.args, **c.kwargs))
        assert result is cuda.input, f"{op.id}_ on {sample!r} did not return self"
        assert_same(op, cuda.input, want_x, sample, "in-place")


@pytest.mark.parametrize("op,dtype", _params([o for o in op_db if o.out], _representative))
def test_cuda_out_writes_the_given_tensor(op: OpInfo, dtype):
    for sample in op.samples(dtype):
        want = _call(op, sample)
        if isinstance(want, (tuple, list)):
            outs = tuple(tp.empty(tuple(w.shape), dtype=w.dtype, device="cuda") for w in want)
            result = _run_or_skip(op, lambda s=sample, o=outs: _call(op, _on_cuda(s), out=o))
            for r, o in zip(result, outs, strict=True):
                assert r is o, f"{op.id} on {sample!r}: out= result is not the given tensor"
            assert_same(op, outs, want, sample, "out=")
            continue
        out = tp.empty(tuple(want.shape), dtype=want.dtype, device="cuda")
        result = _run_or_skip(op, lambda s=sample, o=out: _call(op, _on_cuda(s), out=o))
        assert result is out, f"{op.id} on {sample!r}: out= result is not the given tensor"
        assert_same(op, out, want, sample, "out=")


@pytest.mark.parametrize("op", [pytest.param(o, id=o.id) for o in op_db if o.error_inputs is not None])
def test_cuda_error_inputs_raise_as_on_cpu(op: OpInfo):
    for err in op.error_inputs(op):
        try:
            sample = _on_cuda(err.sample)
        except Exception:  # noqa: BLE001 - a sample the GPU cannot even hold (complex): the CPU test covers it
            continue
        if EMULATED:
            try:
                emulated_run.watch(lambda s=sample: _call(op, s))
            except (err.error, NotImplementedError) as e:
                if isinstance(e, NotImplementedError) and not issubclass(err.error, NotImplementedError):
                    if "CUDA" in str(e):
                        pytest.skip(f"no CUDA kernel yet: {e}")
                    raise
                continue
            # a device-side check (a bad index) in a kernel the emulator only records cannot have raised
            assert not emulated_run.values_known(), f"{op.id}: {err.sample!r} did not raise {err.error}"
            continue
        with pytest.raises((err.error, NotImplementedError)) as info:
            _call(op, sample)
        if isinstance(info.value, NotImplementedError) and not issubclass(err.error, NotImplementedError):
            if "CUDA" in str(info.value):
                pytest.skip(f"no CUDA kernel yet: {info.value}")
            raise info.value


# ---- CUDA ops the database cannot express ----------------------------------------------------------------
# Random ops (their values are no function of their inputs), backward kernels (autograd calls them, the
# database's forward cases do not), number-first and alias overloads, in-place forms the representative dtype
# cannot take. Each runs on CUDA like the cases above (emulated: launches checked, values compared when every
# kernel computed).
def _same_as_cpu(got, want, tol: float = 0.0, what: str = "") -> None:
    """The CUDA results ``got`` equal the CPU's ``want``: device, dtype and shape, and values (within rtol =
    atol = ``tol``) unless an emulated call left some kernel's values unknown."""
    known = not EMULATED or emulated_run.values_known()
    for i, (g, w) in enumerate(zip(_as_list(got), _as_list(want), strict=True)):
        where = f"{what} output {i}"
        if w is None:
            assert g is None, where
            continue
        assert g.device.type == "cuda" and g.dtype is w.dtype, f"{where}: {g.device} {g.dtype} vs {w.dtype}"
        assert tuple(g.shape) == tuple(w.shape), f"{where}: {tuple(g.shape)} vs {tuple(w.shape)}"
        if known:
            a, e = to_numpy(g.cpu()), to_numpy(w)
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True, err_msg=where)


def _randn(*shape, dtype=tp.float32, seed=0, lo=None, hi=None) -> tp.Tensor:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) if lo is None else rng.uniform(lo, hi, shape)
    return tp.from_numpy(np.asarray(a, np.float32)).to(dtype)


_RANDOM_N = 2000  # enough that two different streams agree everywhere with negligible probability


def _integral(a: np.ndarray) -> bool:
    return bool(np.all(a == np.round(a)))


# name: (the call on a fresh CUDA tensor of dtype `dt`, the property each result must have)
_RANDOM_CASES = {
    "uniform_": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").uniform_(-2, 3),
        lambda a: np.all((a >= -2) & (a <= 3)),
    ),
    "normal_": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").normal_(1.5, 0.5),
        lambda a: np.all(np.isfinite(a)) and abs(a.mean() - 1.5) < 0.2,
    ),
    "cauchy_": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").cauchy_(),
        lambda a: not np.any(np.isnan(a)),
    ),
    "exponential_": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").exponential_(2.0),
        lambda a: np.all(a >= 0) and np.all(np.isfinite(a)),
    ),
    "log_normal_": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").log_normal_(0.0, 0.5),
        lambda a: np.all(a >= 0) and np.all(np.isfinite(a)),
    ),
    "geometric_": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").geometric_(0.3),
        lambda a: np.all(a >= 1) and _integral(a),
    ),
    "bernoulli_.float": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").bernoulli_(0.3),
        lambda a: set(np.unique(a)) <= {0, 1},
    ),
    "bernoulli_.Tensor": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").bernoulli_(
            tp.linspace(0, 1, _RANDOM_N).to(dt).cuda()
        ),
        lambda a: set(np.unique(a)) <= {0, 1} and a[0] == 0 and a[-1] == 1,
    ),
    "bernoulli": (
        lambda dt: tp.bernoulli(tp.linspace(0, 1, _RANDOM_N).to(dt).cuda()),
        lambda a: set(np.unique(a)) <= {0, 1} and a[0] == 0 and a[-1] == 1,
    ),
    "poisson": (
        lambda dt: tp.poisson(_randn(_RANDOM_N, dtype=dt, lo=0, hi=6).cuda()),
        lambda a: np.all(a >= 0) and _integral(a),
    ),
    "random_": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").random_(),
        lambda a: np.all(a >= 0) and _integral(a),
    ),
    "random_.to": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").random_(7),
        lambda a: np.all((a >= 0) & (a < 7)) and _integral(a),
    ),
    "random_.from": (
        lambda dt: tp.empty(_RANDOM_N, dtype=dt, device="cuda").random_(-3, 5),
        lambda a: np.all((a >= -3) & (a < 5)) and _integral(a),
    ),
    "randperm": (
        lambda dt: tp.randperm(_RANDOM_N, device="cuda"),
        lambda a: np.array_equal(np.sort(a), np.arange(_RANDOM_N)),
    ),
    "multinomial": (
        lambda dt: tp.multinomial(
            tp.from_numpy(np.tile(np.array([0.0, 1, 2, 0, 3, 4, 5, 0], np.float32), (64, 1))).to(dt).cuda(), 5
        ),
        lambda a: np.all(np.isin(a, [1, 2, 4, 5, 6])) and all(len(set(r)) == 5 for r in a),
    ),
    "_rrelu_with_noise": (
        lambda dt: tp.ops.call("_rrelu_with_noise", _randn(_RANDOM_N, dtype=dt).cuda(), 0.1, 0.3)[1],
        lambda a: np.all(((a >= 0.1) & (a <= 0.3)) | (a == 1)) and np.any(a != 1),
    ),
}


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_RANDOM_CASES))
def test_cuda_random_op_properties_and_seeding(name: str, dtype):
    """A random CUDA op (Philox) gives the right shape, dtype and range; the same seed gives the same values,
    another seed (and the next call without reseeding) other values."""
    call, holds = _RANDOM_CASES[name]

    def draw(seed=None):
        if seed is not None:
            tp.manual_seed(seed)
        r = _run_or_skip(None, lambda: call(dtype))
        assert r.device.type == "cuda", f"{name}: result on {r.device}"
        want = tp.int64 if name in ("randperm", "multinomial") else dtype
        assert r.dtype is want, f"{name}: dtype {r.dtype}, expected {want}"
        return to_numpy(r.cpu())

    first, again = draw(7), draw(7)
    following = draw()
    other = draw(8)
    if EMULATED and not emulated_run.values_known():
        return  # only recorded: nothing computed to check
    assert holds(first), f"{name} ({dtype}): a value outside the distribution's support: {first[:20]}"
    np.testing.assert_array_equal(first, again, err_msg=f"{name}: the same seed gave other values")
    assert not np.array_equal(first, following), f"{name}: the next call repeated the last one's values"
    assert not np.array_equal(first, other), f"{name}: another seed gave the same values"


def _cuda_args(args):
    return [a.cuda() if isinstance(a, tp.Tensor) else a for a in args]


def _backward_cases():
    x, go = _randn(3, 5, 8), _randn(3, 5, 8, seed=1)
    w = _randn(8, seed=2)
    q, k, v = _randn(2, 2, 5, 8, seed=3), _randn(2, 2, 6, 8, seed=4), _randn(2, 2, 6, 8, seed=5)
    dq, dk = _randn(1, 4, 2, 3, seed=6), _randn(1, 4, 2, 3, seed=7)
    dv, dg = _randn(1, 4, 2, 5, seed=8), _randn(1, 4, 2, lo=-1, hi=0, seed=9)
    beta, s0 = _randn(1, 4, 2, lo=0, hi=1, seed=10), _randn(1, 2, 3, 5, seed=11)
    return {
        "layer_norm_backward": (go, x, [8], w, 1e-5, True, True, True),
        "rms_norm_backward": (go, x, [8], w, 1e-6, True, True),
        "scaled_dot_product_attention_backward": (_randn(2, 2, 5, 8, seed=12), q, k, v, False, 0.35),
        "delta_rule_backward": (
            _randn(1, 4, 2, 5, seed=13),
            _randn(1, 2, 3, 5, seed=14),
            dq,
            dk,
            dv,
            dg,
            beta,
            s0,
            2,
        ),
    }


@pytest.mark.parametrize("name", sorted(_backward_cases()))
def test_cuda_backward_kernel_matches_cpu(name: str):
    args = _backward_cases()[name]
    want = tp.ops.call(name, *args)
    got = _run_or_skip(None, lambda: tp.ops.call(name, *_cuda_args(args)))
    _same_as_cpu(got, want, 1e-4, name)


# (op name, the call, its arguments): overloads the database's samples do not reach
_OVERLOAD_CASES = {
    "bitwise_left_shift.Scalar_Tensor": (lambda s, x: tp.bitwise_left_shift(s, x), (3, tp.arange(6))),
    "bitwise_right_shift.Scalar_Tensor": (lambda s, x: tp.bitwise_right_shift(s, x), (1000, tp.arange(6))),
    "true_divide": (lambda a, b: tp.ops.call("true_divide", a, b), (_randn(4, 3), _randn(3, seed=1))),
    "true_divide.out": (
        lambda a, b: tp.ops.call(
            "true_divide.out", a, b, out=tp.empty(4, 3, dtype=tp.float32, device=a.device)
        ),
        (_randn(4, 3), _randn(3, seed=1)),
    ),
    "float_power_": (lambda a, b: a.float_power_(b), (_randn(4, 3, dtype=tp.float64).abs(), 1.7)),
    # the tuple-result pools' out= overloads take out= and indices= (PyTorch's schema), not a tuple
    **{
        name: (
            lambda x, size, _n=name: tp.ops.call(
                _n,
                x,
                size,
                out=tp.empty(0, dtype=x.dtype, device=x.device),
                indices=tp.empty(0, dtype=tp.int64, device=x.device),
            ),
            (_randn(2, 3, *[6] * d), [2] * d),
        )
        for name, d in [
            ("max_pool2d_with_indices.out", 2),
            ("max_pool3d_with_indices.out", 3),
            ("adaptive_max_pool2d.out", 2),
            ("adaptive_max_pool3d.out", 3),
        ]
    },
}


@pytest.mark.parametrize("name", sorted(_OVERLOAD_CASES))
def test_cuda_overload_matches_cpu(name: str):
    fn, args = _OVERLOAD_CASES[name]
    want = fn(*[a.clone() if isinstance(a, tp.Tensor) else a for a in args])
    got = _run_or_skip(None, lambda: fn(*_cuda_args(args)))
    _same_as_cpu(got, want, 1e-6, name)


def test_cuda_tensor_is_not_pinned():
    # is_pinned asks the driver whether a host pointer is page-locked; a CUDA tensor's memory never is
    assert tp.ops.call("is_pinned", tp.ones(3, device="cuda")) is False
    assert tp.ones(3).pin_memory().is_pinned() is True
