"""poisson (kernels/random_poisson.cpp) and the other samplers the op library lists beside it: bernoulli_,
cauchy_, log_normal_, geometric_, rand_like, randn_like, randint_like and dropout.

Without PyTorch each distribution is checked by its moments or quantiles on large samples (tolerances of
about six standard errors, fixed seeds so the tests are deterministic), its support, its dtypes, its
reproducibility under a seed or a Generator and its errors. With PyTorch installed, the streams are compared
bit for bit under the same seed.
"""

import math

import numpy as np
import pytest

import tensorplay_p10 as tp

N = 200_000


# ---- poisson --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [0.1, 1.0, 4.5, 9.99, 10.0, 37.0, 1000.0])
def test_poisson_moments(lam):
    g = tp.Generator().manual_seed(11)
    x = tp.poisson(tp.full((N,), lam, dtype=tp.float64), g).numpy()
    assert (x >= 0).all() and (x == np.floor(x)).all()
    se = math.sqrt(lam / N)
    assert abs(x.mean() - lam) < 6 * se
    # the sample variance has variance about (lam + 2 lam^2) / N (fourth central moment: lam + 3 lam^2)
    assert abs(x.var() - lam) < 6 * math.sqrt((lam + 2 * lam * lam) / N)


def test_poisson_pmf_small_and_large():
    # lam = 3 (product method) and lam = 20 (transformed rejection): frequencies against the pmf
    g = tp.Generator().manual_seed(5)
    for lam in (3.0, 20.0):
        x = tp.poisson(tp.full((N,), lam), g).numpy().astype(np.int64)
        counts = np.bincount(x, minlength=80)[:80] / N
        pmf = np.array([math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1)) for k in range(80)])
        np.testing.assert_allclose(counts, pmf, atol=6 * math.sqrt(0.25 / N))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_poisson_dtypes_shapes_and_zero_rate(dtype):
    rates = tp.tensor([[0.0, 2.0, 15.0], [0.0, 0.5, 100.0]]).to(getattr(tp, dtype))
    x = tp.poisson(rates)
    assert x.dtype == rates.dtype and x.shape == (2, 3)
    assert (x.to(tp.float64).numpy()[:, 0] == 0).all()
    assert tp.poisson(tp.empty(0, 3)).shape == (0, 3)
    assert tp.poisson(tp.tensor(4.0)).shape == ()


def test_poisson_reproducible_and_non_contiguous():
    rates = tp.tensor(np.linspace(0, 30, 60).reshape(6, 10))
    tp.manual_seed(42)
    a = tp.poisson(rates).numpy()
    tp.manual_seed(42)
    b = tp.poisson(rates).numpy()
    np.testing.assert_array_equal(a, b)
    # rates are visited in logical order whatever their layout
    tp.manual_seed(42)
    c = tp.poisson(tp.tensor(np.ascontiguousarray(rates.numpy().T)).t()).numpy()
    np.testing.assert_array_equal(a, c)
    g1, g2 = tp.Generator().manual_seed(1), tp.Generator().manual_seed(1)
    np.testing.assert_array_equal(tp.poisson(rates, g1).numpy(), tp.poisson(rates, generator=g2).numpy())


def test_poisson_meta_and_errors():
    assert tp.poisson(tp.empty(3, 4, device="meta")).shape == (3, 4)
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        tp.poisson(tp.tensor([1.0, -0.5]))
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        tp.poisson(tp.tensor([float("nan")]))
    with pytest.raises(RuntimeError, match="poisson: expected a floating point tensor"):
        tp.poisson(tp.tensor([1, 2]))


# ---- the in-place samplers ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "bool"])
def test_bernoulli_(dtype):
    tp.manual_seed(0)
    x = tp.empty(N, dtype=getattr(tp, dtype)).bernoulli_(0.3)
    v = x.to(tp.float64).numpy()
    assert set(np.unique(v)) <= {0.0, 1.0}
    assert abs(v.mean() - 0.3) < 6 * math.sqrt(0.21 / N)
    assert (tp.zeros(10).bernoulli_(0.0).numpy() == 0).all()
    assert (tp.zeros(10).bernoulli_(1.0).numpy() == 1).all()


