"""Op database: indexing (kernels/index.cpp, index_advanced.cpp, _indexing.py): gather/scatter and their
reductions, index_select/add/copy/fill, index/index_put, masked_fill/select/scatter, take, take_along_dim,
put_, nonzero/argwhere, and ``x[...]`` / ``x[...] = v`` through the Python operators.

Index tensors are random but valid (including repeats where the op's result does not depend on their order)
and, where the op allows it, negative. References are NumPy fancy indexing and ``np.add.at``-style loops.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import ALL, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

NUMERIC = FLOATS + INTS


def _idx(rng, shape, high, low=0):
    return tp.tensor(rng.integers(low, high, shape).astype(np.int64))


def _perm_idx(rng, shape, dim_size, dim):
    """Indices without repeats along ``dim`` (scatter's result is then independent of write order)."""
    out = np.empty(shape, np.int64)
    moved = np.moveaxis(out, dim, -1)
    for pos in np.ndindex(moved.shape[:-1]):
        moved[pos] = rng.permutation(dim_size)[: moved.shape[-1]]
    return tp.tensor(out)


# gather / take_along_dim
def _gather_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5), dtype, rng)
    yield SampleInput(x, (0, _idx(rng, (3, 5), 4)), name="dim 0")
    yield SampleInput(x, (1, _idx(rng, (4, 2), 5)), name="dim 1")
    yield SampleInput(x, (1, _idx(rng, (2, 3), 5)), name="index smaller than input")
    yield SampleInput(x, (0, _idx(rng, (0, 5), 4)), name="size-0 index")
    yield SampleInput(make_tensor((), dtype, rng), (0, tp.tensor(0)), name="0-d")
    yield SampleInput(transposed(x), (1, _idx(rng, (4, 3), 5).t().contiguous().t()), name="transposed")


def _gather_ref(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    index = np.where(index < 0, index + x.shape[dim], index)
    return np.take_along_axis(
        x[tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(index.shape))], index, axis=dim
    )


def _gather_errors(op):
    x = tp.ones(3, 4)
    yield ErrorInput(
        SampleInput(x, (1, tp.tensor([[0, 4]]))),
        RuntimeError,  # PyTorch's type for gather and scatter (index_select's is IndexError)
        r"index 4 is out of bounds for dimension 1 "
        r"with size 4",
    )
    yield ErrorInput(
        SampleInput(x, (0, tp.tensor([[0.0]]))), RuntimeError, "gather.*Expected dtype int64 for index"
    )


def _take_along_ref(x, indices, dim=None):
    if dim is None:
        return x.reshape(-1)[indices.reshape(-1)]
    return np.take_along_axis(x, indices, axis=dim)  # broadcasts the other dims, as PyTorch does


def _take_along_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5), dtype, rng)
    yield SampleInput(x, (_idx(rng, (2, 5), 4), 0), name="dim 0")
    yield SampleInput(x, (_idx(rng, (4, 3), 5), 1), name="dim 1")
    yield SampleInput(x, (_idx(rng, (6,), 20),), name="flattened")
    yield SampleInput(transposed(x), (_idx(rng, (4, 1), 5), -1), name="transposed")


register(
    OpInfo(
        "gather",
        ref=_gather_ref,
        dtypes=ALL,
        sample_inputs=_gather_samples,
        result_dtype=same_dtype,
        error_inputs=_gather_errors,
    ),
    OpInfo(
        "take_along_dim",
        ref=_take_along_ref,
        dtypes=ALL,
        sample_inputs=_take_along_samples,
        result_dtype=same_dtype,
    ),
)


