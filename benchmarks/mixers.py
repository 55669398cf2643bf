"""The sequence-mixer zoo on CPU: cache memory per token, training throughput and decode speed (JSON out).

Every mixer sits in the README's TinyLM shape (hidden 128, 4 layers, 8 query heads, byte vocabulary) in place
of its GroupedQueryAttention. Three measurements:

(a) cache memory: a prefill of L tokens (L = 256, 1024, 4096) into each mixer's cache, then the bytes of the
    tensors the cache actually holds (walked from its attributes, each storage counted once), per token and
    as a ratio to a full multi-head attention model's `DynamicCache`; next to it the ratio the layouts
    predict (per layer and token: MHA 2·H·D, GQA 2·KV·D, MLA kv_lora_rank + rope dim, int8 codes + one
    float32 scale per vector). A linear-attention state does not grow with L.
(b) training throughput: tokens/s of one step (forward, cross-entropy, backward, AdamW) at batch 1 x 1024.
(c) decode speed: tokens/s of one-token steps through the cache after a prefill of 4096 tokens.

    python benchmarks/mixers.py [--quick] [--out PATH] [--only gqa,mla] [--threads N]

`--quick` is a smoke run: contexts 64/128/256, sequence 128, decode after 256 tokens, one repeat. Times are
medians after a warm-up, reported as wall time and as process CPU time (the steadier figure on a shared
machine).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from _harness import machine, write_report

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import functional as F
from tensorplay.nn.cache import (
    DynamicCache,
    LinearStateCache,
    PagedCache,
    QuantizedCache,
    SlidingWindowCache,
    StaticCache,
)
from tensorplay.nn.modules.compressed_attention import CompressedSparseAttention
from tensorplay.nn.modules.gated_delta import GatedDeltaNet
from tensorplay.nn.modules.kimi_delta import KimiDeltaAttention
from tensorplay.nn.modules.latent_attention import MultiheadLatentAttention

HIDDEN, LAYERS, HEADS, VOCAB = 128, 4, 8, 256
HEAD_DIM = HIDDEN // HEADS


@dataclass(frozen=True)
class Case:
    """A mixer with one cache: how to build both, and the bytes per layer its layout predicts after n tokens
    (None where the size depends on the allocation policy, as StaticCache's)."""

    name: str
    mixer: Callable[[int], nn.Module]  # layer_idx -> mixer
    cache: Callable[[int], Any]  # context length -> empty cache
    theory_bytes_layer: Callable[[int], float] | None


def _gqa(kv_heads: int) -> Callable[[int], nn.Module]:
    return lambda i: nn.GroupedQueryAttention(HIDDEN, HEADS, kv_heads, layer_idx=i)


MLA_RANK, MLA_ROPE = 32, 8


def _mla(i: int) -> nn.Module:
    return MultiheadLatentAttention(
        HIDDEN,
        HEADS,
        kv_lora_rank=MLA_RANK,
        qk_nope_head_dim=HEAD_DIM,
        qk_rope_head_dim=MLA_ROPE,
        layer_idx=i,
    )


CSA_WINDOW, CSA_RATE, CSA_INDEX_DIM = 128, 4, 32


def _csa(i: int) -> nn.Module:
    return CompressedSparseAttention(
        HIDDEN,
        HEADS,
        HEAD_DIM,
        q_lora_rank=32,
        compress_rate=CSA_RATE,
        window_size=CSA_WINDOW,
        index_head_dim=CSA_INDEX_DIM,
        layer_idx=i,
    )


# One key and one value vector per head and token, 4 bytes a channel (int8: 1 byte a channel + 4 of scale).
_MHA_BYTES = 2 * HEADS * HEAD_DIM * 4
_GQA_BYTES = 2 * 2 * HEAD_DIM * 4

_GATED_STATE = HEADS * HEAD_DIM * HEAD_DIM * 4  # float32 [H, Dk, Dv]
_GATED_CONV = (2 * (HEADS // 2) * HEAD_DIM + HEADS * HEAD_DIM) * 3 * 4  # conv_dim x (kernel 4 - 1)
_KIMI_CONV = 3 * HEADS * HEAD_DIM * 3 * 4

CASES = [
    Case("mha + DynamicCache", _gqa(HEADS), lambda n: DynamicCache(), lambda n: _MHA_BYTES * n),
    Case("gqa(kv=2) + DynamicCache", _gqa(2), lambda n: DynamicCache(), lambda n: _GQA_BYTES * n),
    Case("gqa(kv=2) + StaticCache", _gqa(2), lambda n: StaticCache(n + 64), None),
    Case("gqa(kv=2) + PagedCache(16)", _gqa(2), lambda n: PagedCache(16), lambda n: _GQA_BYTES * n),
    Case(
        "gqa(kv=2) + QuantizedCache",
        _gqa(2),
        lambda n: QuantizedCache(),
        lambda n: 2 * 2 * (HEAD_DIM + 4) * n,
    ),
    # MLA caches one latent (kv_lora_rank) and one shared rotary key (rope dim) per token, for all heads.
    Case("mla(r=32) + DynamicCache", _mla, lambda n: DynamicCache(), lambda n: (MLA_RANK + MLA_ROPE) * 4 * n),
    Case(
        "mla(r=32) + QuantizedCache",
        _mla,
        lambda n: QuantizedCache(),
        lambda n: (MLA_RANK + MLA_ROPE + 2 * 4) * n,
    ),
    # CSA: a window of exact keys (k and v, one head) plus one compressed entry per CSA_RATE tokens for the
    # attention and one for the indexer (their int64 end positions and the partial-window tails come on top).
    Case(
        "csa(W=128,m=4) + SlidingWindowCache",
        _csa,
        lambda n: SlidingWindowCache(CSA_WINDOW),
        lambda n: 2 * min(n, CSA_WINDOW) * HEAD_DIM * 4 + (HEAD_DIM + CSA_INDEX_DIM) * 4 * (n // CSA_RATE),
    ),
    # Linear mixers: a float32 [H, Dk, Dv] state and the last kernel_size - 1 conv inputs, at any length.
    Case(
        "gated_delta + LinearStateCache",
        lambda i: GatedDeltaNet(
            HIDDEN, num_v_heads=HEADS, num_k_heads=HEADS // 2, head_k_dim=HEAD_DIM, layer_idx=i
        ),
        lambda n: LinearStateCache(),
        lambda n: _GATED_STATE + _GATED_CONV,
    ),
    Case(
        "kimi_delta + LinearStateCache",
        lambda i: KimiDeltaAttention(HIDDEN, num_heads=HEADS, head_dim=HEAD_DIM, layer_idx=i),
        lambda n: LinearStateCache(),
        lambda n: _GATED_STATE + _KIMI_CONV,
    ),
]


class ZooLM(nn.Module):
    """TinyLM with a chosen token mixer: embedding, blocks, RMSNorm, tied lm head."""

    def __init__(self, mixer: Callable[[int], nn.Module], layers: int = LAYERS) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.blocks = nn.ModuleList(nn.TransformerBlock(HIDDEN, mixer(i)) for i in range(layers))
        self.norm = nn.RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, input_ids, position_ids=None, past_key_values=None):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=position_ids, past_key_values=past_key_values)
        return self.lm_head(self.norm(x))


def stored_bytes(obj: Any, seen: set[int] | None = None) -> int:
    """Bytes of every tensor reachable from `obj`'s attributes, lists, tuples and dicts (each counted once,
    views by their own size: the caches here keep whole buffers, never views of each other)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, tp.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(stored_bytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(stored_bytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sum(stored_bytes(v, seen) for v in vars(obj).values())
    return 0


def cpu_and_wall(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Median wall seconds and median process CPU seconds (all threads) per call of `fn`, after a warm-up.
    The CPU figure is the steadier one on a shared machine: waiting for a core costs wall time only."""
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall)), float(np.median(cpu))