def bern_(self, p, **kw):
    """x.bernoulli_(p) for a Tensor p, through the op (Tensor.bernoulli_ in _tensor.py takes a float p)."""
    return tp.ops.call("bernoulli_.Tensor", self, p, **kw)


def test_bernoulli_tensor_p():
    probs = np.linspace(0, 1, 11)
    tp.manual_seed(3)
    x = bern_(tp.empty(20_000, 11), tp.tensor(probs)).numpy()  # p broadcasts over the rows
    assert set(np.unique(x)) <= {0.0, 1.0}
    np.testing.assert_allclose(x.mean(0), probs, atol=6 * math.sqrt(0.25 / 20_000))
    assert (x[:, 0] == 0).all() and (x[:, -1] == 1).all()
    # draws go to self's elements in memory order (Note [Bernoulli tensor order]): a transposed self is filled
    # like the contiguous tensor it is a view of, a strided slice in logical order
    p = tp.tensor(np.random.default_rng(1).random((4, 6)).astype(np.float32))
    tp.manual_seed(8)
    a = bern_(tp.empty(4, 6), p).numpy()
    tp.manual_seed(8)
    b = bern_(tp.empty(4, 6).t(), p.t()).numpy()
    np.testing.assert_array_equal(a, b.T)
    tp.manual_seed(8)
    c = bern_(tp.empty(4, 12)[:, ::2], p).numpy()  # not dense: a temporary, copied in
    np.testing.assert_array_equal(a, c)
    g = tp.Generator().manual_seed(2)
    assert bern_(tp.empty(3, dtype=tp.int64), tp.tensor([0.0, 1.0, 1.0]), generator=g).tolist() == [
        0,
        1,
        1,
    ]
    assert bern_(tp.empty(2, 3, device="meta"), tp.empty(3, device="meta")).shape == (2, 3)
    with pytest.raises(RuntimeError, match="must broadcast to self's shape"):
        bern_(tp.empty(3), tp.ones(4) / 2)
    with pytest.raises(RuntimeError, match="probability must be in \\[0, 1\\]"):
        bern_(tp.empty(3), tp.tensor([0.5, 1.5, 0.5]))


def test_cauchy_():
    tp.manual_seed(1)
    x = tp.empty(N, dtype=tp.float64).cauchy_(2.0, 0.5).numpy()
    # quantiles: median + sigma * tan(pi (q - 1/2))
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        assert abs((x <= 2.0 + 0.5 * math.tan(math.pi * (q - 0.5))).mean() - q) < 6 * math.sqrt(
            q * (1 - q) / N
        )


def test_log_normal_():
    tp.manual_seed(2)
    x = tp.empty(N, dtype=tp.float64).log_normal_(0.5, 0.25).numpy()
    assert (x > 0).all()
    lx = np.log(x)
    assert abs(lx.mean() - 0.5) < 6 * 0.25 / math.sqrt(N)
    assert abs(lx.std() - 0.25) < 6 * 0.25 / math.sqrt(2 * N)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0"):
        tp.empty(3).log_normal_(0.0, 0.0)


@pytest.mark.parametrize("p", [0.2, 0.9])
def test_geometric_(p):
    tp.manual_seed(3)
    x = tp.empty(N, dtype=tp.float64).geometric_(p).numpy()
    assert (x >= 1).all() and (x == np.floor(x)).all()
    mean, var = 1 / p, (1 - p) / p**2
    assert abs(x.mean() - mean) < 6 * math.sqrt(var / N)
    assert abs((x == 1).mean() - p) < 6 * math.sqrt(p * (1 - p) / N)
    assert tp.empty(5, dtype=tp.int64).geometric_(p).dtype == tp.int64


# ---- the *_like factories -----------------------------------------------------------------------------


def test_like_factories_follow_input_and_stream():
    base = tp.zeros(3, 4, dtype=tp.float64)
    tp.manual_seed(9)
    a = tp.rand_like(base)
    tp.manual_seed(9)
    np.testing.assert_array_equal(a.numpy(), tp.rand(3, 4, dtype=tp.float64).numpy())
    assert a.shape == (3, 4) and a.dtype == tp.float64 and ((a.numpy() >= 0) & (a.numpy() < 1)).all()
    tp.manual_seed(9)
    b = tp.randn_like(base, dtype=tp.float32)
    tp.manual_seed(9)
    np.testing.assert_array_equal(b.numpy(), tp.randn(3, 4).numpy())
    assert b.dtype == tp.float32
    c = tp.randint_like(tp.zeros(1000, dtype=tp.int32), 5)
    assert c.dtype == tp.int32 and c.numpy().min() >= 0 and c.numpy().max() == 4
    d = tp.randint_like(base, -3, 3)
    assert d.dtype == tp.float64 and set(np.unique(d.numpy())) <= set(range(-3, 3))
    assert tp.rand_like(tp.empty(2, 0)).shape == (2, 0)
    assert tp.randn_like(tp.empty(2, device="meta")).device.type == "meta"


