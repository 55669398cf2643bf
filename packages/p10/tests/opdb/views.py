"""Op database: views and copies (kernels/view.cpp, copy.cpp, _shape.py) and the deterministic factories
(kernels/factory.cpp).

A view's values must equal NumPy's view of the same array; that it *is* a view (writes go through) is a
property test (test_properties.py) and test_views.py. Factories take no tensor, so their samples are argument
lists and their Meta check passes ``device="meta"``.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import ALL, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed


def _mk(op, dtype):
    rng = rng_for(op.id, str(dtype))
    return lambda *shape: make_tensor(shape, dtype, rng)


_CASES = {
    # name: [(input shape, args, kwargs, name)], reference
    "view": (
        [
            ((3, 4), ((4, 3),)),
            ((3, 4), ((-1,),)),
            ((2, 3, 4), ((2, -1),)),
            ((), ((1, 1),)),
            ((0, 3), ((3, 0),)),
        ],
        lambda x, s: x.reshape(s),
    ),
    "reshape": (
        [((3, 4), ((2, 6),)), ((3, 4), ((-1,),)), ((), ((1,),)), ((0, 3), ((3, 0),)), ((2, 3), ((3, 2),))],
        lambda x, s: x.reshape(s),
    ),
    "transpose": (
        [((3, 4), (0, 1)), ((2, 3, 4), (-1, 0)), ((3,), (0, 0)), ((), (0, -1))],
        lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x,
    ),
    "t": ([((3, 4), ()), ((3,), ()), ((), ())], lambda x: x.T),
    "permute": (
        [((2, 3, 4), ((2, 0, 1),)), ((2, 3), ((-1, 0),)), ((), ((),))],
        lambda x, p: np.transpose(x, p),
    ),
    "expand": (
        [((3, 1), ((3, 4),)), ((4,), ((2, 3, 4),)), ((3, 1), ((-1, 2),)), ((), ((2,),))],
        lambda x, s: np.broadcast_to(
            x, tuple(x.shape[i - len(s) + x.ndim] if d == -1 else d for i, d in enumerate(s))
        ),
    ),
    "squeeze": (
        [((3, 1, 4, 1), ()), ((3, 1, 4), (1,)), ((3, 1, 4), (0,)), ((1, 1), ((0, 1),)), ((), ())],
        lambda x, d=None: np.squeeze(
            x, axis=tuple(i for i in np.atleast_1d(d) if x.shape[i] == 1) if d is not None else None
        ),
    ),
    "unsqueeze": (
        [((3, 4), (0,)), ((3, 4), (-1,)), ((3, 4), (1,)), ((), (0,))],
        lambda x, d: np.expand_dims(x, d),
    ),
    "slice": (
        [((5, 4), (0, 1, 4)), ((5, 4), (1, 0, None, 2)), ((5, 4), (0, -3)), ((5, 4), (0, 7, 9))],
        lambda x, dim=0, start=None, end=None, step=1: x[(slice(None),) * dim + (slice(start, end, step),)],
    ),
    "narrow": (
        [((5, 4), (0, 1, 3)), ((5, 4), (1, -2, 2)), ((5, 4), (0, 5, 0))],
        lambda x, d, s, n: np.take(
            x, range(s % x.shape[d] if s < 0 else s, (s % x.shape[d] if s < 0 else s) + n), axis=d
        ),
    ),
    "select": ([((5, 4), (0, 2)), ((5, 4), (1, -1)), ((5,), (0, 3))], lambda x, d, i: np.take(x, i, axis=d)),
    "unfold": (
        [((7,), (0, 3, 2)), ((4, 6), (1, 2, 2)), ((4, 6), (0, 4, 1)), ((4, 6), (1, 6, 3))],
        lambda x, d, size, step: np.lib.stride_tricks.sliding_window_view(x, size, axis=d)[
            (slice(None),) * d + (slice(None, None, step),)
        ],
    ),
    "diagonal": (
        [((4, 5), ()), ((4, 5), (1,)), ((4, 5), (-2,)), ((2, 3, 4), (0, 1, 2)), ((3, 3), (5,))],
        lambda x, o=0, a=0, b=1: np.diagonal(x, o, a, b),
    ),
    "alias": ([((3, 4), ()), ((), ())], lambda x: x),
    "clone": ([((3, 4), ()), ((), ()), ((0, 2), ())], lambda x: x.copy()),
    "contiguous": ([((3, 4), ()), ((), ())], lambda x: x.copy()),
    "flatten": (
        [((2, 3, 4), ()), ((2, 3, 4), (1,)), ((2, 3, 4), (0, 1)), ((), ())],
        lambda x, s=0, e=-1: (
            x.reshape(x.shape[:s] + (-1,) + x.shape[e % x.ndim + 1 :]) if x.ndim else x.reshape(1)
        ),
    ),
    "unflatten": (
        [((2, 12), (1, (3, 4))), ((6,), (0, (2, -1)))],
        lambda x, d, s: x.reshape(x.shape[:d] + tuple(s) + x.shape[d % x.ndim + 1 :]),
    ),
    "movedim": ([((2, 3, 4), (0, 2)), ((2, 3, 4), ((0, 1), (2, 0)))], lambda x, s, d: np.moveaxis(x, s, d)),
}


def _view_samples(op, dtype):
    t = _mk(op, dtype)
    cases, _ = _CASES[op.name]
    for shape, args in cases:
        yield SampleInput(t(*shape), args, name=f"{shape} {args}")
    shape, args = cases[0]
    if len(shape) >= 2 and op.name not in ("view",):
        yield SampleInput(transposed(t(*shape)), args, name="transposed input")
    elif len(shape) >= 1 and op.name not in ("view",):
        yield SampleInput(strided(t(*shape)), args, name="strided input")


# PyTorch spellings that are neither torch.<name> nor Tensor.<name>.
_TORCH = {"slice": lambda torch: torch.ops.aten.slice.Tensor, "alias": lambda torch: torch.ops.aten.alias}
for _name, (_cases, _ref) in _CASES.items():
    register(
        OpInfo(
            _name,
            ref=_ref,
            dtypes=ALL,
            sample_inputs=_view_samples,
            result_dtype=same_dtype,
            torch=_TORCH.get(_name, True),
        )
    )


def _as_strided_samples(op, dtype):
    t = _mk(op, dtype)
    x = t(12)
    yield SampleInput(x, ((3, 4), (4, 1)), name="row-major")
    yield SampleInput(x, ((4, 3), (1, 4)), name="column-major")
    yield SampleInput(x, ((3, 3), (2, 1), 1), name="overlapping, offset")
    yield SampleInput(x, ((2, 0), (1, 1)), name="size-0")


def _as_strided_ref(x, size, stride, offset=0):
    item = x.itemsize
    return np.lib.stride_tricks.as_strided(x.reshape(-1)[offset:], size, [s * item for s in stride]).copy()


def _to_samples(op, dtype):
    t = _mk(op, dtype)
    for target in (tp.float32, tp.float64, tp.int32, tp.bool, tp.bfloat16):
        yield SampleInput(t(3, 4), kwargs={"dtype": target}, name=f"to {target}")
    yield SampleInput(transposed(t(3, 4)), kwargs={"dtype": tp.float16}, name="transposed to float16")
    yield SampleInput(t(), kwargs={"dtype": tp.int64}, name="0-d")
    yield SampleInput(t(0, 3), kwargs={"dtype": tp.float64, "copy": True}, name="size-0, copy")


def _to_ref(x, dtype=None, device=None, copy=False):
    if dtype is tp.bool:
        return x != 0
    if not dtype.is_floating_point:
        with np.errstate(all="ignore"):
            return np.trunc(x).astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64)
    return x


def _copy_samples(op, dtype):
    t = _mk(op, dtype)
    yield SampleInput(t(3, 4), (make_tensor((3, 4), tp.float32, rng_for(op.id)),), name="from float32")
    yield SampleInput(t(3, 4), (t(4),), name="broadcast source")
    yield SampleInput(transposed(t(3, 4)), (strided(t(3, 4)),), name="non-contiguous both")
    yield SampleInput(t(), (t(),), name="0-d")


def _copy_ref(x, src):
    out = np.array(np.broadcast_to(src, x.shape))
    if x.dtype == np.bool_:
        return out != 0
    if x.dtype.kind in "iu" and out.dtype.kind == "f":
        out = np.trunc(out)
    return out.astype(x.dtype)


def _fill_samples(op, dtype):
    t = _mk(op, dtype)
    yield SampleInput(t(3, 4), (1,), name="an int")
    yield SampleInput(transposed(t(3, 4)), (True if dtype is tp.bool else 2,), name="transposed")
    yield SampleInput(t(), (0,), name="0-d")
    yield SampleInput(t(2, 2), (tp.tensor(3),), name="0-d tensor value")


register(
    OpInfo(
        "as_strided",
        ref=_as_strided_ref,
        dtypes=ALL,
        sample_inputs=_as_strided_samples,
        result_dtype=same_dtype,
        layout_invariant=False,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(4), ((2,), (-1,))), RuntimeError, "negative strides are not supported"
            )
        ],
    ),
    OpInfo(
        "to",
        op=lambda x, **kw: x.to(**kw),
        ref=_to_ref,
        dtypes=FLOATS + INTS[:2],
        sample_inputs=_to_samples,
        result_dtype=lambda s, d: s.kwargs["dtype"],
        torch=lambda torch: (
            lambda x, dtype, copy=False: x.to(dtype=getattr(torch, str(dtype).rsplit(".", 1)[-1]), copy=copy)
        ),
    ),
    OpInfo(
        "copy",
        op=lambda x, src: x.clone().copy_(src),
        ref=_copy_ref,
        dtypes=ALL,
        sample_inputs=_copy_samples,
        inplace=lambda x, src: x.copy_(src),
        result_dtype=same_dtype,
        covers=("copy_",),
        torch=lambda torch: lambda x, src: x.clone().copy_(src),
    ),
    OpInfo(
        "fill",
        xfails={
            ("meta", None): "fill_ with a 0-d tensor value converts it to a Scalar with item(), which meta "
            "tensors refuse (PyTorch has fill_.Tensor)"
        },
        op=lambda x, v: x.clone().fill_(v),
        ref=lambda x, v: np.full_like(x, v),
        dtypes=ALL,
        sample_inputs=_fill_samples,
        inplace=lambda x, v: x.fill_(v),
        result_dtype=same_dtype,
        covers=("fill_",),
        torch=lambda torch: lambda x, v: x.clone().fill_(v),
    ),
)


# Factories: arguments in, a new tensor out.
def _factory_samples(cases):
    def gen(op, dtype):
        for args, kw, name in cases:
            yield SampleInput(args[0], args[1:], {**kw, "dtype": dtype}, name=name)

    return gen


def _with_dtype(ref):
    return lambda *a, dtype=None, **kw: ref(*a, **kw)


register(
    OpInfo(
        "arange",
        ref=_with_dtype(lambda *a: np.arange(*a)),
        dtypes=FLOATS[:2] + INTS[:2],
        sample_inputs=_factory_samples(
            [
                ((0, 5), {}, "0..5"),
                ((1, 10, 3), {}, "step 3"),
                ((5, 0, -2), {}, "negative step"),
                ((3, 3), {}, "empty"),
            ]
        ),
        result_dtype=lambda s, d: d,
        differentiable=False,
        meta=False,
    ),
    OpInfo(
        "linspace",
        ref=_with_dtype(lambda a, b, n: np.linspace(a, b, n)),
        dtypes=FLOATS[:2],
        sample_inputs=_factory_samples(
            [
                ((0, 1, 5), {}, "5 steps"),
                ((-2, 2, 1), {}, "one step"),
                ((3, -3, 7), {}, "decreasing"),
                ((0, 1, 0), {}, "no steps"),
            ]
        ),
        result_dtype=lambda s, d: d,
        differentiable=False,
        meta=False,
    ),
    OpInfo(
        "logspace",
        ref=_with_dtype(lambda a, b, n, base=10.0: np.logspace(a, b, n, base=base)),
        dtypes=FLOATS[:2],
        sample_inputs=_factory_samples([((0, 2, 5), {}, "base 10"), ((1, -1, 3), {"base": 2.0}, "base 2")]),
        result_dtype=lambda s, d: d,
        differentiable=False,
        meta=False,
    ),
    OpInfo(
        "eye",
        ref=_with_dtype(lambda n, m=None: np.eye(n, m)),
        dtypes=ALL,
        sample_inputs=_factory_samples([((3,), {}, "square"), ((2, 4), {}, "wide"), ((0,), {}, "empty")]),
        result_dtype=lambda s, d: d,
        differentiable=False,
        meta=False,
    ),
    OpInfo(
        "full",
        ref=_with_dtype(lambda size, v: np.full(size, v)),
        dtypes=FLOATS + INTS[:2],
        sample_inputs=_factory_samples(
            [(((2, 3), 7), {}, "2x3 of 7"), (((), 1), {}, "0-d"), (((0, 2), 4), {}, "size-0")]
        ),
        result_dtype=lambda s, d: d,
        differentiable=False,
        meta=False,
    ),
    OpInfo(
        "scalar_tensor",
        ref=_with_dtype(lambda v: np.array(v)),
        dtypes=FLOATS + INTS[:2],
        sample_inputs=_factory_samples([((3,), {}, "3"), ((-1,), {}, "-1")]),
        result_dtype=lambda s, d: d,
        differentiable=False,
        meta=False,
    ),
)
