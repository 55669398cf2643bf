"""Op database: ``tp.sample`` (kernels/sample.cpp) in its deterministic mode, greedy decoding.

With temperature <= 1e-5 the op is the argmax of each row of logits, so it has a NumPy reference; the random
modes (temperature, top_k, top_p) are checked by their distributions in tests/test_sample.py.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, long_dtype, register
from .samples import make_tensor, rng_for, transposed


def _greedy(logits, temperature=1.0, top_k=0, top_p=1.0):
    return np.argmax(logits, axis=-1)


def _samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    for shape in [(7,), (1, 5), (4, 9), (0, 3)]:
        yield SampleInput(make_tensor(shape, dtype, rng), (0.0,), name=f"shape {shape}, temperature 0")
    yield SampleInput(
        transposed(make_tensor((6, 3), dtype, rng)), (), {"temperature": 1e-6}, name="transposed"
    )
    yield SampleInput(make_tensor((3, 8), dtype, rng), (0.0, 2, 0.5), name="greedy ignores top_k, top_p")
    ties = tp.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]]).to(dtype)
    yield SampleInput(ties, (0.0,), name="ties: the first maximum")


def _errors(op):
    x = tp.zeros(2, 5)
    yield ErrorInput(SampleInput(tp.zeros(2, 3, 4)), RuntimeError, r"shape \[V\] or \[B, V\].*3-d")
    yield ErrorInput(SampleInput(tp.zeros(2, 3, dtype=tp.int64)), RuntimeError, "floating-point logits")
    yield ErrorInput(SampleInput(x, (), {"top_p": 0.0}), ValueError, r"top_p must be in \(0, 1\]")
    yield ErrorInput(SampleInput(x, (), {"top_p": 1.5}), ValueError, r"top_p must be in \(0, 1\]")
    yield ErrorInput(SampleInput(x, (-1.0,)), ValueError, "temperature must be >= 0")
    yield ErrorInput(SampleInput(tp.zeros(2, 0)), RuntimeError, "empty vocabulary")


register(
    OpInfo(
        "sample",
        ref=_greedy,
        dtypes=FLOATS,
        sample_inputs=_samples,
        result_dtype=long_dtype,
        error_inputs=_errors,
        differentiable=False,
        torch=False,
    )
)
