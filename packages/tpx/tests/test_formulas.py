"""Every derivative formula, checked against finite differences (gradcheck) and, for its own derivative,
again (gradgradcheck): float64 inputs, including broadcasting, transposed, strided, flipped, size-0 and size-1
inputs. The references are central differences of the forward ops, not values from the formulas.
"""

from __future__ import annotations

import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401
from tensorplay_p10 import ops
from tensorplay_tpx.autograd import gradcheck, gradgradcheck

tp.manual_seed(0)


def _nearest_exact(n):
    """The nearest-exact upsample op of n spatial dims (named with a leading '_': not a tp function)."""
    return lambda *a: ops.call(f"_upsample_nearest_exact{n}d", *a)


def R(*s, pos=False):
    t = tp.rand(*s, dtype=tp.float64) + 0.5 if pos else tp.randn(*s, dtype=tp.float64)
    return t.requires_grad_(True)


def _I3(like):
    """The 3x3 float64 identity on the device of `like` (Note [tensors built inside a case])."""
    return tp.eye(3, dtype=tp.float64, device=like.device)


def _factor(*s, transposed=False):
    """A well-conditioned lower-triangular Cholesky factor of shape (*s, n) with n = s[-1] (diagonal in
    [2, 3]), requiring grad; ``transposed`` gives a non-contiguous upper factor."""
    f = tp.randn(*s, s[-1], dtype=tp.float64).tril(-1) * 0.5 + tp.diag_embed(
        2 + tp.rand(*s, dtype=tp.float64)
    )
    return (f.mT if transposed else f).requires_grad_(True)


