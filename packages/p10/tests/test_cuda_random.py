"""The random ops on the GPU (random.cu, ops_random.cpp) and the per-device Philox generator.

Covered: the values bit for bit against a pure-Python Philox (philox_ref.py) for float32 uniforms and to
rounding for normals; reproducibility (same seed, same values; a longer draw starts with a shorter one, for
sizes whose launches differ; the offset moves past what an op used; values follow the logical index, not the
strides); state save/restore and tp.manual_seed seeding CUDA; distributions by moments and a KS distance
against closed-form CDFs (no scipy); bernoulli p = 0 / 1 exactly; random_'s ranges per dtype; randperm is a
permutation; multinomial frequencies, zero-probability categories and no repeats without replacement;
dropout's scaling, mask and gradient; size-0, 0-d and strided outputs; the errors of the CPU op; and
tp.Generator(device="cuda") as every op's generator= (seeded like the default one it gives the default one's
values and moves as it would, leaving the default alone; same seed same values; get/set_state replays; two
generators independent; tp.cuda.default_generators; wrong-device generators and graph capture refused). They
need a GPU and skip elsewhere ("needs a CUDA device"). A few shapes, no sweeps: the file runs in seconds.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find philox_ref
import philox_ref  # noqa: E402
from cuda_testing import DEV, FLOATS, needs_cuda  # noqa: E402
from cuda_testing import np_of64 as np_of

pytestmark = needs_cuda
N = 1 << 18


def ks_distance(samples: np.ndarray, cdf) -> float:
    x = np.sort(samples)
    f = cdf(x)
    n = len(x)
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(0, n) / n)))


# ---- the stream: bit for bit, reproducible, independent of the launch --------------------------------------
def test_float32_uniforms_are_the_philox_reference_bit_for_bit():
    tp.cuda.manual_seed(1234)
    a = tp.rand(1001, device=DEV)
    expected = np.array(philox_ref.uniform_float32(1234, 0, 1001), dtype=np.float32)
    assert np.array_equal(a.cpu().numpy(), expected)
    b = tp.rand(7, device=DEV)  # 1001 values used 251 blocks: the next draw starts at block 251
    assert np.array_equal(
        b.cpu().numpy(), np.array(philox_ref.uniform_float32(1234, 251, 7), dtype=np.float32)
    )


def test_normals_are_box_muller_of_the_reference_words():
    tp.cuda.manual_seed(99)
    z = tp.randn(64, device=DEV).cpu().numpy().astype(np.float64)
    words = [w for b in range(16) for w in philox_ref.block(99, b)]
    u = [((w >> 8) + 1) * 2.0**-24 for w in words]  # (0, 1]
    ref = []
    for j in range(0, 64, 2):
        r, t = math.sqrt(-2 * math.log(u[j])), 2 * math.pi * u[j + 1]
        ref += [r * math.cos(t), r * math.sin(t)]
    np.testing.assert_allclose(z, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fill", ["uniform_", "normal_", "bernoulli_", "exponential_", "random_"])
def test_a_longer_draw_starts_with_the_shorter_one(fill):
    # Sizes with different grids (elementwise_config caps the grid): element i's value is still the same.
    def draw(n):
        tp.cuda.manual_seed(7)
        return getattr(tp.empty(n, device=DEV), fill)().cpu().numpy()

    small, big = draw(1000), draw(3_000_001)
    assert np.array_equal(big[:1000], small)


def test_values_follow_the_logical_index_not_the_strides():
    tp.cuda.manual_seed(3)
    a = tp.empty(4, 5, device=DEV).uniform_()
    tp.cuda.manual_seed(3)
    b = tp.empty(5, 4, device=DEV).t()  # shape [4, 5], transposed memory
    b.uniform_()
    assert np.array_equal(a.cpu().numpy(), b.cpu().numpy())
    base = tp.zeros(10, device=DEV)
    base[::2].normal_()  # a strided slice: only its elements change
    v = base.cpu().numpy()
    assert np.all(v[1::2] == 0) and np.all(v[::2] != 0)


def test_state_save_restore_and_seeds():
    tp.cuda.manual_seed(11)
    assert tp.cuda.initial_seed() == 11
    tp.rand(5, device=DEV)
    state = tp.cuda.get_rng_state()
    assert state.dtype == tp.uint8 and state.numel() == 16
    a = tp.randn(100, device=DEV).cpu().numpy()
    tp.cuda.set_rng_state(state)
    assert np.array_equal(tp.randn(100, device=DEV).cpu().numpy(), a)
    tp.manual_seed(11)  # seeds CUDA too, offset back to 0
    x = tp.rand(9, device=DEV).cpu().numpy()
    tp.cuda.manual_seed(11)
    assert np.array_equal(tp.rand(9, device=DEV).cpu().numpy(), x)
    tp.cuda.manual_seed_all(12)
    y = tp.rand(9, device=DEV).cpu().numpy()
    assert not np.array_equal(x, y)
    with pytest.raises(ValueError, match="16 bytes"):
        tp.cuda.set_rng_state(tp.zeros(5, dtype=tp.uint8))


# ---- distributions -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_range_and_ks(dtype):
    tp.cuda.manual_seed(0)
    x = np_of(tp.empty(N, dtype=dtype, device=DEV).uniform_(-2.0, 3.0))
    assert x.min() >= -2.0 and x.max() < 3.0
    n = 1 << 14 if dtype in (tp.float32, tp.float64) else 1 << 10  # 16-bit grids are coarse
    assert ks_distance(x[:n], lambda v: (v + 2.0) / 5.0) < 2.0 / math.sqrt(n) + (0 if n > 1024 else 0.01)


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_moments(dtype):
    tp.cuda.manual_seed(1)
    x = np_of(tp.empty(N, dtype=dtype, device=DEV).normal_(2.0, 3.0))
    assert abs(x.mean() - 2.0) < 0.05 and abs(x.std() / 3.0 - 1.0) < 0.02
    if dtype in (tp.float32, tp.float64):
        z = (x[: 1 << 14] - 2.0) / 3.0
        erf = np.vectorize(math.erf)
        assert ks_distance(z, lambda v: 0.5 * (1 + erf(v / math.sqrt(2)))) < 2.0 / math.sqrt(1 << 14)


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64])
def test_other_continuous_distributions(dtype):
    tp.cuda.manual_seed(2)
    e = np_of(tp.empty(N, dtype=dtype, device=DEV).exponential_(4.0))
    assert e.min() >= 0 and abs(e.mean() - 0.25) < 0.01
    c = np_of(tp.empty(N, dtype=dtype, device=DEV).cauchy_(1.0, 2.0))
    assert abs(np.median(c) - 1.0) < 0.05 and abs(np.median(np.abs(c - 1.0)) - 2.0) < 0.05
    ln = np_of(tp.empty(N, dtype=dtype, device=DEV).log_normal_(0.5, 0.25))
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01


@pytest.mark.parametrize("dtype", [tp.int64, tp.int32, tp.float32, tp.float64])
def test_geometric(dtype):
    tp.cuda.manual_seed(3)
    g = np_of(tp.empty(N, dtype=dtype, device=DEV).geometric_(0.25))
    assert g.min() >= 1 and np.all(g == np.round(g)) and abs(g.mean() - 4.0) < 0.05


@pytest.mark.parametrize("dtype", [tp.bool, tp.uint8, tp.int64, tp.float16, tp.float32, tp.float64])
def test_bernoulli_scalar(dtype):
    tp.cuda.manual_seed(4)
    assert np.all(np_of(tp.empty(1000, dtype=dtype, device=DEV).bernoulli_(0.0)) == 0)
    assert np.all(np_of(tp.empty(1000, dtype=dtype, device=DEV).bernoulli_(1.0)) == 1)
    x = np_of(tp.empty(N, dtype=dtype, device=DEV).bernoulli_(0.3))
    assert set(np.unique(x)) <= {0.0, 1.0} and abs(x.mean() - 0.3) < 0.01


def test_bernoulli_with_probability_tensors():
    tp.cuda.manual_seed(5)
    p = tp.tensor([0.0, 0.25, 1.0], device=DEV)
    x = np_of(tp._C._op("bernoulli_.Tensor")(tp.empty(N // 4, 3, device=DEV), p))  # p broadcast over rows
    assert np.all(x[:, 0] == 0) and np.all(x[:, 2] == 1) and abs(x[:, 1].mean() - 0.25) < 0.01
    cpu_p = tp._C._op("bernoulli_.Tensor")(tp.empty(8, device=DEV), tp.tensor(1.0))  # CPU p is moved over
    assert np.all(np_of(cpu_p) == 1)
    probs = tp.full((N,), 0.75, dtype=tp.float64, device=DEV)
    y = tp.bernoulli(probs)
    assert y.dtype == tp.float64 and abs(np_of(y).mean() - 0.75) < 0.01
    half = tp.bernoulli(tp.full((4, 5), 1.0, dtype=tp.float16, device=DEV).t())  # strided probabilities
    assert half.dtype == tp.float16 and np.all(np_of(half) == 1)


@pytest.mark.parametrize(
    "dtype,lo,hi",
    [
        (tp.bool, 0, 1),
        (tp.uint8, 0, 255),
        (tp.int8, 0, 127),
        (tp.int32, 0, 2**31 - 1),
        (tp.float32, 0, 2**24),
    ],
)
def test_random_plain_ranges(dtype, lo, hi):
    tp.cuda.manual_seed(6)
    x = np_of(tp.empty(N, dtype=dtype, device=DEV).random_())
    assert x.min() >= lo and x.max() <= hi and len(np.unique(x)) > 1


def test_random_from_to_and_randint():
    tp.cuda.manual_seed(7)
    r = tp.randint(-3, 5, (N,), device=DEV)
    x = r.cpu().numpy()
    assert r.dtype == tp.int64 and x.min() == -3 and x.max() == 4
    counts = np.bincount(x + 3, minlength=8) / N
    assert np.all(np.abs(counts - 1 / 8) < 0.01)
    big = tp.empty(N, dtype=tp.int64, device=DEV).random_(0, 2**40).cpu().numpy()  # 64-bit draws
    assert big.min() >= 0 and big.max() < 2**40 and big.max() > 2**39
    full = tp.empty(N, dtype=tp.int64, device=DEV).random_(-(2**63), None).cpu().numpy()
    assert full.min() < -(2**62) and full.max() > 2**62
    f = tp.empty(1000, dtype=tp.float16, device=DEV).random_(10)
    assert set(np.unique(np_of(f))) <= set(range(10))
    like = tp.randint_like(tp.zeros(10, 10, device=DEV), 3)
    assert like.device.type == "cuda" and set(np.unique(np_of(like))) <= {0, 1, 2}


def test_factories_reach_the_gpu():
    for t in (
        tp.rand(3, 4, device=DEV),
        tp.randn(5, device=DEV, dtype=tp.float64),
        tp.rand_like(tp.zeros(2, 2, device=DEV)),
        tp.randn_like(tp.zeros(2, 2, device=DEV)),
        tp.normal(0.0, 1.0, (6,), device=DEV),
    ):
        assert t.device.type == "cuda"
    assert tp.rand(0, device=DEV).numel() == 0  # size 0: nothing drawn
    s = tp.empty((), device=DEV).uniform_()
    assert s.dim() == 0 and 0 <= s.item() < 1
    out = tp.zeros(4, device=DEV)
    tp.rand(4, out=out)
    assert np.all(np_of(out) < 1) and np.any(np_of(out) > 0)


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.bfloat16])
def test_poisson_moments(dtype):
    tp.cuda.manual_seed(14)
    rates = tp.tensor([0.0, 3.0, 50.0], dtype=dtype, device=DEV).repeat(N // 4, 1)  # both samplers, and 0
    x = np_of(tp.poisson(rates))
    assert np.all(x[:, 0] == 0) and np.all(x == np.round(x)) and x.min() >= 0
    for col, lam in ((1, 3.0), (2, 50.0)):
        assert abs(x[:, col].mean() / lam - 1) < 0.01 and abs(x[:, col].var() / lam - 1) < 0.03


# ---- randperm and multinomial ------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 5, 1000, 4097])
def test_randperm_is_a_permutation(n):
    tp.cuda.manual_seed(8)
    p = tp.randperm(n, device=DEV)
    assert p.dtype == tp.int64 and p.device.type == "cuda"
    assert sorted(p.cpu().numpy().tolist()) == list(range(n))
    tp.cuda.manual_seed(8)
    assert np.array_equal(tp.randperm(n, device=DEV).cpu().numpy(), p.cpu().numpy())
    if n > 5:
        assert not np.array_equal(p.cpu().numpy(), np.arange(n))


def test_randperm_dtype_and_uniformity():
    assert tp.randperm(10, dtype=tp.int32, device=DEV).dtype == tp.int32
    tp.cuda.manual_seed(9)
    firsts = np.array([tp.randperm(4, device=DEV).cpu().numpy()[0] for _ in range(400)])
    assert np.all(np.abs(np.bincount(firsts, minlength=4) / 400 - 0.25) < 0.08)


def test_multinomial_with_replacement():
    tp.cuda.manual_seed(10)
    probs = tp.tensor([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 0.0, 2.0]], device=DEV)  # unnormalised row 2
    s = tp.multinomial(probs, 20000, replacement=True)
    assert s.shape == (2, 20000) and s.dtype == tp.int64
    x = s.cpu().numpy()
    freq = np.bincount(x[0], minlength=4) / 20000
    assert freq[1] == 0 and np.all(np.abs(freq - [0.1, 0.0, 0.6, 0.3]) < 0.02)
    assert np.all(x[1] == 3)
    one = tp.multinomial(tp.tensor([0.2, 0.8], dtype=tp.float64, device=DEV), 5, True)
    assert one.shape == (5,)


def test_multinomial_without_replacement():
    tp.cuda.manual_seed(11)
    probs = tp.tensor([0.5, 0.0, 0.2, 0.2, 0.1, 0.0, 0.0], device=DEV)
    for _ in range(20):
        s = tp.multinomial(probs, 4).cpu().numpy().tolist()
        assert sorted(s) == [0, 2, 3, 4]  # all positive categories, none twice, no zero-probability one
    firsts = np.array([tp.multinomial(probs, 1).cpu().numpy()[0] for _ in range(300)])
    assert abs((firsts == 0).mean() - 0.5) < 0.1
    rows = tp.multinomial(tp.ones(3, 1000, device=DEV), 1000)
    assert all(sorted(r) == list(range(1000)) for r in rows.cpu().numpy().tolist())


# ---- dropout -----------------------------------------------------------------------------------------------
def test_dropout_scales_and_masks():
    tp.cuda.manual_seed(12)
    x = tp.ones(N, device=DEV)
    y = np_of(tp.dropout(x, 0.25, True))
    scale = float(np.float32(1) / np.float32(0.75))  # the survivors' value, in float32
    assert set(np.unique(y)) <= {0.0, scale} and abs((y == 0).mean() - 0.25) < 0.01
    out, mask = tp._C._op("native_dropout")(x, 0.25, True)
    assert mask.dtype == tp.bool
    np.testing.assert_allclose(np_of(out), np_of(mask) / 0.75, rtol=1e-6)
    assert np.array_equal(np_of(tp.dropout(x, 0.25, False)), np_of(x))


def test_dropout_gradient_matches_the_mask():
    tpp = pytest.importorskip("tensorplay")
    tpp.cuda.manual_seed(13)
    x = tpp.randn(1000, device=DEV).requires_grad_()
    y = tpp.nn.functional.dropout(x, p=0.4)
    y.sum().backward()
    kept = (y.detach() != 0).cpu().numpy()
    np.testing.assert_allclose(x.grad.cpu().numpy(), kept / 0.6, rtol=1e-6)


# ---- errors: the CPU op's ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda d: tp.empty(3, device=d).uniform_(2.0, 1.0),
        lambda d: tp.empty(3, device=d).normal_(0.0, -1.0),
        lambda d: tp.empty(3, device=d).bernoulli_(1.5),
        lambda d: tp.empty(3, device=d).geometric_(0.0),
        lambda d: tp.empty(3, device=d).exponential_(-1.0),
        lambda d: tp.empty(3, dtype=tp.int64, device=d).uniform_(),
        lambda d: tp.empty(3, dtype=tp.int64, device=d).random_(5, 3),
        lambda d: tp.empty(3, dtype=tp.uint8, device=d).random_(0, 300),
        lambda d: tp.multinomial(tp.ones(2, 2, 2, device=d), 1),
        lambda d: tp.multinomial(tp.ones(3, device=d), 4),
        lambda d: tp.multinomial(tp.ones(3, dtype=tp.int64, device=d), 1),
        lambda d: tp.randperm(-1, device=d),
        lambda d: tp.poisson(tp.ones(3, dtype=tp.int64, device=d)),
    ],
)
def test_errors_match_the_cpu_op(call):
    with pytest.raises(Exception) as cpu:
        call("cpu")
    with pytest.raises(type(cpu.value)):
        call(DEV)


def test_a_cpu_generator_is_refused():
    with pytest.raises(RuntimeError, match="generator"):
        tp.empty(3, device=DEV).uniform_(generator=tp.Generator())


# ---- tp.Generator(device="cuda"): generators of one's own (Note [Generator devices]) -----------------------
# Each op with the same call on a CUDA generator and on the default one; `d` is the device. Inputs come from
# the CPU generator (then moved), so that the CUDA draws are the op's own.
GEN_CALLS = {
    "uniform_": lambda d, g: tp.empty(1001, device=d).uniform_(-1.0, 2.0, generator=g),
    "normal_": lambda d, g: tp.empty(1001, dtype=tp.float64, device=d).normal_(1.0, 2.0, generator=g),
    "log_normal_": lambda d, g: tp.empty(301, device=d).log_normal_(generator=g),
    "cauchy_": lambda d, g: tp.empty(301, device=d).cauchy_(generator=g),
    "exponential_": lambda d, g: tp.empty(301, dtype=tp.float16, device=d).exponential_(generator=g),
    "geometric_": lambda d, g: tp.empty(301, device=d).geometric_(0.3, generator=g),
    "bernoulli_": lambda d, g: tp.empty(301, device=d).bernoulli_(0.3, generator=g),
    "bernoulli_.Tensor": lambda d, g: tp.empty(301, device=d).bernoulli_(tp.rand(301).to(d), generator=g),
    "bernoulli": lambda d, g: tp.bernoulli(tp.full((7, 9), 0.4, device=d), generator=g),
    "random_": lambda d, g: tp.empty(301, dtype=tp.int64, device=d).random_(generator=g),
    "random_.to": lambda d, g: tp.empty(301, dtype=tp.int32, device=d).random_(17, generator=g),
    "random_.from": lambda d, g: tp.empty(301, dtype=tp.float32, device=d).random_(-5, 5, generator=g),
    "rand": lambda d, g: tp.rand(5, 7, device=d, generator=g),
    "randn": lambda d, g: tp.randn(5, 7, dtype=tp.bfloat16, device=d, generator=g),
    "randint": lambda d, g: tp.randint(3, 1000, (501,), device=d, generator=g),
    "randperm": lambda d, g: tp.randperm(1000, device=d, generator=g),
    "multinomial": lambda d, g: tp.multinomial(tp.rand(3, 50).to(d), 7, generator=g),
    "multinomial_replace": lambda d, g: tp.multinomial(tp.rand(3, 50).to(d), 70, True, generator=g),
    "poisson": lambda d, g: tp.poisson(tp.full((301,), 3.5, device=d), generator=g),
    "rrelu_with_noise": lambda d, g: tp.ops.call(
        "_rrelu_with_noise", tp.randn(301).to(d), 0.1, 0.3, generator=g
    )[1],
    "sample": lambda d, g: tp.sample(tp.randn(4, 64).to(d), 0.8, top_k=10, top_p=0.9, generator=g),
}
GEN_IDS = list(GEN_CALLS)


def state_of(g) -> tuple[int, int]:
    seed, offset = np.frombuffer(g.get_state().numpy().tobytes(), dtype="<u8")
    return int(seed), int(offset)


def default_state() -> tuple[int, int]:
    seed, offset = np.frombuffer(tp.cuda.get_rng_state().numpy().tobytes(), dtype="<u8")
    return int(seed), int(offset)


@pytest.mark.parametrize("name", GEN_IDS)
def test_a_generator_seeded_like_the_default_one_gives_its_values(name):
    call = GEN_CALLS[name]
    tp.manual_seed(123)  # the CPU inputs (and every CUDA generator, then reseeded)
    tp.cuda.manual_seed(5)
    want = np_of(call(DEV, None))
    used = default_state()[1]
    assert used > 0
    tp.manual_seed(123)
    tp.cuda.manual_seed(5)
    g = tp.Generator(device="cuda").manual_seed(5)
    np.testing.assert_array_equal(np_of(call(DEV, g)), want)
    assert state_of(g) == (5, used)  # g moved as the default one did
    assert default_state() == (5, 0)  # and the default one did not move


@pytest.mark.parametrize("name", GEN_IDS)
def test_same_seed_same_values_and_state_replays(name):
    call = GEN_CALLS[name]
    runs = []
    for _ in range(2):
        tp.manual_seed(0)
        tp.cuda.manual_seed(0)
        g = tp.Generator("cuda").manual_seed(77)
        runs.append(np_of(call(DEV, g)))
    np.testing.assert_array_equal(runs[0], runs[1])
    g = tp.Generator("cuda").manual_seed(77)
    state = g.get_state()
    tp.manual_seed(0)
    tp.cuda.manual_seed(0)
    first = np_of(call(DEV, g))
    assert state_of(g)[1] > 0  # the offset moved past the blocks used
    g.set_state(state)
    tp.manual_seed(0)
    tp.cuda.manual_seed(0)
    np.testing.assert_array_equal(np_of(call(DEV, g)), first)


def test_two_generators_are_independent():
    a, b = tp.Generator("cuda").manual_seed(1), tp.Generator("cuda").manual_seed(1)
    default = tp.cuda.get_rng_state().numpy()
    x1 = np_of(tp.rand(1000, device=DEV, generator=a))
    x2 = np_of(tp.rand(1000, device=DEV, generator=a))
    assert not np.array_equal(x1, x2)
    np.testing.assert_array_equal(np_of(tp.rand(1000, device=DEV, generator=b)), x1)  # b did not move with a
    np.testing.assert_array_equal(tp.cuda.get_rng_state().numpy(), default)  # nor did the default one
    c = tp.Generator("cuda").manual_seed(2)
    assert not np.array_equal(np_of(tp.rand(1000, device=DEV, generator=c)), x1)


def test_default_generators():
    gens = tp.cuda.default_generators
    assert len(gens) == tp.cuda.device_count() and tp.cuda.default_generators is gens
    assert gens[0].device == tp.device("cuda", 0) and isinstance(gens[0], tp.Generator)
    assert tp.cuda.default_generators[0] is gens[0]
    gens[0].manual_seed(9)  # is tp.cuda.manual_seed on device 0
    with tp.cuda.device(0):
        assert tp.cuda.initial_seed() == 9
    a = np_of(tp.rand(100, device="cuda:0", generator=gens[0]))
    tp.cuda.manual_seed_all(9)
    np.testing.assert_array_equal(np_of(tp.rand(100, device="cuda:0")), a)


def test_wrong_device_generators_raise():
    with pytest.raises(
        RuntimeError, match="normal_: Expected a 'cuda' device type for generator but found 'cpu'"
    ):
        tp.randn(3, device=DEV, generator=tp.Generator())
    with pytest.raises(
        RuntimeError, match="uniform_: Expected a 'cpu' device type for generator but found 'cuda'"
    ):
        tp.rand(3, generator=tp.Generator("cuda"))
    other = tp.device("cuda", tp.cuda.device_count())  # a device index no op here runs on
    with pytest.raises(RuntimeError, match=r"randperm: Expected a generator of device cuda:0"):
        tp.randperm(5, device="cuda:0", generator=tp.Generator(other))
    tp.randperm(5, device="cuda:0", generator=tp.Generator("cuda:0"))  # its own device is fine


def test_a_generator_of_its_own_cannot_be_captured():
    x = tp.empty(1024, device=DEV)
    x.uniform_()  # warm-up
    g = tp.Generator("cuda")
    graph = tp.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="being captured"):
        with tp.cuda.graph(graph):
            x.uniform_(generator=g)
    assert not tp.cuda.is_current_stream_capturing()
    assert state_of(g) == (67280421310721, 0)
    graph.reset()
    graph = (
        tp.cuda.CUDAGraph()
    )  # the device's default generator, even passed explicitly, is captured as usual
    with tp.cuda.graph(graph):
        x.uniform_(generator=tp.cuda.default_generators[tp.cuda.current_device()])
    graph.replay()
    first = np_of(x).copy()
    graph.replay()
    assert not np.array_equal(np_of(x), first)
