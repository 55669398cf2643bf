"""Op database: advanced indexing (kernels/index_advanced.cpp, _indexing.py): ``x[subscript]`` and
``x[subscript] = v``, index/index_put (accumulate), masked_fill/masked_select/masked_scatter, take, put_,
nonzero and argwhere.

Subscripts mix integers, slices, None, Ellipsis, integer tensors (broadcast against each other, negative
entries) and bool masks, in the combinations where NumPy's placement of the advanced dims agrees with
PyTorch's (adjacent advanced indices; separated ones go first in both).
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import ALL, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, long_dtype, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

NUMERIC = FLOATS + INTS


def _subscripts(rng):
    """Subscripts for a (4, 5, 6) tensor, each a tuple (or a single index)."""
    it = lambda *shape, high=4, low=0: tp.tensor(rng.integers(low, high, shape).astype(np.int64))  # noqa: E731
    return [
        ("int", (1,)),
        ("negative int, slice", (-1, slice(1, 4))),
        ("step slice", (slice(None), slice(0, 5, 2))),
        ("None and Ellipsis", (None, Ellipsis, 2)),
        ("int tensor", (it(3),)),
        ("negative int tensor", (it(2, 2, low=-4),)),
        ("two tensors broadcast", (it(3, 1), it(1, 2, high=5))),
        ("tensor, slice", (it(2), slice(1, 3))),
        ("slice, tensor, tensor", (slice(None), it(2, high=5), it(2, high=6))),
        ("separated tensors go first", (it(2), slice(None), it(2, high=6))),
        ("bool mask over dim 0", (tp.tensor(rng.random(4) < 0.5),)),
        ("bool mask over two dims", (tp.tensor(rng.random((4, 5)) < 0.5),)),
        ("empty tensor index", (tp.tensor(np.zeros(0, np.int64)),)),
        ("0-d tensor index", (tp.tensor(2),)),
    ]


def _getitem_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5, 6), dtype, rng)
    for name, sub in _subscripts(rng):
        yield SampleInput(x, (sub,), name=name)
    yield SampleInput(transposed(x), ((slice(None), tp.tensor([0, 2])),), name="transposed input")
    yield SampleInput(make_tensor((), dtype, rng), ((None,),), name="0-d input, None")


def _getitem_ref(x, sub):
    return x[sub]


def _getitem_errors(op):
    x = tp.ones(3, 4)
    yield ErrorInput(
        SampleInput(x, ((5,),)), IndexError, "index 5 is out of bounds for dimension 0 with size 3", False
    )
    yield ErrorInput(
        SampleInput(x, ((tp.tensor([0, 4]),),)),
        IndexError,
        "index 4 is out of bounds for dimension 0 with size 3",
        False,
    )
    yield ErrorInput(SampleInput(x, ((0, 0, 0),)), IndexError, "too many indices", False)


def _setitem(x, sub, value):
    """``x[sub] = value`` on a copy that keeps ``x``'s layout; returns the copy."""
    y = x.clone()
    y[sub] = value
    return y


def _writes_each_element_once(shape, sub) -> bool:
    """Whether ``x[sub] = v`` names every element of ``x`` at most once (NumPy decides, on flat positions)."""
    np_sub = tuple(s.numpy() if isinstance(s, tp.Tensor) else s for s in sub)
    hit = np.arange(int(np.prod(shape))).reshape(shape)[np_sub]
    return np.unique(hit).size == hit.size


def _setitem_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5, 6), dtype, rng)
    for name, sub in _subscripts(rng):
        if not _writes_each_element_once(x.shape, sub):
            continue  # repeated indices: which write wins is unspecified in PyTorch (and differs on CUDA)
        shape = tuple(x[sub].shape)
        yield SampleInput(x, (sub, make_tensor(shape, dtype, rng)), name=name)
        yield SampleInput(x, (sub, 1 if not dtype.is_floating_point else 0.5), name=name + ", a number")
    yield SampleInput(x, ((slice(None), 0), make_tensor((6,), dtype, rng)), name="value broadcast")
    yield SampleInput(transposed(x), ((1,), make_tensor((6, 5), dtype, rng).t()), name="transposed")


def _setitem_ref(x, sub, value):
    y = x.copy()
    y[sub] = value
    return y