# Note [tensors built inside a case]: a case function that builds tensors of its own (indices, masks, targets,
# offsets, weights, the identity) builds them on the device of its tensor inputs (`device=a.device`, _I3(a)).
# On the CPU that changes nothing. test_cuda_gradcheck.py moves the inputs to CUDA and runs the same function,
# where a CPU tensor would be a device mismatch (an error, as in PyTorch), which that file counts as failing.
# Such tensors stay inside the function, not in the args: the forward-AD test draws a tangent for every arg.
CASES = {
    "add_bcast": (lambda a, b: a + b, (R(2, 3), R(3))),
    "sub_alpha": (lambda a, b: tp.sub(a, b, alpha=2), (R(2, 3), R(2, 3))),
    "mul": (lambda a, b: a * b, (R(2, 3), R(1, 3))),
    "div": (lambda a, b: a / b, (R(2, 3), R(2, 3, pos=True))),
    "exp": (lambda a: a.exp(), (R(3, 2),)),
    "log": (lambda a: a.log(), (R(3, pos=True),)),
    "tanh": (lambda a: a.tanh(), (R(4),)),
    "sigmoid": (lambda a: a.sigmoid(), (R(4),)),
    "pow_s": (lambda a: a**3, (R(4),)),
    "pow_t": (lambda a, b: a**b, (R(3, pos=True), R(3))),
    "sqrt": (lambda a: a.sqrt(), (R(3, pos=True),)),
    "sin": (lambda a: a.sin(), (R(3),)),
    "maximum": (lambda a, b: tp.maximum(a, b), (R(3), R(3))),
    "where": (lambda a, b: tp.where(a > 0, a, b), (R(3), R(3))),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), (R(5),)),
    "sum": (lambda a: a.sum(), (R(2, 3),)),
    "sum_dim": (lambda a: a.sum(1), (R(2, 3),)),
    "mean_dim_keep": (lambda a: a.mean((0,), keepdim=True), (R(2, 3),)),
    "amax": (lambda a: a.amax(1), (R(2, 3),)),
    "max_dim": (lambda a: a.max(1)[0], (R(2, 3),)),
    "var": (lambda a: a.var(1), (R(2, 3),)),
    "std": (lambda a: a.std(), (R(2, 3),)),
    "logsumexp": (lambda a: a.logsumexp(1), (R(2, 3),)),
    "norm": (lambda a: a.norm(), (R(2, 3),)),
    "prod": (lambda a: a.prod(1), (R(2, 3),)),
    "cumsum": (lambda a: a.cumsum(1), (R(2, 3),)),
    "cumprod": (lambda a: a.cumprod(1), (R(2, 3),)),
    "mm": (lambda a, b: a @ b, (R(2, 3), R(3, 4))),
    "matmul_b": (lambda a, b: a @ b, (R(2, 2, 3), R(3, 4))),
    "matmul_1d": (lambda a, b: a @ b, (R(3), R(2, 3, 4))),
    "matmul_v": (lambda a, b: a @ b, (R(2, 3), R(3))),
    "bmm": (lambda a, b: a.bmm(b), (R(2, 2, 3), R(2, 3, 2))),
    "addmm": (lambda c, a, b: tp.addmm(c, a, b, beta=0.5, alpha=2), (R(2, 4), R(2, 3), R(3, 4))),
    "einsum": (lambda a, b: tp.einsum("ij,jk->ik", a, b), (R(2, 3), R(3, 4))),
    "einsum_sum": (lambda a, b: tp.einsum("ij,jk->i", a, b), (R(2, 3), R(3, 4))),
    "view": (lambda a: a.view(6) * 2, (R(2, 3),)),
    "transpose": (lambda a: a.t() * 2, (R(2, 3),)),
    "slice": (lambda a: a[:, 1:], (R(2, 3),)),
    "select": (lambda a: a[1], (R(2, 3),)),
    "index": (lambda a: a[tp.tensor([0, 0, 1], device=a.device)], (R(2, 3),)),
    "cat": (lambda a, b: tp.cat([a, b], 1), (R(2, 3), R(2, 2))),
    "stack": (lambda a, b: tp.stack([a, b]), (R(2, 3), R(2, 3))),
    "expand": (lambda a: a.expand(3, 2), (R(1, 2),)),
    "permute": (lambda a: a.permute(2, 0, 1), (R(2, 3, 4),)),
    "repeat": (lambda a: a.repeat(2, 3), (R(2, 3),)),
    "flip": (lambda a: a.flip(0), (R(2, 3),)),
    "gather": (lambda a: a.gather(1, tp.tensor([[0, 0], [1, 2]], device=a.device)), (R(2, 3),)),
    "softmax": (lambda a: a.softmax(1), (R(2, 3),)),
    "log_softmax": (lambda a: a.log_softmax(1), (R(2, 3),)),
    "layer_norm": (lambda a, w, b: tp.layer_norm(a, [3], w, b), (R(2, 3), R(3), R(3))),
    "rms_norm": (lambda a, w: tp.rms_norm(a, [3], w, 1e-6), (R(2, 3), R(3))),
    "mse": (lambda a, b: tp.mse_loss(a, b), (R(2, 3), R(2, 3))),
    "ce": (lambda a: tp.cross_entropy(a, tp.tensor([0, 2], device=a.device)), (R(2, 3),)),
    "ce_ls": (
        lambda a: tp.cross_entropy(
            a,
            tp.tensor([0, 2, 1], device=a.device),
            tp.tensor([1.0, 2.0, 0.5], dtype=tp.float64, device=a.device),
            label_smoothing=0.1,
        ),
        (R(3, 3),),
    ),
    "ce_probs": (
        lambda a: tp.cross_entropy(
            a, tp.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], dtype=tp.float64, device=a.device)
        ),
        (R(2, 3),),
    ),
    "ce_ignore": (
        lambda a: tp.cross_entropy(a, tp.tensor([0, -100, 1], device=a.device), reduction="sum"),
        (R(3, 3),),
    ),
    "nll": (lambda a: tp.nll_loss(a, tp.tensor([0, 2], device=a.device)), (R(2, 3),)),
    "bce_logits": (lambda a, b: tp.binary_cross_entropy_with_logits(a, b), (R(2, 3), R(2, 3, pos=True))),
    "embedding": (lambda w: tp.embedding(w, tp.tensor([0, 2, 0], device=w.device)), (R(3, 2),)),
    "sort": (lambda a: a.sort(1)[0], (R(2, 3),)),
    "topk": (lambda a: a.topk(2)[0], (R(2, 3),)),
    "unfold": (lambda a: a.unfold(0, 2, 1), (R(4),)),
    "diagonal": (lambda a: a.diagonal(), (R(3, 3),)),
    "tril": (lambda a: a.tril(), (R(3, 3),)),
    "kron": (lambda a, b: tp.kron(a, b), (R(2, 2), R(2, 3))),
    "tensordot": (lambda a, b: tp.tensordot(a, b, dims=([1], [0])), (R(2, 3), R(3, 2))),
    "cross": (lambda a, b: tp.cross(a, b, dim=1), (R(2, 3), R(2, 3))),
    # non-contiguous, transposed, flipped and size-0/1 inputs
    "mul_transposed": (lambda a, b: a.t() * b, (R(3, 2), R(2, 3))),
    "mm_transposed": (lambda a, b: a.t() @ b.t(), (R(3, 2), R(4, 3))),
    "exp_flipped": (lambda a: a.flip(0).exp(), (R(4),)),
    "sum_strided": (lambda a: a[::2].sum(0), (R(5, 2),)),
    "add_size1": (lambda a, b: a + b, (R(1, 1), R(3, 1))),
    "sum_empty": (lambda a: a.sum() + 1.0, (R(0, 3),)),
    "softmax_size1": (lambda a: a.softmax(0), (R(1, 2),)),
    "mean_scalar": (lambda a: a.mean(), (R(),)),
    "atan2": (lambda a, b: tp.atan2(a, b), (R(3), R(3, pos=True))),
    "hypot": (lambda a, b: tp.hypot(a, b), (R(3), R(3))),
    "logaddexp": (lambda a, b: tp.logaddexp(a, b), (R(3), R(3))),
    "lerp": (lambda a, b, w: tp.lerp(a, b, w), (R(3), R(3), R(3))),
    "addcdiv": (lambda a, b, c: tp.addcdiv(a, b, c, value=0.5), (R(3), R(3), R(3, pos=True))),
    "xlogy": (lambda a, b: tp.xlogy(a, b), (R(3), R(3, pos=True))),
    "erf": (lambda a: tp.erf(a), (R(3),)),
    "asinh": (lambda a: tp.asinh(a), (R(3),)),
    "rsqrt": (lambda a: tp.rsqrt(a), (R(3, pos=True),)),
    "reciprocal": (lambda a: a.reciprocal(), (R(3, pos=True),)),
    "abs": (lambda a: a.abs(), (R(3, pos=True),)),
    "logcumsumexp": (lambda a: tp.logcumsumexp(a, 1), (R(2, 3),)),
    "cummax": (lambda a: tp.cummax(a, 1)[0], (R(2, 3),)),
    "median_dim": (lambda a: a.median(1)[0], (R(2, 3),)),
    "index_put_acc": (
        lambda a, v: a.index_put((tp.tensor([0, 0], device=a.device),), v, accumulate=True),
        (R(3), R(2)),
    ),
    "masked_fill": (lambda a: a.masked_fill(tp.tensor([True, False, True], device=a.device), 0.0), (R(3),)),
    "index_select": (lambda a: a.index_select(0, tp.tensor([2, 0, 2], device=a.device)), (R(3, 2),)),
    "scatter_add": (lambda a, s: a.scatter_add(0, tp.tensor([0, 2, 0], device=a.device), s), (R(3), R(3))),
    "var_mean": (lambda a: tp.var_mean(a, 1)[0] + tp.var_mean(a, 1)[1], (R(2, 3),)),
    "l1": (lambda a, b: tp.l1_loss(a, b), (R(3), R(3))),
    "huber": (lambda a, b: tp.huber_loss(a, b, delta=0.5), (R(4), R(4))),
    "kl_div": (lambda a, b: tp.kl_div(a, b, reduction="sum"), (R(3), R(3, pos=True))),
    "bce": (
        lambda a: tp.binary_cross_entropy(
            a.sigmoid(), tp.tensor([0.2, 0.7, 0.9], dtype=tp.float64, device=a.device)
        ),
        (R(3),),
    ),
    "outer": (lambda a, b: tp.outer(a, b), (R(3), R(2))),
    "mv": (lambda a, b: tp.mv(a, b), (R(2, 3), R(3))),
    "baddbmm": (lambda c, a, b: tp.baddbmm(c, a, b, alpha=0.5), (R(2, 2, 2), R(2, 2, 3), R(2, 3, 2))),
    # convolution, pooling, attention, linear algebra
    "conv2d": (lambda x, w, b: tp.conv2d(x, w, b, stride=2, padding=1), (R(2, 3, 5, 5), R(4, 3, 3, 3), R(4))),
    "conv2d_groups_dilation": (
        lambda x, w: tp.conv2d(x, w, None, 1, 2, 2, 2),
        (R(1, 4, 6, 6), R(4, 2, 3, 3)),
    ),
    "conv1d": (lambda x, w: tp.conv1d(x, w, padding=1), (R(2, 2, 7), R(3, 2, 3))),
    "conv3d": (lambda x, w: tp.conv3d(x, w), (R(1, 1, 3, 3, 3), R(2, 1, 2, 2, 2))),
    "conv_transpose2d": (
        lambda x, w: tp.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
        (R(1, 2, 3, 3), R(2, 3, 3, 3)),
    ),
    "max_pool2d": (lambda x: tp.max_pool2d(x, 2), (R(1, 2, 4, 4),)),
    "max_pool2d_ceil": (lambda x: tp.max_pool2d(x, 3, 2, 1, ceil_mode=True), (R(1, 1, 5, 5),)),
    "avg_pool2d_ceil_excl": (
        lambda x: tp.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        (R(1, 2, 5, 5),),
    ),
    "avg_pool2d_incl": (lambda x: tp.avg_pool2d(x, 2, 1, 1), (R(1, 1, 4, 4),)),
    "avg_pool1d": (lambda x: tp.avg_pool1d(x, 3, 2, 1, True), (R(1, 2, 6),)),
    "adaptive_avg_pool2d": (lambda x: tp.adaptive_avg_pool2d(x, (2, 3)), (R(1, 2, 5, 4),)),
    "adaptive_max_pool2d": (lambda x: tp.adaptive_max_pool2d(x, (2, 2))[0], (R(1, 1, 5, 5),)),
    "sdpa": (
        lambda q, k, v: tp.scaled_dot_product_attention(q, k, v),
        (R(1, 2, 3, 4), R(1, 2, 5, 4), R(1, 2, 5, 3)),
    ),
    "sdpa_float_mask": (
        lambda q, k, v, m: tp.scaled_dot_product_attention(q, k, v, attn_mask=m),
        (R(2, 3, 4), R(2, 5, 4), R(2, 5, 3), R(3, 5)),
    ),
    "sdpa_causal": (
        lambda q, k, v: tp.scaled_dot_product_attention(q, k, v, is_causal=True),
        (R(1, 4, 4), R(1, 4, 4), R(1, 4, 2)),
    ),
    "sdpa_gqa": (
        lambda q, k, v: tp.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        (R(1, 4, 3, 4), R(1, 2, 3, 4), R(1, 2, 3, 4)),
    ),
    "det": (lambda a: tp.linalg_det(a), (R(3, 3),)),
    "slogdet": (lambda a: tp.linalg_slogdet(a)[1], (R(3, 3),)),
    "inv": (lambda a: tp.linalg_inv(a + 3 * _I3(a)), (R(3, 3),)),
    "solve": (lambda a, b: tp.linalg_solve(a + 3 * _I3(a), b), (R(3, 3), R(3, 2))),
    "solve_vector": (lambda a, b: tp.linalg_solve(a + 3 * _I3(a), b), (R(3, 3), R(3))),
    "cholesky": (lambda a: tp.linalg_cholesky(a @ a.mT + _I3(a)), (R(3, 3),)),
    # the _ex variants differentiate their main output; info is an integer tensor
    "inv_ex": (lambda a: tp.linalg_inv_ex(a + 3 * _I3(a))[0], (R(3, 3),)),
    "solve_ex": (lambda a, b: tp.linalg_solve_ex(a + 3 * _I3(a), b)[0], (R(3, 3), R(2, 3, 2))),
    "solve_ex_right_T": (
        lambda a, b: tp.linalg_solve_ex(a.mT + 3 * _I3(a), b, left=False)[0],
        (R(3, 3), R(2, 3)),
    ),
    "cholesky_ex": (lambda a: tp.linalg_cholesky_ex(a @ a.mT + _I3(a))[0], (R(3, 3),)),
    "cholesky_ex_upper": (lambda a: tp.linalg_cholesky_ex(a @ a.mT + _I3(a), upper=True)[0], (R(2, 3, 3),)),
    # Cholesky factors: only the triangle LAPACK reads is perturbed (Note [Cholesky factor inputs])
    "cholesky_solve": (lambda b, f: tp.cholesky_solve(b, f.tril()), (R(3, 2), _factor(3))),
    "cholesky_solve_upper_bcast": (
        lambda b, f: tp.cholesky_solve(b, f.triu(), True),
        (R(2, 3, 2), _factor(3, transposed=True)),
    ),
    "cholesky_inverse": (lambda f: tp.cholesky_inverse(f.tril()), (_factor(3),)),
    "cholesky_inverse_upper_batched": (
        lambda f: tp.cholesky_inverse(f.triu(), True),
        (_factor(2, 3, transposed=True),),
    ),
    "eigvalsh": (lambda a: tp.linalg_eigvalsh(a + a.mT), (R(3, 3),)),
    "eigh_values": (lambda a: tp.linalg_eigh(a + a.mT)[0], (R(3, 3),)),
    "svdvals": (lambda a: tp.linalg_svdvals(a), (R(3, 2),)),
    # resampling (formulas/upsample.py): every mode, align_corners, explicit scales, a transposed input
    "upsample_nearest1d": (lambda x: tp.upsample_nearest1d(x, [7]), (R(1, 2, 3),)),
    "upsample_nearest1d_scale": (lambda x: tp.upsample_nearest1d(x, [5], 1.7), (R(1, 1, 3),)),
    "upsample_nearest2d": (lambda x: tp.upsample_nearest2d(x, [4, 5]), (R(1, 2, 2, 3),)),
    "upsample_nearest2d_down": (lambda x: tp.upsample_nearest2d(x.mT, [2, 3]), (R(1, 1, 5, 4),)),
    "upsample_nearest3d": (lambda x: tp.upsample_nearest3d(x, [3, 2, 4]), (R(1, 1, 2, 2, 2),)),
    "upsample_nearest_exact1d": (lambda x: _nearest_exact(1)(x, [5]), (R(2, 1, 3),)),
    "upsample_nearest_exact2d": (lambda x: _nearest_exact(2)(x, [3, 5]), (R(1, 1, 2, 3),)),
    "upsample_nearest_exact3d": (lambda x: _nearest_exact(3)(x, [2, 3, 3]), (R(1, 1, 1, 2, 2),)),
    "upsample_linear1d": (lambda x: tp.upsample_linear1d(x, [7], False), (R(1, 2, 4),)),
    "upsample_linear1d_align": (lambda x: tp.upsample_linear1d(x, [5], True), (R(1, 1, 3),)),
    "upsample_linear1d_scale": (lambda x: tp.upsample_linear1d(x, [6], False, 2.5), (R(1, 1, 3),)),
    "upsample_bilinear2d": (lambda x: tp.upsample_bilinear2d(x, [5, 4], False), (R(1, 2, 3, 3),)),
    "upsample_bilinear2d_align_T": (lambda x: tp.upsample_bilinear2d(x.mT, [4, 5], True), (R(1, 1, 3, 2),)),
    "upsample_bilinear2d_down": (lambda x: tp.upsample_bilinear2d(x, [2, 3], False), (R(1, 1, 5, 5),)),
    "upsample_bicubic2d": (lambda x: tp.upsample_bicubic2d(x, [5, 6], False), (R(1, 1, 3, 4),)),
    "upsample_bicubic2d_align": (
        lambda x: tp.upsample_bicubic2d(x, [4, 4], True, 1.5, 2.0),
        (R(1, 2, 3, 2),),
    ),
    "upsample_trilinear3d": (lambda x: tp.upsample_trilinear3d(x, [3, 3, 4], False), (R(1, 1, 2, 2, 3),)),
    "upsample_trilinear3d_align": (
        lambda x: tp.upsample_trilinear3d(x, [2, 3, 3], True),
        (R(1, 1, 2, 2, 2),),
    ),
    "im2col": (lambda x: tp.im2col(x, [2, 2], [1, 1], [1, 1], [2, 1]), (R(1, 2, 3, 4),)),
    "im2col_dilated_T": (lambda x: tp.im2col(x.mT, [2, 2], [2, 1], [0, 1], [1, 1]), (R(2, 1, 4, 3),)),
    "col2im": (lambda c: tp.col2im(c, [3, 4], [2, 2], [1, 1], [1, 1], [2, 1]), (R(1, 8, 10),)),
    # embedding_bag (formulas/nn.py): every mode, per-sample weights, padding_idx, include_last_offset
    "embedding_bag_sum": (
        lambda w: tp.embedding_bag(
            tp.tensor([0, 2, 2, 1, 3], device=w.device), w, tp.tensor([0, 2, 2], device=w.device), mode="sum"
        ),
        (R(4, 3),),
    ),
    "embedding_bag_mean_pad": (
        lambda w: tp.embedding_bag(
            tp.tensor([0, 2, 1, 1, 3], device=w.device),
            w,
            tp.tensor([0, 3], device=w.device),
            mode="mean",
            padding_idx=1,
        ),
        (R(4, 3),),
    ),
    "embedding_bag_psw": (
        lambda w, p: tp.embedding_bag(
            tp.tensor([0, 2, 2, 1], device=w.device),
            w,
            tp.tensor([0, 1], device=w.device),
            mode="sum",
            per_sample_weights=p,
        ),
        (R(3, 2), R(4)),
    ),
    "embedding_bag_max": (
        lambda w: tp.embedding_bag(tp.tensor([[0, 2], [1, 1], [3, 0]], device=w.device), w.mT, mode="max"),
        (R(3, 4),),
    ),
    "embedding_bag_last_offset": (
        lambda w: tp.embedding_bag(
            tp.tensor([0, 0, 1, 2], device=w.device),
            w,
            tp.tensor([0, 1, 4], device=w.device),
            mode="sum",
            include_last_offset=True,
        ),
        (R(3, 2),),
    ),
    # quantiles (formulas/reduce.py): every interpolation, NaN-ignoring, tensor q, a strided input
    "quantile": (lambda a: tp.quantile(a, 0.3), (R(7),)),
    "quantile_dim_keep": (lambda a: tp.quantile(a, 0.6, 1, True), (R(3, 4),)),
    "quantile_tensor_q": (
        lambda a: tp.quantile(a[:, ::2], tp.tensor([0.2, 0.5, 1.0], dtype=tp.float64, device=a.device), 0),
        (R(4, 6),),
    ),
    "quantile_lower": (lambda a: tp.quantile(a, 0.3, 0, interpolation="lower"), (R(5, 2),)),
    "quantile_higher": (lambda a: tp.quantile(a, 0.3, 0, interpolation="higher"), (R(5, 2),)),
    "quantile_midpoint": (lambda a: tp.quantile(a, 0.3, 0, interpolation="midpoint"), (R(5, 2),)),
    "quantile_nearest": (lambda a: tp.quantile(a, 0.4, 1, interpolation="nearest"), (R(2, 6),)),
    "nanquantile": (
        lambda a: tp.nanquantile(
            a.masked_fill(tp.tensor([False, True, False, False], device=a.device), float("nan")), 0.4, 1
        ),
        (R(3, 4),),
    ),
    "nanquantile_tensor_q": (
        lambda a: tp.nanquantile(a, tp.tensor([0.25, 0.75], dtype=tp.float64, device=a.device), 1),
        (R(2, 5),),
    ),
    # decompositions (formulas/linalg_decomp.py)
    "qr_tall": (lambda a: (lambda q, r: q.sum() + 0.5 * r.sum())(*tp.linalg_qr(a)), (R(4, 3),)),
    "qr_square_T": (lambda a: tp.linalg_qr(a.mT)[0] + tp.linalg_qr(a.mT)[1], (R(3, 3),)),
    "qr_wide": (lambda a: tp.linalg_qr(a)[1], (R(2, 4),)),
    "qr_wide_q": (lambda a: tp.linalg_qr(a)[0] * tp.linalg_qr(a)[1][:, :1].mT, (R(2, 3),)),
    "svd_tall": (
        lambda a: (lambda u, s, vh: (u * u[:1]).sum() + s.sum() + (vh * vh[:, :1]).sum())(
            *tp.linalg_svd(a, False)
        ),
        (R(4, 3),),
    ),
    "svd_wide_vh": (
        lambda a: (
            tp.linalg_svd(a, False)[2] ** 2 * tp.tensor([[1.0, 2, 3]], dtype=tp.float64, device=a.device)
        ).sum(),
        (R(2, 3),),
    ),
    "svd_square_full": (
        lambda a: (lambda u, s, vh: (u @ vh).sum() + s.sum())(*tp.linalg_svd(a, True)),
        (R(3, 3),),
    ),
    "lstsq_tall": (lambda a, b: tp.linalg_lstsq(a, b)[0], (R(5, 3), R(5, 2))),
    "lstsq_vector": (lambda a, b: tp.linalg_lstsq(a, b)[0], (R(4, 2), R(4))),
    "lstsq_wide": (lambda a, b: tp.linalg_lstsq(a, b)[0], (R(2, 4), R(2, 1))),
    # scatter with a reduction (formulas/shape.py)
    "scatter_add_reduce": (
        lambda a, s: a.scatter(0, tp.tensor([0, 2, 0], device=a.device), s, reduce="add"),
        (R(3), R(4)),
    ),
    "scatter_multiply": (
        lambda a, s: a.scatter(1, tp.tensor([[0, 1, 0]], device=a.device), s, reduce="multiply"),
        (R(2, 3), R(1, 3)),
    ),
    "scatter_value_multiply": (
        lambda a: a.scatter(0, tp.tensor([0, 2, 0], device=a.device), 1.5, reduce="multiply"),
        (R(3),),
    ),
    "scatter_value_add": (
        lambda a: a.scatter(0, tp.tensor([1, 1], device=a.device), 2.0, reduce="add"),
        (R(3),),
    ),
    "scatter_reduce_prod": (
        lambda a, s: a.scatter_reduce(0, tp.tensor([0, 1, 0, 0], device=a.device), s, "prod"),
        (R(3), R(4)),
    ),
    "scatter_reduce_prod_excl": (
        lambda a, s: a.scatter_reduce(
            0, tp.tensor([0, 1, 0], device=a.device), s, "prod", include_self=False
        ),
        (R(3), R(3)),
    ),
    "scatter_reduce_prod_zeros": (
        lambda a, s: a.scatter_reduce(0, tp.tensor([0, 1, 0, 2, 3, 3], device=a.device), s, "prod"),
        (
            tp.tensor([0.5, 0.0, 2.0, 0.0], dtype=tp.float64).requires_grad_(True),
            tp.tensor([0.0, 1.3, -0.7, 0.0, 0.0, 1.1], dtype=tp.float64).requires_grad_(True),
        ),
    ),
    "scatter_reduce_amax": (
        lambda a, s: a.scatter_reduce(0, tp.tensor([0, 1, 0, 0], device=a.device), s, "amax"),
        (R(3), R(4)),
    ),
    "scatter_reduce_amin_excl_T": (
        lambda a, s: a.mT.scatter_reduce(
            1, tp.tensor([[0, 0], [1, 0]], device=a.device), s, "amin", include_self=False
        ),
        (R(3, 2), R(2, 2)),
    ),
    "einsum_diagonal": (lambda a, b: tp.einsum("iij,j->i", a, b), (R(3, 3, 2), R(2))),
    "einsum_trace": (lambda a: tp.einsum("ii", a), (R(3, 3),)),
    "as_strided_overlap": (lambda a: a.as_strided((3, 2), (1, 1), 1), (R(6),)),
    "as_strided_transposed_input": (lambda a: a.t().as_strided((2, 2), (2, 1)), (R(3, 2),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name: str) -> None:
    fn, args = CASES[name]
    assert gradcheck(fn, args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name: str) -> None:
    fn, args = CASES[name]
    assert gradgradcheck(fn, args)


# Forward mode: the tangent pushed through each op (csrc/forward_ad.cpp) must equal J t computed by reverse
# mode
# (functional.jvp, the double-backward trick). Cases whose forward draws from the generator or that have no
# floating output are skipped by construction.
@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_ad_matches_reverse_mode(name: str) -> None:
    from tensorplay_tpx.autograd import forward_ad as fwAD
    from tensorplay_tpx.autograd import functional

    fn, args = CASES[name]
    gen = tp.Generator().manual_seed(1)
    tangents = tuple(tp.randn(a.shape, dtype=a.dtype, generator=gen) for a in args)
    primals = tuple(a.detach() for a in args)
    _, expected = functional.jvp(fn, primals, tangents)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents, strict=True)]
        out = fn(*duals)
        got = fwAD.unpack_dual(out).tangent
    assert got is not None
    assert tp.allclose(got, expected, rtol=1e-6, atol=1e-8), (got, expected)


