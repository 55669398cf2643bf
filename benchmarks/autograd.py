"""TensorPlay's autograd vs PyTorch's on the same machine, in one process (JSON out).

Cases (issue 4's performance targets): the recording overhead of `a + b` on tiny tensors that require grad, a
custom Function forward+backward round trip, and forward+backward of a 3-layer MLP (784-512-512-10, batch
128).
Ratios are TensorPlay/PyTorch throughput (> 1: TensorPlay is faster).

    python benchmarks/autograd.py [--quick] [--out PATH]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _harness import machine, parse_args, timeit, torch, write_report

import tensorplay as tp


def cases(lib: Any) -> list[tuple[str, Callable[[], Any], int]]:
    """(name, fn, inner loop count) for one framework; every case reports microseconds per call."""
    a = lib.ones(4, requires_grad=True)
    b = lib.ones(4, requires_grad=True)

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def function_round_trip() -> None:
        Double.apply(a).sum().backward()

    gen = lib.Generator().manual_seed(0)
    w1 = (lib.randn(784, 512, generator=gen) * 0.03).requires_grad_(True)
    w2 = (lib.randn(512, 512, generator=gen) * 0.04).requires_grad_(True)
    w3 = (lib.randn(512, 10, generator=gen) * 0.04).requires_grad_(True)
    b1, b2, b3 = (lib.zeros(n, requires_grad=True) for n in (512, 512, 10))
    x = lib.randn(128, 784, generator=gen)

    def mlp_step() -> None:
        h = (x @ w1 + b1).clamp(min=0)
        h = (h @ w2 + b2).clamp(min=0)
        (h @ w3 + b3).sum().backward()

    def mlp_forward() -> None:
        h = (x @ w1 + b1).clamp(min=0)
        h = (h @ w2 + b2).clamp(min=0)
        (h @ w3 + b3).sum()

    return [
        ("record a + b, tiny, requires_grad (us/call)", lambda: a + b, 2000),
        ("custom Function fwd+bwd round trip (us/call)", function_round_trip, 300),
        ("MLP 784-512-512-10 b128 forward (us/call)", mlp_forward, 20),
        ("MLP 784-512-512-10 b128 fwd+bwd (us/call)", mlp_step, 20),
    ]


def main() -> None:
    args = parse_args(__doc__, "autograd")
    repeats = 3 if args.quick else 7
    if torch is not None:
        torch.set_num_threads(tp.get_num_threads())
    ours, theirs = cases(tp), cases(torch) if torch is not None else None
    results = []
    for i, (name, fn, inner) in enumerate(ours):
        inner = max(1, inner // (4 if args.quick else 1))
        row: dict[str, Any] = {"case": name, "tensorplay_us": timeit(fn, inner, repeats) * 1e6}
        if theirs is not None:
            row["torch_us"] = timeit(theirs[i][1], inner, repeats) * 1e6
            row["ratio"] = row["torch_us"] / row["tensorplay_us"]
        results.append(row)
        print(
            f"{name:<48} tensorplay {row['tensorplay_us']:10.2f}"
            + (f"   torch {row['torch_us']:10.2f}   ratio {row['ratio']:5.2f}" if "ratio" in row else "")
        )
    write_report({**machine(), "results": results}, args.out)


if __name__ == "__main__":
    main()