register(
    OpInfo(
        "__getitem__",
        op=lambda x, sub: x[sub],
        ref=_getitem_ref,
        dtypes=ALL,
        sample_inputs=_getitem_samples,
        result_dtype=same_dtype,
        error_inputs=_getitem_errors,
        torch=lambda torch: lambda x, sub: x[sub],
        # P10 refuses tensor indices on meta (NotImplementedError), even integer ones whose result shape
        # is known; PyTorch computes those shapes.
        meta=False,
        covers=("index",),
    ),
    OpInfo(
        "__setitem__",
        op=_setitem,
        ref=_setitem_ref,
        dtypes=ALL,
        sample_inputs=_setitem_samples,
        result_dtype=same_dtype,
        torch=lambda torch: _setitem,
        # P10 refuses tensor indices on meta (NotImplementedError), even integer ones whose result shape
        # is known; PyTorch computes those shapes.
        meta=False,
        differentiable=True,
    ),
)


# index / index_put with lists of index tensors (None skips a dim).
def _index_put_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5), dtype, rng)
    i0 = tp.tensor(rng.permutation(4)[:3].astype(np.int64))
    i1 = tp.tensor(rng.permutation(5)[:3].astype(np.int64))
    yield SampleInput(x, ([i0, i1], make_tensor((3,), dtype, rng)), name="two index tensors")
    yield SampleInput(x, ([i0], make_tensor((3, 5), dtype, rng)), name="one index tensor")
    yield SampleInput(x, ([None, i1], make_tensor((4, 3), dtype, rng)), name="None skips dim 0")
    yield SampleInput(transposed(x), ([i0, i1], make_tensor((), dtype, rng)), name="0-d value broadcast")
    if dtype is not tp.bool:
        rep = tp.tensor([0, 1, 0, 3])
        yield SampleInput(x, ([rep], make_tensor((4, 5), dtype, rng), True), name="accumulate with repeats")
    mask = tp.tensor(rng.random((4, 5)) < 0.5)
    yield SampleInput(x, ([mask], make_tensor((), dtype, rng)), name="bool mask")


def _index_put_ref(x, indices, values, accumulate=False):
    y = x.copy()
    sub = tuple(slice(None) if i is None else i for i in indices)
    if accumulate:
        np.add.at(y, sub, np.broadcast_to(values, y[sub].shape))
    else:
        y[sub] = values
    return y


def _index_ref(x, indices):
    return x[tuple(slice(None) if i is None else i for i in indices)]


def _index_samples(op, dtype):
    for s in _index_put_samples(op, dtype):
        yield SampleInput(s.input, (s.args[0],), name=s.name)


register(
    OpInfo(
        "index_put",
        ref=_index_put_ref,
        dtypes=ALL,
        sample_inputs=_index_put_samples,
        inplace=True,
        result_dtype=same_dtype,
        tolerances={tp.bfloat16: (3e-2, 3e-2)},
    ),
    OpInfo(
        "index",
        op=tp.ops.index,
        ref=_index_ref,
        dtypes=ALL,
        sample_inputs=_index_samples,
        result_dtype=same_dtype,
        torch=lambda torch: torch.ops.aten.index.Tensor,
        # P10 refuses tensor indices on meta (NotImplementedError), even integer ones whose result shape
        # is known; PyTorch computes those shapes.
        meta=False,
    ),
)


# masked_fill / masked_select / masked_scatter
def _masked_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 4), dtype, rng)

    def mask(*shape):
        return tp.tensor(rng.random(shape) < 0.5)

    def arg():
        if op.name == "masked_fill":
            return (2 if not dtype.is_floating_point else -1.5,) if dtype is not tp.bool else (True,)
        if op.name == "masked_scatter":
            return (make_tensor((12,), dtype, rng),)
        return ()

    yield SampleInput(x, (mask(3, 4), *arg()), name="same shape")
    yield SampleInput(x, (mask(4), *arg()), name="mask broadcast")
    yield SampleInput(transposed(x), (mask(4, 3).t(), *arg()), name="transposed")
    yield SampleInput(strided(x), (mask(3, 4), *arg()), name="strided")
    yield SampleInput(make_tensor((), dtype, rng), (tp.tensor(True), *arg()), name="0-d")
    yield SampleInput(make_tensor((0, 4), dtype, rng), (mask(0, 4), *arg()), name="size-0")
    if op.name == "masked_fill":
        yield SampleInput(x, (mask(3, 4), make_tensor((), dtype, rng)), name="0-d tensor value")