# ---- beyond gradcheck: adjoint identities at size, errors, PyTorch's gradients -----------------------------
@pytest.mark.parametrize(
    ("mode", "align"),
    [("nearest", None), ("nearest-exact", None), ("bilinear", False), ("bilinear", True), ("bicubic", False)],
)
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64])
def test_upsample_backward_is_the_adjoint_at_size(mode, align, dtype) -> None:
    # <up(x), g> = <x, up^T g> for the linear map up: the float64 dot products are the reference. The gradient
    # has over 1M elements (the kernel's threaded path), the input is a transposed view.
    gen = tp.Generator().manual_seed(3)
    x = tp.randn(2, 3, 300, 200, dtype=dtype, generator=gen).mT.requires_grad_(True)
    y = tp.interpolate(x, size=(450, 385), mode=mode, align_corners=align)
    g = tp.randn(y.shape, dtype=dtype, generator=gen)
    assert g.numel() >= 1_000_000
    (gx,) = tensorplay_tpx.autograd.grad(y, x, g)
    lhs = float((y.to(tp.float64) * g.to(tp.float64)).sum())
    rhs = float((x.detach().to(tp.float64) * gx.to(tp.float64)).sum())
    tol = 1e-9 if dtype == tp.float64 else 1e-4
    assert abs(lhs - rhs) <= tol * max(1.0, abs(lhs))


