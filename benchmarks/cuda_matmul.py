"""CUDA GEMM throughput: 8192^2 products in bfloat16, float16, TF32 and float32, plus a batched and a
Linear-shaped one, TensorPlay (cuBLAS, loaded at run time) vs PyTorch.

Run on a GPU machine: ``python benchmarks/cuda_matmul.py [--quick] [--out FILE]``. Both libraries run in the
same process on the same GPU with the same inputs; each product is timed with its own library's CUDA events
over ``iters`` calls after a warm-up (which, for TensorPlay, also loads cuBLAS and makes its handle). TFLOP/s
counts 2*m*n*k per product. TF32 rows switch both libraries to TF32 (``tp.backends.cuda.matmul.allow_tf32``
and ``torch.backends.cuda.matmul.allow_tf32``) for that row only. Next to each speed, the relative Frobenius
difference between the two libraries' results says they computed the same thing. PyTorch 2.11's figures on
the H200 (bf16 750, tf32 366, float32 51 TFLOP/s) are in the report as ``reference_torch_2_11``. The report
(JSON) holds the figures and their ratios; nothing is asserted.
"""

from __future__ import annotations

import numpy as np
from _cuda_harness import gpu_ms, parse_args, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp

REFERENCE_TORCH_2_11_H200 = {"mm_bf16": 750.0, "mm_tf32": 366.0, "mm_float32": 51.0}


def product(lib, kind: str, a, b, bias):
    """The timed product with ``lib`` (tp or torch): nn.Linear's addmm(bias, x, w.t()), mm or bmm."""
    if kind == "linear":
        return lib.addmm(bias, a, b.t())
    return lib.mm(a, b) if kind == "mm" else lib.bmm(a, b)


def rel_diff(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-30))


def main() -> None:
    args = parse_args(__doc__, "cuda_matmul", "2048^2 products and fewer calls")
    s = 2048 if args.quick else 8192
    iters = 5 if args.quick else 20
    rng = np.random.default_rng(0)
    host = rng.standard_normal((2, s, s), dtype=np.float32)
    # (name, dtype, tf32, shapes of the two operands, product); the batched one is attention-shaped.
    bh, seq, hd = (8, 512, 64) if args.quick else (64, 2048, 128)
    tokens, d_in, d_out = (2048, 1024, 4096) if args.quick else (16384, 4096, 14336)
    cases = [
        ("mm_bf16", "bfloat16", False, (s, s), (s, s), "mm"),
        ("mm_float16", "float16", False, (s, s), (s, s), "mm"),
        ("mm_tf32", "float32", True, (s, s), (s, s), "mm"),
        ("mm_float32", "float32", False, (s, s), (s, s), "mm"),
        ("bmm_bf16_attention_scores", "bfloat16", False, (bh, seq, hd), (bh, hd, seq), "bmm"),
        ("linear_bf16_x_wT_plus_bias", "bfloat16", False, (tokens, d_in), (d_out, d_in), "linear"),
    ]
    report = {
        "device": tp.cuda.get_device_name(),
        "size": s,
        "iters": iters,
        "cublas_version": tp.cuda._cublas.version(),
        "reference_torch_2_11": REFERENCE_TORCH_2_11_H200,
        "ops": {},
    }
    have_torch = torch_on_gpu()
    if have_torch:
        report["torch_version"] = torch.__version__
    for name, dtype, tf32, sa, sb, kind in cases:
        a_np = host[0] if sa == (s, s) else rng.standard_normal(sa, np.float32)
        b_np = host[1] if sb == (s, s) else rng.standard_normal(sb, np.float32)
        bias_np = rng.standard_normal(sb[0], np.float32)
        flops = 2.0 * np.prod(sa) * (sb[-1] if kind != "linear" else sb[0])
        tdt = getattr(tp, dtype)
        a, b, bias = (tp.from_numpy(x).cuda().to(tdt) for x in (a_np, b_np, bias_np))

        def ours(a=a, b=b, bias=bias, kind=kind):
            return product(tp, kind, a, b, bias)

        tp.backends.cuda.matmul.allow_tf32 = tf32
        try:
            row = {"tensorplay_TFLOPs": flops / (gpu_ms(tp, ours, iters) * 1e-3) / 1e12}
            mine = ours().to(tp.float32).cpu().numpy()
        finally:
            tp.backends.cuda.matmul.allow_tf32 = False
        if have_torch:
            xa, xb, xbias = (
                torch.from_numpy(x).cuda().to(getattr(torch, dtype)) for x in (a_np, b_np, bias_np)
            )

            def theirs(a=xa, b=xb, bias=xbias, kind=kind):
                return product(torch, kind, a, b, bias)

            torch.backends.cuda.matmul.allow_tf32 = tf32
            try:
                row["torch_TFLOPs"] = flops / (gpu_ms(torch, theirs, iters) * 1e-3) / 1e12
                row["rel_diff_vs_torch"] = rel_diff(mine, theirs().float().cpu().numpy())
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False
            row["ratio"] = row["tensorplay_TFLOPs"] / row["torch_TFLOPs"]
            del xa, xb, xbias
        report["ops"][name] = row
        del a, b, bias, mine
    write_report(report, args.out)


if __name__ == "__main__":
    main()
