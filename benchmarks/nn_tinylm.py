"""TinyLM, TensorPlay vs PyTorch on the same machine with the same weights (JSON out, like benchmarks/run.py).

Cases: one training step (forward, cross-entropy, backward, AdamW) at batch 1 x 64 tokens and batch 8 x 256
tokens, and greedy `generate` of 64 new tokens with the key/value cache (prompt of 16 bytes). The PyTorch
model is a twin written here with the same module names, so TensorPlay's state_dict loads into it; the
benchmark first checks that both give the same logits. PyTorch is optional (never a dependency): without
it only TensorPlay is timed.

    python benchmarks/nn_tinylm.py [--quick] [--out PATH] [--profile]

`--profile` adds a cProfile of TensorPlay's 8 x 256 step (top functions by own time) to the report.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import sys
from pathlib import Path

import numpy as np

import tensorplay as tp
from tensorplay.nn.generation import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import timeit  # noqa: E402
from tinylm import TinyLM  # noqa: E402

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None


def torch_twin():
    """TinyLM in PyTorch, module for module (names match TensorPlay's state_dict)."""
    nn = torch.nn

    def rope(x, pos, base=10000.0):
        d = x.shape[-1]
        inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d))
        ang = pos.float()[..., None] * inv_freq
        cos, sin = ang.cos()[:, None], ang.sin()[:, None]
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)

    class GQA(nn.Module):
        def __init__(self, c, h, kv, layer_idx):
            super().__init__()
            self.h, self.kv, self.d, self.layer_idx = h, kv, c // h, layer_idx
            self.q_proj = nn.Linear(c, h * self.d, bias=False)
            self.k_proj = nn.Linear(c, kv * self.d, bias=False)
            self.v_proj = nn.Linear(c, kv * self.d, bias=False)
            self.o_proj = nn.Linear(h * self.d, c, bias=False)

        def forward(self, x, position_ids=None, past_key_values=None):
            b, t, _ = x.shape
            q = self.q_proj(x).view(b, t, self.h, self.d).transpose(1, 2)
            k = self.k_proj(x).view(b, t, self.kv, self.d).transpose(1, 2)
            v = self.v_proj(x).view(b, t, self.kv, self.d).transpose(1, 2)
            cache = past_key_values
            offset = cache[self.layer_idx][0].shape[2] if cache is not None and self.layer_idx in cache else 0
            if position_ids is None:
                position_ids = torch.arange(offset, offset + t, device=x.device).expand(b, t)
            q, k = rope(q, position_ids), rope(k, position_ids)
            if cache is not None:
                if self.layer_idx in cache:
                    k = torch.cat([cache[self.layer_idx][0], k], 2)
                    v = torch.cat([cache[self.layer_idx][1], v], 2)
                cache[self.layer_idx] = (k, v)
            o = nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=t > 1 and t == k.shape[2], enable_gqa=True
            )
            return self.o_proj(o.transpose(1, 2).reshape(b, t, -1))

    class MLP(nn.Module):
        def __init__(self, c):
            super().__init__()
            i = 8 * c // 3
            self.gate_proj, self.up_proj = nn.Linear(c, i, bias=False), nn.Linear(c, i, bias=False)
            self.down_proj = nn.Linear(i, c, bias=False)

        def forward(self, x):
            return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))

    class Block(nn.Module):
        def __init__(self, c, mixer):
            super().__init__()
            self.mixer, self.mlp = mixer, MLP(c)
            self.input_norm, self.post_norm = nn.RMSNorm(c, eps=1e-6), nn.RMSNorm(c, eps=1e-6)

        def forward(self, x, position_ids=None, past_key_values=None):
            x = x + self.mixer(self.input_norm(x), position_ids=position_ids, past_key_values=past_key_values)
            return x + self.mlp(self.post_norm(x))

    class TorchTinyLM(nn.Module):
        def __init__(self, vocab=256, hidden=128, layers=4, heads=8, kv_heads=2):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.blocks = nn.ModuleList(Block(hidden, GQA(hidden, heads, kv_heads, i)) for i in range(layers))
            self.norm = nn.RMSNorm(hidden)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
            self.lm_head.weight = self.embed.weight

        def forward(self, input_ids, position_ids=None, past_key_values=None):
            x = self.embed(input_ids)
            for block in self.blocks:
                x = block(x, position_ids=position_ids, past_key_values=past_key_values)
            return self.lm_head(self.norm(x))

    return TorchTinyLM()


