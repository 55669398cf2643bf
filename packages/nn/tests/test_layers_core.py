"""Tests of the core layers and their functional forms against NumPy float64 references and gradcheck:
Linear, Bilinear, Identity, Embedding(Bag), LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm, normalize,
batch/instance norm functions, the dropouts, Flatten/Unflatten (packages/nn/src/tensorplay_nn/nn)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplay as tp
import tensorplay.nn.functional as F
from tensorplay import nn
from tensorplay.autograd import gradcheck


def np64(t: tp.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def randn64(*shape: int, requires_grad: bool = False) -> tp.Tensor:
    return tp.randn(*shape, dtype=tp.float64, requires_grad=requires_grad)


# ---- Linear / Bilinear / Identity ------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (3,), (0, 3), (1, 3), (2, 0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_numpy(shape: tuple[int, ...], bias: bool) -> None:
    tp.manual_seed(0)
    m = nn.Linear(3, 4, bias=bias)
    x = tp.randn(*shape)
    ref = np64(x) @ np64(m.weight).T + (np64(m.bias) if bias else 0)
    y = m(x)
    assert y.shape == (*shape[:-1], 4)
    np.testing.assert_allclose(np64(y), ref, rtol=1e-5, atol=1e-6)


def test_linear_non_contiguous_input_and_init_bounds() -> None:
    m = nn.Linear(3, 2)
    x = tp.randn(3, 5).t()  # (5, 3), not contiguous
    np.testing.assert_allclose(np64(m(x)), np64(x) @ np64(m.weight).T + np64(m.bias), rtol=1e-5, atol=1e-6)
    bound = 1 / math.sqrt(3)
    assert np.abs(np64(m.weight)).max() <= bound and np.abs(np64(m.bias)).max() <= bound
    assert m.weight.shape == (2, 3) and m.bias.shape == (2,)


def test_linear_gradcheck_and_errors() -> None:
    x, w, b = (
        randn64(2, 3, 3, requires_grad=True),
        randn64(4, 3, requires_grad=True),
        randn64(4, requires_grad=True),
    )
    assert gradcheck(F.linear, (x, w, b))
    assert gradcheck(F.linear, (randn64(3, requires_grad=True), w))
    assert gradcheck(lambda x, w: F.linear(x, w, None), (x, w))
    with pytest.raises(
        RuntimeError, match="linear\\(\\): input and weight shapes cannot be multiplied \\(5x2 and 3x4\\)"
    ):
        F.linear(tp.ones(5, 2), tp.ones(4, 3))
    m = nn.Linear(3, 4, dtype=tp.float64)
    assert m.weight.dtype == tp.float64 and m.bias.dtype == tp.float64


def test_linear_backward_matches_numpy() -> None:
    tp.manual_seed(1)
    m = nn.Linear(3, 2)
    x = tp.randn(4, 3)
    g = tp.randn(4, 2)
    m(x).backward(g)
    np.testing.assert_allclose(np64(m.weight.grad), np64(g).T @ np64(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np64(m.bias.grad), np64(g).sum(0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lead", [(5,), (2, 3), (0,)])
def test_bilinear_matches_numpy(lead: tuple[int, ...]) -> None:
    m = nn.Bilinear(3, 4, 2)
    x1, x2 = tp.randn(*lead, 3), tp.randn(*lead, 4)
    ref = np.einsum("...i,kij,...j->...k", np64(x1), np64(m.weight), np64(x2)) + np64(m.bias)
    np.testing.assert_allclose(np64(m(x1, x2)), ref, rtol=1e-5, atol=1e-5)
    bound = 1 / math.sqrt(3)
    assert np.abs(np64(m.weight)).max() <= bound


def test_bilinear_gradcheck_and_errors() -> None:
    args = (
        randn64(2, 3, requires_grad=True),
        randn64(2, 2, requires_grad=True),
        randn64(4, 3, 2, requires_grad=True),
        randn64(4, requires_grad=True),
    )
    assert gradcheck(F.bilinear, args)
    with pytest.raises(
        RuntimeError,
        match="bilinear\\(\\): input2's last dimension \\(3\\) must equal weight.size\\(2\\) \\(2\\)",
    ):
        F.bilinear(tp.ones(2, 3), tp.ones(2, 3), tp.ones(4, 3, 2))
    with pytest.raises(RuntimeError, match="same leading dimensions"):
        F.bilinear(tp.ones(2, 3), tp.ones(3, 2), tp.ones(4, 3, 2))


def test_identity() -> None:
    x = tp.randn(2)
    assert nn.Identity(3, foo=1)(x) is x


# ---- Embedding / EmbeddingBag ----------------------------------------------------------------------------
def test_embedding_lookup_padding_and_grad() -> None:
    tp.manual_seed(0)
    emb = nn.Embedding(6, 3, padding_idx=-1)
    assert emb.padding_idx == 5 and np64(emb.weight)[5].tolist() == [0.0, 0.0, 0.0]
    idx = tp.tensor([[0, 5, 2], [2, 2, 1]])
    np.testing.assert_array_equal(np64(emb(idx)), np64(emb.weight)[idx.numpy()])
    emb(idx).sum().backward()
    counts = np.bincount(idx.numpy().ravel(), minlength=6).astype(np.float64)
    counts[5] = 0  # the padding row gets no gradient
    np.testing.assert_array_equal(np64(emb.weight.grad), np.repeat(counts[:, None], 3, axis=1))
    assert emb(tp.zeros(0, dtype=tp.int64)).shape == (0, 3)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(RuntimeError, match="indices.*Long, Int"):
        emb(tp.tensor([0.0]))


def test_embedding_max_norm_renormalises_in_place() -> None:
    w = tp.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    emb = nn.Embedding.from_pretrained(w.clone(), max_norm=1.0)
    out = emb(tp.tensor([0, 1]))
    np.testing.assert_allclose(np64(out), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-5)
    # the looked-up row 0 was rescaled in the table; row 2 was not looked up and stays
    np.testing.assert_allclose(np64(emb.weight), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-5)
    assert not emb.weight.requires_grad
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad


def test_embedding_gradcheck() -> None:
    w = randn64(5, 3, requires_grad=True)
    # (no padding_idx here: its row is used in forward but gets no gradient, by design)
    assert gradcheck(lambda w: F.embedding(tp.tensor([[1, 4], [1, 0]]), w), (w,))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_numpy(mode: str) -> None:
    bag = nn.EmbeddingBag(7, 3, mode=mode)
    idx, offsets = tp.tensor([1, 2, 4, 5, 4, 3, 2, 6]), tp.tensor([0, 3, 3])
    table = np64(bag.weight)
    reduce = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode]
    bags = [idx.numpy()[0:3], idx.numpy()[3:3], idx.numpy()[3:]]
    ref = np.stack([reduce(table[b], axis=0) if len(b) else np.zeros(3) for b in bags])
    np.testing.assert_allclose(np64(bag(idx, offsets)), ref, rtol=1e-5, atol=1e-6)
    two_d = tp.tensor([[1, 2], [3, 4]])
    ref2 = np.stack([reduce(table[r], axis=0) for r in two_d.numpy()])
    np.testing.assert_allclose(np64(bag(two_d)), ref2, rtol=1e-5, atol=1e-6)


def test_embedding_bag_errors() -> None:
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max, but got 'median'"):
        nn.EmbeddingBag(3, 2, mode="median")
    with pytest.raises(ValueError, match="offsets has to be None"):
        nn.EmbeddingBag(3, 2)(tp.tensor([[0, 1]]), tp.tensor([0]))


# ---- normalisation -----------------------------------------------------------------------------------------
def ref_layer_norm(
    x: np.ndarray, n: int, w: np.ndarray | None, b: np.ndarray | None, eps: float
) -> np.ndarray:
    axes = tuple(range(x.ndim - n, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


@pytest.mark.parametrize(
    "shape,normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4)), ((0, 5), (5,)), ((1, 1), (1,))]
)
def test_layer_norm_matches_numpy(shape: tuple[int, ...], normalized: tuple[int, ...]) -> None:
    m = nn.LayerNorm(normalized if len(normalized) > 1 else normalized[0])
    with tp.no_grad():
        m.weight.copy_(tp.randn(*normalized))
        m.bias.copy_(tp.randn(*normalized))
    x = tp.randn(*shape)
    ref = ref_layer_norm(np64(x), len(normalized), np64(m.weight), np64(m.bias), 1e-5)
    np.testing.assert_allclose(np64(m(x)), ref, rtol=1e-4, atol=1e-5)
    assert (
        nn.LayerNorm(4, bias=False).bias is None and nn.LayerNorm(4, elementwise_affine=False).weight is None
    )


def test_layer_norm_gradcheck() -> None:
    args = (
        randn64(3, 4, requires_grad=True),
        [4],
        randn64(4, requires_grad=True),
        randn64(4, requires_grad=True),
    )
    assert gradcheck(lambda x, s, w, b: F.layer_norm(x, s, w, b), args)


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_matches_numpy(eps: float | None) -> None:
    m = nn.RMSNorm([2, 3], eps=eps)
    with tp.no_grad():
        m.weight.copy_(tp.randn(2, 3))
    x = tp.randn(4, 2, 3)
    e = np.finfo(np.float32).eps if eps is None else eps
    xx = np64(x)
    ref = xx / np.sqrt((xx**2).mean(axis=(1, 2), keepdims=True) + e) * np64(m.weight)
    np.testing.assert_allclose(np64(m(x)), ref, rtol=1e-4, atol=1e-5)
    assert gradcheck(
        lambda x, w: F.rms_norm(x, [3], w, 1e-6),
        (randn64(2, 3, requires_grad=True), randn64(3, requires_grad=True)),
    )


def ref_group_norm(x: np.ndarray, g: int, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    mu = xg.mean(-1, keepdims=True)
    var = xg.var(-1, keepdims=True)
    y = ((xg - mu) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("shape", [(2, 6, 5), (3, 6, 2, 2), (1, 6)])
def test_group_norm_matches_numpy(shape: tuple[int, ...]) -> None:
    m = nn.GroupNorm(3, 6)
    with tp.no_grad():
        m.weight.copy_(tp.randn(6))
        m.bias.copy_(tp.randn(6))
    x = tp.randn(*shape)
    np.testing.assert_allclose(
        np64(m(x)), ref_group_norm(np64(x), 3, np64(m.weight), np64(m.bias), 1e-5), rtol=1e-4, atol=1e-5
    )
    args = (
        randn64(2, 4, 3, requires_grad=True),
        2,
        randn64(4, requires_grad=True),
        randn64(4, requires_grad=True),
    )
    assert gradcheck(F.group_norm, args)


def test_group_norm_errors() -> None:
    with pytest.raises(ValueError, match="num_channels \\(5\\) must be divisible by num_groups \\(2\\)"):
        nn.GroupNorm(2, 5)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.group_norm(tp.ones(1, 2), 2)
    assert nn.GroupNorm(2, 4, bias=False).bias is None


@pytest.mark.parametrize("shape", [(2, 5, 3), (1, 4, 2, 3)])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_local_response_norm_matches_numpy(shape: tuple[int, ...], size: int) -> None:
    x = tp.randn(*shape)
    xx = np64(x)
    c = shape[1]
    sq = np.zeros(xx.shape)
    for ch in range(c):  # the window of channel ch: [ch - size//2, ch + (size-1)//2], zero outside
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        sq[:, ch] = (xx[:, lo:hi] ** 2).sum(axis=1)
    ref = xx / (1.0 + 1e-2 / size * sq) ** 0.75
    np.testing.assert_allclose(np64(nn.LocalResponseNorm(size, alpha=1e-2)(x)), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input \\(got 2 dimensions\\)"):
        F.local_response_norm(tp.ones(2, 3), 2)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (3.0, -1)])
def test_normalize_matches_numpy(p: float, dim: int) -> None:
    x = tp.randn(3, 4)
    xx = np64(x)
    norm = (np.abs(xx) ** p).sum(axis=dim, keepdims=True) ** (1 / p)
    np.testing.assert_allclose(
        np64(F.normalize(x, p, dim)), xx / np.maximum(norm, 1e-12), rtol=1e-5, atol=1e-6
    )
    assert F.normalize(tp.zeros(2, 3)).abs().sum().item() == 0  # eps keeps zero vectors finite
    assert gradcheck(lambda x: F.normalize(x, p, dim), (randn64(3, 4, requires_grad=True),))


def test_batch_norm_function_uses_and_updates_running_stats() -> None:
    x = tp.randn(8, 3, 2)
    xx = np64(x)
    mean, var = tp.zeros(3), tp.ones(3)
    y = F.batch_norm(x, mean, var, training=True, momentum=0.1)
    bm, bv = xx.mean(axis=(0, 2)), xx.var(axis=(0, 2))
    ref = (xx - bm[None, :, None]) / np.sqrt(bv[None, :, None] + 1e-5)
    np.testing.assert_allclose(np64(y), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np64(mean), 0.1 * bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np64(var), 0.9 + 0.1 * xx.var(axis=(0, 2), ddof=1), rtol=1e-5)
    y_eval = F.batch_norm(x, mean, var, training=False)
    ref_eval = (xx - np64(mean)[None, :, None]) / np.sqrt(np64(var)[None, :, None] + 1e-5)
    np.testing.assert_allclose(np64(y_eval), ref_eval, rtol=1e-4, atol=1e-5)
    with pytest.raises(
        ValueError, match="Expected more than 1 value per channel when training, got input size \\[1, 3\\]"
    ):
        F.batch_norm(tp.ones(1, 3), None, None, training=True)


def test_instance_norm_function() -> None:
    x = tp.randn(2, 3, 5)
    xx = np64(x)
    ref = (xx - xx.mean(-1, keepdims=True)) / np.sqrt(xx.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np64(F.instance_norm(x)), ref, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(tp.ones(2, 3, 1))


# ---- dropout -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_zeroes_and_scales(p: float) -> None:
    tp.manual_seed(0)
    x = tp.randn(64, 32)
    m = nn.Dropout(p)
    y = np64(m(x))
    kept = y != 0
    np.testing.assert_allclose(y[kept], np64(x)[kept] / (1 - p), rtol=1e-5)
    assert 0 < kept.mean() < 1
    m.eval()
    assert m(x) is x


def test_dropout_edge_probabilities_and_errors() -> None:
    x = tp.randn(3, 4)
    assert F.dropout(x, 0.0) is x
    assert np64(F.dropout(x, 1.0)).tolist() == np.zeros((3, 4)).tolist()
    assert F.dropout(tp.ones(0, 3), 0.5).shape == (0, 3)
    for fn in (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            fn(tp.ones(2, 2, 2, 2, 2), 1.5)
    with pytest.raises(
        ValueError, match="Dropout: dropout probability has to be between 0 and 1, but got -0.1"
    ):
        nn.Dropout(-0.1)


def test_dropout_inplace_writes_into_input() -> None:
    x = tp.ones(50)
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x and set(np64(x).tolist()) <= {0.0, 2.0}


@pytest.mark.parametrize(
    "cls,shape",
    [
        (nn.Dropout1d, (4, 6, 5)),
        (nn.Dropout1d, (6, 5)),
        (nn.Dropout2d, (4, 6, 3, 3)),
        (nn.Dropout3d, (2, 6, 2, 2, 2)),
        (nn.Dropout3d, (6, 2, 2, 2)),
    ],
)
def test_feature_dropout_drops_whole_channels(cls: type, shape: tuple[int, ...]) -> None:
    tp.manual_seed(3)
    y = np64(cls(0.5)(tp.ones(*shape)))
    batched = len(shape) == {nn.Dropout1d: 3, nn.Dropout2d: 4, nn.Dropout3d: 5}[cls]
    per_channel = y.reshape((shape[0] * shape[1]) if batched else shape[0], -1)
    assert all(len(set(row.tolist())) == 1 for row in per_channel)  # each channel all kept or all dropped
    assert set(np.unique(y).tolist()) <= {0.0, 2.0}


def test_dropout1d_rejects_wrong_rank() -> None:
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(tp.ones(1, 2, 3, 4))


def test_alpha_dropout_keeps_mean_and_variance() -> None:
    tp.manual_seed(0)
    x = tp.randn(200000)
    y = np64(nn.AlphaDropout(0.3)(x))
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    # dropped units all take one value: a * (-alpha') + b
    alpha_p = 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717
    a = 1 / math.sqrt((alpha_p**2 * 0.3 + 1) * 0.7)
    dropped = a * -alpha_p + a * alpha_p * 0.3
    assert np.isclose(y, dropped, atol=1e-6).mean() == pytest.approx(0.3, abs=0.01)
    assert nn.AlphaDropout(0.3).eval()(x) is x


@pytest.mark.filterwarnings("ignore:dropout2d. Received a 3D input")
def test_dropout_masks_equal_pytorch_for_the_same_seed() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    cases = [
        ("dropout", {}),
        ("dropout1d", {}),
        ("dropout2d", {}),
        ("alpha_dropout", {"training": True}),
        ("feature_alpha_dropout", {"training": True}),
    ]
    for name, kw in cases:
        tp.manual_seed(7)
        ours = getattr(F, name)(tp.from_numpy(x.copy()), 0.4, **kw)
        torch.manual_seed(7)
        theirs = getattr(torch.nn.functional, name)(torch.from_numpy(x.copy()), 0.4, **kw)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6, err_msg=name)


# ---- Flatten / Unflatten --------------------------------------------------------------------------------
def test_flatten_unflatten() -> None:
    x = tp.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    np.testing.assert_array_equal(np64(nn.Flatten()(x)), np64(x).reshape(2, 60))
    y = nn.Unflatten(1, (3, 20))(nn.Flatten()(x))
    assert y.shape == (2, 3, 20)
    assert nn.Unflatten(-1, (-1, 2))(tp.ones(3, 4)).shape == (3, 2, 2)
    with pytest.raises(
        TypeError, match="unflattened_size must be tuple of ints, but found element of type float at pos 1"
    ):
        nn.Unflatten(1, (2, 2.0))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 4)


# ---- BatchNorm / InstanceNorm modules ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "cls,shape",
    [
        (nn.BatchNorm1d, (6, 3)),
        (nn.BatchNorm1d, (4, 3, 5)),
        (nn.BatchNorm2d, (2, 3, 4, 4)),
        (nn.BatchNorm3d, (2, 3, 2, 2, 3)),
    ],
)
def test_batch_norm_module_training_and_eval(cls: type, shape: tuple[int, ...]) -> None:
    m = cls(3, momentum=0.2)
    with tp.no_grad():
        m.weight.copy_(tp.randn(3))
        m.bias.copy_(tp.randn(3))
    axes = tuple(i for i in range(len(shape)) if i != 1)
    bshape = [1, 3] + [1] * (len(shape) - 2)
    x = tp.randn(*shape)
    xx = np64(x)
    w, b = np64(m.weight).reshape(bshape), np64(m.bias).reshape(bshape)
    mean, var = xx.mean(axis=axes), xx.var(axis=axes)
    ref = (xx - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-5) * w + b
    np.testing.assert_allclose(np64(m(x)), ref, rtol=1e-4, atol=1e-5)
    n = xx.size // 3
    np.testing.assert_allclose(np64(m.running_mean), 0.2 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np64(m.running_var), 0.8 + 0.2 * var * n / (n - 1), rtol=1e-5)
    assert m.num_batches_tracked.item() == 1 and m.num_batches_tracked.dtype == tp.int64
    m.eval()
    rm, rv = np64(m.running_mean).reshape(bshape), np64(m.running_var).reshape(bshape)
    np.testing.assert_allclose(np64(m(x)), (xx - rm) / np.sqrt(rv + 1e-5) * w + b, rtol=1e-4, atol=1e-5)
    assert m.num_batches_tracked.item() == 1  # evaluation does not count


def test_batch_norm_cumulative_average_and_no_tracking() -> None:
    m = nn.BatchNorm1d(2, momentum=None)
    batches = [tp.randn(5, 2) for _ in range(3)]
    for x in batches:
        m(x)
    np.testing.assert_allclose(
        np64(m.running_mean), np.mean([np64(x).mean(0) for x in batches], axis=0), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        np64(m.running_var), np.mean([np64(x).var(0, ddof=1) for x in batches], axis=0), rtol=1e-5
    )
    free = nn.BatchNorm1d(2, track_running_stats=False, affine=False)
    assert free.running_mean is None and free.num_batches_tracked is None and free.weight is None
    assert list(free.state_dict()) == []
    x = tp.randn(4, 2)
    ref = (np64(x) - np64(x).mean(0)) / np.sqrt(np64(x).var(0) + 1e-5)
    np.testing.assert_allclose(np64(free.eval()(x)), ref, rtol=1e-4, atol=1e-5)  # batch stats even in eval


def test_batch_norm_state_dict_and_errors() -> None:
    m = nn.BatchNorm2d(3)
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    old = {k: v for k, v in sd.items() if k != "num_batches_tracked"}  # a checkpoint from before the counter
    other = nn.BatchNorm2d(3)
    assert other.load_state_dict(old).missing_keys == []
    assert "num_batches_tracked" not in old  # the caller's dict is left alone
    with pytest.raises(ValueError, match="BatchNorm2d: expected 4D input \\(got 3D input\\)"):
        m(tp.ones(2, 3, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(tp.ones(1, 3))
    assert (
        repr(m) == "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    )
    m.double()
    assert m.running_mean.dtype == tp.float64 and m.num_batches_tracked.dtype == tp.int64


def test_batch_norm_gradcheck() -> None:
    x, w, b = (
        randn64(4, 3, 2, requires_grad=True),
        randn64(3, requires_grad=True),
        randn64(3, requires_grad=True),
    )
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b))


def test_batch_norm_matches_live_pytorch_over_steps() -> None:
    torch = pytest.importorskip("torch")
    tp.manual_seed(0)
    ours = nn.BatchNorm1d(4, momentum=None)
    theirs = torch.nn.BatchNorm1d(4, momentum=None)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((6, 4)).astype(np.float32)
        np.testing.assert_allclose(
            ours(tp.from_numpy(x)).detach().numpy(),
            theirs(torch.from_numpy(x)).detach().numpy(),
            rtol=1e-5,
            atol=1e-5,
        )
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, err_msg=k)


@pytest.mark.parametrize(
    "cls,shape",
    [
        (nn.InstanceNorm1d, (2, 3, 5)),
        (nn.InstanceNorm1d, (3, 5)),
        (nn.InstanceNorm2d, (2, 3, 2, 3)),
        (nn.InstanceNorm3d, (3, 2, 2, 2)),
    ],
)
def test_instance_norm_module(cls: type, shape: tuple[int, ...]) -> None:
    m = cls(3)
    x = tp.randn(*shape)
    xx = np64(x)
    spatial = {nn.InstanceNorm1d: 1, nn.InstanceNorm2d: 2, nn.InstanceNorm3d: 3}[cls]
    axes = tuple(range(xx.ndim - spatial, xx.ndim))
    ref = (xx - xx.mean(axis=axes, keepdims=True)) / np.sqrt(xx.var(axis=axes, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np64(m(x)), ref, rtol=1e-4, atol=1e-5)
    assert m.weight is None and m.running_mean is None


def test_instance_norm_tracking_affine_and_errors() -> None:
    m = nn.InstanceNorm1d(2, affine=True, track_running_stats=True, momentum=0.5)
    x = tp.randn(3, 2, 4)
    m(x)
    np.testing.assert_allclose(np64(m.running_mean), 0.5 * np64(x).mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    with pytest.raises(
        ValueError, match="expected input's size at dim=1 to match num_features \\(2\\), but got: 3"
    ):
        m(tp.randn(3, 3, 4))
    with pytest.raises(ValueError, match="InstanceNorm1d: expected 2D or 3D input \\(got 4D input\\)"):
        m(tp.randn(1, 2, 3, 4))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(5)(tp.randn(2, 3, 4))
    plain = nn.InstanceNorm1d(2)
    with pytest.raises(RuntimeError, match='Unexpected running stats buffer\\(s\\) "running_mean"'):
        plain.load_state_dict({"running_mean": tp.zeros(2)})
