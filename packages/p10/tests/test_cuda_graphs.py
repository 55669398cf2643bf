"""CUDA graphs on the GPU (csrc/cuda/graphs.cpp, tensorplay_p10/cuda/graphs.py).

Covered: x * 2 + 1 captured into a static output and replayed after the static input changed; capture refused
on the default stream; two graphs sharing a private pool (graph_pool_handle), the pool in the memory figures
and released at reset; synchronize / .item() / empty_cache during a capture raising RuntimeError that names
them, with capture working again afterwards; random ops in a graph drawing fresh numbers at each replay
(dropout masks) and equal to the eager stream from the same (seed, offset); make_graphed_callables on a small
MLP giving eager's outputs and gradients. Each test warms its ops up before capturing (compiled kernels, a
cuBLAS handle for the capture stream). They need a GPU and skip elsewhere ("needs a CUDA device").
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp
from tensorplay_p10.cuda.graphs import _pool_stats

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, needs_cuda  # noqa: E402

pytestmark = needs_cuda


def test_capture_and_replay_with_a_new_static_input():
    x = tp.zeros(1000, device=DEV)
    _ = x * 2 + 1  # warm-up: the kernels are compiled outside the capture
    g = tp.cuda.CUDAGraph()
    with tp.cuda.graph(g):
        assert tp.cuda.is_current_stream_capturing()
        y = x * 2 + 1
    assert not tp.cuda.is_current_stream_capturing()
    x.fill_(3.0)
    g.replay()
    assert np.all(y.cpu().numpy() == 7.0)
    x.copy_(tp.arange(1000.0).to(DEV))
    g.replay()
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(1000.0) * 2 + 1)
    g.reset()


def test_capture_on_the_default_stream_is_refused():
    g = tp.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="non-default stream"):
        g.capture_begin()
    assert not tp.cuda.is_current_stream_capturing()


def test_two_graphs_share_a_pool_and_release_it_at_reset():
    x = tp.ones(1000, device=DEV)
    _ = x * 2 + 1
    h = tp.cuda.graph_pool_handle()
    g1, g2 = tp.cuda.CUDAGraph(), tp.cuda.CUDAGraph()
    with tp.cuda.graph(g1, pool=h):
        a = x * 2 + 1  # x * 2 is a temporary freed inside the capture, back to the pool
    with tp.cuda.graph(g2, pool=h):
        b = x + 5  # may reuse it: the same pool, the same stream
    st = _pool_stats(h)
    assert st["use_count"] == 2 and st["segments"] == 1 and st["reserved_bytes"] >= 2 << 20
    assert tp.cuda.memory_reserved() >= st["reserved_bytes"]
    assert tp.cuda.memory_stats()["reserved_bytes.all.current"] == tp.cuda.memory_reserved()
    g1.replay()
    g2.replay()
    assert np.all(a.cpu().numpy() == 3.0) and np.all(b.cpu().numpy() == 6.0)
    del a  # the static output's block returns to the private pool, not the general one
    assert _pool_stats(h)["reserved_bytes"] == st["reserved_bytes"]
    g1.reset()
    assert _pool_stats(h)["use_count"] == 1
    g2.reset()
    del b
    assert _pool_stats(h)["segments"] == 0


@pytest.mark.parametrize(
    "illegal,name",
    [
        (lambda x: tp.cuda.synchronize(), "synchronize"),
        (lambda x: x.sum().item(), "being captured"),
        (lambda x: x.cpu(), "being captured"),
        (lambda x: tp.cuda.empty_cache(), "empty_cache"),
    ],
)
def test_illegal_operations_during_capture_raise(illegal, name):
    x = tp.ones(16, device=DEV)
    _ = x.sum()
    g = tp.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=name):
        with tp.cuda.graph(g):
            _ = x * 2
            illegal(x)
    assert not tp.cuda.is_current_stream_capturing()
    g.reset()
    g2 = tp.cuda.CUDAGraph()  # the stream and the allocator work again
    with tp.cuda.graph(g2):
        y = x * 3
    g2.replay()
    assert np.all(y.cpu().numpy() == 3.0)


def test_random_ops_in_a_graph_draw_fresh_numbers_each_replay():
    x = tp.ones(1 << 16, device=DEV)
    _ = tp.dropout(x, 0.5, True)  # warm-up
    g = tp.cuda.CUDAGraph()
    with tp.cuda.graph(g):
        y = tp.dropout(x, 0.5, True)
    before = tp.cuda.get_rng_state()
    g.replay()
    m1 = y.cpu().numpy().copy()
    g.replay()
    m2 = y.cpu().numpy()
    for m in (m1, m2):
        assert set(np.unique(m)) <= {0.0, 2.0} and abs((m == 0).mean() - 0.5) < 0.02
    assert not np.array_equal(m1, m2)
    after = tp.cuda.get_rng_state()
    offset = lambda s: int(np.frombuffer(s.numpy().tobytes()[8:], dtype="<u8")[0])  # noqa: E731
    assert offset(after) == offset(before) + 2 * (1 << 16) // 4  # two replays of one bernoulli_ draw


def test_a_replayed_draw_equals_the_eager_one_from_the_same_state():
    static = tp.empty(1001, device=DEV)
    static.uniform_()  # warm-up
    g = tp.cuda.CUDAGraph()
    with tp.cuda.graph(g):
        static.uniform_()
    tp.cuda.manual_seed(21)
    g.replay()
    graphed = static.cpu().numpy().copy()
    tp.cuda.manual_seed(21)
    np.testing.assert_array_equal(tp.rand(1001, device=DEV).cpu().numpy(), graphed)


def test_make_graphed_callables_matches_eager_on_an_mlp():
    tpp = pytest.importorskip("tensorplay")
    nn = tpp.nn
    tpp.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).cuda()
    x = tpp.randn(8, 16, device=DEV)

    def eager(inp):
        out = nn.Sequential.forward(model, inp)
        (out * out).sum().backward()
        grads = [p.grad.cpu().numpy().copy() for p in model.parameters()]
        model.zero_grad()
        return out.detach().cpu().numpy(), grads

    out_ref, grads_ref = eager(x)
    graphed = tpp.cuda.make_graphed_callables(model, (x,))
    assert graphed is model
    x2 = tpp.randn(8, 16, device=DEV)
    out2_ref, grads2_ref = eager(x2)
    for inp, o_ref, g_ref in ((x, out_ref, grads_ref), (x2, out2_ref, grads2_ref)):
        out = model(inp)
        (out * out).sum().backward()
        np.testing.assert_allclose(out.detach().cpu().numpy(), o_ref, rtol=1e-5, atol=1e-6)
        for p, gr in zip(model.parameters(), g_ref, strict=True):
            np.testing.assert_allclose(p.grad.cpu().numpy(), gr, rtol=1e-4, atol=1e-6)
        model.zero_grad()