# scatter / scatter_add / scatter_reduce: in-place forms on the same samples.
def _scatter_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5), dtype, rng)
    src = make_tensor((3, 5), dtype, rng)
    unique = op.name == "scatter" and op.variant != "reduce"
    mk = (
        (lambda shape, n, d: _perm_idx(rng, shape, n, d))
        if unique
        else (lambda shape, n, d: _idx(rng, shape, n))
    )
    if op.variant == "value":
        yield SampleInput(
            x, (0, mk((3, 5), 4, 0), 2.0 if dtype.is_floating_point else 2), name="value, dim 0"
        )
        yield SampleInput(transposed(x), (1, mk((4, 2), 5, 1), 1), name="value, transposed")
        return
    extra = {"reduce": op.variant} if op.variant in ("add", "multiply") else {}
    yield SampleInput(x, (0, mk((3, 5), 4, 0), src), dict(extra), name="dim 0")
    yield SampleInput(
        x, (1, mk((4, 3), 5, 1), make_tensor((4, 4), dtype, rng)), dict(extra), name="dim 1, src bigger"
    )
    yield SampleInput(transposed(x), (1, mk((2, 5), 5, 1), strided(src)), dict(extra), name="non-contiguous")
    yield SampleInput(x, (0, mk((0, 5), 4, 0), src), dict(extra), name="size-0 index")


