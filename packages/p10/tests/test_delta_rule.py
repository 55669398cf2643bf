"""delta_rule and delta_rule_backward (kernels/delta_rule.cpp, delta_rule_backward.cpp) against float64 NumPy.

The forward reference is the recurrence of Note [Delta rule semantics] vectorised over (b, h); the
backward reference keeps every state and runs Note [Delta rule backward] in NumPy, and is itself checked
against central finite differences, so the kernel's gradients are compared with something derived
independently of it. Checked: both g shapes, initial_state given or not, T = 0, 1 and lengths around
chunk_size, chunk_size not changing results, continuing from a final state, non-contiguous inputs, mixed
dtypes, float32 against float64, the reference op, autograd (gradcheck, gradgradcheck, forward mode) and
error messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def inputs(B, T, H, Dk, Dv, per_channel=False, init=True, seed=0):
    """query, key, value, g, beta, initial_state as float64 arrays (g <= 0, beta in (0, 1), small q and k)."""
    r = np.random.default_rng(seed)
    q, k = r.uniform(-0.5, 0.5, (2, B, T, H, Dk))
    v = r.standard_normal((B, T, H, Dv))
    g = -r.uniform(0.0, 1.0, (B, T, H, Dk) if per_channel else (B, T, H))
    beta = r.uniform(0.0, 1.0, (B, T, H))
    s0 = r.standard_normal((B, H, Dk, Dv)) if init else None
    return q, k, v, g, beta, s0


def decay(g_t):
    """exp(g_t) shaped to scale the rows of S [B, H, Dk, Dv]."""
    a = np.exp(g_t)
    return a[..., None] if a.ndim == 3 else a[..., None, None]


def ref_forward(q, k, v, g, beta, s0, keep_states=False):
    B, T, H, Dk = q.shape
    S = np.zeros((B, H, Dk, v.shape[-1])) if s0 is None else s0.copy()
    out, states = np.zeros(v.shape), [S]
    for t in range(T):
        S = decay(g[:, t]) * S
        u = beta[:, t, :, None] * (v[:, t] - np.einsum("bhk,bhkv->bhv", k[:, t], S))
        S = S + k[:, t, :, :, None] * u[:, :, None, :]
        out[:, t] = np.einsum("bhk,bhkv->bhv", q[:, t], S)
        states.append(S)
    return (out, S, states) if keep_states else (out, S)


def ref_backward(dout, dstate, q, k, v, g, beta, s0):
    """The reverse-time recurrence with every state kept (Note [Delta rule backward])."""
    _, _, states = ref_forward(q, k, v, g, beta, s0, keep_states=True)
    dq, dk, dv, dg, dbeta = (np.zeros_like(x) for x in (q, k, v, g, beta))
    dS = dstate.copy()
    for t in reversed(range(q.shape[1])):
        a, S_prev, S = decay(g[:, t]), states[t], states[t + 1]
        Sp = a * S_prev
        w = v[:, t] - np.einsum("bhk,bhkv->bhv", k[:, t], Sp)
        dq[:, t] = np.einsum("bhkv,bhv->bhk", S, dout[:, t])
        dS = dS + q[:, t, :, :, None] * dout[:, t, :, None, :]
        u = beta[:, t, :, None] * w
        dk[:, t] = np.einsum("bhkv,bhv->bhk", dS, u)
        du = np.einsum("bhkv,bhk->bhv", dS, k[:, t])
        dbeta[:, t] = (du * w).sum(-1)
        dv[:, t] = beta[:, t, :, None] * du
        dp = -beta[:, t, :, None] * du
        dk[:, t] += np.einsum("bhkv,bhv->bhk", Sp, dp)
        dS = dS + k[:, t, :, :, None] * dp[:, :, None, :]
        rows = (dS * Sp).sum(-1)
        dg[:, t] = rows if g.ndim == 4 else rows.sum(-1)
        dS = a * dS
    return dq, dk, dv, dg, dbeta, dS


def T_(x, dtype=tp.float64):
    return None if x is None else tp.tensor(x).to(dtype)


def close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(actual.detach().to(tp.float64).numpy(), expected, rtol=rtol, atol=atol)


# ---- the references themselves -----------------------------------------------------------------------------
@pytest.mark.parametrize("per_channel", [False, True])
def test_backward_reference_matches_finite_differences(per_channel) -> None:
    args = inputs(1, 4, 2, 3, 2, per_channel, seed=1)
    dout, dstate = rng.standard_normal(args[2].shape), rng.standard_normal(args[5].shape)

    def loss(*xs):
        out, S = ref_forward(*xs)
        return float((out * dout).sum() + (S * dstate).sum())

    grads = ref_backward(dout, dstate, *args)
    for i, x in enumerate(args):
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            xp, xm = [list(args) for _ in range(2)]
            xp[i], xm[i] = x.copy(), x.copy()
            xp[i][idx] += 1e-6
            xm[i][idx] -= 1e-6
            num[idx] = (loss(*xp) - loss(*xm)) / 2e-6
        np.testing.assert_allclose(grads[i], num, rtol=1e-6, atol=1e-8, err_msg=f"input {i}")


# ---- forward -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("init", [False, True])
@pytest.mark.parametrize("T", [0, 1, 5, 63, 64, 65, 130])
def test_forward_matches_numpy(per_channel, init, T) -> None:
    args = inputs(2, T, 3, 5, 4, per_channel, init)
    out, S = ref_forward(*args)
    for chunk in (1, 7, 64):
        o, s = tp.delta_rule(*(T_(x) for x in args), chunk_size=chunk)
        assert o.shape == (2, T, 3, 4) and s.shape == (2, 3, 5, 4) and s.dtype is tp.float64
        close(o, out)
        close(s, S)


@pytest.mark.parametrize("per_channel", [False, True])
def test_reference_op_matches_numpy(per_channel) -> None:
    args = inputs(2, 9, 2, 3, 4, per_channel)
    out, S = ref_forward(*args)
    o, s = tp.ops._delta_rule_reference(*(T_(x) for x in args))
    close(o, out)
    close(s, S)


def test_without_initial_state_starts_from_zeros() -> None:
    q, k, v, g, beta, _ = inputs(1, 6, 2, 3, 3)
    a = tp.delta_rule(*(T_(x) for x in (q, k, v, g, beta)))
    b = tp.delta_rule(
        *(T_(x) for x in (q, k, v, g, beta)), initial_state=tp.zeros(1, 2, 3, 3, dtype=tp.float64)
    )
    assert tp.equal(a[0], b[0]) and tp.equal(a[1], b[1])


def test_continuing_from_the_final_state_equals_one_pass() -> None:
    args = inputs(2, 11, 2, 4, 3, per_channel=True)
    full_out, full_state = tp.delta_rule(*(T_(x) for x in args), chunk_size=4)
    first = [x[:, :5] for x in args[:5]]
    second = [x[:, 5:] for x in args[:5]]
    o1, s1 = tp.delta_rule(*(T_(x) for x in first), initial_state=T_(args[5]))
    o2, s2 = tp.delta_rule(*(T_(x) for x in second), initial_state=s1)
    close(tp.cat([o1, o2], 1), full_out.numpy(), rtol=1e-12, atol=1e-13)
    close(s2, full_state.numpy(), rtol=1e-12, atol=1e-13)


def test_non_contiguous_inputs() -> None:
    args = inputs(2, 7, 3, 4, 5, per_channel=True)
    out, S = ref_forward(*args)
    # [B, H, T, D] buffers seen as [B, T, H, D], a strided state and a sliced beta
    q, k, v, g = (tp.tensor(np.ascontiguousarray(x.swapaxes(1, 2))).transpose(1, 2) for x in args[:4])
    beta = tp.tensor(np.repeat(args[4], 2, axis=-1))[..., ::2]
    s0 = tp.tensor(np.ascontiguousarray(args[5].swapaxes(-1, -2))).transpose(-1, -2)
    assert not any(t.is_contiguous() for t in (q, k, v, g, beta, s0))
    o, s = tp.delta_rule(q, k, v, g, beta, s0, 3)
    close(o, out)
    close(s, S)


def test_float32_agrees_with_float64_and_keeps_dtypes() -> None:
    args = inputs(2, 40, 2, 8, 8, per_channel=True)
    out, S = ref_forward(*args)
    o, s = tp.delta_rule(*(T_(x, tp.float32) for x in args), chunk_size=16)
    assert o.dtype is tp.float32 and s.dtype is tp.float32
    close(o, out, rtol=1e-4, atol=2e-5)
    close(s, S, rtol=1e-4, atol=2e-5)
    # bfloat16 activations with float32 gates: out in bfloat16, the state in float32
    q, k, v = (T_(x, tp.bfloat16) for x in args[:3])
    o, s = tp.delta_rule(q, k, v, T_(args[3], tp.float32), T_(args[4], tp.float32))
    assert o.dtype is tp.bfloat16 and s.dtype is tp.float32
    ref_o, ref_s = ref_forward(*(x.to(tp.float64).numpy() for x in (q, k, v)), *args[3:5], None)
    close(o, ref_o, rtol=2e-2, atol=2e-2)
    close(s, ref_s, rtol=1e-4, atol=1e-5)


def test_meta_tensors_give_shapes_and_dtypes() -> None:
    q = tp.empty(2, 5, 3, 4, device="meta", dtype=tp.float16)
    v = tp.empty(2, 5, 3, 6, device="meta", dtype=tp.float16)
    g = tp.empty(2, 5, 3, device="meta")
    o, s = tp.delta_rule(q, q, v, g, g)
    assert (
        o.shape == (2, 5, 3, 6)
        and o.dtype is tp.float16
        and s.shape == (2, 3, 4, 6)
        and s.dtype is tp.float32
    )


# ---- the fused backward ------------------------------------------------------------------------------------
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("init", [False, True])
@pytest.mark.parametrize(("T", "chunk"), [(0, 4), (1, 4), (7, 3), (8, 4), (9, 64), (70, 16)])
def test_backward_matches_numpy(per_channel, init, T, chunk) -> None:
    args = inputs(2, T, 2, 4, 3, per_channel, init, seed=T)
    dout, dstate = rng.standard_normal(args[2].shape), rng.standard_normal((2, 2, 4, 3))
    want = ref_backward(dout, dstate, *args)
    got = tp.delta_rule_backward(T_(dout), T_(dstate), *(T_(x) for x in args), chunk)
    for i, (a, e) in enumerate(zip(got, want, strict=True)):
        if i == 5 and not init:
            assert a is None
            continue
        assert a.shape == e.shape, i
        close(a, e, rtol=1e-9, atol=1e-11)


def test_backward_takes_none_for_zero_output_gradients() -> None:
    args = [T_(x) for x in inputs(1, 6, 2, 3, 2)]
    dout = tp.tensor(rng.standard_normal((1, 6, 2, 2)))
    dstate = tp.tensor(rng.standard_normal((1, 2, 3, 2)))
    for go, gs in ((dout, None), (None, dstate), (None, None)):
        got = tp.delta_rule_backward(go, gs, *args, 4)
        want = tp.delta_rule_backward(
            go if go is not None else tp.zeros_like(dout),
            gs if gs is not None else tp.zeros_like(dstate),
            *args,
            4,
        )
        for a, b in zip(got, want, strict=True):
            assert tp.equal(a, b)


def test_backward_gives_each_input_its_dtype() -> None:
    q, k, v, g, beta, s0 = inputs(1, 5, 2, 4, 4, per_channel=True)
    args = [T_(x, tp.bfloat16) for x in (q, k, v)] + [
        T_(g, tp.float32),
        T_(beta, tp.float32),
        T_(s0, tp.float64),
    ]
    out, state = tp.delta_rule(*args)
    grads = tp.delta_rule_backward(tp.ones_like(out), tp.ones_like(state), *args)
    assert [t.dtype for t in grads] == [a.dtype for a in args]
    assert [t.shape for t in grads] == [a.shape for a in args]


def test_backward_float32_agrees_with_float64() -> None:
    args = inputs(1, 50, 2, 8, 8, per_channel=True)
    dout, dstate = rng.standard_normal(args[2].shape), rng.standard_normal((1, 2, 8, 8))
    want = ref_backward(dout, dstate, *args)
    got = tp.delta_rule_backward(
        T_(dout, tp.float32), T_(dstate, tp.float32), *(T_(x, tp.float32) for x in args), 8
    )
    for a, e in zip(got, want, strict=True):
        close(a, e, rtol=1e-3, atol=1e-4)


def test_backward_errors() -> None:
    args = [T_(x) for x in inputs(1, 3, 2, 4, 5)]
    with pytest.raises(
        RuntimeError, match=r"delta_rule_backward: expected a floating point grad_out of shape"
    ):
        tp.delta_rule_backward(tp.ones(1, 3, 2, 4), None, *args)
    with pytest.raises(
        RuntimeError, match=r"delta_rule_backward: .*grad_final_state of shape \[1, 2, 4, 5\]"
    ):
        tp.delta_rule_backward(None, tp.ones(1, 2, 5, 4), *args)
    with pytest.raises(ValueError, match="delta_rule_backward: chunk_size must be positive, got -1"):
        tp.delta_rule_backward(None, None, *args, -1)


# ---- autograd (tensorplay_tpx) -----------------------------------------------------------------------------
def _leaves(*shape_args, **kw):
    return tuple(tp.tensor(x).requires_grad_(True) for x in inputs(*shape_args, **kw))


@pytest.mark.parametrize("per_channel", [False, True])
def test_gradcheck_all_six_inputs(per_channel) -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    xs = _leaves(1, 5, 2, 2, 3, per_channel=per_channel)
    assert autograd.gradcheck(lambda *a: tp.delta_rule(*a, chunk_size=2), xs)


@pytest.mark.parametrize("per_channel", [False, True])
def test_gradgradcheck_all_six_inputs(per_channel) -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    xs = _leaves(1, 3, 1, 2, 2, per_channel=per_channel)
    assert autograd.gradgradcheck(lambda *a: tp.delta_rule(*a, chunk_size=2), xs)


def test_autograd_equals_the_fused_backward_and_the_reference() -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    xs = _leaves(2, 9, 2, 3, 4, per_channel=True)
    dout, dstate = tp.tensor(rng.standard_normal((2, 9, 2, 4))), tp.tensor(rng.standard_normal((2, 2, 3, 4)))
    fused = autograd.grad(tp.delta_rule(*xs, chunk_size=4), xs, (dout, dstate))
    composite = autograd.grad(tp.ops._delta_rule_reference(*xs), xs, (dout, dstate))
    want = ref_backward(dout.numpy(), dstate.numpy(), *(x.detach().numpy() for x in xs))
    for a, b, e in zip(fused, composite, want, strict=True):
        close(a, e, rtol=1e-9, atol=1e-11)
        close(b, e, rtol=1e-9, atol=1e-11)


def test_one_tensor_as_query_and_key_gets_both_gradients() -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    q, _, v, g, beta, s0 = _leaves(1, 4, 1, 2, 2)
    x = tp.tensor(q.detach().numpy()).requires_grad_(True)
    xs = (x, v, g, beta, s0)
    assert autograd.gradcheck(lambda x, *r: tp.delta_rule(x, x, *r)[0], xs)
    assert autograd.gradgradcheck(lambda x, *r: tp.delta_rule(x, x, *r)[0], xs)


def test_forward_mode_matches_reverse_mode() -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    from tensorplay_tpx.autograd import forward_ad as fwAD

    primals = tuple(x.detach() for x in _leaves(1, 4, 2, 2, 3, per_channel=True))
    tangents = tuple(tp.tensor(rng.standard_normal(tuple(p.shape))) for p in primals)
    _, expected = autograd.functional.jvp(lambda *a: tp.delta_rule(*a)[0], primals, tangents)
    with fwAD.dual_level():
        out, _ = tp.delta_rule(*(fwAD.make_dual(p, t) for p, t in zip(primals, tangents, strict=True)))
        got = fwAD.unpack_dual(out).tangent
    assert got is not None
    close(got, expected.numpy(), rtol=1e-9, atol=1e-11)


def test_training_step_grads_are_finite_at_length_256() -> None:
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    xs = tuple(tp.tensor(x, dtype=tp.float32).requires_grad_(True) for x in inputs(2, 256, 2, 16, 16, True))
    out, state = tp.delta_rule(*xs)
    grads = autograd.grad(out.square().sum() + state.sum(), xs)
    assert all(bool(gr.isfinite().all()) and gr.shape == x.shape for gr, x in zip(grads, xs, strict=True))


def test_matches_a_torch_composite_forward_and_gradients() -> None:
    torch = pytest.importorskip("torch")
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    arrays = inputs(2, 6, 2, 3, 4, per_channel=True)
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    S = ts[5]
    outs = []
    for t in range(6):  # the recurrence with torch ops
        S = S * ts[3][:, t].exp()[..., None]
        kt = ts[1][:, t].unsqueeze(-2)
        u = (ts[2][:, t].unsqueeze(-2) - kt @ S) * ts[4][:, t][..., None, None]
        S = S + kt.transpose(-2, -1) @ u
        outs.append(ts[0][:, t].unsqueeze(-2) @ S)
    out = torch.cat(outs, 2).permute(0, 2, 1, 3)
    (out.square().sum() + S.sum()).backward()
    xs = tuple(tp.tensor(a).requires_grad_(True) for a in arrays)
    o, s = tp.delta_rule(*xs, chunk_size=4)
    close(o, out.detach().numpy())
    close(s, S.detach().numpy())
    grads = autograd.grad(o.square().sum() + s.sum(), xs)
    for g, t in zip(grads, ts, strict=True):
        close(g, t.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_second_derivative_with_only_the_query_requiring_grad() -> None:
    """The final state does not depend on the query (inside the reference it has no graph): the recorded
    backward must cope with that output."""
    autograd = pytest.importorskip("tensorplay_tpx.autograd")
    q, k, v, g, beta, s0 = (tp.tensor(x) for x in inputs(1, 4, 2, 3, 2))
    q.requires_grad_(True)
    assert autograd.gradgradcheck(lambda q: tp.delta_rule(q, k, v, g, beta, s0), (q,))
    out, state = tp.delta_rule(q, k, v, g, beta, s0)
    (d,) = autograd.grad(out.square().sum() + state.sum(), q, create_graph=True)
    (dd,) = autograd.grad(d.sum(), q)
    assert d.grad_fn is not None and dd.shape == q.shape and bool(dd.isfinite().all())