# ---- dropout --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_dropout(dtype):
    x = tp.ones(N, dtype=getattr(tp, dtype))
    tp.manual_seed(4)
    y = tp.dropout(x, 0.25, True).to(tp.float64).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-2 if dtype == "bfloat16" else 1e-6)
    assert abs(kept.mean() - 0.75) < 6 * math.sqrt(0.1875 / N)
    assert tp.dropout(x, 0.25, False) is x
    assert tp.dropout(x, 0.0, True) is x
    assert (tp.dropout(x, 1.0, True).to(tp.float64).numpy() == 0).all()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        tp.dropout(x, 1.5, True)


# ---- PyTorch, where installed -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_poisson_bit_exact_with_torch(dtype):
    torch = pytest.importorskip("torch")
    rates = np.concatenate([np.linspace(0, 12, 500), np.linspace(9, 2000, 500)])
    tp.manual_seed(1234)
    torch.manual_seed(1234)
    got = tp.poisson(tp.tensor(rates).to(getattr(tp, dtype))).to(tp.float64).numpy()
    want = torch.poisson(torch.from_numpy(rates).to(getattr(torch, dtype))).to(torch.float64).numpy()
    np.testing.assert_array_equal(got, want)
    # and the generator continues identically afterwards
    np.testing.assert_array_equal(tp.rand(5).numpy(), torch.rand(5).numpy())


def test_samplers_bit_exact_with_torch():
    torch = pytest.importorskip("torch")
    for name, args in [
        ("bernoulli_", (0.3,)),
        ("cauchy_", (1.0, 2.0)),
        ("log_normal_", (0.5, 0.75)),
        ("geometric_", (0.35,)),
    ]:
        for dtype in ("float32", "float64"):
            tp.manual_seed(77)
            torch.manual_seed(77)
            got = getattr(tp.empty(1000, dtype=getattr(tp, dtype)), name)(*args).numpy()
            want = getattr(torch.empty(1000, dtype=getattr(torch, dtype)), name)(*args).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {dtype}")
    p = np.random.default_rng(0).random((5, 7))
    for pd, sd in (("float64", "float32"), ("float32", "float64"), ("float32", "float32")):
        tp.manual_seed(31)
        torch.manual_seed(31)
        got = bern_(tp.empty(7, 5, dtype=getattr(tp, sd)).t(), tp.tensor(p).to(getattr(tp, pd))).numpy()
        want = (
            torch.empty(7, 5, dtype=getattr(torch, sd))
            .t()
            .bernoulli_(torch.from_numpy(p).to(getattr(torch, pd)))
        )
        np.testing.assert_array_equal(got, want.numpy(), err_msg=f"bernoulli_(Tensor {pd}) into {sd}")
    tp.manual_seed(5)
    torch.manual_seed(5)
    x = np.ones((64, 64), np.float32)
    np.testing.assert_array_equal(
        tp.dropout(tp.tensor(x), 0.3, True).numpy(),
        torch.nn.functional.dropout(torch.from_numpy(x), 0.3).numpy(),
    )
    tp.manual_seed(6)
    torch.manual_seed(6)
    z = np.zeros((3, 5), np.float32)
    np.testing.assert_array_equal(
        tp.rand_like(tp.tensor(z)).numpy(), torch.rand_like(torch.from_numpy(z)).numpy()
    )
    np.testing.assert_array_equal(
        tp.randn_like(tp.tensor(z)).numpy(), torch.randn_like(torch.from_numpy(z)).numpy()
    )
    np.testing.assert_array_equal(
        tp.randint_like(tp.tensor(z), 3, 9).numpy(), torch.randint_like(torch.from_numpy(z), 3, 9).numpy()
    )