def test_upsample_half_precision_gradient_matches_float32() -> None:
    x = tp.randn(1, 2, 5, 6).requires_grad_(True)
    xh = x.detach().to(tp.bfloat16).requires_grad_(True)
    g = tp.randn(1, 2, 9, 11)
    (gx,) = tensorplay_tpx.autograd.grad(tp.upsample_bilinear2d(x, [9, 11], False), x, g)
    (gxh,) = tensorplay_tpx.autograd.grad(tp.upsample_bilinear2d(xh, [9, 11], False), xh, g.to(tp.bfloat16))
    assert gxh.dtype == tp.bfloat16
    assert tp.allclose(gxh.float(), gx, rtol=2e-2, atol=2e-2)


def test_embedding_bag_scale_grad_by_freq() -> None:
    # each row's gradient is divided by how often its index occurs in the batch (not the true derivative)
    w = R(3, 2)
    idx = tp.tensor([0, 0, 1, 2, 0])
    out = tp.embedding_bag(idx, w, tp.tensor([0, 2]), mode="sum", scale_grad_by_freq=True)
    g = tp.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tp.float64)
    (gw,) = tensorplay_tpx.autograd.grad(out, w, g)
    # row 0: twice in bag 0, once in bag 1, frequency 3; rows 1 and 2: once in bag 1
    expected = tp.tensor([[(2 * 1 + 3) / 3, (2 * 2 + 4) / 3], [3.0, 4.0], [3.0, 4.0]], dtype=tp.float64)
    assert tp.allclose(gw, expected)