def _prefill(model: ZooLM, cache: Any, length: int, rng: np.random.Generator) -> None:
    """`length` tokens into `cache`: a prefill of `length - 1`, then one decode step, so that every cache is
    in its decoding state (a SlidingWindowCache keeps a whole prefill until the next write trims it)."""
    ids = tp.tensor(rng.integers(0, VOCAB, (1, length)))
    with tp.no_grad():
        model(ids[:, :-1], past_key_values=cache)
        model(ids[:, -1:], past_key_values=cache)


def memory(cases: list[Case], lengths: list[int]) -> list[dict]:
    """(a): bytes per token of each cache after prefills of each length, against full MHA."""
    rng = np.random.default_rng(0)
    rows = []
    baseline: dict[int, int] = {}
    for case in cases:
        tp.manual_seed(0)
        model = ZooLM(case.mixer).eval()
        for n in lengths:
            cache = case.cache(n)
            _prefill(model, cache, n, rng)
            total = stored_bytes(cache)
            baseline.setdefault(n, total)  # the first case is full MHA
            row = {
                "case": case.name,
                "context": n,
                "cache_bytes": total,
                "bytes_per_token": total / n,
                "bytes_per_token_layer": total / n / LAYERS,
                "ratio_vs_mha": total / baseline[n],
            }
            if case.theory_bytes_layer is not None:
                theory = case.theory_bytes_layer(n)
                row["theory_cache_bytes"] = theory * LAYERS
                row["theory_ratio_vs_mha"] = theory / (_MHA_BYTES * n)
            rows.append(row)
            print(
                f"memory  {case.name:<34} L={n:<5} {total / n:10.1f} B/token"
                f"  x{row['ratio_vs_mha']:.3f} of MHA"
                + (
                    f"  (layout predicts x{row['theory_ratio_vs_mha']:.3f})"
                    if "theory_ratio_vs_mha" in row
                    else ""
                )
            )
    return rows


