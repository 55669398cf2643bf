"""tp.Generator for both device types, without a GPU: construction, seeding, state round trips, and the device
checks of the CPU ops (Note [Generator devices] in csrc/random/generator.h).

A CUDA generator is a (seed, offset) pair (csrc/cuda/philox.h) made without touching the driver, so everything
here runs on any machine; the draws from CUDA generators are tested on a GPU in test_cuda_random.py.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

import tensorplay_p10 as tp

CUDA_SEED = 67280421310721  # PyTorch's default_rng_seed_val, the seed of a new generator


def cuda_state(seed: int, offset: int) -> tp.Tensor:
    return tp.tensor(list(struct.pack("<QQ", seed, offset)), dtype=tp.uint8)


# ---- construction ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", [None, "cpu", tp.device("cpu")])
def test_cpu_generators(device):
    g = tp.Generator() if device is None else tp.Generator(device)
    assert type(g) is tp.Generator and g.device == tp.device("cpu")
    assert g.initial_seed() == CUDA_SEED  # the same default seed for both kinds, as PyTorch
    assert tp.Generator(device="cpu").device.type == "cpu"


@pytest.mark.parametrize(
    "device, index",
    [("cuda", None), ("cuda:0", 0), ("cuda:1", 1), (tp.device("cuda", 2), 2), (tp.device("cuda"), None)],
)
def test_cuda_generators_need_no_gpu(device, index):
    g = tp.Generator(device=device)
    assert isinstance(g, tp.Generator) and type(g) is tp.Generator
    assert g.device.type == "cuda" and g.device.index == index
    assert g.initial_seed() == CUDA_SEED
    assert np.array_equal(g.get_state().numpy(), cuda_state(CUDA_SEED, 0).numpy())


def test_generators_of_other_device_types_are_refused():
    with pytest.raises(RuntimeError, match="meta"):
        tp.Generator("meta")


def test_the_default_generator_is_a_cpu_generator():
    assert isinstance(tp.default_generator, tp.Generator) and tp.default_generator.device.type == "cpu"
    assert tp.manual_seed(3) is tp.default_generator


def test_default_generators_without_cuda():
    if tp.cuda.is_available():
        pytest.skip("checks the no-GPU answer")
    assert tp.cuda.default_generators == ()


# ---- seeding and state -------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_manual_seed_returns_the_generator(device):
    g = tp.Generator(device)
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    assert g.manual_seed(-1).initial_seed() == 2**64 - 1  # any Python int, low 64 bits kept (PyTorch's)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_seed_draws_a_fresh_seed(device):
    g = tp.Generator(device)
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s


def test_cuda_state_is_seed_and_offset():
    g = tp.Generator("cuda").manual_seed(7)
    assert g.get_state().dtype == tp.uint8 and np.array_equal(g.get_state().numpy(), cuda_state(7, 0).numpy())
    assert g.set_state(cuda_state(11, 40)) is g
    assert g.initial_seed() == 11 and np.array_equal(g.get_state().numpy(), cuda_state(11, 40).numpy())
    g.manual_seed(12)  # offset back to 0, as torch.cuda.manual_seed
    assert np.array_equal(g.get_state().numpy(), cuda_state(12, 0).numpy())


def test_cuda_generators_are_independent_of_the_default_state():
    before = tp.cuda.get_rng_state() if tp.cuda.is_available() else None
    g = tp.Generator("cuda").manual_seed(1)
    g.set_state(cuda_state(2, 3))
    if before is not None:
        assert np.array_equal(tp.cuda.get_rng_state().numpy(), before.numpy())


def test_bad_states_are_refused():
    with pytest.raises(ValueError, match="16 bytes"):
        tp.Generator("cuda").set_state(tp.zeros(8, dtype=tp.uint8))
    with pytest.raises(TypeError, match="uint8"):
        tp.Generator("cuda").set_state(tp.zeros(16))
    with pytest.raises(ValueError):
        tp.Generator("cpu").set_state(cuda_state(1, 0))


def test_cpu_state_round_trip():
    g = tp.Generator().manual_seed(9)
    state = g.get_state()
    a = tp.randn(5, generator=g)
    g.set_state(state)
    assert np.array_equal(tp.randn(5, generator=g).numpy(), a.numpy())


def test_cpu_generator_stream_equals_default_stream():
    tp.manual_seed(4)
    want = tp.rand(6).numpy()
    assert np.array_equal(tp.rand(6, generator=tp.Generator().manual_seed(4)).numpy(), want)


# ---- a CUDA generator for a CPU op -------------------------------------------------------------------------
CPU_CALLS = [
    ("uniform_", lambda g: tp.empty(3).uniform_(generator=g)),
    ("normal_", lambda g: tp.empty(3).normal_(generator=g)),
    ("log_normal_", lambda g: tp.empty(3).log_normal_(generator=g)),
    ("cauchy_", lambda g: tp.empty(3).cauchy_(generator=g)),
    ("exponential_", lambda g: tp.empty(3).exponential_(generator=g)),
    ("geometric_", lambda g: tp.empty(3).geometric_(0.5, generator=g)),
    ("bernoulli_", lambda g: tp.empty(3).bernoulli_(0.5, generator=g)),
    ("bernoulli_", lambda g: tp.empty(3).bernoulli_(tp.full((3,), 0.5), generator=g)),
    ("bernoulli", lambda g: tp.bernoulli(tp.full((3,), 0.5), generator=g)),
    ("random_", lambda g: tp.empty(3).random_(generator=g)),
    ("random_", lambda g: tp.empty(3).random_(5, generator=g)),
    ("random_", lambda g: tp.empty(3).random_(1, 5, generator=g)),
    ("uniform_", lambda g: tp.rand(3, generator=g)),
    ("normal_", lambda g: tp.randn(3, generator=g)),
    ("random_", lambda g: tp.randint(0, 5, (3,), generator=g)),
    ("randperm", lambda g: tp.randperm(4, generator=g)),
    ("multinomial", lambda g: tp.multinomial(tp.ones(4), 2, generator=g)),
    ("poisson", lambda g: tp.poisson(tp.ones(3), generator=g)),
    ("_rrelu_with_noise", lambda g: tp.ops.call("_rrelu_with_noise", tp.randn(3), 0.1, 0.3, generator=g)),
    ("sample", lambda g: tp.sample(tp.randn(2, 5), generator=g)),
]


@pytest.mark.parametrize("op, call", CPU_CALLS, ids=[f"{i}-{op}" for i, (op, _) in enumerate(CPU_CALLS)])
def test_a_cuda_generator_for_a_cpu_op_raises(op, call):
    with pytest.raises(
        RuntimeError, match=f"{op}: Expected a 'cpu' device type for generator but found 'cuda'"
    ):
        call(tp.Generator("cuda"))
    call(tp.Generator("cpu"))  # and the op itself works


def test_the_refused_draw_leaves_the_generators_alone():
    g = tp.Generator("cuda").manual_seed(2)
    tp.manual_seed(8)
    want = tp.rand(3).numpy()
    tp.manual_seed(8)
    with pytest.raises(RuntimeError):
        tp.rand(3, generator=g)
    assert np.array_equal(tp.rand(3).numpy(), want)
    assert np.array_equal(g.get_state().numpy(), cuda_state(2, 0).numpy())