def test_svd_full_matrices_non_square_has_no_derivative() -> None:
    a = R(3, 2)
    u, s, vh = tp.linalg_svd(a, True)
    with pytest.raises(
        NotImplementedError, match=r"linalg_svd: .*full_matrices=True.*non-square matrix \(3x2\)"
    ):
        tensorplay_tpx.autograd.grad((u[:, :2] @ tp.diag_embed(s) @ vh).sum(), a)


def test_qr_mode_r_has_no_derivative() -> None:
    a = R(3, 2)
    _, r = tp.linalg_qr(a, "r")
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        tensorplay_tpx.autograd.grad(r.sum(), a)


@pytest.mark.parametrize(
    "name",
    [
        "upsample_bicubic2d_align",
        "upsample_trilinear3d",
        "upsample_nearest2d_down",
        "quantile_tensor_q",
        "nanquantile",
        "scatter_reduce_prod_zeros",
        "scatter_reduce_amax",
        "embedding_bag_mean_pad",
        "embedding_bag_max",
        "im2col_dilated_T",
        "qr_tall",
        "qr_wide",
        "svd_tall",
        "lstsq_tall",
        "lstsq_wide",
        "cholesky_solve",
        "cholesky_solve_upper_bcast",
        "cholesky_inverse_upper_batched",
        "solve_ex_right_T",
        "cholesky_ex_upper",
    ],
)
def test_gradients_match_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    import numpy as np

    fn, args = CASES[name]
    tfn = _TORCH_CASES[name](torch)
    outs = fn(*args)
    g = tp.randn(outs.shape, dtype=tp.float64, generator=tp.Generator().manual_seed(5))
    ours = tensorplay_tpx.autograd.grad(outs, args, g)
    targs = [torch.tensor(np.asarray(a.detach().numpy()), requires_grad=True) for a in args]
    theirs = torch.autograd.grad(tfn(*targs), targs, torch.tensor(g.numpy()))
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


