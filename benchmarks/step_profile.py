"""One training step of a TinyLM-like transformer, TensorPlay vs PyTorch eager on CPU, in one process.

Issue 5's performance target is a TinyLM training step at >= 0.8x PyTorch eager. The model is written once
with plain ops for either library (no tensorplay.nn): token embedding 256 x 128, 4 pre-norm blocks of
RMSNorm -> causal scaled_dot_product_attention (4 heads) -> RMSNorm -> SwiGLU MLP (silu, hidden 384), a
final RMSNorm, an untied lm head and cross_entropy; the step is forward, backward and an SGD update.

It reports, for batch 8 x 256 and 1 x 64: the step time of each library (minimum over repeats, run back to
back, since the machine is shared and noisy), per-op forward+backward timings of the ops the model uses, and
with --profile the top functions of a cProfile of TensorPlay's step (Python formulas show up by name, kernel
calls as builtins). TP_TRACE_DISPATCH=1 prints which kernel every op call ran.

    python benchmarks/step_profile.py [--repeats N] [--profile] [--ops]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import pstats
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplay as tp

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None

VOCAB, DIM, HEADS, HIDDEN, LAYERS = 256, 128, 4, 384, 4


def make_params(lib: Any, seed: int = 0) -> dict[str, Any]:
    """The model's parameters, the same values for both libraries (drawn with NumPy)."""
    rng = np.random.default_rng(seed)

    def p(*shape: int, std: float) -> Any:
        return lib.tensor((rng.standard_normal(shape) * std).astype(np.float32)).requires_grad_(True)

    def ones(n: int) -> Any:
        return lib.tensor(np.ones(n, dtype=np.float32)).requires_grad_(True)

    params = {"embed": p(VOCAB, DIM, std=0.02), "norm_f": ones(DIM), "head": p(VOCAB, DIM, std=0.02)}
    for i in range(LAYERS):
        params[f"{i}.norm1"] = ones(DIM)
        params[f"{i}.qkv"] = p(3 * DIM, DIM, std=0.02)
        params[f"{i}.proj"] = p(DIM, DIM, std=0.02 / math.sqrt(2 * LAYERS))
        params[f"{i}.norm2"] = ones(DIM)
        params[f"{i}.gate"] = p(HIDDEN, DIM, std=0.02)
        params[f"{i}.up"] = p(HIDDEN, DIM, std=0.02)
        params[f"{i}.down"] = p(DIM, HIDDEN, std=0.02 / math.sqrt(2 * LAYERS))
    return params


def functional(lib: Any) -> Any:
    """Where each library keeps the functional ops (PyTorch: torch.nn.functional; TensorPlay: tp itself)."""
    return lib.nn.functional if lib is torch else lib


