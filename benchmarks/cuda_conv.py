"""CUDA convolution and pooling: a ResNet-style conv2d ([32, 64, 56, 56] input, 64 3x3 filters, padding 1) in
float32 and bfloat16, its input and weight gradients, and max_pool2d (3x3, stride 2, padding 1) on
[32, 64, 112, 112], TensorPlay vs PyTorch.

Run on a GPU machine: ``python benchmarks/cuda_conv.py [--quick] [--out FILE]``. Both libraries run in the
same process on the same GPU; each op is timed with its own library's CUDA events over ``iters`` calls after a
warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). TensorPlay
convolves by im2col + cuBLAS GEMM (Note [CUDA convolution as batched GEMM] in csrc/cuda/ops_conv.cpp): the
forward and dgrad cases are one 32-bit im2col (Note [im2col by column rows] in im2col.cu) and one
strided-batched GEMM straight into NCHW (Note [Per-sample GEMMs straight into NCHW]), dgrad after turning the
stride-1 transposed convolution into a plain one (Note [Stride-1 transposed convolution as a plain one]).
PyTorch calls cuDNN, whose implicit-GEMM and Winograd kernels never write the column matrix, so the column
matrix's write and read are what separates the two: the report says how far. float32 runs in full float32
in both (TF32 off). TFLOP/s counts 2 * N * O * C * 9 * H * W per convolution; max_pool2d is reported in GB/s
(input read once, output written once). Next to each figure, the largest error of TensorPlay's GPU result
against PyTorch's (or, without PyTorch, against TensorPlay's CPU result on the first sample). The report
(JSON) holds the figures and ratios; nothing is asserted.
"""

from __future__ import annotations

import numpy as np
from _cuda_harness import gpu_ms, parse_args, to_f64, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


def cases(conv2d, conv_transpose2d, max_pool2d):
    """name -> function of (x, w, pool_input), written with one library's functions (same names in both)."""
    return {
        "conv2d_f32": lambda x, w, p: conv2d(x, w, None, 1, 1),
        "conv2d_bf16": lambda x, w, p: conv2d(x, w, None, 1, 1),
        # the input gradient: a transposed convolution of the output gradient with the same weight
        "conv2d_dgrad_f32": lambda x, w, p: conv_transpose2d(x, w, None, 1, 1),
        # the weight gradient as the TPX formula computes it: channels as the batch, dy as the kernel
        "conv2d_wgrad_f32": lambda x, w, p: conv2d(x.transpose(0, 1), x.transpose(0, 1), None, 1, 1),
        "max_pool2d_f32": lambda x, w, p: max_pool2d(p, 3, 2, 1),
    }


def main() -> None:
    args = parse_args(__doc__, "cuda_conv", "a batch of 4 and fewer calls")
    N, C, H = (4 if args.quick else 32), 64, 56
    iters = 3 if args.quick else 10
    rng = np.random.default_rng(0)
    hx = rng.standard_normal((N, C, H, H)).astype(np.float32)
    hw = (rng.standard_normal((C, C, 3, 3)) * 0.05).astype(np.float32)
    hp = rng.standard_normal((N, C, 2 * H, 2 * H)).astype(np.float32)
    conv_flop = 2 * N * C * C * 9 * H * H
    report = {"device": tp.cuda.get_device_name(), "input": [N, C, H, H], "iters": iters, "ops": {}}
    tp.backends.cuda.matmul.allow_tf32 = False
    tp_in = [tp.from_numpy(a).cuda() for a in (hx, hw, hp)]
    tt = None
    if torch_on_gpu():
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        tt = [torch.from_numpy(a).cuda() for a in (hx, hw, hp)]
        report["torch_version"] = torch.__version__
    tp_cases = cases(tp.conv2d, tp.conv_transpose2d, tp.max_pool2d)
    F = torch.nn.functional if tt is not None else None
    t_cases = cases(F.conv2d, F.conv_transpose2d, F.max_pool2d) if tt is not None else {}
    for name, fn in tp_cases.items():
        bf16 = name.endswith("bf16")
        xs = [t.to(tp.bfloat16) for t in tp_in] if bf16 else tp_in
        ms = gpu_ms(tp, lambda f=fn, x=xs: f(*x), iters)
        if name.startswith("max_pool"):
            moved = 4 * (hp.size + N * C * H * H)  # float32 input read, output written
            row = {"tensorplay_ms": ms, "tensorplay_GBps": moved / (ms * 1e-3) / 1e9}
        else:
            row = {"tensorplay_ms": ms, "tensorplay_TFLOPs": conv_flop / (ms * 1e-3) / 1e12}
        if tt is not None:
            ts = [t.to(torch.bfloat16) for t in tt] if bf16 else tt
            tms = gpu_ms(torch, lambda f=t_cases[name], x=ts: f(*x), iters)
            row["torch_ms"] = tms
            row["speed_vs_torch"] = tms / ms  # > 1: TensorPlay is faster
            row["max_abs_err_vs_torch"] = float(np.abs(to_f64(fn(*xs)) - to_f64(t_cases[name](*ts))).max())
        elif not name.startswith("conv2d_wgrad"):  # the first sample against TensorPlay's CPU op
            head = [xs[0][:1], xs[1], xs[2][:1]]
            ref = fn(*(x.cpu() for x in head))
            row["max_abs_err_vs_cpu"] = float(np.abs(to_f64(fn(*head)) - to_f64(ref)).max())
        report["ops"][name] = row
    write_report(report, args.out)


if __name__ == "__main__":
    main()
