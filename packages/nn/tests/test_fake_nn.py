"""nn on fake CUDA tensors (p10's Note [Fake tensors]): a model's forward and backward trace on a machine
without a GPU, every result fake, on cuda:0, and shaped as the same model's results on real CPU tensors."""

import tensorplay as tp
import tensorplay.nn as nn
import tensorplay.nn.functional as F
from tensorplay.fake_tensor import FakeTensorMode, is_fake


def _fake_params(model: nn.Module, mode: FakeTensorMode) -> None:
    for mod in model.modules():
        for name, p in list(mod._parameters.items()):
            if p is not None:
                mod._parameters[name] = nn.Parameter(mode.from_tensor(p.detach(), device="cuda"))


def test_a_language_model_step_traces_on_fake_cuda_tensors():
    tp.manual_seed(0)
    model = nn.Sequential(
        nn.Embedding(50, 16), nn.LayerNorm(16), nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 50)
    )
    ids = tp.randint(0, 50, (2, 8))
    real_logits = model(ids)
    F.cross_entropy(real_logits.reshape(-1, 50), ids.reshape(-1)).backward()
    real_grads = {n: tuple(p.grad.shape) for n, p in model.named_parameters()}

    mode = FakeTensorMode()
    _fake_params(model, mode)
    fake_ids = mode.from_tensor(ids, device="cuda")
    logits = model(fake_ids)
    assert is_fake(logits) and logits.is_cuda and logits.shape == real_logits.shape
    loss = F.cross_entropy(logits.reshape(-1, 50), fake_ids.reshape(-1))
    assert is_fake(loss) and loss.shape == ()
    loss.backward()
    for n, p in model.named_parameters():
        assert is_fake(p.grad) and p.grad.is_cuda and tuple(p.grad.shape) == real_grads[n], n


def test_attention_and_rms_norm_ops_of_nn_run_their_meta_rules_on_fake_cuda():
    mode = FakeTensorMode()
    q = mode.from_tensor(tp.randn(2, 4, 8, 16, dtype=tp.bfloat16), device="cuda")
    a = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    r = F.rms_norm(q, (16,))
    for t in (a, r):
        assert is_fake(t) and t.is_cuda and t.shape == (2, 4, 8, 16) and t.dtype == tp.bfloat16
