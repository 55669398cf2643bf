"""Op database: bags of embeddings (kernels/embedding_bag.cpp): embedding_bag (F.embedding_bag's signature),
the aten-level _embedding_bag it calls, and embedding_renorm_ (max_norm's in-place rescaling of rows).

References are float64 loops over bags (as in test_embedding_bag.py): a bag is indices[offsets[b] :
offsets[b + 1]] with padding_idx entries dropped; an empty bag gives zeros in every mode. Only
_embedding_bag's first output (the bags) has a reference here; its bookkeeping outputs (offset2bag, bag_size,
max_indices) are checked in test_embedding_bag.py.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, register
from .samples import make_tensor, rng_for, strided, transposed

_TOL = {tp.float32: (1e-5, 1e-5), tp.float16: (3e-3, 3e-3), tp.bfloat16: (3e-2, 3e-2)}
_MODES = ("sum", "mean", "max")


def bags_ref(weight, indices, offsets, mode, psw=None, include_last_offset=False, padding_idx=None):
    """One output row per bag, in float64."""
    n = len(indices)
    nbags = len(offsets) - (1 if include_last_offset else 0)
    bounds = [(offsets[b], offsets[b + 1] if b + 1 < len(offsets) else n) for b in range(nbags)]
    out = np.zeros((nbags, weight.shape[1]))
    for b, (s, e) in enumerate(bounds):
        take = [i for i in range(s, e) if padding_idx is None or indices[i] != padding_idx]
        if take:
            rows = weight[indices[take]] * (1 if psw is None else psw[take, None])
            out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


def embedding_bag_ref(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    if input.ndim == 2:  # fixed-size bags: one per row
        offsets = np.arange(0, input.size, max(input.shape[1], 1))[: input.shape[0]]
        if input.shape[1] == 0:
            offsets = np.zeros(input.shape[0], np.int64)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        input = input.reshape(-1)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return bags_ref(weight, input, offsets, mode, per_sample_weights, include_last_offset, padding_idx)


def _embedding_bag_ref(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, psw=None,
                       include_last_offset=False, padding_idx=-1):  # fmt: skip
    pad = None if padding_idx < 0 else padding_idx
    return bags_ref(weight, indices, offsets, _MODES[mode], psw, include_last_offset, pad), None, None, None


def _ints(values, dtype=tp.int64):
    return tp.tensor(np.asarray(values, np.int64)).to(dtype)


def _bag_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    w = make_tensor((10, 4), dtype, rng)
    idx = _ints([1, 3, 3, 0, 9, 2, 5, 5, 7])
    offsets = _ints([0, 2, 2, 5])  # the second bag is empty
    for mode in _MODES:
        yield SampleInput(idx, (w, offsets), {"mode": mode}, name=f"1-d with offsets, {mode}")
        yield SampleInput(_ints(rng.integers(0, 10, (3, 4))), (w,), {"mode": mode}, name=f"2-d bags, {mode}")
    yield SampleInput(
        idx, (w, _ints([0, 2, 5, 9])), {"include_last_offset": True}, name="include_last_offset"
    )
    psw = make_tensor((9,), dtype, rng)
    yield SampleInput(
        idx, (w, offsets), {"mode": "sum", "per_sample_weights": psw}, name="per_sample_weights"
    )
    yield SampleInput(idx, (w, offsets), {"mode": "mean", "padding_idx": 3}, name="padding_idx")
    yield SampleInput(idx, (w, offsets), {"mode": "max", "padding_idx": -1}, name="negative padding_idx")
    yield SampleInput(idx.to(tp.int32), (w, offsets.to(tp.int32)), {"mode": "sum"}, name="int32 indices")
    yield SampleInput(_ints(np.zeros((0,))), (w, _ints([0, 0])), name="no indices, two empty bags")
    yield SampleInput(_ints([[4]]), (make_tensor((5, 1), dtype, rng),), name="one bag of one, one column")
    yield SampleInput(idx, (transposed(make_tensor((10, 4), dtype, rng)), offsets), name="transposed weight")
    yield SampleInput(strided(idx), (strided(w), offsets), {"mode": "max"}, name="strided indices and weight")


def _aten_samples(op, dtype):
    for s in _bag_samples(op, dtype):
        if s.input.dim() != 1:
            continue
        kw = dict(s.kwargs)
        mode = _MODES.index(kw.pop("mode", "mean"))
        psw, last = kw.pop("per_sample_weights", None), kw.pop("include_last_offset", False)
        pad = kw.pop("padding_idx", None)
        pad = -1 if pad is None else pad % 10
        w, offsets = s.args
        yield SampleInput(w, (s.input, offsets, False, mode, False, psw, last, pad), name=s.name)


def _errors(op):
    w, i1, o = tp.ones(10, 3), _ints([1, 2, 3]), _ints([0, 1])
    cases = [
        ((i1, (w,), {}), ValueError, "offsets has to be a 1D Tensor but got None"),
        ((i1, (w, o), {"mode": "min"}), ValueError, "mode has to be one of sum, mean or max"),
        ((i1, (w, _ints([1, 2])), {}), RuntimeError, r"offsets\[0\] has to be 0"),
        ((i1, (w, _ints([0, 2, 1])), {}), RuntimeError, "offsets must be non-decreasing"),
        (
            (_ints([1, 10]), (w, o), {}),
            IndexError,
            "index 10 is out of bounds for dim 0 of weight with size 10",
        ),
        ((i1, (w, o), {"padding_idx": 10}), ValueError, "Padding_idx must be within num_embeddings"),
    ]
    return [ErrorInput(SampleInput(*s), e, rx, False) for s, e, rx in cases]


def _renorm_samples(op, dtype):
    rng = rng_for(op.id, str(dtype))
    w = make_tensor((6, 3), dtype, rng)
    yield SampleInput(w, (_ints([0, 2, 2, 5]), 4.0, 2.0), name="some rows above max_norm, repeated index")
    yield SampleInput(w, (_ints([1, 3]), 30.0, 2.0), name="every row below max_norm")
    yield SampleInput(w, (_ints([0, 1, 4]), 5.0, 1.0), name="norm_type 1")
    yield SampleInput(w, (_ints(np.zeros((0,))), 1.0, 2.0), name="no indices")
    yield SampleInput(
        transposed(make_tensor((6, 3), dtype, rng)), (_ints([4, 1]), 3.0, 2.0), name="transposed"
    )


def _renorm_ref(w, indices, max_norm, norm_type):
    """Rows named by indices whose p-norm exceeds max_norm are scaled to max_norm / (norm + 1e-7)."""
    w = w.copy()
    for i in np.unique(indices):
        norm = np.sum(np.abs(w[i]) ** norm_type) ** (1 / norm_type)
        if norm > max_norm:
            w[i] *= max_norm / (norm + 1e-7)
    return w


register(
    OpInfo(
        "embedding_bag",
        ref=embedding_bag_ref,
        dtypes=FLOATS,
        sample_inputs=_bag_samples,
        result_dtype=lambda s, d: s.args[0].dtype,
        tolerances=_TOL,
        differentiable=False,  # no tpx formula for bags yet
        error_inputs=_errors,
        torch=lambda torch: torch.nn.functional.embedding_bag,
    ),
    OpInfo(
        "_embedding_bag",
        op=lambda *a, **k: tp.ops.call("_embedding_bag", *a, **k),
        ref=_embedding_bag_ref,
        dtypes=FLOATS,
        sample_inputs=_aten_samples,
        tolerances=_TOL,
        differentiable=False,
        # PyTorch leaves offset2bag empty in its no-grad sum/mean paths, so the 4-tuples differ in shape; the
        # bags themselves are compared with PyTorch through the embedding_bag entry above.
        torch=False,
    ),
    OpInfo(
        "embedding_renorm_",
        # in-place on its first argument: run on a copy so that samples stay as they are
        op=lambda w, *a: tp.embedding_renorm_(w.clone(), *a),
        ref=_renorm_ref,
        dtypes=FLOATS,
        sample_inputs=_renorm_samples,
        tolerances=_TOL,
        differentiable=False,
        torch=lambda torch: lambda w, *a: torch.embedding_renorm_(w.clone(), *a),
    ),
)
