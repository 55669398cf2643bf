"""nll_loss, cross_entropy (cross_entropy.cu) and the pointwise losses (loss.cu) on the GPU, against float64
NumPy formulas written here and the CPU op.

Covered: class indices and probabilities, [C] / [N, C] / [N, C, d1, d2] inputs (a thread per position when
D > 1, a warp or a block per row when D == 1), weights, ignore_index, label smoothing, every reduction, an
all-ignored mean (NaN), -inf logits, non-contiguous inputs, each dtype, out-of-range targets (IndexError,
the context still usable after), errors of the same type as the CPU op's; the pointwise losses over their
parameters, broadcasting, weights, pos_weight, bce's [0, 1] check; backward through autograd on CUDA against
the CPU gradients. They need a GPU and skip elsewhere ("needs a CUDA device").
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, f64, needs_cuda  # noqa: E402

pytestmark = needs_cuda


rng = np.random.default_rng(0)
REDUCTIONS = ["mean", "sum", "none"]
TOL = {tp.float16: 5e-3, tp.bfloat16: 4e-2, tp.float32: 2e-5, tp.float64: 1e-11}


def close(got, want, tol):
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape
    scale = max(1.0, float(np.nanmax(np.abs(want)))) if want.size and not np.isnan(want).all() else 1.0
    np.testing.assert_allclose(f64(got), want, rtol=tol, atol=tol * scale)


def t_(a, dtype=tp.float32, dev="cpu") -> tp.Tensor:
    return tp.from_numpy(np.array(a, order="C")).to(dtype).to(dev)  # ascontiguousarray would make 0-d 1-d


def reduce_ref(loss, reduction, denom=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore"):
        return loss.sum() / (loss.size if denom is None else denom)


def classes_last(x):
    return x[None] if x.ndim == 1 else np.moveaxis(x, 1, -1)


def log_softmax_ref(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def ce_ref(x, t, w, reduction, ignore_index=-100, smoothing=0.0, log=True):
    """x: [C] or [N, C, d...] float64; t: indices. PyTorch's formulas, the class axis moved last."""
    lp = classes_last(x)
    lp = log_softmax_ref(lp) if log else lp
    c = lp.shape[-1]
    w = np.ones(c) if w is None else w
    t = t.reshape(lp.shape[:-1])
    keep = t != ignore_index
    ts = np.where(keep, t, 0)
    wt = np.where(keep, w[ts], 0.0)
    loss = -wt * np.take_along_axis(lp, ts[..., None], -1)[..., 0]
    if smoothing:
        loss = (1 - smoothing) * loss + smoothing / c * np.where(keep, -(lp * w).sum(-1), 0.0)
    loss = reduce_ref(loss, reduction, wt.sum())
    return loss[0] if x.ndim == 1 and reduction == "none" else loss


def ce_probs_ref(x, q, w, reduction, smoothing=0.0):
    lp = log_softmax_ref(classes_last(x))
    c = lp.shape[-1]
    w = np.ones(c) if w is None else w
    loss = -(lp * (classes_last(q) * (1 - smoothing) + smoothing / c) * w).sum(-1)
    loss = reduce_ref(loss, reduction)
    return loss[0] if x.ndim == 1 and reduction == "none" else loss


