"""Tests of nn.RNN / LSTM / GRU and their cells against a NumPy float64 re-implementation of PyTorch's
equations.

The reference runs every sequence of the batch on its own, for its own length, one time step at a time (and
reversed for the backward direction), so it shares nothing with the packed time loop under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from nn_testing import assert_param_grads_match

import tensorplay as tp
from tensorplay import nn
from tensorplay.autograd import gradcheck
from tensorplay.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

MODES = {
    "tanh": (nn.RNN, {"nonlinearity": "tanh"}),
    "relu": (nn.RNN, {"nonlinearity": "relu"}),
    "lstm": (nn.LSTM, {}),
    "gru": (nn.GRU, {}),
}


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def np_cell(mode: str, x: np.ndarray, h: np.ndarray, c: np.ndarray | None, p: dict) -> tuple:
    """One step of PyTorch's recurrences, written from the documentation's equations."""
    gi = x @ p["w_ih"].T + (p["b_ih"] if "b_ih" in p else 0)
    gh = h @ p["w_hh"].T + (p["b_hh"] if "b_hh" in p else 0)
    if mode == "tanh":
        return np.tanh(gi + gh), None
    if mode == "relu":
        return np.maximum(gi + gh, 0), None
    if mode == "lstm":
        i, f, g, o = np.split(gi + gh, 4, -1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        return (h @ p["w_hr"].T if "w_hr" in p else h), c
    ir, iz, in_ = np.split(gi, 3, -1)
    hr, hz, hn = np.split(gh, 3, -1)
    r, z = _sig(ir + hr), _sig(iz + hz)
    n = np.tanh(in_ + r * hn)
    return (1 - z) * n + z * h, None


def _params(module: nn.Module, layer: int, suffix: str) -> dict:
    keys = {
        "w_ih": "weight_ih",
        "w_hh": "weight_hh",
        "b_ih": "bias_ih",
        "b_hh": "bias_hh",
        "w_hr": "weight_hr",
    }
    out = {}
    for short, name in keys.items():
        t = getattr(module, f"{name}_l{layer}{suffix}", None)
        if t is not None:
            out[short] = t.numpy(force=True).astype(np.float64)
    return out


def np_rnn(mode, module, x, lengths, h0, c0):  # type: ignore[no-untyped-def]
    """x [T, B, I] time-major; returns output [T, B, D*H] (zeros past each length), h_n, c_n."""
    D = 2 if module.bidirectional else 1
    T, B = x.shape[:2]
    out = None
    h_n, c_n = np.zeros_like(h0), None if c0 is None else np.zeros_like(c0)
    for b in range(B):
        seq = x[: lengths[b], b]
        for layer in range(module.num_layers):
            dirs = []
            for d in range(D):
                idx = layer * D + d
                p = _params(module, layer, "_reverse" if d else "")
                h, c = h0[idx, b], None if c0 is None else c0[idx, b]
                ys = []
                for xt in seq if d == 0 else seq[::-1]:
                    h, c = np_cell(mode, xt, h, c, p)
                    ys.append(h)
                dirs.append(np.stack(ys if d == 0 else ys[::-1]))
                h_n[idx, b] = h
                if c0 is not None:
                    c_n[idx, b] = c
            seq = np.concatenate(dirs, -1)
        if out is None:
            out = np.zeros((T, B, seq.shape[-1]))
        out[: lengths[b], b] = seq
    return out, h_n, c_n


def _make(mode: str, **kwargs):  # type: ignore[no-untyped-def]
    cls, extra = MODES[mode]
    tp.manual_seed(0)
    return cls(**extra, **kwargs).double()


def _states(mode: str, module, batch: int, rng):  # type: ignore[no-untyped-def]
    D = 2 if module.bidirectional else 1
    h_size = module.proj_size or module.hidden_size
    h0 = rng.standard_normal((module.num_layers * D, batch, h_size))
    c0 = rng.standard_normal((module.num_layers * D, batch, module.hidden_size)) if mode == "lstm" else None
    return h0, c0


def _call(mode, module, x, h0, c0):  # type: ignore[no-untyped-def]
    hx = None if h0 is None else ((tp.tensor(h0), tp.tensor(c0)) if mode == "lstm" else tp.tensor(h0))
    out, hn = module(x, hx)
    return (out, *hn) if mode == "lstm" else (out, hn, None)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, False), (1, True), (2, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_layer_matches_numpy(mode: str, num_layers: int, bidirectional: bool, batch_first: bool) -> None:
    m = _make(
        mode,
        input_size=3,
        hidden_size=4,
        num_layers=num_layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
    )
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 2, 3))
    h0, c0 = _states(mode, m, 2, rng)
    want, want_h, want_c = np_rnn(mode, m, x, [5, 5], h0, c0)
    xin = tp.tensor(x.transpose(1, 0, 2) if batch_first else x)
    out, h, c = _call(mode, m, xin, h0, c0)
    got = out.numpy(force=True).transpose(1, 0, 2) if batch_first else out.numpy(force=True)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(force=True), want_h, rtol=1e-10, atol=1e-12)
    if mode == "lstm":
        np.testing.assert_allclose(c.numpy(force=True), want_c, rtol=1e-10, atol=1e-12)
    D = 2 if bidirectional else 1
    assert tuple(out.shape) == ((2, 5, 4 * D) if batch_first else (5, 2, 4 * D))
    assert tuple(h.shape) == (num_layers * D, 2, 4)


@pytest.mark.parametrize("mode", list(MODES))
def test_default_state_is_zeros_and_no_bias(mode: str) -> None:
    m = _make(mode, input_size=2, hidden_size=3, bias=False)
    assert not any("bias" in n for n, _ in m.named_parameters())
    x = np.random.default_rng(2).standard_normal((4, 3, 2))
    h0 = np.zeros((1, 3, 3))
    want, want_h, _ = np_rnn(mode, m, x, [4, 4, 4], h0, h0 if mode == "lstm" else None)
    out, h, _ = _call(mode, m, tp.tensor(x), None, None)
    np.testing.assert_allclose(out.numpy(force=True), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(force=True), want_h, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_proj_size(bidirectional: bool) -> None:
    m = _make("lstm", input_size=3, hidden_size=5, proj_size=2, num_layers=2, bidirectional=bidirectional)
    D = 2 if bidirectional else 1
    assert tuple(m.weight_hr_l0.shape) == (2, 5) and tuple(m.weight_hh_l1.shape) == (20, 2)
    assert tuple(m.weight_ih_l1.shape) == (20, 2 * D)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 2, 3))
    h0, c0 = _states("lstm", m, 2, rng)
    want, want_h, want_c = np_rnn("lstm", m, x, [4, 4], h0, c0)
    out, h, c = _call("lstm", m, tp.tensor(x), h0, c0)
    assert (
        tuple(out.shape) == (4, 2, 2 * D)
        and tuple(h.shape) == (2 * D, 2, 2)
        and tuple(c.shape) == (2 * D, 2, 5)
    )
    for g, w in ((out, want), (h, want_h), (c, want_c)):
        np.testing.assert_allclose(g.numpy(force=True), w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_input_equals_per_sequence_reference(mode: str, bidirectional: bool) -> None:
    m = _make(mode, input_size=3, hidden_size=4, num_layers=2, bidirectional=bidirectional)
    rng = np.random.default_rng(4)
    lengths = [3, 6, 1, 4]
    x = rng.standard_normal((6, 4, 3))
    h0, c0 = _states(mode, m, 4, rng)
    want, want_h, want_c = np_rnn(mode, m, x, lengths, h0, c0)
    packed = pack_padded_sequence(tp.tensor(x), lengths, enforce_sorted=False)
    out, h, c = _call(mode, m, packed, h0, c0)
    assert isinstance(out, PackedSequence)
    assert out.batch_sizes.tolist() == packed.batch_sizes.tolist()
    padded, out_lengths = pad_packed_sequence(out)
    assert out_lengths.tolist() == lengths
    np.testing.assert_allclose(padded.numpy(force=True), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(force=True), want_h, rtol=1e-10, atol=1e-12)
    if mode == "lstm":
        np.testing.assert_allclose(c.numpy(force=True), want_c, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["gru", "lstm"])
def test_packed_full_length_equals_padded(mode: str) -> None:
    m = _make(mode, input_size=2, hidden_size=3, bidirectional=True)
    x = tp.tensor(np.random.default_rng(5).standard_normal((4, 3, 2)))
    out_padded, *h_padded = _call(mode, m, x, None, None)
    out_packed, *h_packed = _call(mode, m, pack_padded_sequence(x, [4, 4, 4]), None, None)
    np.testing.assert_array_equal(
        pad_packed_sequence(out_packed)[0].numpy(force=True), out_padded.numpy(force=True)
    )
    np.testing.assert_array_equal(h_packed[0].numpy(force=True), h_padded[0].numpy(force=True))


@pytest.mark.parametrize("mode", list(MODES))
def test_unbatched_input(mode: str) -> None:
    m = _make(mode, input_size=3, hidden_size=2, bidirectional=True)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 3))
    h0, c0 = _states(mode, m, 1, rng)
    want, want_h, want_c = np_rnn(mode, m, x[:, None], [4], h0, c0)
    hx = None if c0 is None else (tp.tensor(h0[:, 0]), tp.tensor(c0[:, 0]))
    out, hn = m(tp.tensor(x), hx if mode == "lstm" else tp.tensor(h0[:, 0]))
    h = hn[0] if mode == "lstm" else hn
    assert tuple(out.shape) == (4, 4) and tuple(h.shape) == (2, 2)
    np.testing.assert_allclose(out.numpy(force=True), want[:, 0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(force=True), want_h[:, 0], rtol=1e-10, atol=1e-12)


def test_dropout_between_layers_only_in_training() -> None:
    # dropout=1 zeroes the first layer's output, so in training the second layer reads zeros
    m = _make("gru", input_size=2, hidden_size=3, num_layers=2, dropout=1.0)
    x = np.random.default_rng(7).standard_normal((3, 2, 2))
    out, _ = m(tp.tensor(x))
    p1 = _params(m, 1, "")
    h, ys = np.zeros((2, 3)), []
    for _ in range(3):
        h, _c = np_cell("gru", np.zeros((2, 3)), h, None, p1)
        ys.append(h)
    np.testing.assert_allclose(out.numpy(force=True), np.stack(ys), rtol=1e-10, atol=1e-12)
    m.eval()
    want, _, _ = np_rnn("gru", m, x, [3, 3], np.zeros((2, 2, 3)), None)
    np.testing.assert_allclose(m(tp.tensor(x))[0].numpy(force=True), want, rtol=1e-10, atol=1e-12)


def test_zero_batch_and_zero_length() -> None:
    m = _make("lstm", input_size=2, hidden_size=3)
    out, (h, c) = m(tp.zeros(4, 0, 2, dtype=tp.float64))
    assert tuple(out.shape) == (4, 0, 3) and tuple(h.shape) == (1, 0, 3) and tuple(c.shape) == (1, 0, 3)
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        m(tp.zeros(0, 2, 2, dtype=tp.float64))


@pytest.mark.parametrize("mode", list(MODES))
def test_gradcheck_inputs_and_states(mode: str) -> None:
    m = _make(mode, input_size=2, hidden_size=2, bidirectional=True)
    rng = np.random.default_rng(8)
    x = tp.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    h0 = tp.tensor(rng.standard_normal((2, 2, 2)), requires_grad=True)
    if mode == "lstm":
        c0 = tp.tensor(rng.standard_normal((2, 2, 2)), requires_grad=True)
        assert gradcheck(lambda a, b, c: (lambda o: (o[0], *o[1]))(m(a, (b, c))), (x, h0, c0))
    else:
        assert gradcheck(lambda a, b: m(a, b), (x, h0))


@pytest.mark.parametrize("mode", list(MODES))
def test_weight_gradients_match_finite_differences(mode: str) -> None:
    m = _make(mode, input_size=2, hidden_size=2, num_layers=2)
    x = tp.tensor(np.random.default_rng(9).standard_normal((3, 2, 2)))
    packed = pack_padded_sequence(x, [3, 2])

    def loss() -> tp.Tensor:
        out, hn = m(packed)
        h = hn[0] if mode == "lstm" else hn
        return (out.data * out.data).sum() + h.sum()

    loss().backward()
    for name, p in m.named_parameters():
        flat = p.detach().reshape(-1)
        numeric = np.zeros(flat.numel())
        for i in range(flat.numel()):
            old = float(flat[i])
            with tp.no_grad():
                flat[i] = old + 1e-6
                up = float(loss())
                flat[i] = old - 1e-6
                down = float(loss())
                flat[i] = old
            numeric[i] = (up - down) / 2e-6
        np.testing.assert_allclose(
            p.grad.numpy(force=True).reshape(-1), numeric, rtol=1e-5, atol=1e-7, err_msg=name
        )


# ---- cells ----

CELLS = {
    "tanh": (nn.RNNCell, {}),
    "relu": (nn.RNNCell, {"nonlinearity": "relu"}),
    "lstm": (nn.LSTMCell, {}),
    "gru": (nn.GRUCell, {}),
}


@pytest.mark.parametrize("mode", list(CELLS))
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_numpy(mode: str, batched: bool) -> None:
    cls, extra = CELLS[mode]
    tp.manual_seed(0)
    cell = cls(3, 4, **extra).double()
    p = {
        k: getattr(cell, n).numpy(force=True)
        for k, n in (("w_ih", "weight_ih"), ("w_hh", "weight_hh"), ("b_ih", "bias_ih"), ("b_hh", "bias_hh"))
    }
    rng = np.random.default_rng(10)
    shape = (2,) if batched else ()
    x, h, c = (rng.standard_normal((*shape, n)) for n in (3, 4, 4))
    want_h, want_c = np_cell(mode, x, h, c if mode == "lstm" else None, p)
    if mode == "lstm":
        got_h, got_c = cell(tp.tensor(x), (tp.tensor(h), tp.tensor(c)))
        np.testing.assert_allclose(got_c.numpy(force=True), want_c, rtol=1e-12, atol=1e-12)
    else:
        got_h = cell(tp.tensor(x), tp.tensor(h))
    np.testing.assert_allclose(got_h.numpy(force=True), want_h, rtol=1e-12, atol=1e-12)
    assert tuple(got_h.shape) == (*shape, 4)


@pytest.mark.parametrize("mode", list(CELLS))
def test_cell_gradcheck_and_default_state(mode: str) -> None:
    cls, extra = CELLS[mode]
    tp.manual_seed(0)
    cell = cls(2, 3, **extra).double()
    rng = np.random.default_rng(11)
    x = tp.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    h = tp.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    if mode == "lstm":
        c = tp.tensor(rng.standard_normal((2, 3)), requires_grad=True)
        assert gradcheck(lambda a, b, d: cell(a, (b, d)), (x, h, c))
        zero = cell(x, (tp.zeros(2, 3, dtype=tp.float64), tp.zeros(2, 3, dtype=tp.float64)))
        np.testing.assert_array_equal(cell(x)[0].numpy(force=True), zero[0].numpy(force=True))
    else:
        assert gradcheck(lambda a, b: cell(a, b), (x, h))
        np.testing.assert_array_equal(
            cell(x).numpy(force=True), cell(x, tp.zeros(2, 3, dtype=tp.float64)).numpy(force=True)
        )


# ---- parameters, init, repr ----


def test_parameter_names_shapes_and_order() -> None:
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    names = [n for n, _ in m.named_parameters()]
    per = ["weight_ih_l{}{}", "weight_hh_l{}{}", "bias_ih_l{}{}", "bias_hh_l{}{}", "weight_hr_l{}{}"]
    assert names == [p.format(layer, s) for layer in range(2) for s in ("", "_reverse") for p in per]
    assert tuple(m.weight_ih_l0.shape) == (20, 3) and tuple(m.weight_ih_l1_reverse.shape) == (20, 4)
    assert tuple(nn.GRU(3, 5).weight_hh_l0.shape) == (15, 5)
    assert [n for n, _ in nn.GRUCell(3, 5).named_parameters()] == [
        "weight_ih",
        "weight_hh",
        "bias_ih",
        "bias_hh",
    ]


def test_default_init_is_uniform_in_pytorchs_order() -> None:
    tp.manual_seed(3)
    m = nn.RNN(2, 4, num_layers=2)
    tp.manual_seed(3)
    bound = 0.5
    for p in m.parameters():
        want = tp.empty(p.shape).uniform_(-bound, bound)
        np.testing.assert_array_equal(p.numpy(force=True), want.numpy(force=True))
        assert float(p.abs().max()) <= bound


def test_repr() -> None:
    assert repr(
        nn.LSTM(3, 5, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True, proj_size=2)
    ) == ("LSTM(3, 5, proj_size=2, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True)")
    assert (
        repr(nn.RNNCell(3, 5, bias=False, nonlinearity="relu"))
        == "RNNCell(3, 5, bias=False, nonlinearity=relu)"
    )
    assert repr(nn.GRU(3, 5)) == "GRU(3, 5)"


def test_constructor_errors() -> None:
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.GRU(2, 3, dropout=1.5)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(2, 3, dropout=0.5)
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        nn.GRU(2, 3.0)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(2, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.LSTM(2, 3, num_layers=0)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(2, 3, proj_size=3)
    with pytest.raises(ValueError, match="proj_size should be a positive integer"):
        nn.LSTM(2, 3, proj_size=-1)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."):
        nn.RNN(2, 3, nonlinearity="sigmoid")


def test_forward_errors() -> None:
    rnn, lstm = nn.RNN(2, 3), nn.LSTM(2, 3)
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D tensor instead"):
        rnn(tp.zeros(1, 1, 1, 2))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 1D instead"):
        lstm(tp.zeros(2))
    with pytest.raises(
        ValueError, match=r"RNN input dtype \(tensorplay.float64\) does not match weight dtype "
    ):
        rnn(tp.zeros(3, 1, 2, dtype=tp.float64))
    with pytest.raises(
        RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 2, got 4"
    ):
        rnn(tp.zeros(3, 1, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 5, 3\), got \[1, 4, 3\]"):
        rnn(tp.zeros(3, 5, 2), tp.zeros(1, 4, 3))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D tensor"):
        rnn(tp.zeros(3, 5, 2), tp.zeros(5, 3))
    with pytest.raises(RuntimeError, match=r"hx and cx should also be 3-D but got \(3-D, 2-D\) tensors"):
        lstm(tp.zeros(3, 5, 2), (tp.zeros(1, 5, 3), tp.zeros(5, 3)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 5, 3\), got \[1, 5, 4\]"):
        lstm(tp.zeros(3, 5, 2), (tp.zeros(1, 5, 3), tp.zeros(1, 5, 4)))
    cell = nn.LSTMCell(2, 3)
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D instead"):
        cell(tp.zeros(1, 1, 2))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 4 expected 2"):
        cell(tp.zeros(1, 4))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        cell(tp.zeros(2, 2), (tp.zeros(3, 3), tp.zeros(2, 3)))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 4, expected 3"):
        nn.GRUCell(2, 3)(tp.zeros(2, 2), tp.zeros(2, 4))
    with pytest.raises(ValueError, match="RNNCell: Expected hidden to be 1D or 2D, got 3D instead"):
        nn.RNNCell(2, 3)(tp.zeros(2, 2), tp.zeros(1, 2, 3))


# ---- against PyTorch, when it is installed ----


@pytest.mark.parametrize("mode", list(MODES))
def test_matches_torch_outputs_and_gradients(mode: str) -> None:
    torch = pytest.importorskip("torch")
    kwargs = {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True}
    if mode == "lstm":
        kwargs["proj_size"] = 2
    ours = _make(mode, **kwargs)
    cls = {"tanh": torch.nn.RNN, "relu": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[mode]
    theirs = cls(**MODES[mode][1], **kwargs).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy(force=True)) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(12).standard_normal((5, 3, 3))
    lengths = [5, 2, 4]
    ours_in = pack_padded_sequence(tp.tensor(x), lengths, enforce_sorted=False)
    theirs_in = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False)
    (o_out, o_h), (t_out, t_h) = ours(ours_in), theirs(theirs_in)
    o_h, t_h = (o_h[0], t_h[0]) if mode == "lstm" else (o_h, t_h)
    np.testing.assert_allclose(
        o_out.data.numpy(force=True), t_out.data.numpy(force=True), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(o_h.numpy(force=True), t_h.numpy(force=True), rtol=1e-10, atol=1e-12)
    (o_out.data.sum() + (o_h * o_h).sum()).backward()
    (t_out.data.sum() + (t_h * t_h).sum()).backward()
    assert_param_grads_match(ours, theirs, rtol=1e-9, atol=1e-11)


def test_same_seed_same_weights_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for ours_cls, theirs_cls in ((nn.LSTM, torch.nn.LSTM), (nn.GRUCell, torch.nn.GRUCell)):
        tp.manual_seed(7)
        torch.manual_seed(7)
        ours, theirs = ours_cls(3, 4), theirs_cls(3, 4)
        for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
            assert n1 == n2
            np.testing.assert_array_equal(p1.numpy(force=True), p2.numpy(force=True))


@pytest.mark.parametrize("name", ["modules.rnn", "modules.rnn_cell", "utils.rnn"])
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    module = importlib.import_module(f"tensorplay_nn.nn.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