def _masked_fill_ref(x, mask, value):
    return np.where(mask, value, x)


def _masked_select_ref(x, mask):
    x, mask = np.broadcast_arrays(x, mask)
    return x[mask]


def _masked_scatter_ref(x, mask, source):
    y = np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, mask.shape)))
    m = np.broadcast_to(mask, y.shape)
    y[m] = source.reshape(-1)[: int(m.sum())]
    return y


def _masked_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(3), (tp.ones(3), 1.0)), RuntimeError, "masked_fill_? only supports boolean masks"
    )


register(
    OpInfo(
        "masked_fill",
        ref=_masked_fill_ref,
        dtypes=ALL,
        sample_inputs=_masked_samples,
        inplace=True,
        result_dtype=same_dtype,
        error_inputs=_masked_errors,
    ),
    OpInfo(
        "masked_select",
        ref=_masked_select_ref,
        dtypes=ALL,
        sample_inputs=_masked_samples,
        result_dtype=same_dtype,
        meta=False,
    ),
    OpInfo(
        "masked_scatter",
        ref=_masked_scatter_ref,
        dtypes=ALL,
        sample_inputs=_masked_samples,
        inplace=True,
        result_dtype=same_dtype,
    ),
)


# take / put_ (flat indices), nonzero / argwhere.
def _take_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 4), dtype, rng)
    yield SampleInput(x, (tp.tensor(rng.integers(-12, 12, (2, 3)).astype(np.int64)),), name="2-d, negative")
    yield SampleInput(transposed(x), (tp.tensor([0, 5, 11]),), name="transposed: row-major order of values")
    yield SampleInput(x, (tp.tensor(np.zeros(0, np.int64)),), name="empty index")
    yield SampleInput(make_tensor((), dtype, rng), (tp.tensor([0, 0]),), name="0-d")


def _put_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((3, 4), dtype, rng)
    idx = tp.tensor(rng.permutation(12)[:5].astype(np.int64))
    yield SampleInput(x, (idx, make_tensor((5,), dtype, rng)), name="unique indices")
    yield SampleInput(transposed(x), (idx - 12, make_tensor((5,), dtype, rng)), name="transposed, negative")
    if dtype is not tp.bool:
        yield SampleInput(x, (tp.tensor([1, 1, 2]), make_tensor((3,), dtype, rng), True), name="accumulate")


def _put_ref(x, index, source, accumulate=False):
    y = x.copy()
    flat = y.reshape(-1)
    if accumulate:
        np.add.at(flat, index, source)
    else:
        flat[index] = source
    return flat.reshape(x.shape)


def _nonzero_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    for shape in [(3, 4), (5,), (), (0, 3), (2, 3, 2)]:
        yield SampleInput(make_tensor(shape, dtype, rng, low=-1, high=1), name=f"{shape}")
    yield SampleInput(transposed(make_tensor((3, 4), dtype, rng, low=-1, high=1)), name="transposed")


def _nonzero_ref(x):
    return np.argwhere(x)


register(
    OpInfo(
        "take",
        ref=lambda x, i: x.reshape(-1)[i],
        dtypes=ALL,
        sample_inputs=_take_samples,
        result_dtype=same_dtype,
        error_inputs=lambda op: [
            ErrorInput(SampleInput(tp.ones(2, 2), (tp.tensor([4]),)), IndexError, "out of (bounds|range)")
        ],
    ),
    OpInfo(
        "put",
        op=lambda x, *a: x.clone().put_(*a),
        ref=_put_ref,
        dtypes=ALL,
        sample_inputs=_put_samples,
        inplace=lambda x, *a: x.put_(*a),
        result_dtype=same_dtype,
        covers=("put_",),
        torch=lambda torch: lambda x, *a: x.clone().put_(*a),
    ),
    OpInfo(
        "nonzero",
        ref=_nonzero_ref,
        dtypes=ALL,
        sample_inputs=_nonzero_samples,
        result_dtype=long_dtype,
        meta=False,
        differentiable=False,
    ),
    OpInfo(
        "argwhere",
        ref=_nonzero_ref,
        dtypes=ALL,
        sample_inputs=_nonzero_samples,
        result_dtype=long_dtype,
        meta=False,
        differentiable=False,
    ),
)
