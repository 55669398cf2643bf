"""Op database: the sequence-mixer kernels delta_rule (kernels/delta_rule.cpp) and paged_attention
(kernels/paged_attention.cpp), with their op-written references _delta_rule_reference and
_paged_attention_reference.

The references here are float64 NumPy loops written from the semantics Notes, independent of both kernels:
the step-by-step recurrence for the delta rule, and softmax over the row's tokens looked up one by one through
the block table for paged attention. The first samples are tiny so that autograd's gradcheck over the database
(tests/test_opdb_autograd.py) runs on them; later ones cover lengths across several chunks, both g shapes,
GQA, and non-contiguous layouts.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

# The recurrence carries rounding from step to step, and 16-bit outputs are rounded once more at the end.
_DELTA_TOL = {tp.float32: (2e-5, 2e-5), tp.float16: (5e-3, 3e-3), tp.bfloat16: (4e-2, 3e-2)}


def delta_rule_ref(q, k, v, g, beta, initial_state=None, chunk_size=64):
    """Note [Delta rule semantics] one step at a time, per (b, h), in float64."""
    B, T, H, Dk = q.shape
    Dv = v.shape[-1]
    S = np.zeros((B, H, Dk, Dv)) if initial_state is None else np.array(initial_state, dtype=np.float64)
    out = np.zeros((B, T, H, Dv))
    for b in range(B):
        for h in range(H):
            s = S[b, h]
            for t in range(T):
                a = np.exp(g[b, t, h])  # a number, or one per row
                s = (a[:, None] if np.ndim(a) else a) * s
                u = beta[b, t, h] * (v[b, t, h] - s.T @ k[b, t, h])
                s = s + np.outer(k[b, t, h], u)
                out[b, t, h] = s.T @ q[b, t, h]
            S[b, h] = s
    return out, S


def _delta_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))

    def t(*shape, low=-1.0, high=1.0):
        return make_tensor(shape, dtype, rng, low=low, high=high)

    def case(B, T, H, Dk, Dv, per_channel=False, init=False, gdtype=None):
        q, k, v = t(B, T, H, Dk), t(B, T, H, Dk), t(B, T, H, Dv)
        gshape = (B, T, H, Dk) if per_channel else (B, T, H)
        g = make_tensor(gshape, gdtype or dtype, rng, low=-1.0, high=0.0)
        beta = make_tensor((B, T, H), gdtype or dtype, rng, low=0.0, high=1.0)
        s0 = t(B, H, Dk, Dv) if init else None
        return q, (k, v, g, beta), ({"initial_state": s0} if init else {})

    def sample(name, q, args, kw, **extra):
        return SampleInput(q, args, {**kw, **extra}, name=name)

    yield sample("tiny, per-head g", *case(1, 3, 1, 2, 2))
    yield sample("tiny, per-channel g, initial_state", *case(1, 2, 1, 2, 2, per_channel=True, init=True))
    yield sample("tiny, T=1, chunk_size=1", *case(1, 1, 2, 2, 1, init=True), chunk_size=1)
    yield sample("B 2, H 3, T 7, chunk_size 3 (odd tail)", *case(2, 7, 3, 4, 5), chunk_size=3)
    yield sample("per-channel g, T 9 over chunks of 4", *case(2, 9, 2, 3, 4, True, True), chunk_size=4)
    yield sample("T 0 with initial_state", *case(2, 0, 2, 3, 4, init=True))
    yield sample("T 0, no state", *case(1, 0, 1, 2, 2))
    yield sample("size-1 dims", *case(1, 1, 1, 1, 1))
    q, args, kw = case(1, 70, 2, 8, 8, per_channel=True, init=True)
    yield sample("T 70 > default chunk 64", q, args, kw)
    if dtype is not tp.float64:
        yield sample("float64 g and beta", *case(1, 5, 2, 3, 3, gdtype=tp.float64))
    q, (k, v, g, beta), kw = case(2, 5, 3, 4, 6, per_channel=True, init=True)
    yield sample(
        "transposed and strided", transposed(q), (strided(k), transposed(v), strided(g), transposed(beta)), kw
    )
    yield sample("strided state", q, (k, v, g, beta), {"initial_state": transposed(kw["initial_state"])})


def _delta_result_dtype(sample, dtype):
    return sample.input.dtype


def _delta_errors(op):
    q, v = tp.ones(1, 3, 2, 4), tp.ones(1, 3, 2, 5)
    g, beta = tp.zeros(1, 3, 2), tp.ones(1, 3, 2)
    cases = [
        (
            (q, tp.ones(1, 3, 2, 3), v, g, beta),
            {},
            RuntimeError,
            r"expected key of query's shape \[1, 3, 2, 4\]",
        ),
        ((q, q, tp.ones(1, 3, 1, 5), g, beta), {}, RuntimeError, r"expected value of shape \[B, T, H, Dv\]"),
        ((q, q, v, tp.zeros(1, 3), beta), {}, RuntimeError, r"expected g of shape \[B, T, H\] = \[1, 3, 2\]"),
        ((q, q, v, tp.zeros(1, 3, 2, 3), beta), {}, RuntimeError, r"or \[B, T, H, Dk\] = \[1, 3, 2, 4\]"),
        ((q, q, v, g, tp.ones(1, 3, 2, 1)), {}, RuntimeError, r"expected beta of shape \[B, T, H\]"),
        (
            (q, q, v, g, beta),
            {"initial_state": tp.zeros(1, 2, 5, 4)},
            RuntimeError,
            r"expected initial_state of shape \[B, H, Dk, Dv\] = \[1, 2, 4, 5\], got \[1, 2, 5, 4\]",
        ),
        ((tp.ones(3, 2, 4), q, v, g, beta), {}, RuntimeError, r"expected query of shape \[B, T, H, Dk\]"),
        (
            (q.long(), q.long(), v.long(), g, beta),
            {},
            RuntimeError,
            "expected a floating point query, got int64",
        ),
        ((q, q, v, g.long(), beta), {}, RuntimeError, "expected a floating point g, got int64"),
        ((q, q.double(), v, g, beta), {}, RuntimeError, "query, key and value of one dtype"),
        ((q, q, v, g, beta), {"chunk_size": 0}, ValueError, "chunk_size must be positive, got 0"),
    ]
    for (a, *rest), kw, err, rx in cases:
        yield ErrorInput(SampleInput(a, tuple(rest), kw), err, rx)


def _delta_large(op):
    rng = rng_for(op.id, "large")
    B, T, H, D = 2, 256, 4, 32
    q, k = (make_tensor((B, T, H, D), tp.float32, rng, low=-0.3, high=0.3) for _ in range(2))
    v = make_tensor((B, T, H, D), tp.float32, rng, low=-1, high=1)
    g = make_tensor((B, T, H), tp.float32, rng, low=-0.2, high=0.0)
    beta = make_tensor((B, T, H), tp.float32, rng, low=0.0, high=1.0)
    return SampleInput(q, (k, v, g, beta), name="B 2, T 256, H 4, D 32 (8 tasks)")


def paged_attention_ref(q, key_pool, value_pool, block_table, seq_lens, scale=None):
    """Note [Paged attention semantics]: token s of row b looked up one by one through the block table."""
    B, H, T, D = q.shape
    bs, Hkv, Dv = key_pool.shape[1], key_pool.shape[2], value_pool.shape[-1]
    group = H // Hkv
    sc = 1 / math.sqrt(D) if scale is None else scale
    out = np.zeros((B, H, T, Dv))
    for b in range(B):
        S = int(seq_lens[b])
        where = [(int(block_table[b, s // bs]), s % bs) for s in range(S)]
        for h in range(H):
            keys = np.array([key_pool[i, r, h // group] for i, r in where]).reshape(S, D)
            vals = np.array([value_pool[i, r, h // group] for i, r in where]).reshape(S, Dv)
            for i in range(T):
                seen = S - T + i + 1  # the query sits at S - T + i
                s = keys[:seen] @ q[b, h, i] * sc
                p = np.exp(s - s.max())
                out[b, h, i] = p @ vals[:seen] / p.sum()
    return out


def _paged_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))

    def t(*shape):
        return make_tensor(shape, dtype, rng, low=-1.0, high=1.0)

    def ids(rows):
        return tp.tensor(rows, dtype=tp.int64)

    # tiny (for gradcheck): 1 row, 2 heads over 1 kv head, blocks of 2, 3 tokens in pool blocks 2 then 0
    yield SampleInput(
        t(1, 2, 1, 2), (t(3, 2, 1, 2), t(3, 2, 1, 2), ids([[2, 0]]), ids([3])), name="tiny decode"
    )
    yield SampleInput(
        t(1, 1, 2, 2), (t(2, 2, 1, 2), t(2, 2, 1, 1), ids([[1, 0]]), ids([4])), name="tiny prefill T = S"
    )
    kp, vp = t(9, 4, 2, 8), t(9, 4, 2, 6)
    table = ids([[3, 1, 7, -1], [0, 8, 2, 5]])  # -1: a padding entry past row 0's blocks, never read
    yield SampleInput(
        t(2, 4, 3, 8), (kp, vp, table, ids([10, 13])), name="B 2, GQA 4:2, T 3, Dv 6, padded table"
    )
    yield SampleInput(t(2, 4, 1, 8), (kp, vp, table, ids([1, 16])), {"scale": 0.3}, name="decode, scale 0.3")
    yield SampleInput(t(2, 2, 4, 8), (kp, vp, table, ids([4, 8])), name="full blocks, MHA (H = Hkv)")
    yield SampleInput(t(2, 4, 0, 8), (kp, vp, table, ids([0, 5])), name="T 0, an empty row")
    yield SampleInput(t(0, 4, 1, 8), (kp, vp, ids([]).reshape(0, 4), ids([])), name="B 0")
    q = t(2, 4, 3, 8)
    yield SampleInput(
        transposed(q), (strided(kp), transposed(vp), table, ids([7, 11])), name="transposed and strided"
    )
    # the same pool block shared by both rows (prefix sharing)
    yield SampleInput(t(2, 2, 1, 8), (kp, vp, ids([[4, 4], [4, 1]]), ids([7, 6])), name="shared block")


def _paged_errors(op):
    q, kp, vp = tp.ones(1, 4, 1, 8), tp.ones(3, 4, 2, 8), tp.ones(3, 4, 2, 6)
    table, lens = tp.tensor([[0, 2]]), tp.tensor([5])
    cases = [
        (
            (q, kp, vp, tp.tensor([[0, 3]]), lens),
            IndexError,
            r"block_table\[0, 1\] = 3 is not a block of the pools",
        ),
        ((q, kp, vp, tp.tensor([[-1, 0]]), lens), IndexError, r"block_table\[0, 0\] = -1"),
        (
            (q, kp, vp, table, tp.tensor([9])),
            RuntimeError,
            r"seq_lens\[0\] = 9 exceeds the block table's capacity",
        ),
        (
            (tp.ones(1, 4, 3, 8), kp, vp, table, tp.tensor([2])),
            RuntimeError,
            "smaller than the number of queries",
        ),
        (
            (tp.ones(1, 3, 1, 8), kp, vp, table, lens),
            RuntimeError,
            r"query heads \(3\) must be a multiple of",
        ),
        ((q, kp, tp.ones(3, 2, 2, 6), table, lens), RuntimeError, "with key_pool's N, block_size and Hkv"),
        ((q, tp.ones(3, 4, 2, 5), vp, table, lens), RuntimeError, "head size to equal query's"),
        ((q, kp, vp, table.int(), lens), RuntimeError, "expected an int64 block_table"),
        ((q, kp, vp, table, tp.tensor([5, 5])), RuntimeError, r"int64 seq_lens of shape \[B\] = \[1\]"),
        ((q, kp.double(), vp, table, lens), RuntimeError, "query, key_pool and value_pool of one dtype"),
    ]
    for (a, *rest), err, rx in cases:
        yield ErrorInput(SampleInput(a, tuple(rest)), err, rx)


def _paged_large(op):
    rng = rng_for(op.id, "large")
    kp, vp = (make_tensor((64, 16, 2, 64), tp.float32, rng, low=-1, high=1) for _ in range(2))
    table = tp.tensor(rng.permutation(64).reshape(2, 32), dtype=tp.int64)
    q = make_tensor((2, 8, 4, 64), tp.float32, rng, low=-1, high=1)
    return SampleInput(q, (kp, vp, table, tp.tensor([500, 317])), name="B 2, GQA 8:2, S 500")


for _name, _op in (("delta_rule", None), ("_delta_rule_reference", tp.ops._delta_rule_reference)):
    register(
        OpInfo(
            _name,
            op=_op,
            ref=delta_rule_ref,
            dtypes=FLOATS,
            sample_inputs=_delta_samples,
            result_dtype=_delta_result_dtype,
            tolerances=_DELTA_TOL,
            error_inputs=_delta_errors if _op is None else None,
            torch=False,
            large=_delta_large if _op is None else None,
        )
    )
for _name, _op in (
    ("paged_attention", None),
    ("_paged_attention_reference", tp.ops._paged_attention_reference),
):
    register(
        OpInfo(
            _name,
            op=_op,
            ref=paged_attention_ref,
            dtypes=FLOATS,
            sample_inputs=_paged_samples,
            result_dtype=same_dtype,
            tolerances={tp.float32: (1e-4, 1e-5), tp.float16: (5e-3, 3e-3), tp.bfloat16: (4e-2, 3e-2)},
            error_inputs=_paged_errors if _op is None else None,
            torch=False,
            large=_paged_large if _op is None else None,
            meta=_op is None,  # the reference reads seq_lens' values, which meta tensors do not have
        )
    )