def _scatter_ref(x, dim, index, src, reduce=None, include_self=True):
    out = x.copy()
    src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src
    touched = np.zeros(out.shape, bool)
    for pos in np.ndindex(index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        tgt = tuple(tgt)
        v = src[pos]
        if reduce is None:
            out[tgt] = v
        elif reduce in ("add", "sum"):
            out[tgt] = (out[tgt] if include_self or touched[tgt] else 0) + v
        elif reduce in ("multiply", "prod"):
            out[tgt] = (out[tgt] if include_self or touched[tgt] else 1) * v
        elif reduce == "amax":
            out[tgt] = max(out[tgt], v) if include_self or touched[tgt] else v
        elif reduce == "amin":
            out[tgt] = min(out[tgt], v) if include_self or touched[tgt] else v
        touched[tgt] = True
    return out


def _scatter_mean_ref(x, dim, index, src, reduce, include_self=True):
    total = _scatter_ref(x, dim, index, src, "sum", include_self)
    count = _scatter_ref(
        np.ones_like(x, np.int64) if include_self else np.zeros_like(x, np.int64),
        dim,
        index,
        np.ones(index.shape, np.int64),
        "sum",
        True,
    )
    with np.errstate(all="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), x)
    return mean if x.dtype.kind == "f" else np.floor_divide(total, np.maximum(count, 1)).astype(x.dtype)


def _scatter_reduce_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((4, 5), dtype, rng)
    for include in (True, False):
        src = make_tensor((6, 5), dtype, rng, low=-3, high=3)
        yield SampleInput(
            x,
            (0, _idx(rng, (6, 5), 4), src, op.variant),
            {"include_self": include},
            name=f"include_self={include}",
        )
    yield SampleInput(
        transposed(x),
        (1, _idx(rng, (4, 3), 5), strided(make_tensor((4, 3), dtype, rng)), op.variant),
        name="non-contiguous",
    )


def _scatter_errors(op):
    yield ErrorInput(
        SampleInput(tp.zeros(3), (0, tp.tensor([3]), tp.ones(1))),
        RuntimeError,
        r"index 3 is out of bounds for dimension 0 with size 3",
    )


register(
    OpInfo(
        "scatter",
        ref=_scatter_ref,
        dtypes=ALL,
        sample_inputs=_scatter_samples,
        inplace=True,
        result_dtype=same_dtype,
        error_inputs=_scatter_errors,
    ),
    OpInfo(
        "scatter",
        variant="value",
        ref=_scatter_ref,
        dtypes=NUMERIC,
        sample_inputs=_scatter_samples,
        inplace=True,
        result_dtype=same_dtype,
    ),
    OpInfo(
        "scatter",
        variant="add",
        ref=_scatter_ref,
        dtypes=NUMERIC,
        sample_inputs=_scatter_samples,
        inplace=True,
        result_dtype=same_dtype,
        tolerances={tp.bfloat16: (3e-2, 3e-2)},
    ),
    OpInfo(
        "scatter_add",
        ref=lambda x, d, i, s: _scatter_ref(x, d, i, s, "add"),
        dtypes=NUMERIC,
        sample_inputs=_scatter_samples,
        inplace=True,
        result_dtype=same_dtype,
        tolerances={tp.bfloat16: (3e-2, 3e-2)},
    ),
)


for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    register(
        OpInfo(
            "scatter_reduce",
            variant=_reduce,
            ref=_scatter_mean_ref if _reduce == "mean" else _scatter_ref,
            dtypes=FLOATS + (tp.int64, tp.int32),
            sample_inputs=_scatter_reduce_samples,
            inplace=True,
            result_dtype=same_dtype,
            tolerances={tp.bfloat16: (3e-2, 3e-2), tp.float16: (4e-3, 4e-3)},
        )
    )


# index_select / index_add / index_copy / index_fill
def _index_dim_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    x = make_tensor((5, 4), dtype, rng)
    unique = op.name in ("index_copy",)

    def ix(n, size):
        return tp.tensor(rng.permutation(size)[:n].astype(np.int64)) if unique else _idx(rng, (n,), size)

    def extra(dim, n):
        shape = [5, 4]
        shape[dim] = n
        if op.name == "index_select":
            return ()
        if op.name == "index_fill":
            return (2 if not dtype.is_floating_point else -1.5,)
        return (make_tensor(tuple(shape), dtype, rng),)

    yield SampleInput(x, (0, ix(3, 5), *extra(0, 3)), name="dim 0")
    yield SampleInput(x, (1, ix(2, 4), *extra(1, 2)), name="dim 1")
    yield SampleInput(x, (-1, ix(0, 4), *extra(1, 0)), name="empty index")
    yield SampleInput(transposed(x), (1, ix(3, 4), *extra(1, 3)), name="transposed")
    yield SampleInput(strided(x), (0, ix(4, 5), *extra(0, 4)), name="strided")
    if op.name == "index_add":
        yield SampleInput(x, (0, ix(3, 5), *extra(0, 3)), {"alpha": 2}, name="alpha")
    if op.name == "index_select":
        yield SampleInput(make_tensor((), dtype, rng), (0, tp.tensor([0])), name="0-d")


def _index_select_ref(x, dim, index):
    return np.take(x, index, axis=dim) if x.ndim else x.copy()  # a 0-d input stays 0-d


def _index_add_ref(x, dim, index, source, alpha=1):
    out = x.copy()
    moved = np.moveaxis(out, dim, 0)
    src = np.moveaxis(source, dim, 0)
    for i, j in enumerate(index):
        moved[j] = moved[j] + alpha * src[i]
    return out


def _index_copy_ref(x, dim, index, source):
    out = x.copy()
    np.moveaxis(out, dim, 0)[index] = np.moveaxis(source, dim, 0)
    return out


def _index_fill_ref(x, dim, index, value):
    out = x.copy()
    np.moveaxis(out, dim, 0)[index] = value
    return out


def _index_select_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(()), (0, tp.tensor([0, 0]))), IndexError, "Index to scalar can have only 1"
    )
    yield ErrorInput(
        SampleInput(tp.ones(3, 2), (0, tp.tensor([3]))),
        IndexError,
        r"index 3 is out of bounds for dimension 0 with size 3",
    )


register(
    OpInfo(
        "index_select",
        ref=_index_select_ref,
        dtypes=ALL,
        sample_inputs=_index_dim_samples,
        result_dtype=same_dtype,
        error_inputs=_index_select_errors,
    ),
    OpInfo(
        "index_add",
        ref=_index_add_ref,
        dtypes=NUMERIC,
        sample_inputs=_index_dim_samples,
        inplace=True,
        result_dtype=same_dtype,
        tolerances={tp.bfloat16: (3e-2, 3e-2)},
    ),
    OpInfo(
        "index_copy",
        ref=_index_copy_ref,
        dtypes=ALL,
        sample_inputs=_index_dim_samples,
        inplace=True,
        result_dtype=same_dtype,
    ),
    OpInfo(
        "index_fill",
        ref=_index_fill_ref,
        dtypes=NUMERIC,
        sample_inputs=_index_dim_samples,
        inplace=True,
        result_dtype=same_dtype,
    ),
)