def case(shape, ignore=False):
    x = 3 * rng.standard_normal(shape)
    c = shape[0] if len(shape) == 1 else shape[1]
    t = rng.integers(0, c, () if len(shape) == 1 else (shape[0],) + shape[2:])
    if ignore and t.size:
        t.reshape(-1)[:: max(1, t.size // 3)] = -100
    return x, np.asarray(t, dtype=np.int64), c


SHAPES = [(5,), (6, 5), (3, 4, 2, 3), (0, 5), (40, 300), (4, 1500)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "weighted,ignore,smoothing", [(False, False, 0.0), (True, True, 0.0), (True, True, 0.1)]
)
def test_cross_entropy_indices(shape, reduction, weighted, ignore, smoothing):
    x, t, c = case(shape, ignore)
    w = rng.uniform(0.5, 2, c) if weighted else None
    args = dict(reduction=reduction, ignore_index=-100, label_smoothing=smoothing)
    tw = None if w is None else t_(w)
    got = tp.cross_entropy(t_(x, dev=DEV), t_(t, tp.int64, DEV), None if w is None else tw.to(DEV), **args)
    cpu = tp.cross_entropy(t_(x), t_(t, tp.int64), tw, **args)
    assert got.device.type == DEV and got.dtype is cpu.dtype and got.shape == cpu.shape
    xq = f64(t_(x))  # the float32 input, exactly
    close(got, f64(cpu), 2e-5)
    close(got, ce_ref(xq, t, None if w is None else f64(tw), reduction, -100, smoothing), 2e-5)


@pytest.mark.parametrize("shape", [(5,), (6, 5), (3, 4, 2, 3), (40, 300), (4, 1500)], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,ignore", [(False, False), (True, True)])
def test_nll_loss(shape, reduction, weighted, ignore):
    x, t, c = case(shape, ignore)
    w = t_(rng.uniform(0.5, 2, c)) if weighted else None
    got = tp.nll_loss(t_(x, dev=DEV), t_(t, tp.int64, DEV), None if w is None else w.to(DEV), reduction)
    cpu = tp.nll_loss(t_(x), t_(t, tp.int64), w, reduction)
    close(got, f64(cpu), 2e-5)
    close(got, ce_ref(f64(t_(x)), t, None if w is None else f64(w), reduction, log=False), 2e-5)


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 2, 3), (4, 1500)], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,smoothing", [(False, 0.0), (True, 0.2)])
def test_cross_entropy_probabilities(shape, reduction, weighted, smoothing):
    x = 3 * rng.standard_normal(shape)
    q = rng.uniform(0, 1, shape)
    q = q / q.sum(axis=1, keepdims=True)
    w = t_(rng.uniform(0.5, 2, shape[1])) if weighted else None
    args = dict(reduction=reduction, label_smoothing=smoothing)
    got = tp.cross_entropy(t_(x, dev=DEV), t_(q, dev=DEV), None if w is None else w.to(DEV), **args)
    cpu = tp.cross_entropy(t_(x), t_(q), w, **args)
    close(got, f64(cpu), 2e-5)
    close(
        got,
        ce_probs_ref(f64(t_(x)), f64(t_(q)), None if w is None else f64(w), reduction, smoothing),
        2e-5,
    )


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float64], ids=str)
def test_cross_entropy_dtypes(dtype):
    for shape in [(64, 10), (8, 3000), (2, 5, 7)]:
        x, t, _ = case(shape)
        xd = t_(x, dtype)
        got = tp.cross_entropy(xd.to(DEV), t_(t, tp.int64, DEV), reduction="none", label_smoothing=0.05)
        assert got.dtype is dtype
        close(got, ce_ref(f64(xd), t, None, "none", smoothing=0.05), TOL[dtype])
        close(
            tp.cross_entropy(xd.to(DEV), t_(t, tp.int64, DEV)), ce_ref(f64(xd), t, None, "mean"), TOL[dtype]
        )


def test_cross_entropy_edges():
    x, t, _ = case((7, 50))
    xt = t_(np.ascontiguousarray(x.T)).to(DEV).t()  # non-contiguous logits
    close(
        tp.cross_entropy(xt, t_(t, tp.int64, DEV), reduction="none"), ce_ref(f64(xt), t, None, "none"), 2e-5
    )
    rows = np.array([[-np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf], [np.nan, 0.0, 1.0]])
    got = tp.cross_entropy(t_(rows, dev=DEV), t_(np.array([2, 1, 1]), tp.int64, DEV), reduction="none")
    cpu = tp.cross_entropy(t_(rows), t_(np.array([2, 1, 1]), tp.int64), reduction="none")
    np.testing.assert_array_equal(np.isnan(f64(got)), np.isnan(f64(cpu)))  # finite, NaN, NaN
    close(got[:1], f64(cpu)[:1], 1e-6)
    ignored = t_(np.full(4, -100), tp.int64, DEV)
    assert np.isnan(f64(tp.cross_entropy(tp.zeros((4, 3), device=DEV), ignored)))  # 0 / 0
    assert f64(tp.nll_loss(tp.zeros((4, 3), device=DEV), ignored, reduction="sum")) == 0.0


