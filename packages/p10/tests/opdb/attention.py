"""Op database: scaled_dot_product_attention (kernels/attention.cpp).

The reference is the readable definition softmax(Q K^T * scale + mask) @ V in float64 (from
test_attention.py); the kernel under test is blockwise with an online softmax, so samples include sequence
lengths that span several key blocks. Dropout is random and lives in test_attention.py; here dropout_p = 0.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

_TOL = {tp.float32: (1e-4, 1e-5), tp.float16: (5e-3, 3e-3), tp.bfloat16: (4e-2, 3e-2)}


def attention_ref(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v; rows whose keys are all masked give zeros."""
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    if enable_gqa and q.ndim >= 3:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if S == 0:
        return np.zeros(batch + (L, v.shape[-1]))
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(E) if scale is None else scale)
    mask = np.tril(np.ones((L, S), bool)) if is_causal else attn_mask
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0.0, m))
    p = np.where(dead, 0.0, e / np.where(dead, 1.0, e.sum(-1, keepdims=True)))
    return p @ v


def _samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    t = lambda *shape: make_tensor(shape, dtype, rng, low=-2, high=2)  # noqa: E731
    q, k, v = t(2, 3, 5, 4), t(2, 3, 7, 4), t(2, 3, 7, 6)
    yield SampleInput(q, (k, v), name="batch 2, heads 3, L 5, S 7, Ev 6")
    yield SampleInput(q, (k, v), {"is_causal": True}, name="is_causal, L < S")
    yield SampleInput(t(2, 3, 9, 4), (k, v), {"is_causal": True}, name="is_causal, L > S (empty rows)")
    yield SampleInput(q, (k, v, tp.tensor(rng.random((5, 7)) < 0.6)), name="bool mask, broadcast")
    mask = tp.tensor(rng.random((3, 1, 7)) < 0.5)
    yield SampleInput(q, (k, v, mask), name="bool mask over heads (some rows fully masked)")
    yield SampleInput(q, (k, v, make_tensor((2, 1, 5, 7), dtype, rng, low=-1, high=1)), name="additive mask")
    yield SampleInput(q, (k, v), {"scale": 0.3}, name="scale=0.3")
    yield SampleInput(t(1, 4, 3, 4), (t(1, 2, 6, 4), t(1, 2, 6, 5)), {"enable_gqa": True}, name="gqa 4:2")
    yield SampleInput(t(5, 4), (t(6, 4), t(6, 3)), name="2-d (no batch)")
    yield SampleInput(t(1, 1, 1, 1), (t(1, 1, 1, 1), t(1, 1, 1, 1)), name="all size 1")
    yield SampleInput(t(2, 70, 8), (t(2, 600, 8), t(2, 600, 8)), name="several query and key blocks")
    yield SampleInput(t(0, 3, 4), (t(0, 5, 4), t(0, 5, 2)), name="batch 0")
    yield SampleInput(t(2, 3, 4), (t(2, 0, 4), t(2, 0, 2)), name="no keys")
    yield SampleInput(transposed(q), (strided(k), transposed(v)), name="transposed and strided")
    yield SampleInput(q.transpose(1, 2).contiguous().transpose(1, 2), (k, v), name="heads not outermost")


def _errors(op):
    q, k, v = tp.ones(2, 3, 4), tp.ones(2, 5, 4), tp.ones(2, 5, 6)
    cases = [
        ((q, k.double(), v), {}, "Expected query, key, and value to have the same dtype"),
        ((q, tp.ones(2, 5, 3), v), {}, "query and key must have the same last dim"),
        ((q, k, tp.ones(2, 4, 6)), {}, "key and value must have the same sequence length"),
        (
            (q, k, v, tp.ones(3, 5, dtype=tp.bool)),
            {"is_causal": True},
            "Explicit attn_mask should not be set",
        ),
        ((q, k, v, tp.ones(4, 5, dtype=tp.bool)), {}, r"attn_mask of shape \[4, 5\] does not broadcast"),
        ((q, k, v, tp.ones(3, 5, dtype=tp.int64)), {}, "attn_mask dtype to be bool or float"),
        (
            (tp.ones(1, 4, 3, 4), tp.ones(1, 3, 5, 4), tp.ones(1, 3, 5, 6)),
            {"enable_gqa": True},
            r"number of key heads \(3\) to divide the number of query heads \(4\)",
        ),
    ]
    for (a, *rest), kw, rx in cases:
        yield ErrorInput(SampleInput(a, tuple(rest), kw), RuntimeError, rx, False)
    yield ErrorInput(SampleInput(q, (k, v), {"dropout_p": 1.5}), ValueError, "dropout_p must be in", False)


def _large(op):
    q, k, v = (make_tensor((4, 4, 256, 64), tp.float32, rng_for(op.id, n)) for n in "qkv")
    return SampleInput(q, (k, v), name="1M elements")


register(
    OpInfo(
        "scaled_dot_product_attention",
        ref=attention_ref,
        dtypes=FLOATS,
        sample_inputs=_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
        error_inputs=_errors,
        torch=lambda torch: torch.nn.functional.scaled_dot_product_attention,
        large=_large,
    )
)
