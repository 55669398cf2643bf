"""Op database: the matmul family (kernels/matmul.cpp, blas.cpp, einsum.cpp): matmul over every rank
combination, mm, bmm, mv, dot, vdot, inner, outer, addmm/addmv/addbmm/baddbmm (beta, alpha), tensordot,
einsum, kron, cross.

References are float64 NumPy products (``np.matmul``, ``np.einsum``); float32 results through BLAS agree to
a few ulp of the sum's magnitude, so tolerances scale with the inner dimension (kept small here).
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register
from .binary import promoted
from .samples import make_tensor, rng_for, strided, transposed

MM_DTYPES = FLOATS + (tp.int64, tp.int32)
_TOL = {tp.float32: (1e-4, 1e-4), tp.float16: (4e-3, 4e-3), tp.bfloat16: (3e-2, 3e-2)}


def _mk(op, dtype):
    rng = rng_for(op.id, str(dtype))
    return lambda *shape: make_tensor(shape, dtype, rng, low=-3, high=3)


def _matmul_samples(op, dtype):
    t = _mk(op, dtype)
    for sa, sb in [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)),
        ((3,), (5, 3, 4)),
        ((2, 1, 2, 3), (5, 3, 4)),
        ((5, 2, 3), (5, 3, 4)),
        ((0, 3), (3, 4)),
        ((2, 0), (0, 4)),
        ((1, 1), (1, 1)),
    ]:
        yield SampleInput(t(*sa), (t(*sb),), name=f"{sa} @ {sb}")
    yield SampleInput(transposed(t(3, 4)), (transposed(t(4, 2)),), name="both transposed")
    yield SampleInput(strided(t(3, 4)), (t(4, 5)[:, 1:4],), name="strided and sliced")
    yield SampleInput(t(6, 2, 3).transpose(0, 1), (t(3, 4),), name="batch dim not outermost")


def _matmul_errors(op):
    yield ErrorInput(
        SampleInput(tp.ones(2, 3), (tp.ones(4, 2),)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x2\)",
        False,
    )
    yield ErrorInput(
        SampleInput(tp.ones(()), (tp.ones(3),)),
        RuntimeError,
        "both arguments to matmul need to be at least 1D",
        True,
    )


def _pair_samples(shapes, noncontig=True):
    def gen(op, dtype):
        t = _mk(op, dtype)
        for sa, sb in shapes:
            yield SampleInput(t(*sa), (t(*sb),), name=f"{sa}, {sb}")
        if noncontig:
            sa, sb = shapes[0]
            a, b = t(*sa), t(*sb)
            yield SampleInput(
                transposed(a) if a.dim() >= 2 else strided(a),
                (transposed(b) if b.dim() >= 2 else strided(b),),
                name="non-contiguous",
            )

    return gen


def _mm_errors(name, a, b, rx):
    return lambda op: [ErrorInput(SampleInput(tp.ones(*a), (tp.ones(*b),)), RuntimeError, rx, False)]


register(
    OpInfo(
        "matmul",
        ref=np.matmul,
        dtypes=MM_DTYPES,
        sample_inputs=_matmul_samples,
        out=True,
        result_dtype=promoted,
        error_inputs=_matmul_errors,
        tolerances=_TOL,
    ),
    OpInfo(
        "matmul",
        variant="operator",
        op=lambda a, b: a @ b,
        ref=np.matmul,
        dtypes=(tp.float32, tp.int64),
        sample_inputs=_matmul_samples,
        result_dtype=promoted,
        tolerances=_TOL,
        torch=lambda torch: lambda a, b: a @ b,
    ),
    OpInfo(
        "mm",
        ref=np.matmul,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        tolerances=_TOL,
        sample_inputs=_pair_samples([((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((1, 1), (1, 1))]),
        error_inputs=_mm_errors("mm", (3,), (3, 2), "self must be a matrix"),
    ),
    OpInfo(
        "bmm",
        ref=np.matmul,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        tolerances=_TOL,
        sample_inputs=_pair_samples([((4, 2, 3), (4, 3, 5)), ((0, 2, 3), (0, 3, 1)), ((2, 1, 0), (2, 0, 3))]),
        error_inputs=_mm_errors(
            "bmm",
            (2, 2, 3),
            (3, 3, 2),
            "batch1 and batch2 must have same number of batches|Expected size for first two dimensions",
        ),
    ),
    OpInfo(
        "mv",
        ref=np.matmul,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        tolerances=_TOL,
        sample_inputs=_pair_samples([((2, 3), (3,)), ((0, 3), (3,)), ((2, 0), (0,))]),
    ),
    OpInfo(
        "dot",
        ref=np.dot,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        tolerances=_TOL,
        sample_inputs=_pair_samples([((5,), (5,)), ((0,), (0,)), ((1,), (1,))]),
        error_inputs=_mm_errors("dot", (3,), (4,), "inconsistent tensor size"),
    ),
    OpInfo(
        "vdot",
        ref=np.vdot,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        tolerances=_TOL,
        sample_inputs=_pair_samples([((5,), (5,)), ((0,), (0,))]),
    ),
    OpInfo(
        "inner",
        ref=np.inner,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        tolerances=_TOL,
        sample_inputs=_pair_samples([((5,), (5,)), ((2, 3), (4, 3)), ((), (2, 3)), ((2, 0), (3, 0))]),
    ),
    OpInfo(
        "outer",
        ref=np.outer,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        sample_inputs=_pair_samples([((3,), (4,)), ((0,), (2,)), ((1,), (1,))]),
    ),
    OpInfo(
        "kron",
        ref=np.kron,
        dtypes=MM_DTYPES,
        out=True,
        result_dtype=promoted,
        sample_inputs=_pair_samples([((2, 3), (2, 2)), ((3,), (2,)), ((2, 1, 2), (3, 2)), ((0, 2), (2, 2))]),
    ),
)


# addmm-style: beta * self + alpha * (product); self broadcasts.
def _addmm_samples(op, dtype):
    t = _mk(op, dtype)
    a, b = {
        "addmm": ((2, 3), (3, 4)),
        "addmv": ((2, 3), (3,)),
        "addbmm": ((5, 2, 3), (5, 3, 4)),
        "baddbmm": ((5, 2, 3), (5, 3, 4)),
    }[op.name]
    out_shape = {"addmm": (2, 4), "addmv": (2,), "addbmm": (2, 4), "baddbmm": (5, 2, 4)}[op.name]
    yield SampleInput(t(*out_shape), (t(*a), t(*b)), name="plain")
    yield SampleInput(t(*out_shape[-1:]), (t(*a), t(*b)), name="self broadcast")
    yield SampleInput(t(*out_shape), (t(*a), t(*b)), {"beta": 2, "alpha": 3}, name="beta, alpha")
    yield SampleInput(t(*out_shape), (t(*a), t(*b)), {"beta": 0}, name="beta=0 ignores self")
    a2 = tuple(0 if i == len(a) - 1 else s for i, s in enumerate(a))
    b2 = tuple(0 if i == len(b) - 2 or len(b) == 1 else s for i, s in enumerate(b))
    yield SampleInput(t(*out_shape), (t(*a2), t(*b2)), name="empty inner dim: beta*self")
    x = t(*out_shape)
    yield SampleInput(
        transposed(x) if x.dim() >= 2 else strided(x), (transposed(t(*a)), t(*b)), name="non-contiguous"
    )


def _addmm_ref(kind):
    def ref(x, a, b, beta=1, alpha=1):
        prod = np.matmul(a, b)
        if kind == "addbmm":
            prod = prod.sum(axis=0)
        base = 0 if beta == 0 else beta * x
        return base + alpha * prod

    return ref


for _name in ("addmm", "addmv", "addbmm", "baddbmm"):
    register(
        OpInfo(
            _name,
            ref=_addmm_ref(_name),
            dtypes=MM_DTYPES,
            sample_inputs=_addmm_samples,
            inplace=True,
            out=True,
            result_dtype=promoted,
            tolerances=_TOL,
        )
    )


def _tensordot_samples(op, dtype):
    t = _mk(op, dtype)
    yield SampleInput(t(3, 4, 5), (t(4, 5, 2),), name="dims=2 (default)")
    yield SampleInput(t(3, 4), (t(4, 2),), {"dims": 1}, name="dims=1")
    yield SampleInput(t(3, 4, 5), (t(5, 3, 2),), {"dims": ([0, 2], [1, 0])}, name="dim lists")
    yield SampleInput(
        t(2, 3),
        (
            t(
                4,
            ),
        ),
        {"dims": 0},
        name="dims=0: outer product",
    )
    yield SampleInput(transposed(t(4, 3)), (t(3, 2),), {"dims": 1}, name="transposed")


def _tensordot_ref(a, b, dims=2):
    return np.tensordot(a, b, axes=dims if isinstance(dims, int) else (list(dims[0]), list(dims[1])))


def _einsum_samples(op, dtype):
    t = _mk(op, dtype)
    yield SampleInput("ij,jk->ik", (t(2, 3), t(3, 4)), name="matmul")
    yield SampleInput("bij,bjk->bik", (t(2, 2, 3), t(2, 3, 4)), name="batched")
    yield SampleInput("ii->i", (t(3, 3),), name="diagonal")
    yield SampleInput("ii", (t(3, 3),), name="trace")
    yield SampleInput("ij->ji", (transposed(t(3, 4)),), name="transpose of a transposed input")
    yield SampleInput("i,j->ij", (t(3), t(4)), name="outer")
    yield SampleInput("...ij,...jk", (t(2, 2, 3), t(3, 2)), name="ellipsis broadcast")
    yield SampleInput("ij,jk,kl->il", (t(2, 3), t(3, 4), t(4, 2)), name="three operands")
    yield SampleInput("i,i->", (t(0), t(0)), name="size-0 contraction")
    yield SampleInput("ij,jk->ik", (t(2, 3), t(3, 4)), {"path": [0, 1]}, name="explicit path")


def _einsum_ref(eq, *ops, path=None):
    return np.einsum(eq, *ops)


def _einsum_errors(op):
    yield ErrorInput(
        SampleInput("ij,jk->ik", (tp.ones(2, 3), tp.ones(4, 5))),
        RuntimeError,
        r"einsum\(\): subscript j has size 4 for operand 1 which does not broadcast with previously seen "
        "size 3",
    )
    yield ErrorInput(
        SampleInput("ij->ij", (tp.ones(2, 3), tp.ones(2))), RuntimeError, "more operands were provided"
    )


register(
    OpInfo(
        "tensordot",
        ref=_tensordot_ref,
        dtypes=MM_DTYPES,
        sample_inputs=_tensordot_samples,
        result_dtype=promoted,
        tolerances=_TOL,
        out=True,
    ),
    OpInfo(
        "einsum",
        ref=_einsum_ref,
        dtypes=MM_DTYPES,
        sample_inputs=_einsum_samples,
        tolerances=_TOL,
        error_inputs=_einsum_errors,
        torch=lambda torch: lambda eq, *ops, path=None: torch.einsum(eq, *ops),
    ),
)


def _cross_samples(op, dtype):
    t = _mk(op, dtype)
    yield SampleInput(t(4, 3), (t(4, 3),), name="rows")
    yield SampleInput(t(3, 5), (t(3, 5),), {"dim": 0}, name="dim 0")
    yield SampleInput(t(2, 4, 3), (t(4, 3),), {"dim": -1}, name="broadcast")
    yield SampleInput(transposed(t(3, 4)), (t(3, 4),), {"dim": 0}, name="transposed")
    yield SampleInput(t(0, 3), (t(0, 3),), {"dim": 1}, name="size-0")


def _cross_ref(a, b, dim=None):
    if dim is None:
        dim = next(i for i, s in enumerate(np.broadcast_shapes(a.shape, b.shape)) if s == 3)
    return np.cross(a, b, axis=dim)


register(
    OpInfo(
        "cross",
        ref=_cross_ref,
        dtypes=FLOATS + INTS[:2],
        sample_inputs=_cross_samples,
        out=True,
        result_dtype=promoted,
        tolerances=_TOL,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(2, 4), (tp.ones(2, 4),), {"dim": 1}),
                RuntimeError,
                "cross: inputs dimension 1 must have length 3",
                False,
            )
        ],
    )
)
