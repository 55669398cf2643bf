"""The README's TinyLM on the GPU: the same training steps as on the CPU, then it learns, then it generates.

Where it sits: the end-to-end check of issue 7 ("the README TinyLM trains on cuda"): every op of a
transformer's forward and backward (embedding, RMSNorm, rotary, grouped-query SDPA, SwiGLU, tied lm_head,
cross-entropy) and AdamW's update run on CUDA. The CPU run of the same model, weights and batches is the
oracle for the first steps (float32: the two devices sum in different orders, so the tolerance is loose but
far below what a wrong kernel gives). They need a GPU and skip elsewhere ("needs a CUDA device").
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay as tp
from tensorplay.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from tinylm import TinyLM  # noqa: E402

pytestmark = pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a CUDA device")


def _batches(n: int, batch: int = 8, length: int = 65) -> list[np.ndarray]:
    text = (Path(tp.__file__).read_bytes() * 8)[: 1 << 16]
    data = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
    rng = np.random.default_rng(0)
    return [
        np.stack([data[s : s + length] for s in rng.integers(0, len(data) - length, batch)]) for _ in range(n)
    ]


def _train(model, batches, device: str) -> list[float]:
    opt = tp.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for b in batches:
        ids = tp.tensor(b, device=device)
        logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 256), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_tinylm_trains_on_cuda_as_on_cpu() -> None:
    tp.manual_seed(0)
    cpu_model = TinyLM(hidden=64, layers=2)
    gpu_model = copy.deepcopy(cpu_model).to("cuda")
    assert all(p.device.type == "cuda" for p in gpu_model.parameters())
    assert gpu_model.lm_head.weight is gpu_model.embed.weight  # tied weights stay tied through .to()
    batches = _batches(3)
    cpu_losses = _train(cpu_model, batches, "cpu")
    gpu_losses = _train(gpu_model, batches, "cuda")
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=2e-3)
    for (name, p), q in zip(gpu_model.named_parameters(), cpu_model.parameters(), strict=True):
        np.testing.assert_allclose(
            p.detach().cpu().numpy(), q.detach().numpy(), rtol=0, atol=2e-3, err_msg=name
        )


def test_tinylm_learns_and_generates_on_cuda() -> None:
    tp.manual_seed(1)
    model = TinyLM(hidden=64, layers=2).to("cuda")
    losses = _train(model, _batches(60), "cuda")
    assert np.mean(losses[-10:]) < losses[0] - 1.0, losses  # from ~5.5 (uniform over 256) well down
    prompt = tp.tensor(list(b"def "), device="cuda")[None]
    out = tp.nn.generation.generate(model, prompt, max_new_tokens=16)
    assert out.device.type == "cuda" and tuple(out.shape) == (1, 20)
    assert out[0, :4].cpu().tolist() == list(b"def ")