def torch_generate(model, ids, n):
    """Greedy decoding with a dict-of-pairs cache: one prefill, then one token per step."""
    with torch.no_grad():
        cache, seq, nxt = {}, ids, ids
        for _ in range(n):
            length = seq.shape[1]
            pos = torch.arange(length - nxt.shape[1], length).expand(seq.shape[0], -1)
            tok = model(nxt, position_ids=pos, past_key_values=cache)[:, -1].argmax(-1, keepdim=True)
            seq, nxt = torch.cat([seq, tok], 1), tok
        return seq


def train_step(lib, model, opt, x, y):
    def step():
        logits = model(x)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, 256), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats")
    p.add_argument("--profile", action="store_true", help="add a cProfile of the 8x256 TensorPlay step")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", "nn_tinylm.json"))
    args = p.parse_args()
    repeats = 3 if args.quick else 5

    tp.manual_seed(0)
    model = TinyLM()
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    twin = None
    if torch is not None:
        torch.set_num_threads(tp.get_num_threads())
        twin = torch_twin()
        twin.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        probe = np.random.default_rng(0).integers(0, 256, (2, 16))
        diff = np.abs(
            model(tp.tensor(probe)).detach().numpy() - twin(torch.from_numpy(probe)).detach().numpy()
        )
        if diff.max() > 1e-3:
            raise SystemExit(
                f"nn_tinylm: the PyTorch twin disagrees with TinyLM (max |diff| {diff.max():.2e})"
            )
        twin_after = torch_generate(twin, torch.from_numpy(probe[:1]), 8).numpy()
        ours_after = generate(model, tp.tensor(probe[:1]), max_new_tokens=8).numpy()
        if not np.array_equal(twin_after, ours_after):
            raise SystemExit("nn_tinylm: greedy generate differs between TensorPlay and the PyTorch twin")

    results = []
    rng = np.random.default_rng(1)
    for b, t in [(1, 64), (8, 256)]:
        ids = rng.integers(0, 256, (b, t + 1))
        x, y = tp.tensor(ids[:, :-1]), tp.tensor(ids[:, 1:])
        opt = tp.optim.AdamW(model.parameters(), lr=1e-4)
        row = {"case": f"train step {b}x{t} (tokens/s)"}
        sec = timeit(train_step(tp, model, opt, x, y), 2 if b == 8 else 10, repeats)
        row.update(tensorplay_s=sec, tensorplay=b * t / sec)
        if twin is not None:
            tx, ty = torch.from_numpy(ids[:, :-1]), torch.from_numpy(ids[:, 1:])
            topt = torch.optim.AdamW(twin.parameters(), lr=1e-4)
            tsec = timeit(train_step(torch, twin, topt, tx, ty), 2 if b == 8 else 10, repeats)
            row.update(torch_s=tsec, torch=b * t / tsec, ratio=tsec / sec)
        results.append(row)

    prompt = rng.integers(0, 256, (1, 16))
    row = {"case": "generate 64 new tokens, cache (tokens/s)"}
    sec = timeit(lambda: generate(model, tp.tensor(prompt), max_new_tokens=64), 1, repeats)
    row.update(tensorplay_s=sec, tensorplay=64 / sec)
    if twin is not None:
        tsec = timeit(lambda: torch_generate(twin, torch.from_numpy(prompt), 64), 1, repeats)
        row.update(torch_s=tsec, torch=64 / tsec, ratio=tsec / sec)
    results.append(row)

    for row in results:
        print(
            f"{row['case']:<42} tensorplay {row['tensorplay']:10.1f}"
            + (f"   torch {row['torch']:10.1f}   ratio {row['ratio']:5.2f}" if "torch" in row else "")
        )
    report = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": tp.get_num_threads()},
        "torch_version": getattr(torch, "__version__", None),
        "numpy_version": np.__version__,
        "results": results,
    }
    if args.profile:
        ids = rng.integers(0, 256, (8, 257))
        step = train_step(
            tp, model, tp.optim.AdamW(model.parameters()), tp.tensor(ids[:, :-1]), tp.tensor(ids[:, 1:])
        )
        prof = cProfile.Profile()
        prof.runcall(lambda: [step() for _ in range(3)])
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(25)
        report["profile_8x256_train_step"] = text.getvalue()
        print(text.getvalue())
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
