"""Tests of nn.Module, nn.Parameter and the containers: registration, naming, state_dict, hooks, modes,
dtype conversion and the printed architecture (packages/nn/src/tensorplay_nn/nn/{parameter,modules/module,
modules/container}.py)."""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest

import tensorplay as tp
from tensorplay import nn


class TwoLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.register_buffer("steps", tp.zeros((), dtype=tp.int64))
        self.register_buffer("scratch", tp.ones(2), persistent=False)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        return self.fc2(self.fc1(x))


# ---- Parameter -----------------------------------------------------------------------------------------
def test_parameter_is_a_leaf_tensor_that_requires_grad() -> None:
    data = tp.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, tp.Tensor)
    assert p.requires_grad and p.is_leaf
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    # same storage: writing through the data shows in the parameter
    data[0] = 5.0
    assert p.tolist() == [5.0, 2.0]
    # an op on a parameter gives a plain tensor
    assert type(p * 2) is tp.Tensor
    assert nn.Parameter().shape == (0,)


def test_parameter_of_a_non_leaf_is_detached() -> None:
    x = tp.ones(2, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_parameter_rejects_integer_data_and_non_tensors() -> None:
    with pytest.raises(RuntimeError, match="floating point and complex dtype.*int64"):
        nn.Parameter(tp.tensor([1, 2]))
    assert not nn.Parameter(tp.tensor([1, 2]), requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="Parameter\\(\\): data must be a Tensor, but got list"):
        nn.Parameter([1.0])


def test_parameter_deepcopy_copies_data() -> None:
    p = nn.Parameter(tp.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad
    q.detach().mul_(0)
    assert p.tolist() == [1.0, 2.0]


# ---- registration ----------------------------------------------------------------------------------------
def test_attributes_register_parameters_buffers_and_modules() -> None:
    m = TwoLayer()
    assert list(m._parameters) == [] and list(m._modules) == ["fc1", "fc2"]
    assert list(m._buffers) == ["steps", "scratch"]
    assert m.fc2.bias is None and "bias" in m.fc2._parameters
    m.w = nn.Parameter(tp.zeros(2))
    assert "w" in m._parameters and "w" not in m.__dict__
    # re-assigning a buffer's name to a module moves it; a parameter's name only takes parameters (or None)
    m.register_buffer("tmp", tp.zeros(1))
    m.tmp = nn.Linear(1, 1)
    assert "tmp" in m._modules and "tmp" not in m._buffers
    m.tmp = nn.Parameter(tp.zeros(1))
    assert "tmp" in m._parameters and "tmp" not in m._modules
    with pytest.raises(TypeError, match="as parameter 'w'"):
        m.w = nn.Linear(1, 1)
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__
    # a plain tensor assigned to a buffer name updates the buffer and keeps its persistence
    m.scratch = tp.zeros(3)
    assert m.scratch.shape == (3,) and "scratch" in m._non_persistent_buffers_set
    m.b = nn.Buffer(tp.ones(1), persistent=False)
    assert "b" in m._buffers and type(m._buffers["b"]) is tp.Tensor and "b" in m._non_persistent_buffers_set


def test_setattr_type_errors_name_the_slot() -> None:
    m = TwoLayer()
    with pytest.raises(TypeError, match="cannot assign 'tensorplay.FloatTensor' as parameter 'weight'"):
        m.fc1.weight = tp.zeros(4, 3)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'fc1'"):
        m.fc1 = 3
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'steps'"):
        m.steps = "x"
    m.fc1.bias = None  # None keeps the slot
    assert "bias" in m.fc1._parameters and m.fc1.bias is None
    m.fc1 = None
    assert "fc1" in m._modules and m.fc1 is None


@pytest.mark.parametrize("kind", ["parameter", "buffer", "module"])
def test_register_name_checks(kind: str) -> None:
    m = nn.Module()
    m.existing = 1
    value = {"parameter": nn.Parameter(tp.zeros(1)), "buffer": tp.zeros(1), "module": nn.Identity()}[kind]
    register = {"parameter": m.register_parameter, "buffer": m.register_buffer, "module": m.add_module}[kind]
    with pytest.raises(KeyError) as info:
        register("a.b", value)
    assert info.value.args[0] == f'{kind} name can\'t contain ".", got: a.b'
    with pytest.raises(KeyError) as info:
        register("", value)
    assert info.value.args[0] == f'{kind} name can\'t be empty string ""'
    with pytest.raises(TypeError, match=f"{kind} name should be a string. Got int"):
        register(3, value)
    with pytest.raises(KeyError, match="attribute 'existing' already exists"):
        register("existing", value)


def test_register_value_checks() -> None:
    m = nn.Module()
    with pytest.raises(TypeError, match="cannot assign 'tensorplay.FloatTensor' object to parameter 'w'"):
        m.register_parameter("w", tp.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'b'"):
        m.register_buffer("b", 3)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("c", 3)


def test_assigning_before_init_is_an_attribute_error() -> None:
    class Bad(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(tp.zeros(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__\\(\\) call"):
        Bad()


def test_getattr_and_delattr() -> None:
    m = TwoLayer()
    with pytest.raises(AttributeError, match="'TwoLayer' object has no attribute 'nope'"):
        _ = m.nope
    del m.fc1, m.steps
    assert "fc1" not in m._modules and "steps" not in m._buffers
    m.x = 1
    del m.x
    assert not hasattr(m, "x")
    with pytest.raises(AttributeError):
        del m.never


def test_dir_lists_registered_names() -> None:
    names = dir(TwoLayer())
    assert {"fc1", "fc2", "steps", "scratch", "forward", "training"} <= set(names)
    assert names == sorted(names)


def test_get_submodule_parameter_buffer() -> None:
    outer = nn.Sequential(TwoLayer())
    assert outer.get_submodule("") is outer
    assert outer.get_submodule("0.fc1") is outer[0].fc1
    assert outer.get_parameter("0.fc1.weight") is outer[0].fc1.weight
    assert outer.get_buffer("0.steps") is outer[0].steps
    with pytest.raises(AttributeError, match="TwoLayer has no attribute `fc3`"):
        outer.get_submodule("0.fc3")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Module"):
        outer.get_submodule("0.steps")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Parameter"):
        outer.get_parameter("0.steps")
    with pytest.raises(AttributeError, match="`fc1` is not a buffer"):
        outer.get_buffer("0.fc1")


# ---- walking the tree ------------------------------------------------------------------------------------
def test_named_parameters_buffers_children_modules() -> None:
    m = TwoLayer()
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in m.named_parameters(prefix="net")] == [
        "net.fc1.weight",
        "net.fc1.bias",
        "net.fc2.weight",
    ]
    assert list(m.named_parameters(recurse=False)) == []
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in m.named_children()] == ["fc1", "fc2"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "fc2"]
    assert [type(c).__name__ for c in m.children()] == ["Linear", "Linear"]
    assert len(list(m.modules())) == 3 and len(list(m.parameters())) == 3 and len(list(m.buffers())) == 2


def test_shared_parameters_and_modules_appear_once_unless_asked() -> None:
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.Identity(), shared)
    m.tied = shared.weight  # the same Parameter under a second name
    # PyTorch's order: a module's own members first, then its children's; a repeat is skipped
    assert [n for n, _ in m.named_parameters()] == ["tied", "0.bias"]
    names = [n for n, _ in m.named_parameters(remove_duplicate=False)]
    assert names == ["tied", "0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in m.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert len(list(m.children())) == 2


# ---- state_dict ------------------------------------------------------------------------------------------
def test_state_dict_keys_detach_and_share_memory() -> None:
    m = TwoLayer()
    sd = m.state_dict()
    # own members (parameters, then buffers) before the children's; the non-persistent buffer is left out
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert isinstance(sd, OrderedDict)
    assert all(type(v) is tp.Tensor and not v.requires_grad for v in sd.values())
    sd["fc1.bias"].fill_(7.0)
    assert m.fc1.bias.tolist() == [7.0] * 4
    kept = m.state_dict(keep_vars=True)
    assert kept["fc1.weight"] is m.fc1.weight
    assert list(m.fc1.state_dict(prefix="x.")) == ["x.weight", "x.bias"]


def test_load_state_dict_round_trip_in_place() -> None:
    tp.manual_seed(0)
    src = TwoLayer()
    tp.manual_seed(1)
    dst = TwoLayer()
    weight_before = dst.fc1.weight
    x = tp.randn(5, 3)
    assert not np.allclose(src(x).detach().numpy(), dst(x).detach().numpy())
    src.steps.fill_(3)
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.fc1.weight is weight_before and dst.fc1.weight.requires_grad  # copied in place
    np.testing.assert_array_equal(src(x).detach().numpy(), dst(x).detach().numpy())
    assert dst.steps.item() == 3
    # values are copied, not shared
    src.fc1.bias.detach().fill_(0.5)
    assert dst.fc1.bias.tolist() != [0.5] * 4


def test_load_state_dict_casts_dtype() -> None:
    m = nn.Linear(2, 1)
    m.load_state_dict(
        {"weight": tp.tensor([[1.0, 2.0]], dtype=tp.float64), "bias": tp.tensor([3.0], dtype=tp.float64)}
    )
    assert m.weight.dtype == tp.float32 and m.weight.tolist() == [[1.0, 2.0]]


def test_load_state_dict_strict_errors_list_every_key() -> None:
    m = TwoLayer()
    sd = m.state_dict()
    del sd["fc1.bias"], sd["steps"]
    sd["fc3.weight"] = tp.zeros(1)
    sd["extra"] = tp.zeros(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for TwoLayer:\n\t")
    assert 'Missing key(s) in state_dict: "steps", "fc1.bias". ' in msg
    assert 'Unexpected key(s) in state_dict: "fc3.weight", "extra". ' in msg
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["steps", "fc1.bias"]
    assert result.unexpected_keys == ["fc3.weight", "extra"]


def test_load_state_dict_size_mismatch_raises_even_when_not_strict() -> None:
    m = nn.Linear(3, 2)
    bad = {"weight": tp.zeros(2, 4), "bias": tp.zeros(2)}
    for strict in (True, False):
        with pytest.raises(
            RuntimeError,
            match=r"size mismatch for weight: copying a param with shape .*\[2, 4\].* "
            r"from checkpoint, the shape in current model is .*\[2, 3\]",
        ):
            m.load_state_dict(bad, strict=strict)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([("weight", tp.zeros(2, 3))])
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias", expected torch.Tensor'):
        m.load_state_dict({"weight": tp.zeros(2, 3), "bias": [0.0, 0.0]})


def test_load_state_dict_assign_takes_the_tensors() -> None:
    m = nn.Linear(2, 1)
    w = tp.tensor([[1.0, 2.0]], dtype=tp.float64)
    m.load_state_dict({"weight": w, "bias": tp.zeros(1)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.dtype == tp.float64 and m.weight.requires_grad


def test_extra_state_round_trips() -> None:
    class WithExtra(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.note = "a"

        def get_extra_state(self) -> str:
            return self.note

        def set_extra_state(self, state: str) -> None:
            self.note = state

    m = WithExtra()
    sd = m.state_dict()
    assert sd == {"_extra_state": "a"}
    other = WithExtra()
    other.load_state_dict({"_extra_state": "b"})
    assert other.note == "b"
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        other.load_state_dict({})


# ---- modes, gradients, conversion ------------------------------------------------------------------------
def test_train_eval_recurse() -> None:
    m = nn.Sequential(nn.Dropout(), nn.Sequential(nn.Dropout()))
    assert m.training and m[1][0].training
    assert m.eval() is m
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")


def test_requires_grad_and_zero_grad() -> None:
    m = TwoLayer()
    m(tp.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    assert m.requires_grad_(False) is m
    assert not any(p.requires_grad for p in m.parameters())


def test_to_double_float_keep_integer_buffers() -> None:
    m = TwoLayer()
    m(tp.randn(2, 3)).sum().backward()
    w = m.fc1.weight.detach().clone()
    assert m.double() is m
    assert m.fc1.weight.dtype == tp.float64 and isinstance(m.fc1.weight, nn.Parameter)
    assert m.fc1.weight.requires_grad and m.fc1.weight.grad.dtype == tp.float64
    assert m.steps.dtype == tp.int64 and m.scratch.dtype == tp.float64
    np.testing.assert_array_equal(m.fc1.weight.detach().numpy(), w.numpy().astype(np.float64))
    m.to(tp.float32)
    assert m.fc1.weight.dtype == tp.float32 and m.steps.dtype == tp.int64
    m.half()
    assert m.fc2.weight.dtype == tp.float16
    m.to(dtype=tp.bfloat16)
    assert m.fc2.weight.dtype == tp.bfloat16
    m.float().to("cpu")
    assert m.fc2.weight.dtype == tp.float32
    m.type(tp.float64)
    assert m.steps.dtype == tp.float64  # type() casts every tensor, integer ones too
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        m.to(tp.int32)


def test_to_keeps_parameter_objects_when_nothing_changes() -> None:
    m = nn.Linear(2, 2)
    w = m.weight
    m.to(tp.float32)
    m.cpu()
    assert m.weight is w


def test_apply_visits_children_first() -> None:
    m = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.Identity()))
    seen: list[str] = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "Identity", "Sequential", "Sequential"]


def test_forward_missing_is_not_implemented() -> None:
    with pytest.raises(
        NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'
    ):
        nn.Module()(1)


def test_module_deepcopy_is_independent() -> None:
    m = TwoLayer()
    c = copy.deepcopy(m)
    assert c.fc1.weight is not m.fc1.weight
    np.testing.assert_array_equal(c.fc1.weight.detach().numpy(), m.fc1.weight.detach().numpy())
    c.fc1.weight.detach().fill_(0)
    assert m.fc1.weight.abs().sum().item() > 0


# ---- hooks -----------------------------------------------------------------------------------------------
def test_forward_pre_hook_and_forward_hook_replace_values() -> None:
    m = nn.Identity()
    calls: list[str] = []

    def pre(mod: nn.Module, args: tuple) -> tp.Tensor:
        calls.append("pre")
        return args[0] + 1  # a single value is wrapped into the args tuple

    def post(mod: nn.Module, args: tuple, out: tp.Tensor) -> tp.Tensor:
        calls.append("post")
        assert args[0].tolist() == [1.0]
        return out * 10

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post)
    assert m(tp.zeros(1)).tolist() == [10.0]
    assert calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    h2.remove()  # removing twice is harmless
    assert m(tp.zeros(1)).tolist() == [0.0]


def test_hooks_with_kwargs_and_prepend() -> None:
    class Scale(nn.Module):
        def forward(self, x: tp.Tensor, *, scale: float = 1.0) -> tp.Tensor:
            return x * scale

    m = Scale()
    order: list[str] = []
    m.register_forward_pre_hook(lambda mod, a, kw: (a, {**kw, "scale": 3.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, a, kw, out: order.append(f"second {kw['scale']}"), with_kwargs=True)
    m.register_forward_hook(lambda mod, a, out: order.append("first"), prepend=True)
    assert m(tp.ones(1)).tolist() == [3.0]
    assert order == ["first", "second 3.0"]
    m.register_forward_pre_hook(lambda mod, a, kw: 5, with_kwargs=True)
    with pytest.raises(
        RuntimeError, match="forward pre-hook must return None or a tuple of \\(new_args, new_kwargs\\)"
    ):
        m(tp.ones(1))


def test_always_call_hook_runs_when_forward_raises() -> None:
    class Boom(nn.Module):
        def forward(self, x: tp.Tensor) -> tp.Tensor:
            raise ValueError("boom")

    m = Boom()
    seen: list[object] = []
    m.register_forward_hook(lambda mod, a, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, a, out: seen.append("never"))
    with pytest.raises(ValueError, match="boom"):
        m(tp.ones(1))
    assert seen == [None]


def test_full_backward_hooks_see_and_replace_gradients() -> None:
    tp.manual_seed(0)
    m = nn.Linear(3, 2)
    x = tp.randn(4, 3, requires_grad=True)
    g = tp.randn(4, 2)
    w = m.weight.detach().numpy().astype(np.float64)
    seen: dict[str, tuple] = {}

    def hook(mod: nn.Module, grad_input: tuple, grad_output: tuple) -> tuple:
        seen["in"], seen["out"] = grad_input, grad_output
        return (grad_input[0] * 2,)

    pre = m.register_full_backward_pre_hook(lambda mod, gout: seen.setdefault("pre", gout))
    handle = m.register_full_backward_hook(hook)
    m(x).backward(g)
    ref_gin = g.numpy().astype(np.float64) @ w
    np.testing.assert_allclose(seen["pre"][0].numpy(), g.numpy(), rtol=1e-6)
    np.testing.assert_allclose(seen["out"][0].numpy(), g.numpy(), rtol=1e-6)
    np.testing.assert_allclose(seen["in"][0].numpy(), ref_gin, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * ref_gin, rtol=1e-5, atol=1e-6)  # replaced by the hook
    handle.remove()
    pre.remove()
    x.grad = None
    m(x).backward(g)
    np.testing.assert_allclose(x.grad.numpy(), ref_gin, rtol=1e-5, atol=1e-6)


def test_full_backward_hook_without_input_grad_gets_none() -> None:
    m = nn.Linear(2, 1)
    seen: list[tuple] = []
    m.register_full_backward_hook(lambda mod, gin, gout: seen.append((gin, gout[0].shape)))
    m(tp.ones(3, 2)).sum().backward()
    assert seen == [((None,), (3, 1))]
    assert m.weight.grad is not None
    bad = nn.Linear(2, 1)
    bad.register_full_backward_hook(lambda mod, gin, gout: (gin[0], gin[0]))
    with pytest.raises(
        RuntimeError, match="returned an invalid number of grad_input - got 2, but expected 1"
    ):
        bad(tp.ones(3, 2, requires_grad=True)).sum().backward()


# ---- containers ------------------------------------------------------------------------------------------
def test_sequential_forward_matches_numpy() -> None:
    tp.manual_seed(0)
    seq = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    x = tp.randn(5, 3)
    ref = x.numpy().astype(np.float64)
    for layer in seq:
        ref = ref @ layer.weight.detach().numpy().T.astype(np.float64) + layer.bias.detach().numpy()
    np.testing.assert_allclose(seq(x).detach().numpy(), ref, rtol=1e-5, atol=1e-6)


def test_sequential_indexing_slicing_and_editing() -> None:
    a, b, c = nn.Identity(), nn.Flatten(), nn.Linear(1, 1)
    seq = nn.Sequential(a, b, c)
    assert seq[0] is a and seq[-1] is c and len(seq) == 3
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"] and sub[0] is b
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and seq[0] is b
    seq.insert(0, a)
    assert list(seq) == [a, b, c]
    seq.append(nn.Identity()).extend([nn.Identity()])
    assert len(seq) == 5 and list(seq._modules) == ["0", "1", "2", "3", "4"]
    assert seq.pop(1) is b and len(seq) == 4
    seq[0] = b
    assert seq[0] is b
    both = nn.Sequential(a) + nn.Sequential(c)
    assert list(both) == [a, c]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        nn.Sequential(a) + [c]
    named = nn.Sequential(OrderedDict(first=a, second=c))
    assert list(named._modules) == ["first", "second"] and named[1] is c


def test_module_list_and_dict() -> None:
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
    layers.append(nn.Identity())
    layers.insert(1, nn.Flatten())
    assert [type(m).__name__ for m in layers] == ["Linear", "Flatten", "Linear", "Linear", "Identity"]
    del layers[1]
    assert list(layers._modules) == ["0", "1", "2", "3"]
    assert isinstance(layers[:2], nn.ModuleList) and len(layers[:2]) == 2
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        layers.extend(3)
    with pytest.raises(NotImplementedError):
        layers(tp.ones(1))
    heads = nn.ModuleDict({"a": nn.Identity()})
    heads.update([("b", nn.Flatten())])
    heads["c"] = nn.Linear(1, 1)
    assert list(heads.keys()) == ["a", "b", "c"] and "b" in heads and len(heads) == 3
    assert type(heads.pop("b")).__name__ == "Flatten" and list(heads) == ["a", "c"]
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 1; 2 is required"):
        heads.update([("x",)])
    heads.clear()
    assert len(heads) == 0


def test_parameter_list_and_dict() -> None:
    plist = nn.ParameterList([nn.Parameter(tp.zeros(2)), tp.ones(3)])
    assert all(isinstance(p, nn.Parameter) for p in plist) and len(plist) == 2
    plist.append(tp.zeros(1))
    assert [n for n, _ in plist.named_parameters()] == ["0", "1", "2"]
    assert len(plist[1:]) == 2
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        plist(1)
    pdict = nn.ParameterDict({"b": tp.zeros(1), "a": tp.ones(1)})
    assert list(pdict.keys()) == ["a", "b"]  # a plain dict is added in sorted order, as in PyTorch
    pdict["c"] = nn.Parameter(tp.zeros(2))
    assert isinstance(pdict["a"], nn.Parameter) and "c" in pdict and len(pdict) == 3
    assert pdict.get("zz") is None and pdict.pop("c").shape == (2,)
    assert [n for n, _ in pdict.named_parameters()] == ["b", "a"] or sorted(
        n for n, _ in pdict.named_parameters()
    ) == [
        "a",
        "b",
    ]
    with pytest.raises(TypeError, match="not a string"):
        pdict[1] = tp.zeros(1)
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        pdict(1)


# ---- printing --------------------------------------------------------------------------------------------
def _fill_block(m: nn.Module, nn: object, tp: object) -> None:
    """Give ``m`` the printing test's children; with (tensorplay.nn, tensorplay) or (torch.nn, torch)."""
    m.norm = nn.LayerNorm(8)
    m.drop = nn.Dropout(0.1)
    m.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)] + [nn.Linear(8, 4, bias=False)])
    m.heads = nn.ModuleDict({"cls": nn.Bilinear(4, 4, 2), "emb": nn.Embedding(10, 3, padding_idx=0)})
    m.empty = nn.Sequential()
    m.seq = nn.Sequential(OrderedDict(flat=nn.Flatten(), unflat=nn.Unflatten(1, (2, 4)), id=nn.Identity()))
    m.plist = nn.ParameterList([nn.Parameter(tp.zeros(2, 3)), tp.ones(4)])
    m.pdict = nn.ParameterDict({"b": tp.zeros(1), "a": tp.ones(2, 2, dtype=tp.float64)})
    m.gn = nn.GroupNorm(2, 4)
    m.rms = nn.RMSNorm([4], eps=1e-6)
    m.lrn = nn.LocalResponseNorm(3)
    m.bag = nn.EmbeddingBag(10, 3, mode="sum")
    m.none = None
    m.d2 = nn.Dropout2d()
    m.ad = nn.AlphaDropout(0.2, inplace=True)
    m.ln2 = nn.LayerNorm((2, 3), elementwise_affine=False)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        _fill_block(self, nn, tp)


# Recorded from PyTorch 2.13 printing the same model built with torch.nn (torch. -> tensorplay.).
BLOCK_REPR = """Block(
  (norm): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (drop): Dropout(p=0.1, inplace=False)
  (layers): ModuleList(
    (0-2): 3 x Linear(in_features=8, out_features=8, bias=True)
    (3): Linear(in_features=8, out_features=4, bias=False)
  )
  (heads): ModuleDict(
    (cls): Bilinear(in1_features=4, in2_features=4, out_features=2, bias=True)
    (emb): Embedding(10, 3, padding_idx=0)
  )
  (empty): Sequential()
  (seq): Sequential(
    (flat): Flatten(start_dim=1, end_dim=-1)
    (unflat): Unflatten(dim=1, unflattened_size=(2, 4))
    (id): Identity()
  )
  (plist): ParameterList(
      (0): Parameter containing: [tensorplay.float32 of size 2x3]
      (1): Parameter containing: [tensorplay.float32 of size 4]
  )
  (pdict): ParameterDict(
      (a): Parameter containing: [tensorplay.DoubleTensor of size 2x2]
      (b): Parameter containing: [tensorplay.FloatTensor of size 1]
  )
  (gn): GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
  (rms): RMSNorm((4,), eps=1e-06, elementwise_affine=True)
  (lrn): LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)
  (bag): EmbeddingBag(10, 3, mode='sum')
  (d2): Dropout2d(p=0.5, inplace=False)
  (ad): AlphaDropout(p=0.2, inplace=True)
  (ln2): LayerNorm((2, 3), eps=1e-05, elementwise_affine=False, bias=False)
)"""


def test_nested_repr_matches_pytorch_layout() -> None:
    assert repr(Block()) == BLOCK_REPR
    assert str(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.Linear(2, 3)) == "Linear(in_features=2, out_features=3, bias=True)"


def test_nested_repr_equals_live_pytorch() -> None:
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):  # the same name, so that the first line matches
        def __init__(self) -> None:
            super().__init__()
            _fill_block(self, torch.nn, torch)

    assert repr(Block()).replace("torch.", "tensorplay.") == BLOCK_REPR


# ---- runnable examples -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["parameter", "init", "modules.module", "modules.container", "modules.linear", "modules.sparse",
     "modules.normalization", "modules.batchnorm", "modules.instancenorm", "modules.dropout",
     "modules.flatten", "functional.linear", "functional.sparse", "functional.normalization",
     "functional.dropout",
     "utils.clip_grad", "utils.convert_parameters"],
)  # fmt: skip
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    module = importlib.import_module(f"tensorplay_nn.nn.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_conversion_keeps_tied_parameters_tied() -> None:
    """A parameter shared by two modules (tied embeddings) stays one parameter through ``to``/``double``."""

    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(4, 3)
            self.head = nn.Linear(3, 4, bias=False)
            self.head.weight = self.embed.weight

    m = Tied().double()
    assert m.head.weight is m.embed.weight and m.embed.weight.dtype is tp.float64
    assert len(list(m.parameters())) == 1
    m.embed.weight.grad = tp.ones(4, 3, dtype=tp.float64)
    m.float()
    assert m.head.weight is m.embed.weight and m.head.weight.grad.dtype is tp.float32