def test_errors_match_the_cpu():
    x, bad = tp.zeros((4, 3)), tp.tensor([0, 1, 3, 0])
    for fn in (tp.cross_entropy, tp.nll_loss):
        with pytest.raises(IndexError, match="Target 3 is out of bounds"):
            fn(x.to(DEV), bad.to(DEV))
    assert tp.cross_entropy(x.to(DEV), tp.tensor([0, 1, 2, 0], device=DEV)).device.type == DEV  # still usable
    calls = [
        lambda d: tp.cross_entropy(x.to(d), tp.tensor([0, 1]).to(d)),  # batch size
        lambda d: tp.cross_entropy(x.to(d), tp.tensor([0, 1, 2, 0]).to(d), label_smoothing=1.5),
        lambda d: tp.cross_entropy(x.to(d), tp.zeros((4, 3), dtype=tp.int64).to(d)),  # integer probabilities
        lambda d: tp.nll_loss(x.to(d), tp.tensor([0, 1, 2, 0]).to(d), tp.ones(2).to(d)),  # weight size
        lambda d: tp.nll_loss(x.to(d), tp.tensor([0, 1, 2, 0]).to(d), reduction="avg"),
        lambda d: tp.mse_loss(x.to(d), x.to(d), reduction="avg"),
        lambda d: tp.smooth_l1_loss(x.to(d), x.to(d), beta=-1.0),
        lambda d: tp.huber_loss(x.to(d), x.to(d), delta=0.0),
        lambda d: tp.binary_cross_entropy(x.to(d), tp.zeros((4, 1)).to(d)),  # sizes differ
        lambda d: tp.binary_cross_entropy(x.to(d) + 2, x.to(d)),  # input outside [0, 1]
        lambda d: tp.mse_loss(tp.zeros(3, dtype=tp.int64).to(d), tp.zeros(3, dtype=tp.int64).to(d)),
    ]
    for call in calls:
        with pytest.raises(Exception) as cpu_error:
            call("cpu")
        with pytest.raises(cpu_error.type):
            call(DEV)


# ---- the pointwise losses ---------------------------------------------------------------------------------


def pointwise_ref(name, x, y, p=None, w=None, pw=None, log_target=False):
    d = x - y
    if name == "mse_loss":
        return d * d
    if name == "l1_loss":
        return np.abs(d)
    if name == "smooth_l1_loss":
        return np.where(np.abs(d) < p, 0.5 * d * d / max(p, 1e-300), np.abs(d) - 0.5 * p)
    if name == "huber_loss":
        return np.where(np.abs(d) < p, 0.5 * d * d, p * (np.abs(d) - 0.5 * p))
    if name == "binary_cross_entropy":
        with np.errstate(divide="ignore"):
            loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
        return loss if w is None else loss * w
    if name == "binary_cross_entropy_with_logits":
        lw = 1 if pw is None else 1 + (pw - 1) * y
        loss = (1 - y) * x + lw * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
        return loss if w is None else loss * w
    with np.errstate(divide="ignore", invalid="ignore"):
        if log_target:
            return np.exp(y) * (y - x)
        return np.where(y == 0, 0.0, y * np.log(np.where(y > 0, y, 1))) - y * x


CASES = [
    ("mse_loss", {}),
    ("l1_loss", {}),
    ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0}),
    ("huber_loss", {"delta": 0.7}),
    ("binary_cross_entropy", {}),
    ("binary_cross_entropy", {"weight": True}),
    ("binary_cross_entropy_with_logits", {}),
    ("binary_cross_entropy_with_logits", {"weight": True, "pos_weight": True}),
    ("kl_div", {}),
    ("kl_div", {"log_target": True}),
]


def pointwise_call(name, x, y, reduction, opts, w, pw):
    fn = getattr(tp, name)
    if name == "binary_cross_entropy":
        return fn(x, y, w, reduction)
    if name == "binary_cross_entropy_with_logits":
        return fn(x, y, w, pw, reduction)
    return fn(x, y, reduction, **{k: v for k, v in opts.items() if k in ("beta", "delta", "log_target")})


