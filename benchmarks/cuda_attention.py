"""CUDA scaled_dot_product_attention, forward and forward + backward, TensorPlay vs PyTorch (flash backend):
bfloat16 [B=4, H=16, L=2048, D=128], causal, in TFLOP/s.

Run on a GPU machine: ``python benchmarks/cuda_attention.py [--quick] [--out FILE]``. Both libraries run in
the same process on the same GPU; each case is timed with its own library's CUDA events over ``iters`` calls
after a warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). FLOPs
follow FlashAttention's convention: the forward is 4 B H L^2 D (two products), halved when causal; forward +
backward is 3.5 times that (the backward's five products), whatever work an implementation redoes (ours reruns
the forward inside the backward for the log-sum-exp). TensorPlay's forward + backward calls the two ops
directly (tensorplay_p10 has no autograd); PyTorch's runs autograd. Next to the figures, the largest error of
TensorPlay's GPU result against its CPU op on one head. The report (JSON) holds the figures and the ratios;
nothing is asserted.
"""

from __future__ import annotations

import math

import numpy as np
from _cuda_harness import gpu_ms, parse_args, to_f64, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


def torch_cases(host, causal):
    """PyTorch's forward and forward + backward on the flash backend (where this PyTorch can select it)."""
    q, k, v, g = (torch.from_numpy(h).cuda().to(torch.bfloat16) for h in host)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        ctx = lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)  # noqa: E731
    except ImportError:  # older PyTorch: its own choice of backend
        import contextlib

        ctx = contextlib.nullcontext

    def fwd():
        with ctx(), torch.no_grad():
            return sdpa(q, k, v, is_causal=causal)

    def fwd_bwd():
        with ctx():
            sdpa(q, k, v, is_causal=causal).backward(g)

    return fwd, fwd_bwd


def main() -> None:
    args = parse_args(__doc__, "cuda_attention", "[1, 16, 512, 128] and fewer calls")
    B, H, L, D = (1, 16, 512, 128) if args.quick else (4, 16, 2048, 128)
    causal = True
    iters = 3 if args.quick else 10
    rng = np.random.default_rng(0)
    host = [rng.standard_normal((B, H, L, D)).astype(np.float32) for _ in range(4)]
    q, k, v, g = (tp.from_numpy(h).cuda().to(tp.bfloat16) for h in host)
    scale = 1 / math.sqrt(D)
    fwd_flops = 4 * B * H * L * L * D / (2 if causal else 1)
    flops = {"forward": fwd_flops, "forward_backward": 3.5 * fwd_flops}
    tp_fns = {
        "forward": lambda: tp.scaled_dot_product_attention(q, k, v, is_causal=causal),
        "forward_backward": lambda: (
            tp.scaled_dot_product_attention(q, k, v, is_causal=causal),
            tp.scaled_dot_product_attention_backward(g, q, k, v, causal, scale),
        ),
    }
    report = {
        "device": tp.cuda.get_device_name(),
        "shape": [B, H, L, D],
        "dtype": "bfloat16",
        "causal": causal,
    }
    report["iters"] = iters
    t_fns = None
    if torch_on_gpu():
        t_fns = dict(zip(("forward", "forward_backward"), torch_cases(host, causal), strict=True))
        report["torch_version"] = torch.__version__
    report["cases"] = {}
    for name, fn in tp_fns.items():
        ms = gpu_ms(tp, fn, iters)
        row = {"tensorplay_ms": ms, "tensorplay_TFLOPs": flops[name] / (ms * 1e-3) / 1e12}
        if t_fns is not None:
            tms = gpu_ms(torch, t_fns[name], iters)
            row.update(torch_ms=tms, torch_TFLOPs=flops[name] / (tms * 1e-3) / 1e12, ratio=tms / ms)
        report["cases"][name] = row
    # correctness next to the speed: one head on the GPU against the CPU op (forward, and the backward op in
    # float32, which is what the CPU backward takes)
    h1 = [x[:1, :1] for x in (q, k, v, g)]
    gpu = tp.scaled_dot_product_attention(*h1[:3], is_causal=causal)
    cpu = tp.scaled_dot_product_attention(*(x.cpu() for x in h1[:3]), is_causal=causal)
    report["forward_max_abs_err_vs_cpu"] = float(np.abs(to_f64(gpu) - to_f64(cpu)).max())
    gb = tp.scaled_dot_product_attention_backward(*h1[3:], *h1[:3], causal, scale)
    cb = tp.scaled_dot_product_attention_backward(*(x.cpu().float() for x in h1[3:] + h1[:3]), causal, scale)
    report["backward_max_abs_err_vs_cpu"] = max(
        float(np.abs(to_f64(a) - to_f64(b)).max()) for a, b in zip(gb, cb, strict=True)
    )
    write_report(report, args.out)


if __name__ == "__main__":
    main()