def forward(lib: Any, params: dict[str, Any], idx: Any, target: Any) -> Any:
    """The loss of the model on token ids idx [B, T] predicting target [B, T]."""
    F = functional(lib)
    b, t = idx.shape
    x = lib.embedding(params["embed"], idx)  # (weight, indices) in both, as torch.embedding
    for i in range(LAYERS):
        h = F.rms_norm(x, (DIM,), params[f"{i}.norm1"])
        q, k, v = (h @ params[f"{i}.qkv"].t()).split(DIM, dim=-1)
        q, k, v = (z.reshape(b, t, HEADS, DIM // HEADS).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + a.transpose(1, 2).reshape(b, t, DIM) @ params[f"{i}.proj"].t()
        h = F.rms_norm(x, (DIM,), params[f"{i}.norm2"])
        m = F.silu(h @ params[f"{i}.gate"].t()) * (h @ params[f"{i}.up"].t())
        x = x + m @ params[f"{i}.down"].t()
    x = F.rms_norm(x, (DIM,), params["norm_f"])
    logits = x @ params["head"].t()
    return F.cross_entropy(logits.reshape(b * t, VOCAB), target.reshape(b * t))


def step_fn(lib: Any, batch: int, seq: int, lr: float = 1e-2) -> Callable[[], float]:
    """A closure running one training step (forward, backward, SGD) on fixed random tokens."""
    params = make_params(lib)
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, VOCAB, size=(batch, seq + 1))
    idx, target = lib.tensor(tokens[:, :-1]), lib.tensor(tokens[:, 1:])

    def step() -> float:
        loss = forward(lib, params, idx, target)
        loss.backward()
        with lib.no_grad():
            for p in params.values():
                p.sub_(p.grad * lr)
                p.grad = None
        return float(loss.detach())

    return step


def best_time(fn: Callable[[], Any], inner: int, repeats: int) -> float:
    """Minimum seconds per call over `repeats` runs of `inner` calls, after a warm-up call."""
    fn()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def op_cases(lib: Any, batch: int, seq: int) -> list[tuple[str, Callable[[], Any]]]:
    """Forward+backward of each op family of the model, at the model's shapes."""
    F = functional(lib)
    rng = np.random.default_rng(2)

    def leaf(*shape: int) -> Any:
        return lib.tensor(rng.standard_normal(shape).astype(np.float32)).requires_grad_(True)

    n = batch * seq
    x, w = leaf(batch, seq, DIM), leaf(DIM)
    q, k, v = (
        leaf(batch, HEADS, seq, DIM // HEADS),
        leaf(batch, HEADS, seq, DIM // HEADS),
        leaf(batch, HEADS, seq, DIM // HEADS),
    )
    hid, wq = leaf(batch, seq, HIDDEN), leaf(HIDDEN, DIM)
    logits = leaf(n, VOCAB)
    target = lib.tensor(rng.integers(0, VOCAB, size=n))
    emb = leaf(VOCAB, DIM)
    idx = lib.tensor(rng.integers(0, VOCAB, size=(batch, seq)))

    def run(f: Callable[[], Any]) -> Callable[[], None]:
        def go() -> None:
            f().sum().backward()

        return go

    return [
        ("rms_norm", run(lambda: F.rms_norm(x, (DIM,), w))),
        ("layer_norm", run(lambda: F.layer_norm(x, (DIM,), w, w))),
        ("sdpa causal", run(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))),
        ("silu * mul", run(lambda: F.silu(hid) * hid)),
        ("linear x @ W^T", run(lambda: x @ wq.t())),
        ("cross_entropy", run(lambda: F.cross_entropy(logits, target))),
        ("embedding", run(lambda: lib.embedding(emb, idx))),
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--profile", action="store_true", help="cProfile TensorPlay's step")
    p.add_argument("--ops", action="store_true", help="per-op forward+backward timings")
    p.add_argument(
        "--threads", type=int, default=0, help="threads for both libraries (0: TensorPlay's default)"
    )
    args = p.parse_args()
    if args.threads:
        tp.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(tp.get_num_threads())
    for batch, seq, inner in ((8, 256, 2), (1, 64, 20)):
        ours = step_fn(tp, batch, seq)
        t_tp = best_time(ours, inner, args.repeats)
        line = f"step {batch}x{seq}: tensorplay {t_tp * 1e3:8.2f} ms"
        if torch is not None:
            theirs = step_fn(torch, batch, seq)
            t_torch = best_time(theirs, inner, args.repeats)
            line += f"   torch {t_torch * 1e3:8.2f} ms   ratio (torch/tp) {t_torch / t_tp:5.2f}"
            assert abs(ours() - theirs()) < 1e-3 * max(1.0, abs(theirs())), "the two models disagree"
        print(line)
        if args.ops:
            ops_tp = op_cases(tp, batch, seq)
            ops_torch = op_cases(torch, batch, seq) if torch is not None else None
            for i, (name, fn) in enumerate(ops_tp):
                t1 = best_time(fn, inner * 2, args.repeats)
                row = f"  {name:<16} fwd+bwd tensorplay {t1 * 1e3:8.3f} ms"
                if ops_torch is not None:
                    t2 = best_time(ops_torch[i][1], inner * 2, args.repeats)
                    row += f"   torch {t2 * 1e3:8.3f} ms   ratio {t2 / t1:5.2f}"
                print(row)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(inner):
                ours()
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
            print(out.getvalue())


if __name__ == "__main__":
    main()