def _train_step(model: ZooLM, opt: Any, x: tp.Tensor, y: tp.Tensor) -> Callable[[], None]:
    def step() -> None:
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def training(cases: list[Case], seq: int, repeats: int) -> list[dict]:
    """(b): tokens/s of one AdamW training step at batch 1 x `seq`, once per distinct mixer."""
    rng = np.random.default_rng(1)
    rows, done = [], set()
    for case in cases:
        mixer_name = case.name.split(" + ")[0]
        if mixer_name in done:
            continue
        done.add(mixer_name)
        tp.manual_seed(0)
        model = ZooLM(case.mixer).train()
        opt = tp.optim.AdamW(model.parameters(), lr=1e-4)
        ids = tp.tensor(rng.integers(0, VOCAB, (1, seq + 1)))
        sec, cpu = cpu_and_wall(_train_step(model, opt, ids[:, :-1], ids[:, 1:]), repeats)
        rows.append(
            {
                "mixer": mixer_name,
                "seq": seq,
                "step_s": sec,
                "step_cpu_s": cpu,
                "tokens_per_s": seq / sec,
                "tokens_per_cpu_s": seq / cpu,
            }
        )
        print(
            f"train   {mixer_name:<34} 1x{seq}: {seq / sec:10.1f} tokens/s ({sec * 1e3:.0f} ms/step, "
            f"{cpu * 1e3:.0f} ms CPU)"
        )
    return rows


def _decode_steps(model: ZooLM, cache: Any, steps: int, rng: np.random.Generator) -> Callable[[], None]:
    token = tp.tensor(rng.integers(0, VOCAB, (1, 1)))

    def run() -> None:
        nonlocal token
        for _ in range(steps):
            token = model(token, past_key_values=cache)[:, -1].argmax(-1, keepdim=True)

    return run


def decode(cases: list[Case], context: int, steps: int, repeats: int) -> list[dict]:
    """(c): tokens/s of single-token greedy steps through each cache after a `context`-token prefill (the
    context grows by `steps * repeats` tokens during the measurement, under 1%)."""
    rng = np.random.default_rng(2)
    rows = []
    for case in cases:
        tp.manual_seed(0)
        model = ZooLM(case.mixer).eval()
        cache = case.cache(context + steps * repeats + 1)
        _prefill(model, cache, context, rng)
        with tp.no_grad():
            wall, cpu = cpu_and_wall(_decode_steps(model, cache, steps, rng), repeats)
        wall, cpu = wall / steps, cpu / steps
        rows.append(
            {
                "case": case.name,
                "context": context,
                "step_s": wall,
                "step_cpu_s": cpu,
                "tokens_per_s": 1 / wall,
                "tokens_per_cpu_s": 1 / cpu,
            }
        )
        print(
            f"decode  {case.name:<34} after {context}: {1 / wall:10.1f} tokens/s "
            f"({cpu * 1e3:.1f} ms CPU/token)"
        )
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="contexts 64-256, sequence 128, one repeat")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", "mixers.json"))
    p.add_argument(
        "--only", default="", help="comma-separated name prefixes of the cases to run (MHA always)"
    )
    p.add_argument("--threads", type=int, default=None, help="tensorplay.set_num_threads (default: leave)")
    args = p.parse_args()
    if args.threads:
        tp.set_num_threads(args.threads)
    cases = [
        c for c in CASES if c is CASES[0] or not args.only or c.name.startswith(tuple(args.only.split(",")))
    ]
    if args.quick:
        lengths, seq, context, steps, repeats = [64, 128, 256], 128, 256, 4, 1
    else:
        lengths, seq, context, steps, repeats = [256, 1024, 4096], 1024, 4096, 16, 5
    report = {
        **machine(),
        "model": {"hidden": HIDDEN, "layers": LAYERS, "heads": HEADS, "head_dim": HEAD_DIM, "vocab": VOCAB},
        "memory": memory(cases, lengths),
        "training": training(cases, seq, repeats),
        "decode": decode(cases, context, steps, repeats),
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