@pytest.mark.parametrize("name,opts", CASES, ids=lambda v: str(v) if isinstance(v, dict) else v)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.float64], ids=str)
def test_pointwise(name, opts, reduction, dtype):
    shape = (37, 41)
    probs = name == "binary_cross_entropy"
    x = rng.uniform(0.01, 0.99, shape) if probs else rng.standard_normal(shape)
    y = (
        rng.uniform(0, 1, shape)
        if name.startswith("binary") or name == "kl_div"
        else rng.standard_normal(shape)
    )
    if name == "kl_div" and not opts.get("log_target"):
        y[0, :5] = 0.0  # 0 log 0 = 0
    xt, yt = t_(x, dtype), t_(y, dtype)
    w = t_(rng.uniform(0.5, 2, (41,)), dtype) if opts.get("weight") else None  # broadcast over rows
    pw = t_(rng.uniform(0.5, 2, (41,)), dtype) if opts.get("pos_weight") else None
    cuda = lambda t: None if t is None else t.to(DEV)  # noqa: E731
    got = pointwise_call(name, cuda(xt), cuda(yt), reduction, opts, cuda(w), cuda(pw))
    cpu = pointwise_call(name, xt, yt, reduction, opts, w, pw)
    assert got.device.type == DEV and got.dtype is cpu.dtype and got.shape == cpu.shape
    p = opts.get("beta", opts.get("delta"))
    ref = pointwise_ref(
        name,
        f64(xt),
        f64(yt),
        p,
        None if w is None else f64(w),
        None if pw is None else f64(pw),
        opts.get("log_target", False),
    )
    tol = 4 * TOL[dtype] if reduction == "none" else 20 * TOL[dtype]
    close(got, f64(cpu), tol)
    close(got, reduce_ref(ref, reduction), tol)


def test_pointwise_layouts_and_edges():
    x, y = t_(rng.standard_normal((6, 5))), t_(rng.standard_normal((5,)))
    got = tp.mse_loss(
        x.to(DEV).t(), y.to(DEV)[:, None], reduction="none"
    )  # transposed input, broadcast target
    close(got, f64(tp.mse_loss(x.t(), y[:, None], reduction="none")), 1e-6)
    close(tp.l1_loss(x.to(DEV)[::2], y.to(DEV)), f64(tp.l1_loss(x[::2], y)), 1e-6)  # strided rows
    big = t_(rng.standard_normal((1 << 20) + 3))
    close(tp.mse_loss(big.to(DEV), big.to(DEV) * 0, reduction="sum"), f64(big) @ f64(big), 1e-5)
    empty = tp.zeros((0, 3), device=DEV)
    assert np.isnan(f64(tp.mse_loss(empty, empty)))  # mean of nothing: 0 / 0
    assert f64(tp.l1_loss(empty, empty, reduction="sum")) == 0.0
    assert tp.huber_loss(empty, empty, reduction="none").shape == (0, 3)
    one = tp.tensor(2.0, device=DEV)
    assert f64(tp.mse_loss(one, tp.tensor(0.5, device=DEV))) == 2.25  # 0-d


def _grads(fn, tensors, dev):
    from tensorplay_tpx.autograd import grad

    args = [t.to(dev).requires_grad_(True) for t in tensors]
    return grad(fn(*args), args)


def check_grads(fn, tensors):
    for g_gpu, g_cpu in zip(_grads(fn, tensors, DEV), _grads(fn, tensors, "cpu"), strict=True):
        assert g_gpu.device.type == DEV
        close(g_gpu, f64(g_cpu), 1e-5)


def test_pointwise_backward_matches_cpu():
    pytest.importorskip("tensorplay_tpx")
    x, y = t_(rng.standard_normal((5, 7))), t_(rng.uniform(0, 1, (5, 7)))
    check_grads(lambda a, b: tp.mse_loss(a, b), (x, y))
    check_grads(lambda a, b: tp.binary_cross_entropy_with_logits(a, b, reduction="sum"), (x, y))


def test_class_loss_backward_matches_cpu():
    # the formulas (tpx formulas/nn.py) build one-hot rows with scatter and pick weights by indexing: those
    # ops need their CUDA kernels too
    pytest.importorskip("tensorplay_tpx")
    x, y = t_(rng.standard_normal((5, 7))), t_(rng.uniform(0, 1, (5, 7)))
    t = tp.tensor([0, 6, -100, 3, 2])
    check_grads(lambda a: tp.cross_entropy(a, t.to(a.device), label_smoothing=0.1), (x,))
    check_grads(lambda a: tp.nll_loss(tp.log_softmax(a, 1), t.to(a.device), reduction="sum"), (x,))
    check_grads(lambda a: tp.cross_entropy(a, y.to(a.device), reduction="sum"), (x,))  # probabilities
