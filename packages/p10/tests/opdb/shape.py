"""Op database: joining, splitting and rearranging copies (kernels/join.cpp, rearrange.cpp): cat and its
spellings, stack and the h/v/d stacks, atleast_nd, tensor_split/split/chunk/unbind, broadcast_tensors/_to,
meshgrid, pad, flip, roll, rot90, repeat, tile, repeat_interleave, tril/triu, diag, diag_embed, diagflat.

Views and copies (view.cpp, copy.cpp) are in views.py. References are the NumPy function of the same idea
(``np.concatenate``, ``np.pad`` with PyTorch's last-dim-first pad order, ``np.array_split``…).
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import ALL, FLOATS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed


def _t(rng, dtype):
    return lambda *shape: make_tensor(shape, dtype, rng)


def _first_dtype(sample, dtype):
    return sample.input[0].dtype if isinstance(sample.input, (list, tuple)) else sample.input.dtype


def _cat_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    yield SampleInput([t(2, 3), t(1, 3), t(4, 3)], (0,), name="dim 0")
    yield SampleInput([t(2, 3), t(2, 1)], (1,), name="dim 1")
    yield SampleInput([t(2, 3), t(2, 2)], (-1,), name="dim -1")
    yield SampleInput([t(2, 3)], name="one tensor")
    yield SampleInput([t(2, 3), t(0, 3)], name="a size-0 part")
    yield SampleInput([t(0), t(2, 3)], name="legacy 1-d size-0 part is skipped")
    yield SampleInput([transposed(t(3, 4)), strided(t(2, 4))], name="non-contiguous parts")
    if dtype is not tp.float64:
        yield SampleInput([t(2, 3), make_tensor((1, 3), tp.float64, rng_for(op.id))], name="mixed: promotes")


def _cat_ref(ts, dim=0):
    parts = [a for a in ts if not (a.ndim == 1 and a.shape[0] == 0)] or ts
    return np.concatenate(parts, axis=dim)


def _cat_dtype(sample, dtype):
    d = sample.input[0].dtype
    for x in sample.input[1:]:
        d = tp.promote_types(d, x.dtype)
    return d


def _cat_errors(op):
    yield ErrorInput(
        SampleInput([tp.ones(())]), RuntimeError, "zero-dimensional tensor.*cannot be concatenated"
    )
    yield ErrorInput(
        SampleInput([tp.ones(2, 3), tp.ones(2, 4)]), RuntimeError, "Sizes of tensors must match", False
    )
    # PyTorch's wording names torch.cat() for all three spellings.
    yield ErrorInput(SampleInput([]), RuntimeError, r"cat\(\): expected a non-empty list of Tensors", False)


for _name in ("cat", "concat", "concatenate"):
    register(
        OpInfo(
            _name,
            ref=_cat_ref,
            dtypes=ALL,
            sample_inputs=_cat_samples,
            result_dtype=_cat_dtype,
            error_inputs=_cat_errors,
        )
    )


def _stack_samples(op, dtype, dims=True):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    for shape in [(2, 3), (3,), (), (0, 2), (1, 1, 2)]:
        yield SampleInput([t(*shape), t(*shape), t(*shape)], name=f"{shape}")
    if dims:
        yield SampleInput([t(2, 3), t(2, 3)], (1,), name="dim 1")
        yield SampleInput([t(2, 3), t(2, 3)], (-1,), name="dim -1")
    yield SampleInput([transposed(t(3, 4)), strided(t(3, 4))], name="non-contiguous")


def _stack_errors(op):
    yield ErrorInput(
        SampleInput([tp.ones(2, 3), tp.ones(3, 2)]),
        RuntimeError,
        "stack expects each tensor to be equal size",
    )


register(
    OpInfo(
        "stack",
        ref=lambda ts, dim=0: np.stack(ts, axis=dim),
        dtypes=ALL,
        sample_inputs=_stack_samples,
        result_dtype=_first_dtype,
        error_inputs=_stack_errors,
    )
)


def _hvd_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    yield from _stack_samples(op, dtype, dims=False)
    if op.name != "dstack":  # dstack's parts must agree in their first two dims
        yield SampleInput(
            [t(3), t(2)] if op.name == "hstack" else [t(2, 3), t(1, 3)], name="different lengths"
        )


for _name, _np in [
    ("hstack", np.hstack),
    ("vstack", np.vstack),
    ("row_stack", np.vstack),
    ("dstack", np.dstack),
]:
    register(OpInfo(_name, ref=_np, dtypes=ALL, sample_inputs=_hvd_samples, result_dtype=_first_dtype))


def _atleast_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    for shape in [(), (3,), (2, 3), (2, 3, 4), (0,), (1, 2, 3, 1)]:
        yield SampleInput(t(*shape), name=f"{shape}")
    yield SampleInput([t(), t(2), t(2, 3)], name="a list")
    yield SampleInput(transposed(t(3, 4)), name="transposed")


def _atleast_ref(fn):
    def ref(x):
        r = fn(*x) if isinstance(x, list) else fn(x)
        return list(r) if isinstance(x, list) else r

    return ref


for _name, _np in [
    ("atleast_1d", np.atleast_1d),
    ("atleast_2d", np.atleast_2d),
    ("atleast_3d", np.atleast_3d),
]:
    register(
        OpInfo(
            _name,
            ref=_atleast_ref(_np),
            dtypes=ALL,
            sample_inputs=_atleast_samples,
            result_dtype=_first_dtype,
        )
    )


# Splitting: tensor_split (sections or indices), split (size or sizes), split_with_sizes, chunk, unbind.
def _split_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    x = t(7, 4)
    if op.name == "tensor_split":
        yield SampleInput(x, (3,), name="3 sections of 7")
        yield SampleInput(x, ([1, 5],), name="indices")
        yield SampleInput(x, ([2, 9],), {"dim": 0}, name="an index past the end")
        yield SampleInput(x, (3, 1), name="sections along dim 1")
        yield SampleInput(x, (9,), name="more sections than elements")
    elif op.name == "split":
        yield SampleInput(x, (3,), name="split_size 3")
        yield SampleInput(x, ([2, 5],), name="sizes")
        yield SampleInput(x, (2, 1), name="dim 1")
    elif op.name == "split_with_sizes":
        yield SampleInput(x, ([2, 5],), name="sizes")
        yield SampleInput(x, ([4, 0, 3],), name="an empty piece")
        yield SampleInput(x, ([1, 3], 1), name="dim 1")
        yield SampleInput(x, ([7],), name="one piece")
        yield SampleInput(transposed(t(4, 7)), ([3, 4], -1), name="transposed, negative dim")
        return
    elif op.name == "chunk":
        yield SampleInput(x, (3,), name="3 chunks of 7")
        yield SampleInput(x, (4, 1), name="dim 1")
        yield SampleInput(x, (10,), name="more chunks than elements")
    else:
        yield SampleInput(x, name="dim 0")
        yield SampleInput(x, (1,), name="dim 1")
        yield SampleInput(t(0, 3), (1,), name="size-0")
    yield SampleInput(transposed(t(4, 7)), (2,) if op.name != "unbind" else (), name="transposed")


def _tensor_split_ref(x, spec, dim=0):
    return list(np.array_split(x, spec, axis=dim))


def _split_ref(x, spec, dim=0):
    if isinstance(spec, int):
        spec = list(range(spec, x.shape[dim], spec))
    else:
        spec = list(np.cumsum(spec)[:-1])
    return list(np.split(x, spec, axis=dim))


def _chunk_ref(x, chunks, dim=0):
    size = -(-x.shape[dim] // chunks)
    return list(np.split(x, list(range(size, x.shape[dim], size)), axis=dim))


def _unbind_ref(x, dim=0):
    return [np.take(x, i, axis=dim) for i in range(x.shape[dim])]


register(
    OpInfo(
        "tensor_split", ref=_tensor_split_ref, dtypes=ALL, sample_inputs=_split_samples, result_dtype=None
    ),
    OpInfo("split", ref=_split_ref, dtypes=ALL, sample_inputs=_split_samples, meta=True),
    OpInfo("split_with_sizes", ref=_split_ref, dtypes=ALL, sample_inputs=_split_samples, meta=True),
    OpInfo("chunk", ref=_chunk_ref, dtypes=ALL, sample_inputs=_split_samples),
    OpInfo("unbind", ref=_unbind_ref, dtypes=ALL, sample_inputs=_split_samples),
)


def _bcast_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    if op.name == "broadcast_to":
        yield SampleInput(t(3, 1), ((3, 4),), name="(3,1) to (3,4)")
        yield SampleInput(t(), ((2, 3),), name="0-d")
        yield SampleInput(t(4), ((2, 0, 4),), name="to size-0")
        yield SampleInput(t(3, 1), ((2, -1, 5),), name="-1 keeps a dim")
        yield SampleInput(transposed(t(3, 4)), ((2, 3, 4),), name="transposed")
    else:
        yield SampleInput([t(3, 1), t(4), t()], name="three")
        yield SampleInput([t(0, 1), t(1, 3)], name="size-0")
        yield SampleInput([transposed(t(3, 4)), t(1, 4)], name="transposed")


def _bcast_errors(op):
    yield ErrorInput(SampleInput(tp.ones(3), ((4,),)), RuntimeError, "The expanded size of the tensor", False)


register(
    OpInfo(
        "broadcast_to",
        ref=lambda x, s: np.broadcast_to(
            x, tuple(d if d != -1 else x.shape[i - len(s) + x.ndim] for i, d in enumerate(s))
        ),
        dtypes=ALL,
        sample_inputs=_bcast_samples,
        result_dtype=same_dtype,
        error_inputs=_bcast_errors,
    ),
    OpInfo(
        "broadcast_tensors",
        ref=lambda ts: list(np.broadcast_arrays(*ts)),
        dtypes=ALL,
        sample_inputs=_bcast_samples,
        torch=lambda torch: lambda ts: torch.broadcast_tensors(*ts),
    ),
)


def _meshgrid_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    yield SampleInput([t(3), t(4)], kwargs={"indexing": "ij"}, name="ij")
    yield SampleInput([t(3), t(4), t(2)], kwargs={"indexing": "xy"}, name="xy, three")
    yield SampleInput([t(0), t(2)], kwargs={"indexing": "ij"}, name="size-0")
    yield SampleInput([t(), t(3)], kwargs={"indexing": "ij"}, name="0-d is one element")


register(
    OpInfo(
        "meshgrid",
        ref=lambda ts, indexing="ij": list(np.meshgrid(*[np.atleast_1d(a) for a in ts], indexing=indexing)),
        dtypes=ALL,
        sample_inputs=_meshgrid_samples,
    )
)


# pad: PyTorch's pad lists the last dim first, (left, right, top, bottom, …).
def _pad_ref(x, pad, mode="constant", value=None):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    crop = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in widths)
    x = x[crop]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    if np_mode == "constant":
        return np.pad(x, widths, constant_values=0 if value is None else value)
    return np.pad(x, widths, mode=np_mode)


def _pad_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    yield SampleInput(t(3, 4), ((1, 2),), name="constant, last dim")
    yield SampleInput(
        t(3, 4), ((1, 0, 2, 1),), {"value": 2.0 if dtype.is_floating_point else 2}, name="value=2"
    )
    yield SampleInput(t(3, 4), ((-1, 1),), name="negative pad crops")
    yield SampleInput(t(0, 4), ((1, 1),), name="size-0")
    if dtype.is_floating_point:
        for mode in ("reflect", "replicate", "circular"):
            yield SampleInput(t(2, 3, 5), ((2, 1),), {"mode": mode}, name=f"{mode} 1-d")
            yield SampleInput(transposed(t(2, 3, 4, 5)), ((1, 2, 2, 1),), {"mode": mode}, name=f"{mode} 2-d")


def _pad_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(2, 3, 4), ((4, 4),), {"mode": "reflect"}),
        RuntimeError,
        "Padding size should be less than the corresponding input dimension",
        False,
    )
    yield ErrorInput(
        SampleInput(tp.ones(2, 3), ((1,),)), RuntimeError, "Padding length must be divisible by 2", False
    )


register(
    OpInfo(
        "pad",
        ref=_pad_ref,
        dtypes=FLOATS + (tp.int64, tp.int32),
        sample_inputs=_pad_samples,
        result_dtype=same_dtype,
        error_inputs=_pad_errors,
        torch=lambda torch: torch.nn.functional.pad,
    )
)


# flip, roll, rot90, repeat, tile, repeat_interleave.
def _rearrange_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    x = t(3, 4, 5)
    cases = {
        "flip": [((0,),), ((0, 2),), ((-1,),), ((),)],
        "fliplr": [()],
        "flipud": [()],
        "roll": [((1,), (0,)), ((2, -1), (0, 2)), ((7,),), ((-3,), (1,))],
        "rot90": [(), (2,), (-1, (1, 2)), (3, (0, 2))],
        "repeat": [((2, 1, 1),), ((1, 2, 3, 1),), ((2, 0, 1),)],
        "tile": [((2,),), ((2, 1, 1, 2),), ((1, 0, 1),)],
        "repeat_interleave": [(2,), (2, 1), (3, -1)],
    }[op.name]
    for args in cases:
        yield SampleInput(x, args, name=f"args {args}")
    yield SampleInput(
        transposed(t(4, 6)), cases[0] if op.name not in ("repeat", "tile") else ((2, 1),), name="transposed"
    )
    if op.name not in ("fliplr", "flipud", "rot90"):
        small = cases[0] if op.name not in ("repeat", "tile") else ((2,),)
        yield SampleInput(t(0), small if op.name != "flip" else ((0,),), name="size-0")
    if op.name == "repeat_interleave":
        yield SampleInput(t(3, 2), (tp.tensor([1, 0, 2]), 0), name="tensor repeats", data_dependent=True)
        yield SampleInput(t(), (3,), name="0-d")


def _roll_ref(x, shifts, dims=()):
    if not dims:
        return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
    return np.roll(x, shifts, axis=dims)


def _repeat_interleave_ref(x, repeats, dim=None):
    if dim is None:
        x, dim = x.reshape(-1), 0
    return np.repeat(x, repeats, axis=dim)


_REARRANGE = {
    "flip": lambda x, dims: np.flip(x, axis=tuple(dims)) if dims else x,
    "fliplr": np.fliplr,
    "flipud": np.flipud,
    "roll": _roll_ref,
    "rot90": lambda x, k=1, dims=(0, 1): np.rot90(x, k, axes=dims),
    "repeat": lambda x, r: np.tile(x, r),
    "tile": lambda x, r: np.tile(x, r),
    "repeat_interleave": _repeat_interleave_ref,
}
for _name, _ref in _REARRANGE.items():
    register(OpInfo(_name, ref=_ref, dtypes=ALL, sample_inputs=_rearrange_samples, result_dtype=same_dtype))


# tril/triu (with in-place forms), diag, diag_embed, diagflat.
def _tri_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    for k in (0, 1, -2, 5):
        yield SampleInput(t(4, 5), (k,), name=f"diagonal={k}")
    yield SampleInput(t(2, 3, 3), name="batched")
    yield SampleInput(t(0, 3), name="size-0")
    yield SampleInput(transposed(t(4, 4)), (1,), name="transposed")
    yield SampleInput(strided(t(3, 4)), (-1,), name="strided")


def _tri_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(3)), RuntimeError, "input tensor must have at least 2 dimensions", False
    )


for _name, _np in [("tril", np.tril), ("triu", np.triu)]:
    register(
        OpInfo(
            _name,
            ref=lambda x, k=0, f=_np: f(x, k),
            dtypes=ALL,
            sample_inputs=_tri_samples,
            inplace=True,
            result_dtype=same_dtype,
            error_inputs=_tri_errors,
        )
    )


def _diag_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    yield SampleInput(t(4), name="vector")
    yield SampleInput(t(4), (1,), name="vector, above")
    yield SampleInput(t(3, 5), name="matrix")
    yield SampleInput(t(3, 5), (-1,), name="matrix, below")
    yield SampleInput(t(0), name="size-0")
    yield SampleInput(transposed(t(4, 3)), (1,), name="transposed")
    if op.name != "diag":
        yield SampleInput(t(2, 3), name="batched")


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    i = np.arange(x.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = x
    d1, d2 = dim1 % (x.ndim + 1), dim2 % (x.ndim + 1)
    return np.moveaxis(out, (-2, -1), (d1, d2))


def _diag_embed_samples(op, dtype):
    t = _t(rng_for(op.id, str(dtype)), dtype)
    yield SampleInput(t(3), name="vector")
    yield SampleInput(t(2, 3), (1,), name="batched, offset 1")
    yield SampleInput(t(2, 3), (-1, 0, 2), name="dims 0 and 2")
    yield SampleInput(t(0), name="size-0")
    yield SampleInput(transposed(t(3, 4)), name="transposed")


register(
    OpInfo(
        "diag",
        ref=lambda x, k=0: np.diag(x, k),
        dtypes=ALL,
        sample_inputs=_diag_samples,
        result_dtype=same_dtype,
    ),
    OpInfo(
        "diagflat",
        ref=lambda x, k=0: np.diagflat(x, k),
        dtypes=ALL,
        sample_inputs=_diag_samples,
        result_dtype=same_dtype,
    ),
    OpInfo(
        "diag_embed",
        ref=_diag_embed_ref,
        dtypes=ALL,
        sample_inputs=_diag_embed_samples,
        result_dtype=same_dtype,
    ),
)
