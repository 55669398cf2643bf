"""Op database: the NN kernels (kernels/softmax.cpp, norm.cpp, embedding.cpp, loss.cpp, loss_ce.cpp): softmax,
log_softmax, layer_norm, rms_norm, group_norm, batch_norm, instance_norm, embedding, one_hot, dropout and the
losses (mse, l1, smooth_l1, huber, binary_cross_entropy(_with_logits), kl_div, nll_loss, cross_entropy).

References are the textbook float64 formulas written with NumPy, one line each where possible, so a reader
can check a kernel against the maths.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import FLOATS, ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import make_tensor, rng_for, strided, transposed

_TOL = {tp.float32: (1e-4, 1e-5), tp.float16: (5e-3, 2e-3), tp.bfloat16: (4e-2, 2e-2)}


def _mk(op, dtype):
    rng = rng_for(op.id, str(dtype))
    return rng, (lambda *shape, **kw: make_tensor(shape, dtype, rng, **kw))


def _softmax_samples(op, dtype):
    _, t = _mk(op, dtype)
    x = t(3, 4, 5)
    for d in (0, 1, -1):
        yield SampleInput(x, (d,), name=f"dim {d}")
    yield SampleInput(t(), (0,), name="0-d")
    yield SampleInput(t(2, 0), (1,), name="size-0")
    yield SampleInput(t(4, 1), (1,), name="size-1 dim")
    yield SampleInput(transposed(t(4, 6)), (1,), name="transposed")
    yield SampleInput(strided(t(4, 6)), (0,), name="strided")
    yield SampleInput(t(3, 4, low=50, high=90), (1,), name="large values stay finite")
    if dtype is not tp.float64:
        yield SampleInput(x, (1,), {"dtype": tp.float64}, name="dtype=float64")


def _softmax_ref(x, dim, dtype=None):
    z = x - np.max(x, axis=dim, keepdims=True) if x.size else x
    e = np.exp(z)
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_ref(x, dim, dtype=None):
    if not x.size:
        return x
    z = x - np.max(x, axis=dim, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))


def _softmax_dtype(sample, dtype):
    return sample.kwargs.get("dtype", sample.input.dtype)


def _large_softmax(op):
    x = make_tensor((1024, 1024), tp.float32, rng_for(op.id, "large"))
    return SampleInput(x, (1,), name="1M elements")


register(
    OpInfo(
        "softmax",
        ref=_softmax_ref,
        dtypes=FLOATS,
        sample_inputs=_softmax_samples,
        result_dtype=_softmax_dtype,
        tolerances=_TOL,
        large=_large_softmax,
    ),
    OpInfo(
        "log_softmax",
        ref=_log_softmax_ref,
        dtypes=FLOATS,
        sample_inputs=_softmax_samples,
        result_dtype=_softmax_dtype,
        tolerances=_TOL,
        large=_large_softmax,
    ),
)


# Normalisations.
def _layer_norm_samples(op, dtype):
    _, t = _mk(op, dtype)
    x = t(2, 3, 4)
    yield SampleInput(x, ((4,),), name="last dim")
    yield SampleInput(x, ((3, 4),), name="last two dims")
    yield SampleInput(x, ((4,), t(4), t(4)), name="weight and bias")
    yield SampleInput(x, ((4,), t(4), None, 1e-3), name="weight only, eps")
    yield SampleInput(transposed(t(5, 6)), ((6,), t(6), t(6)), name="transposed")
    yield SampleInput(t(0, 4), ((4,),), name="size-0 batch")
    yield SampleInput(t(3, 1), ((1,),), name="one element per row")


def _layer_norm_ref(x, shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = x.mean(axis=axes, keepdims=True) if x.size else x
    var = x.var(axis=axes, keepdims=True) if x.size else x
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if weight is None else weight) + (0 if bias is None else bias)


def _rms_norm_samples(op, dtype):
    _, t = _mk(op, dtype)
    x = t(2, 3, 4)
    yield SampleInput(x, ((4,),), name="last dim")
    yield SampleInput(x, ((3, 4), t(3, 4)), name="two dims, weight")
    yield SampleInput(x, ((4,), None, 1e-2), name="eps")
    yield SampleInput(transposed(t(5, 6)), ((6,), t(6)), name="transposed")
    yield SampleInput(t(0, 4), ((4,),), name="size-0 batch")


def _rms_norm_ref(x, shape, weight=None, eps=None, *, _dtype):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    eps = float(tp.finfo(_dtype).eps) if eps is None else eps
    ms = np.mean(x * x, axis=axes, keepdims=True) if x.size else x
    return x / np.sqrt(ms + eps) * (1 if weight is None else weight)


def _group_norm_samples(op, dtype):
    _, t = _mk(op, dtype)
    yield SampleInput(t(2, 6, 5), (3,), name="3 groups")
    yield SampleInput(t(2, 6, 2, 2), (2, t(6), t(6)), name="4-d, affine")
    yield SampleInput(t(2, 4), (4,), name="one channel per group, no spatial dims")
    yield SampleInput(transposed(t(2, 5, 6)), (1,), name="transposed")


def _group_norm_ref(x, groups, weight=None, bias=None, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * (1 if weight is None else weight.reshape(shape)) + (0 if bias is None else bias.reshape(shape))


def _batch_norm_samples(op, dtype):
    _, t = _mk(op, dtype)
    x = t(4, 3, 5)
    stats = lambda: (t(3), t(3, low=0.5, high=2))  # noqa: E731
    yield SampleInput(x, (t(3), t(3), *stats(), False, 0.1, 1e-5), name="eval, running stats")
    yield SampleInput(x, (None, None, None, None, True, 0.1, 1e-5), name="training, no stats")
    yield SampleInput(t(4, 3), (t(3), t(3), None, None, True, 0.1, 1e-3), name="2-d input")
    yield SampleInput(
        transposed(t(4, 3, 2, 2).reshape(4, 3, 4)),
        (None, None, *stats(), False, 0.1, 1e-5),
        name="transposed",
    )


def _batch_norm_ref(x, weight, bias, rmean, rvar, training, momentum, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        mu, var = x.mean(axis=axes).reshape(shape), x.var(axis=axes).reshape(shape)
    else:
        mu, var = rmean.reshape(shape), rvar.reshape(shape)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if weight is None else weight.reshape(shape)) + (0 if bias is None else bias.reshape(shape))


def _instance_norm_samples(op, dtype):
    _, t = _mk(op, dtype)
    yield SampleInput(t(2, 3, 5), name="plain")
    yield SampleInput(t(2, 3, 2, 3), (t(3), t(3)), name="4-d, affine")
    yield SampleInput(transposed(t(2, 5, 4)), kwargs={"eps": 1e-3}, name="transposed, eps")


def _instance_norm_ref(
    x,
    weight=None,
    bias=None,
    running_mean=None,
    running_var=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    axes = tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return y * (1 if weight is None else weight.reshape(shape)) + (0 if bias is None else bias.reshape(shape))


_F = lambda name: lambda torch: getattr(torch.nn.functional, name)  # noqa: E731
register(
    OpInfo(
        "layer_norm",
        ref=_layer_norm_ref,
        dtypes=FLOATS,
        sample_inputs=_layer_norm_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
        error_inputs=lambda op: [
            ErrorInput(SampleInput(tp.ones(2, 3), ((4,),)), RuntimeError, "normalized_shape", False)
        ],
    ),
    OpInfo(
        "rms_norm",
        ref=_rms_norm_ref,
        ref_gets_dtype=True,
        dtypes=FLOATS,
        sample_inputs=_rms_norm_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
    ),
    OpInfo(
        "group_norm",
        ref=_group_norm_ref,
        dtypes=FLOATS,
        sample_inputs=_group_norm_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(2, 6, 3), (4,)),
                RuntimeError,
                "Expected number of channels in input to be divisible by num_groups",
                False,
            )
        ],
    ),
    OpInfo(
        "batch_norm",
        torch=lambda torch: lambda *a: torch.batch_norm(*a, False),
        ref=_batch_norm_ref,
        dtypes=FLOATS,
        sample_inputs=_batch_norm_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
    ),
    OpInfo(
        "instance_norm",
        torch=lambda torch: (
            lambda x, w=None, b=None, rm=None, rv=None, use=True, mom=0.1, eps=1e-5: torch.instance_norm(
                x, w, b, rm, rv, use, mom, eps, False
            )
        ),
        ref=_instance_norm_ref,
        dtypes=FLOATS,
        sample_inputs=_instance_norm_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
    ),
)


# embedding, one_hot, dropout.
def _embedding_samples(op, dtype):
    rng, t = _mk(op, dtype)
    w = t(6, 3)
    yield SampleInput(w, (tp.tensor(rng.integers(0, 6, (2, 4)).astype(np.int64)),), name="2-d indices")
    yield SampleInput(w, (tp.tensor([0, 5, 5]), 5), name="padding_idx")
    yield SampleInput(
        transposed(t(3, 6).t().contiguous().t().t()), (tp.tensor([1, 2]),), name="transposed weight"
    )
    yield SampleInput(w, (tp.tensor(np.zeros((0,), np.int64)),), name="no indices")
    yield SampleInput(w, (tp.tensor(3),), name="0-d index")


register(
    OpInfo(
        "embedding",
        ref=lambda w, idx, padding_idx=-1, *a: w[idx],
        dtypes=FLOATS + (tp.int64,),
        sample_inputs=_embedding_samples,
        result_dtype=same_dtype,
        torch=lambda torch: torch.embedding,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(3, 2), (tp.tensor([3]),)),
                IndexError,
                "index 3 is out of bounds|out of range",
                False,
            )
        ],
    ),
    OpInfo(
        "one_hot",
        ref=lambda x, n=-1: np.eye(n if n >= 0 else (x.max() + 1 if x.size else 0), dtype=np.int64)[x],
        dtypes=(tp.int64,),
        sample_inputs=lambda op, d: [
            SampleInput(tp.tensor([[0, 2], [1, 3]]), data_dependent=True),
            SampleInput(tp.tensor([1, 0]), (4,), name="num_classes"),
            SampleInput(tp.tensor(2), (3,), name="0-d"),
            SampleInput(tp.tensor([[0, 1, 2]]).t(), (3,), name="transposed"),
        ],
        result_dtype=lambda s, d: tp.int64,
        differentiable=False,
        torch=_F("one_hot"),
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.tensor([0, 3]), (3,)),
                RuntimeError,
                "Class values must be smaller than num_classes",
                False,
            )
        ],
    ),
)


def _dropout_samples(op, dtype):
    _, t = _mk(op, dtype)
    yield SampleInput(t(3, 4), (0.0, True), name="p=0 keeps everything")
    yield SampleInput(t(3, 4), (0.5, False), name="eval is the identity")
    yield SampleInput(transposed(t(3, 4)), (0.0, True), name="transposed")
    yield SampleInput(t(0, 2), (0.5, True), name="size-0")


register(
    OpInfo(
        "dropout",
        ref=lambda x, p, train: x,
        dtypes=FLOATS,
        sample_inputs=_dropout_samples,
        result_dtype=same_dtype,
        torch=lambda torch: torch.dropout,
    )
)


# Losses: every reduction; targets of the matching shape or class indices.
def _pointwise_loss_samples(op, dtype):
    rng, t = _mk(op, dtype)
    prob = op.name == "binary_cross_entropy"
    lo, hi = (0.05, 0.95) if prob else (-3, 3)
    # Targets are probabilities for the cross-entropies and kl_div (a negative target is NaN there).
    to_prob = prob or op.name in ("binary_cross_entropy_with_logits", "kl_div")
    x, y = t(3, 4, low=lo, high=hi), t(3, 4, low=0 if to_prob else -3, high=1 if to_prob else 3)
    for red in ("mean", "sum", "none"):
        yield SampleInput(x, (y,), {"reduction": red}, name=red)
    yield SampleInput(
        transposed(t(4, 3, low=lo, high=hi)), (strided(t(4, 3, low=0, high=1)),), name="non-contiguous"
    )
    yield SampleInput(
        t(0, 2, low=lo, high=hi), (t(0, 2, low=0, high=1),), {"reduction": "sum"}, name="size-0 sum"
    )
    if op.name in ("smooth_l1_loss", "huber_loss"):
        yield SampleInput(
            x, (y,), {"beta" if op.name == "smooth_l1_loss" else "delta": 0.5}, name="beta/delta"
        )
    if op.name == "kl_div":
        yield SampleInput(x, (y,), {"log_target": True, "reduction": "sum"}, name="log_target")
    if op.name.startswith("binary_cross_entropy"):
        yield SampleInput(x, (y, t(4, low=0.5, high=2)), name="weight")
    if op.name == "binary_cross_entropy_with_logits":
        yield SampleInput(
            x, (y,), {"pos_weight": t(4, low=0.5, high=2), "reduction": "sum"}, name="pos_weight"
        )


def _reduce(v, reduction):
    return v.mean() if reduction == "mean" else v.sum() if reduction == "sum" else v


def _smooth_l1(x, y, reduction="mean", beta=1.0):
    d = np.abs(x - y)
    return _reduce(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta) if beta > 0 else d, reduction)


def _huber(x, y, reduction="mean", delta=1.0):
    d = np.abs(x - y)
    return _reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def _bce(x, y, weight=None, reduction="mean"):
    v = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
    return _reduce(v * (1 if weight is None else weight), reduction)


def _bce_logits(x, y, weight=None, pos_weight=None, reduction="mean"):
    pw = 1 if pos_weight is None else pos_weight
    log_sig, log_1m = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    v = -(pw * y * log_sig + (1 - y) * log_1m)
    return _reduce(v * (1 if weight is None else weight), reduction)


def _kl_div(x, y, reduction="mean", log_target=False):
    with np.errstate(all="ignore"):
        # PyTorch's formula: xlogy(target, target) - target * input (0 where the target is 0).
        v = (
            np.exp(y) * (y - x)
            if log_target
            else np.where(y == 0, 0.0, y * np.log(np.where(y == 0, 1, y))) - y * x
        )
    return _reduce(v, reduction)


_POINTWISE = {
    "mse_loss": lambda x, y, reduction="mean": _reduce((x - y) ** 2, reduction),
    "l1_loss": lambda x, y, reduction="mean": _reduce(np.abs(x - y), reduction),
    "smooth_l1_loss": _smooth_l1,
    "huber_loss": _huber,
    "binary_cross_entropy": _bce,
    "binary_cross_entropy_with_logits": _bce_logits,
    "kl_div": _kl_div,
}
for _name, _ref in _POINTWISE.items():
    register(
        OpInfo(
            _name,
            ref=_ref,
            dtypes=FLOATS,
            sample_inputs=_pointwise_loss_samples,
            result_dtype=same_dtype,
            tolerances=_TOL,
            torch=_F(_name),
            error_inputs=lambda op: [
                ErrorInput(
                    SampleInput(tp.ones(2, 2), (tp.ones(2, 2),), {"reduction": "avg"}),
                    ValueError,
                    "avg is not a valid value for reduction",
                    False,  # PyTorch's wording, which does not name the loss
                )
            ],
        )
    )


def _class_loss_samples(op, dtype):
    rng, t = _mk(op, dtype)
    logp = op.name == "nll_loss"
    x = t(5, 4, low=-3, high=0 if logp else 3)
    target = tp.tensor(rng.integers(0, 4, 5).astype(np.int64))
    for red in ("mean", "sum", "none"):
        yield SampleInput(x, (target,), {"reduction": red}, name=red)
    yield SampleInput(x, (target, t(4, low=0.5, high=2)), name="weight")
    ign = tp.tensor([0, 1, 2, 1, 3])
    yield SampleInput(x, (ign,), {"ignore_index": 1}, name="ignore_index")
    yield SampleInput(
        t(2, 4, 3, low=-3, high=0),
        (tp.tensor(rng.integers(0, 4, (2, 3)).astype(np.int64)),),
        name="spatial (N, C, d)",
    )
    yield SampleInput(t(4, low=-3, high=0), (tp.tensor(2),), name="unbatched")
    yield SampleInput(transposed(t(5, 4, low=-3, high=0)), (target,), name="transposed")
    if op.name == "cross_entropy":
        yield SampleInput(x, (target,), {"label_smoothing": 0.2}, name="label_smoothing")
        probs = tp.softmax(t(5, 4), 1)
        yield SampleInput(x, (probs,), name="class probabilities")
        yield SampleInput(
            x, (probs, t(4, low=0.5, high=2)), {"label_smoothing": 0.1}, name="probabilities, weight"
        )


def _nll(logp, target, weight=None, reduction="mean", ignore_index=-100):
    c = logp.shape[1] if logp.ndim > 1 else logp.shape[0]
    w = np.ones(c) if weight is None else weight
    lp = np.moveaxis(logp, 1, -1) if logp.ndim > 1 else logp
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(lp, safe[..., None], axis=-1)[..., 0]
    wt = np.where(keep, w[safe], 0.0)
    v = -picked * wt
    if reduction == "mean":
        return v.sum() / wt.sum()
    return v.sum() if reduction == "sum" else v


def _cross_entropy(x, target, weight=None, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    axis = 1 if x.ndim > 1 else 0
    logp = x - np.max(x, axis=axis, keepdims=True)
    logp = logp - np.log(np.sum(np.exp(logp), axis=axis, keepdims=True))
    c = x.shape[axis]
    w = np.ones(c) if weight is None else weight
    wshape = [1] * x.ndim
    wshape[axis] = c
    if target.dtype.kind == "f":  # class probabilities
        t = target * (1 - label_smoothing) + label_smoothing / c
        v = -np.sum(logp * t * w.reshape(wshape), axis=axis)
        return v.mean() if reduction == "mean" else v.sum() if reduction == "sum" else v
    nll = _nll(logp, target, weight, reduction, ignore_index)
    if label_smoothing == 0:
        return nll
    keep = target != ignore_index
    smooth = -np.sum(logp * w.reshape(wshape), axis=axis) * keep
    if reduction == "mean":
        wt = np.where(keep, w[np.where(keep, target, 0)], 0.0).sum()
        smooth = smooth.sum() / wt
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + label_smoothing / c * smooth


register(
    OpInfo(
        "nll_loss",
        ref=_nll,
        dtypes=FLOATS,
        sample_inputs=_class_loss_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
        torch=_F("nll_loss"),
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(2, 3), (tp.tensor([0, 3]),)),
                IndexError,
                "Target 3 is out of bounds",
                False,
            )
        ],
    ),
    OpInfo(
        "cross_entropy",
        ref=_cross_entropy,
        dtypes=FLOATS,
        sample_inputs=_class_loss_samples,
        result_dtype=same_dtype,
        tolerances=_TOL,
        torch=_F("cross_entropy"),
    ),
)