_TORCH_CASES = {
    "upsample_bicubic2d_align": lambda torch: (
        lambda x: torch.ops.aten.upsample_bicubic2d(x, [4, 4], True, 1.5, 2.0)
    ),
    "upsample_trilinear3d": lambda torch: lambda x: torch.ops.aten.upsample_trilinear3d(x, [3, 3, 4], False),
    "upsample_nearest2d_down": lambda torch: lambda x: torch.ops.aten.upsample_nearest2d(x.mT, [2, 3]),
    "quantile_tensor_q": lambda torch: (
        lambda a: torch.quantile(a[:, ::2], torch.tensor([0.2, 0.5, 1.0], dtype=torch.float64), 0)
    ),
    "nanquantile": lambda torch: (
        lambda a: torch.nanquantile(
            a.masked_fill(torch.tensor([False, True, False, False]), float("nan")), 0.4, 1
        )
    ),
    "scatter_reduce_prod_zeros": lambda torch: (
        lambda a, s: a.scatter_reduce(0, torch.tensor([0, 1, 0, 2, 3, 3]), s, "prod")
    ),
    "scatter_reduce_amax": lambda torch: (
        lambda a, s: a.scatter_reduce(0, torch.tensor([0, 1, 0, 0]), s, "amax")
    ),
    "embedding_bag_mean_pad": lambda torch: (
        lambda w: torch.nn.functional.embedding_bag(
            torch.tensor([0, 2, 1, 1, 3]), w, torch.tensor([0, 3]), mode="mean", padding_idx=1
        )
    ),
    "embedding_bag_max": lambda torch: (
        lambda w: torch.nn.functional.embedding_bag(torch.tensor([[0, 2], [1, 1], [3, 0]]), w.mT, mode="max")
    ),
    "im2col_dilated_T": lambda torch: (
        lambda x: torch.nn.functional.unfold(x.mT, [2, 2], [2, 1], [0, 1], [1, 1])
    ),
    "qr_tall": lambda torch: lambda a: (lambda q, r: q.sum() + 0.5 * r.sum())(*torch.linalg.qr(a)),
    "qr_wide": lambda torch: lambda a: torch.linalg.qr(a)[1],
    "svd_tall": lambda torch: (
        lambda a: (lambda u, s, vh: (u * u[:1]).sum() + s.sum() + (vh * vh[:, :1]).sum())(
            *torch.linalg.svd(a, full_matrices=False)
        )
    ),
    "lstsq_tall": lambda torch: lambda a, b: torch.linalg.lstsq(a, b)[0],
    "lstsq_wide": lambda torch: lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd")[0],
    "cholesky_solve": lambda torch: lambda b, f: torch.cholesky_solve(b, f.tril()),
    "cholesky_solve_upper_bcast": lambda torch: lambda b, f: torch.cholesky_solve(b, f.triu(), True),
    "cholesky_inverse_upper_batched": lambda torch: lambda f: torch.cholesky_inverse(f.triu(), True),
    "solve_ex_right_T": lambda torch: (
        lambda a, b: torch.linalg.solve_ex(a.mT + 3 * torch.eye(3, dtype=torch.float64), b, left=False)[0]
    ),
    "cholesky_ex_upper": lambda torch: (
        lambda a: torch.linalg.cholesky_ex(a @ a.mT + torch.eye(3, dtype=torch.float64), upper=True)[0]
    ),
}


def test_digamma_derivative_is_trigamma() -> None:
    # trigamma reference values (float64, from the defining series sum_k 1/(x+k)^2, summed to convergence)
    xs = [0.25, 1.0, 2.5, 10.0, -0.5, -2.25]

    def trigamma_ref(x: float) -> float:
        import math

        if x < 0.5:
            return (math.pi / math.sin(math.pi * x)) ** 2 - trigamma_ref(1 - x)
        total, k = 0.0, 0
        while k < 200_000:
            total += 1.0 / (x + k) ** 2
            k += 1
        return total + 1.0 / (x + k) + 1.0 / (2 * (x + k) ** 2)  # tail of the series

    x = tp.tensor(xs, dtype=tp.float64).requires_grad_(True)
    tp.digamma(x).sum().backward()
    for got, v in zip(x.grad.tolist(), xs, strict=True):
        assert got == pytest.approx(trigamma_ref(v), rel=1e-9)
