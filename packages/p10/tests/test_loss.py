"""Losses (kernels/loss.cpp, kernels/loss_ce.cpp) against float64 NumPy formulas written here.

nll_loss and cross_entropy are checked over reductions, class weights, ignore_index, label smoothing, class
indices and class probabilities, [C] / [N, C] / [N, C, d1, d2] inputs, non-contiguous inputs, empty batches
and their errors; the pointwise losses over reductions, broadcasting, weights and their parameters. Where
PyTorch is installed the results are also compared with torch.nn.functional.
"""

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)
REDUCTIONS = ["mean", "sum", "none"]
DTYPES = [(np.float32, 2e-5), (np.float64, 1e-12)]


def check(got, want, rtol):
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape
    got = np.asarray(got.tolist(), dtype=np.float64).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def reduce_ref(loss, reduction, denom=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore"):  # an empty or all-ignored mean is 0 / 0 = nan, as in PyTorch
        return loss.sum() / (loss.size if denom is None else denom)


# ---- references for the classification losses: class axis moved last, input [P, C] ------------------------


def classes_last(x):
    """[C] -> [1, C]; [N, C, d...] -> [N, d..., C]."""
    return x[None] if x.ndim == 1 else np.moveaxis(x, 1, -1)


def log_softmax_ref(x):
    x = x.astype(np.float64)
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def nll_ref(logp, target, weight=None, reduction="mean", ignore_index=-100, smoothing=0.0):
    """logp: class-last float64 log-probabilities; target: matching indices. PyTorch's formulas."""
    c = logp.shape[-1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    t = target.reshape(logp.shape[:-1])
    keep = t != ignore_index
    ts = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, ts[..., None], -1)[..., 0]
    wt = np.where(keep, w[ts], 0.0)
    loss = -wt * picked
    if smoothing:
        smooth = np.where(keep, -(logp * w).sum(-1), 0.0)
        loss = (1 - smoothing) * loss + smoothing / c * smooth
    return reduce_ref(loss, reduction, wt.sum())


def probs_ref(logp, q, weight=None, reduction="mean", smoothing=0.0):
    c = logp.shape[-1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    q = q.astype(np.float64) * (1 - smoothing) + smoothing / c
    loss = -(logp * q * w).sum(-1)
    return reduce_ref(loss, reduction)


def shaped(ref_loss, x):
    """A class-last reference result back in PyTorch's unreduced shape ([] for a 1-D input)."""
    return ref_loss[0] if x.ndim == 1 and np.ndim(ref_loss) else ref_loss


SHAPES = [(5,), (6, 5), (3, 4, 2, 3), (0, 5)]


def make_case(shape, dtype, ignore=False):
    x = rng.standard_normal(shape).astype(dtype) * 3
    c = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = rng.integers(0, c, tshape).astype(np.int64)
    if ignore and t.size:
        t.reshape(-1)[:: max(1, t.size // 3)] = -100
    return x, t, c


@pytest.mark.parametrize("dtype,rtol", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
def test_nll_loss(dtype, rtol, shape, reduction, weighted, ignore):
    x, t, c = make_case(shape, dtype, ignore)
    w = rng.uniform(0.5, 2, c).astype(dtype) if weighted else None
    got = tp.nll_loss(tp.tensor(x), tp.tensor(t), tp.tensor(w) if weighted else None, reduction)
    want = nll_ref(classes_last(x).astype(np.float64), t, w, reduction)
    assert got.dtype == tp.tensor(x).dtype
    with np.errstate(invalid="ignore"):
        check(got, shaped(want, x), rtol)


@pytest.mark.parametrize("dtype,rtol", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("ignore", [False, True])
def test_cross_entropy_indices(dtype, rtol, shape, reduction, weighted, smoothing, ignore):
    x, t, c = make_case(shape, dtype, ignore)
    w = rng.uniform(0.5, 2, c).astype(dtype) if weighted else None
    got = tp.cross_entropy(
        tp.tensor(x), tp.tensor(t), tp.tensor(w) if weighted else None, reduction, label_smoothing=smoothing
    )
    logp = log_softmax_ref(classes_last(x))
    with np.errstate(invalid="ignore"):
        check(got, shaped(nll_ref(logp, t, w, reduction, smoothing=smoothing), x), rtol)


@pytest.mark.parametrize("dtype,rtol", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities(dtype, rtol, shape, reduction, weighted, smoothing):
    x = rng.standard_normal(shape).astype(dtype) * 3
    q = rng.uniform(0, 1, shape).astype(dtype)
    c = shape[0] if len(shape) == 1 else shape[1]
    w = rng.uniform(0.5, 2, c).astype(dtype) if weighted else None
    got = tp.cross_entropy(tp.tensor(x), tp.tensor(q), tp.tensor(w) if weighted else None, reduction,
                           label_smoothing=smoothing)  # fmt: skip
    want = probs_ref(log_softmax_ref(classes_last(x)), classes_last(q), w, reduction, smoothing)
    with np.errstate(invalid="ignore"):
        check(got, shaped(want, x), rtol)


def test_cross_entropy_non_contiguous_and_extreme_logits():
    x = rng.standard_normal((5, 7)) * 3
    x[0, 2] = 1e4  # the max subtraction keeps exp finite
    x[1] = -1e4
    t = np.array([2, 0, 6, 3, 1])
    xt = tp.tensor(np.ascontiguousarray(x.T)).t()  # transposed in memory
    check(
        tp.cross_entropy(xt, tp.tensor(t), reduction="none"),
        nll_ref(log_softmax_ref(x), t, None, "none"),
        1e-12,
    )
    xs = tp.tensor(np.repeat(x, 2, axis=1))[:, ::2]
    check(tp.cross_entropy(xs, tp.tensor(t)), nll_ref(log_softmax_ref(x), t), 1e-12)
    nan_row = x.copy()
    nan_row[3, 4] = np.nan
    got = tp.cross_entropy(tp.tensor(nan_row), tp.tensor(t), reduction="none").tolist()
    assert math.isnan(got[3]) and not any(math.isnan(v) for i, v in enumerate(got) if i != 3)


def test_cross_entropy_large_threaded():
    x = (rng.standard_normal((2048, 1000)) * 4).astype(np.float32)  # 2M elements: the threaded row loop
    t = rng.integers(0, 1000, 2048)
    want = nll_ref(log_softmax_ref(x), t, None, "none")
    check(tp.cross_entropy(tp.tensor(x), tp.tensor(t), reduction="none"), want, 1e-5)
    check(tp.cross_entropy(tp.tensor(x), tp.tensor(t)), want.mean(), 1e-5)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_half_precision_losses_compute_in_float32(dtype):
    x = rng.standard_normal((6, 5))
    t = np.array([0, 1, 2, 3, 4, 0])
    xh = tp.tensor(x).to(dtype)
    xr = np.asarray(xh.to(tp.float64).tolist())  # the rounded inputs, in float64
    got = tp.cross_entropy(xh, tp.tensor(t), label_smoothing=0.1)
    assert got.dtype == dtype
    check(got.to(tp.float64), nll_ref(log_softmax_ref(xr), t, smoothing=0.1), 1e-2)
    check(tp.mse_loss(xh, xh * 0).to(tp.float64), (xr**2).mean(), 1e-2)


def test_class_losses_all_ignored_and_empty_are_nan():
    x = tp.tensor(rng.standard_normal((3, 4)))
    t = tp.tensor(np.full(3, -100))
    assert math.isnan(tp.nll_loss(x, t).item()) and math.isnan(tp.cross_entropy(x, t).item())
    assert tp.cross_entropy(x, t, reduction="sum").item() == 0.0
    assert tp.cross_entropy(x, t, reduction="none").tolist() == [0.0] * 3
    assert (
        tp.nll_loss(x, tp.tensor(np.array([1, -1, 2])), ignore_index=-1, reduction="none").tolist()[1] == 0.0
    )
    e = tp.cross_entropy(tp.empty(0, 4), tp.tensor(np.zeros(0, np.int64)))
    assert math.isnan(e.item()) and e.shape == ()


def test_class_loss_errors():
    x = tp.tensor(rng.standard_normal((3, 4)))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        tp.nll_loss(x, tp.tensor(np.array([0, 5, 1])))
    with pytest.raises(IndexError, match="Target -2 is out of bounds."):
        tp.cross_entropy(x, tp.tensor(np.array([0, -2, 1])))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        tp.cross_entropy(x, tp.tensor(np.array([0, 1])))
    with pytest.raises(RuntimeError, match="nll_loss.*int64"):
        tp.nll_loss(x, tp.tensor(np.array([0, 1, 2], np.int32)))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes"):
        tp.cross_entropy(x, tp.tensor(np.array([0, 1, 2])), tp.ones(3))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        tp.cross_entropy(x, tp.tensor(np.array([0, 1, 2])), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        tp.cross_entropy(x, x, ignore_index=1)
    with pytest.raises(
        RuntimeError, match="Expected floating point type for target with class probabilities"
    ):
        tp.cross_entropy(x, tp.zeros(3, 4, dtype=tp.int64))
    with pytest.raises(RuntimeError, match=r"Expected target size \[3, 2\], got \[3, 5\]"):
        tp.cross_entropy(tp.zeros(3, 4, 2), tp.zeros(3, 5, dtype=tp.int64))
    with pytest.raises(ValueError, match="Expected 1 or more dimensions"):
        tp.nll_loss(tp.tensor(1.0), tp.tensor(0))
    for op in (tp.nll_loss, tp.cross_entropy, tp.mse_loss, tp.kl_div):
        with pytest.raises(ValueError, match="elementwise_mean is not a valid value for reduction"):
            op(
                x,
                x if op in (tp.mse_loss, tp.kl_div) else tp.tensor(np.array([0, 1, 2])),
                reduction="elementwise_mean",
            )


# ---- pointwise losses -------------------------------------------------------------------------------------


def smooth_l1_ref(d, beta):
    a = np.abs(d)
    return a if beta == 0 else np.where(a < beta, 0.5 * a * a / beta, a - 0.5 * beta)


def huber_ref(d, delta):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * a * a, delta * (a - 0.5 * delta))


POINTWISE = [
    ("mse_loss", {}, lambda x, y: (x - y) ** 2),
    ("l1_loss", {}, lambda x, y: np.abs(x - y)),
    ("smooth_l1_loss", {}, lambda x, y: smooth_l1_ref(x - y, 1.0)),
    ("smooth_l1_loss", {"beta": 0.5}, lambda x, y: smooth_l1_ref(x - y, 0.5)),
    ("smooth_l1_loss", {"beta": 0.0}, lambda x, y: smooth_l1_ref(x - y, 0.0)),
    ("huber_loss", {}, lambda x, y: huber_ref(x - y, 1.0)),
    ("huber_loss", {"delta": 2.5}, lambda x, y: huber_ref(x - y, 2.5)),
]


@pytest.mark.parametrize("dtype,rtol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw,ref", POINTWISE)
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((4, 5), (5,)), ((0, 3), (0, 3)), ((), ())])
def test_regression_losses(dtype, rtol, reduction, name, kw, ref, shapes):
    x = np.asarray(rng.standard_normal(shapes[0]) * 2, dtype=dtype)
    y = np.asarray(rng.standard_normal(shapes[1]) * 2, dtype=dtype)
    got = getattr(tp, name)(tp.tensor(x), tp.tensor(y), reduction, **kw)
    with np.errstate(invalid="ignore"):
        check(got, reduce_ref(ref(x.astype(np.float64), y.astype(np.float64)), reduction), rtol)


def test_regression_losses_large_and_transposed():
    x = rng.standard_normal((1200, 1000)).astype(np.float32)
    y = rng.standard_normal((1000, 1200)).astype(np.float32)
    got = tp.mse_loss(tp.tensor(x), tp.tensor(y).t(), "sum")
    check(got, ((x.astype(np.float64) - y.T) ** 2).sum(), 1e-4)


def test_regression_loss_parameter_errors():
    x = tp.ones(3)
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta."):
        tp.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta."):
        tp.huber_loss(x, x, delta=0.0)
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        tp.huber_loss(x, x, "bad")


def bce_ref(x, y, w=None):
    loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
    return loss if w is None else loss * w


def bce_logits_ref(x, y, w=None, pw=None):
    logsig = -np.logaddexp(0, -x)  # log sigmoid(x), stable
    log1msig = -np.logaddexp(0, x)  # log(1 - sigmoid(x))
    pw = 1.0 if pw is None else pw
    loss = -(pw * y * logsig + (1 - y) * log1msig)
    return loss if w is None else loss * w


@pytest.mark.parametrize("dtype,rtol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(dtype, rtol, reduction, weighted):
    x = rng.uniform(0, 1, (4, 6)).astype(dtype)
    x[0, :3] = [0.0, 1.0, 1e-30]  # the log clamp at -100
    y = rng.uniform(0, 1, (4, 6)).astype(dtype)
    y[0, :2] = [1.0, 0.0]
    w = rng.uniform(0.5, 2, (6,)).astype(dtype) if weighted else None
    got = tp.binary_cross_entropy(tp.tensor(x), tp.tensor(y), tp.tensor(w) if weighted else None, reduction)
    with np.errstate(divide="ignore"):
        want = bce_ref(x.astype(np.float64), y.astype(np.float64), w)
    check(got, reduce_ref(want, reduction), max(rtol, 1e-6))


def test_binary_cross_entropy_errors():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        tp.binary_cross_entropy(tp.tensor([0.5, 1.5]), tp.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        tp.binary_cross_entropy(tp.tensor([0.5, float("nan")]), tp.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="different to the input size"):
        tp.binary_cross_entropy(tp.tensor([0.5, 0.5]), tp.tensor([1.0]))


@pytest.mark.parametrize("dtype,rtol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pos_weighted", [False, True])
def test_binary_cross_entropy_with_logits(dtype, rtol, reduction, weighted, pos_weighted):
    x = (rng.standard_normal((4, 6)) * 5).astype(dtype)
    x[0, :2] = [200.0, -200.0]  # exp would overflow in the naive form
    y = rng.uniform(0, 1, (4, 6)).astype(dtype)
    w = rng.uniform(0.5, 2, (4, 1)).astype(dtype) if weighted else None
    pw = rng.uniform(0.5, 3, (6,)).astype(dtype) if pos_weighted else None
    got = tp.binary_cross_entropy_with_logits(
        tp.tensor(x),
        tp.tensor(y),
        tp.tensor(w) if weighted else None,
        tp.tensor(pw) if pos_weighted else None,
        reduction,
    )
    want = bce_logits_ref(x.astype(np.float64), y.astype(np.float64), w, pw)
    check(got, reduce_ref(want, reduction), rtol)


@pytest.mark.parametrize("dtype,rtol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dtype, rtol, reduction, log_target):
    x = np.log(rng.dirichlet(np.ones(5), 4)).astype(dtype)
    p = rng.dirichlet(np.ones(5), 4)
    if not log_target:
        p[0, 1] = 0.0  # 0 log 0 = 0 (a log-target of -inf gives nan, in PyTorch too)
    y = (np.log(p) if log_target else p).astype(dtype)
    got = tp.kl_div(tp.tensor(x), tp.tensor(y), reduction, log_target=log_target)
    pd = p.astype(dtype).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(pd > 0, pd * (np.log(pd) - x.astype(np.float64)), 0.0)
    check(got, reduce_ref(want, reduction), max(rtol, 1e-6))


# ---- meta and PyTorch -------------------------------------------------------------------------------------


def test_losses_on_meta_give_shapes():
    x = tp.empty(6, 5, 3, device="meta")
    t = tp.empty(6, 3, dtype=tp.int64, device="meta")
    assert tp.cross_entropy(x, t).shape == () and tp.cross_entropy(x, t, reduction="none").shape == (6, 3)
    assert tp.cross_entropy(x, x, reduction="none").shape == (6, 3)
    assert tp.nll_loss(x, t, reduction="none").device.type == "meta"
    for name in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                 "binary_cross_entropy_with_logits", "kl_div"]:  # fmt: skip
        assert getattr(tp, name)(x, x).shape == ()
        assert getattr(tp, name)(x, x, reduction="none").shape == (6, 5, 3)


@pytest.mark.filterwarnings("ignore:reduction. .mean. divides")
def test_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rng.standard_normal((8, 5, 3))
    t = rng.integers(0, 5, (8, 3))
    t[0, 0] = 2
    w = rng.uniform(0.5, 2, 5)
    q = rng.dirichlet(np.ones(5), (8, 3)).transpose(0, 2, 1).copy()
    T = torch.tensor
    for red in REDUCTIONS:
        for ls in (0.0, 0.1):
            for ii in (-100, 2):
                want = F.cross_entropy(T(x), T(t), T(w), reduction=red, ignore_index=ii, label_smoothing=ls)
                got = tp.cross_entropy(tp.tensor(x), tp.tensor(t), tp.tensor(w), red, ii, ls)
                check(got, want.numpy(), 1e-12)
            want = F.cross_entropy(T(x), T(q), T(w), reduction=red, label_smoothing=ls)
            check(
                tp.cross_entropy(tp.tensor(x), tp.tensor(q), tp.tensor(w), red, label_smoothing=ls),
                want,
                1e-12,
            )
        lp = F.log_softmax(T(x), 1).numpy()
        check(
            tp.nll_loss(tp.tensor(lp), tp.tensor(t), tp.tensor(w), red, 2),
            F.nll_loss(T(lp), T(t), T(w), reduction=red, ignore_index=2).numpy(),
            1e-12,
        )
        y = rng.standard_normal((8, 5, 3))
        for name in [
            "mse_loss",
            "l1_loss",
            "smooth_l1_loss",
            "huber_loss",
            "binary_cross_entropy_with_logits",
        ]:
            check(
                getattr(tp, name)(tp.tensor(x), tp.tensor(y), reduction=red),
                getattr(F, name)(T(x), T(y), reduction=red).numpy(),
                1e-12,
            )
        s = 1 / (1 + np.exp(-x))
        u = rng.uniform(0, 1, x.shape)
        check(
            tp.binary_cross_entropy(tp.tensor(s), tp.tensor(u), reduction=red),
            F.binary_cross_entropy(T(s), T(u), reduction=red).numpy(),
            1e-12,
        )
        for lt in (False, True):
            tgt = np.log(u) if lt else u
            check(
                tp.kl_div(tp.tensor(lp), tp.tensor(tgt), red, log_target=lt),
                F.kl_div(T(lp), T(tgt), reduction=red, log_target=lt).numpy(),
                1e-12,
            )
