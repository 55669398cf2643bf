"""Fake tensors (Note [Fake tensors] in csrc/dispatch/fake_tensor.cpp): meta tensors that carry a device.

Each test checks a fake result's metadata against the same op run on real CPU tensors (the reference), and
that the device it reports is the one it stands for. No GPU is needed: fake CUDA tensors never touch the
driver.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp
from tensorplay_p10.fake_tensor import FakeTensorMode, is_fake


def meta_of(t):
    return tuple(t.shape), t.stride(), t.dtype


def test_factories_in_the_mode_make_fake_tensors_on_their_device():
    with FakeTensorMode():
        x = tp.empty(2, 3, device="cuda")
        z = tp.zeros(4, dtype=tp.float16, device="cuda:1")
        c = tp.randn(5)
    assert is_fake(x) and is_fake(z) and is_fake(c)
    assert str(x.device) == "cuda:0" and x.is_cuda and not x.is_meta and not x.is_cpu
    assert str(z.device) == "cuda:1" and z.dtype == tp.float16
    assert c.device.type == "cpu" and c.is_cpu
    assert x.shape == (2, 3) and x.stride() == (3, 1)


def test_meta_factory_in_the_mode_stays_plain_meta():
    with FakeTensorMode():
        m = tp.empty(3, device="meta")
    assert m.is_meta and not is_fake(m)


def test_outside_the_mode_factories_are_real():
    with FakeTensorMode():
        pass
    x = tp.ones(2)
    assert not is_fake(x) and x.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_ops_on_fakes_match_the_real_ops_metadata(device):
    a, b = tp.randn(4, 1, 3), tp.randn(5, 1).to(tp.float64)
    mode = FakeTensorMode()
    fa, fb = mode.from_tensor(a, device=device), mode.from_tensor(b, device=device)
    cases = [
        (lambda x, y: x + y, (a, b), (fa, fb)),
        (lambda x, y: (x * 2).exp().sum(dim=0), (a, b), (fa, fb)),
        (lambda x, y: x.transpose(0, 2).contiguous(), (a, b), (fa, fb)),
        (lambda x, y: x.reshape(12)[1:7:2], (a, b), (fa, fb)),
        (lambda x, y: tp.cat([x, x], dim=1), (a, b), (fa, fb)),
        (lambda x, y: x.softmax(-1).max(dim=-1).indices, (a, b), (fa, fb)),
    ]
    for fn, real, fake in cases:
        want, got = fn(*real), fn(*fake)
        assert is_fake(got) and got.device.type == device
        assert meta_of(got) == meta_of(want)


def test_views_share_the_fake_device_and_write_through_bumps_version():
    f = FakeTensorMode().from_tensor(tp.zeros(4, 4), device="cuda")
    v = f[1:, ::2]
    assert is_fake(v) and v.is_cuda and v.stride() == (4, 2)
    before = f._version
    v.add_(1)
    assert f._version > before


def test_to_moves_a_fake_between_devices_without_aliasing():
    f = FakeTensorMode().from_tensor(tp.ones(3, 2))
    g = f.to("cuda")
    assert g.is_cuda and f.is_cpu  # the input keeps its own device
    assert not g._shares_storage(f)
    h = g.to(tp.float16)
    assert h.is_cuda and h.dtype == tp.float16
    assert g.to("cuda") is g  # nothing to do: the same tensor, as for real tensors
    assert g.cpu().is_cpu


def test_mixed_fake_devices_raise_the_real_error():
    mode = FakeTensorMode()
    x, y = mode.from_tensor(tp.ones(3), device="cuda"), mode.from_tensor(tp.ones(3), device="cpu")
    with pytest.raises(RuntimeError, match="same device.*cuda:0 and cpu"):
        x + y


def test_cpu_scalars_mix_with_fake_cuda_tensors():
    x = FakeTensorMode().from_tensor(tp.ones(3, dtype=tp.float16), device="cuda")
    for y in (x + 2.5, x * tp.tensor(3.0), x + FakeTensorMode().from_tensor(tp.tensor(1.0))):
        assert y.is_cuda and y.dtype == tp.float16 and y.shape == (3,)


def test_real_non_scalar_tensors_among_fakes_raise_naming_the_op():
    x = FakeTensorMode().from_tensor(tp.ones(3))
    with pytest.raises(RuntimeError, match=r"add.*real tensor on cpu of shape \[3\]"):
        x + tp.ones(3)
    with FakeTensorMode(), pytest.raises(RuntimeError, match="FakeTensorMode.from_tensor"):
        real = tp.ones(2)  # made by the mode: fake
        assert is_fake(real)
        tp.ones(2) + np_tensor()


def np_tensor():
    return tp.from_numpy(np.ones(2, dtype=np.float32))  # from data, outside the dispatcher: real


def test_meta_rules_see_the_device_cuda_refuses_integer_matmul():
    mode = FakeTensorMode()
    a, b = tp.ones(2, 3, dtype=tp.int64), tp.ones(3, 4, dtype=tp.int64)
    assert (a @ b).dtype == tp.int64  # the CPU multiplies integers
    on_cpu = mode.from_tensor(a) @ mode.from_tensor(b)
    assert is_fake(on_cpu) and on_cpu.shape == (2, 4)
    with pytest.raises(NotImplementedError, match="CUDA matrix products support float16, bfloat16, float32"):
        mode.from_tensor(a, device="cuda") @ mode.from_tensor(b, device="cuda")
    f = mode.from_tensor(a.float(), device="cuda") @ mode.from_tensor(b.float(), device="cuda")
    assert f.is_cuda and f.shape == (2, 4)


def test_reading_data_raises():
    f = FakeTensorMode().from_tensor(tp.ones(()), device="cuda")
    with pytest.raises(NotImplementedError):
        f.item()
    with pytest.raises((NotImplementedError, RuntimeError)):
        FakeTensorMode().from_tensor(tp.ones(2)).tolist()


def test_from_tensor_keeps_strides_dtype_and_requires_grad():
    t = tp.randn(3, 4, dtype=tp.float64).t()
    t.requires_grad_(True)
    f = FakeTensorMode().from_tensor(t, device="cuda")
    assert meta_of(f) == meta_of(t) and f.requires_grad and f.is_leaf


def test_size_zero_and_size_one_dims():
    mode = FakeTensorMode()
    e = mode.from_tensor(tp.ones(0, 3), device="cuda")
    assert (e.sum(0)).shape == (3,) and (e * 3.0).shape == (0, 3)
    one = mode.from_tensor(tp.ones(1, 3), device="cuda")
    assert (one + e).shape == (0, 3)


def test_printing_names_a_fake_tensor():
    f = FakeTensorMode().from_tensor(tp.ones(2, 3), device="cuda")
    assert repr(f) == "FakeTensor(..., device='cuda:0', size=(2, 3))"
    assert (
        repr(FakeTensorMode().from_tensor(tp.ones(2, dtype=tp.int32)))
        == "FakeTensor(..., size=(2,), dtype=tensorplay.int32)"
    )


def test_the_mode_nests_and_restores():
    outer = FakeTensorMode()
    with outer:
        with FakeTensorMode():
            assert is_fake(tp.ones(1))
        assert is_fake(tp.ones(1))
    assert not is_fake(tp.ones(1))


def test_the_mode_as_a_decorator():
    @FakeTensorMode()
    def make():
        return tp.full((2, 2), 3.0, device="cuda")

    f = make()
    assert is_fake(f) and f.is_cuda and f.shape == (2, 2)
