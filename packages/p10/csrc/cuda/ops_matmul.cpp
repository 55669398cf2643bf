// ops_matmul.cpp — CUDA kernels for the matrix products: mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot, vdot
// and matmul (with their in-place and out= forms), all through cuBLAS.
//
// Where it sits: the CUDA twin of kernels/matmul.cpp, with the same schemas, shape rules, dtype rules and
// messages; every product ends in gemm() below, one cublasGemmEx or cublasGemmStridedBatchedEx call (cublas.h
// loads cuBLAS) — except addmm with a bias vector (nn.Linear), which is one cuBLASLt call with the bias added
// in its epilogue (Note [Bias epilogue]). matmul's rank rules are the CPU's (Note [matmul rank rules] in
// kernels/matmul.cpp), written here over the dispatcher so that each step runs on CUDA.
//
// Note [Row-major GEMM on cuBLAS]
//   cuBLAS is column-major: a buffer holding row-major C (m x n, rows ldc apart) is, to cuBLAS, C^T (n x m)
//   with leading dimension ldc. So C = A @ B is computed as C^T = B^T @ A^T, with B in cuBLAS's "A" slot and A
//   in its "B" slot, and m and n swapped. Each input X (r x c, strides rs, cs) goes in without a copy when
//   either its rows are contiguous (cs == 1: X^T is a plain column-major matrix, op N, ld = rs) or its columns
//   are (rs == 1: X itself is column-major, so cuBLAS transposes it, op T, ld = cs); a dim of size 1 may have
//   any stride. Anything else (overlapping rows, steps in both dims) is copied to a contiguous tensor first.
//   The result is written straight into the output when that is row-major; otherwise into a contiguous
//   temporary that is copied back.
//
// dtypes: float32 (full float32, or TF32 tensor cores when tp.backends.cuda.matmul.allow_tf32 /
// set_float32_matmul_precision("high") allow it), float64, and float16 / bfloat16 with float32 accumulation.
// Integer and complex products raise NotImplementedError, as PyTorch's CUDA ones do.
#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <optional>

#include "cuda/cublas.h"
#include "cuda/ops_common.h"
#include "kernels/blas.h"

namespace tp::p10::cuda {

namespace {

// ---- shape and dtype rules (the CPU's, kernels/matmul.cpp, with its messages) ----------------------------------
std::string dims_str(const Tensor &t) {
  std::string s;
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "x" : "") + std::to_string(t.size(i));
  return s;
}
Tensor view_as(const Tensor &t, Shape sizes, Shape strides) {
  return make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
}
Tensor as3d(const Tensor &t) { return view_as(t, {1, t.size(0), t.size(1)}, {0, t.stride(0), t.stride(1)}); }
Tensor as_column(const Tensor &v) { return view_as(v, {v.size(0), 1}, {v.stride(0), 1}); }
Tensor reshape(const Tensor &t, const Shape &s) { return call_op<Tensor>(TP_OP("reshape"), t, s); }
Tensor unsqueeze(const Tensor &t, int64_t d) { return call_op<Tensor>(TP_OP("unsqueeze"), t, d); }
bool is_zero(const Scalar &s) { return s.to_complex() == std::complex<double>(0); }

Tensor result_tensor(const char *op, const Tensor &out, const Shape &shape, ScalarType dtype, Device device) {
  if (!out.defined()) return empty_tensor(shape, dtype, device);
  TP_CHECK(out.dtype() == dtype, Runtime, op, ": Expected out tensor to have dtype ", scalar_type_name(dtype),
           ", but got ", scalar_type_name(out.dtype()), " instead");
  if (out.sizes() != shape) {
    TP_CHECK(out.numel() == 0 || out.is_contiguous(), Runtime, op, ": cannot resize a non-contiguous out= tensor from ",
             shape_str(out.sizes()), " to ", shape_str(shape));
    Tensor fresh = empty_tensor(shape, out.dtype(), out.device());
    out->storage = fresh->storage;
    out->set_geometry(shape, contiguous_strides(shape), 0);
  }
  out.bump_version();
  return out;
}

void check_same_dtype(const char *what, const Tensor &a, const Tensor &b) {
  TP_CHECK(a.dtype() == b.dtype(), Runtime, "expected ", what, " to have the same dtype, but got: ",
           scalar_type_name(a.dtype()), " != ", scalar_type_name(b.dtype()));
}
void check_scalar_type(const Tensor &t, ScalarType expected) {
  TP_CHECK(t.dtype() == expected, Runtime, "expected scalar type ", scalar_type_name(expected), " but found ",
           scalar_type_name(t.dtype()));
}
void check_mm_shapes(const Tensor &m1, const Tensor &m2) {
  TP_CHECK(m1.dim() == 2, Runtime, "self must be a matrix");
  TP_CHECK(m2.dim() == 2, Runtime, "mat2 must be a matrix");
  TP_CHECK(m1.size(1) == m2.size(0), Runtime, "mat1 and mat2 shapes cannot be multiplied (", dims_str(m1), " and ",
           dims_str(m2), ")");
  check_same_dtype("m1 and m2", m1, m2);
}
void check_bmm_shapes(const Tensor &b1, const Tensor &b2) {
  TP_CHECK(b1.dim() == 3, Runtime, "batch1 must be a 3D tensor");
  TP_CHECK(b2.dim() == 3, Runtime, "batch2 must be a 3D tensor");
  TP_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2), Runtime,
           "Expected size for first two dimensions of batch2 tensor to be: [", b1.size(0), ", ", b1.size(2),
           "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  check_scalar_type(b2, b1.dtype());
}
void check_mv_shapes(const Tensor &mat, const Tensor &vec) {
  TP_CHECK(mat.dim() == 2 && vec.dim() == 1, Runtime, "vector + matrix @ vector expected, got ", mat.dim(), ", ",
           vec.dim());
  TP_CHECK(mat.size(1) == vec.size(0), Runtime, "size mismatch, got input (", mat.size(0), "), mat (", dims_str(mat),
           "), vec (", vec.size(0), ")");
  check_same_dtype("mat and vec", mat, vec);
}

// result = beta * self + alpha * (product): `self` broadcast into a fresh (or out=) result, or the in-place self.
Tensor prepare_add_result(const char *op, const Tensor &self, const Shape &shape, ScalarType dtype, const Tensor &out,
                          bool inplace, const Scalar &beta) {
  TP_CHECK(self.dtype() == dtype, Runtime, op, ": self and mat2 must have the same dtype, but got ",
           scalar_type_name(self.dtype()), " and ", scalar_type_name(dtype));
  if (inplace) {
    TP_CHECK(self.sizes() == shape, Runtime, op, ": self of shape ", shape_str(self.sizes()),
             " must have the result's shape ", shape_str(shape));
    self.bump_version();
    return self;
  }
  Shape full = broadcast_shapes(self.sizes(), shape, op);
  TP_CHECK(full == shape, Runtime, op, ": self of shape ", shape_str(self.sizes()),
           " cannot be broadcast to the result's shape ", shape_str(shape));
  Tensor r = result_tensor(op, out, shape, dtype, self.device());
  if (!is_zero(beta)) device_copy(r, self);
  return r;
}

// ---- the one GEMM ---------------------------------------------------------------------------------------------
struct Operand {
  int op;      // CUBLAS_OP_N or CUBLAS_OP_T
  int64_t ld;  // leading dimension
};

// X (rows x cols, strides rs, cs) as cuBLAS's view of X^T, without a copy: Note [Row-major GEMM on cuBLAS].
std::optional<Operand> operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const int64_t need_n = std::max<int64_t>(1, cols), need_t = std::max<int64_t>(1, rows);
  int64_t ld = rows == 1 ? need_n : rs;  // a single row: its stride is never used
  if ((cols == 1 || cs == 1) && ld >= need_n) return Operand{CUBLAS_OP_N, ld};
  ld = cols == 1 ? need_t : cs;
  if ((rows == 1 || rs == 1) && ld >= need_t) return Operand{CUBLAS_OP_T, ld};
  return std::nullopt;
}

// A batch of matrices (batch x rows x cols) in a form cuBLAS takes: itself, or a contiguous copy.
struct Batch {
  Tensor t;
  Operand mat;
  int64_t stride;  // between matrices; 0 for a batch of one
};
Batch as_operand(const Tensor &t) {
  const int64_t b = t.size(0), r = t.size(1), c = t.size(2);
  // A batch stride of 0 (an expanded batch) is not among the layouts cuBLAS documents: copy it.
  if (auto o = operand(r, c, t.stride(1), t.stride(2)); o && (b == 1 || t.stride(0) >= 1))
    return {t, *o, b == 1 ? 0 : t.stride(0)};
  Tensor d = contiguous_as(t, t.dtype());
  return {d, *operand(r, c, c, 1), b == 1 ? 0 : r * c};
}

int as_int(const char *op, const char *what, int64_t v) {
  TP_CHECK(v <= INT_MAX, NotImplemented, op, ": ", what, " = ", v, " is larger than cuBLAS's int32 limit");
  return int(v);
}

struct GemmTypes {
  int data, compute;
  bool f64;
};
GemmTypes gemm_types(const char *op, ScalarType t) {
  switch (t) {
    case ScalarType::Float64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case ScalarType::Float32:
      return {CUDA_R_32F, float32_matmul_precision() > 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, false};
    case ScalarType::Float16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};  // float32 accumulation
    case ScalarType::BFloat16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    default: refuse_cuda_matmul_dtype(op, t);
  }
}

// c[i] = alpha * a[i] @ b[i] + beta * c[i] for 3-D a (batch x m x k), b (batch x k x n), c (batch x m x n) of one
// dtype on CUDA device `dev` (checked by the caller, and current), any strides. With beta == 0, c's old values are never read.
void gemm(int dev, const char *op, const Tensor &a, const Tensor &b, const Tensor &c, const Scalar &alpha, const Scalar &beta) {
  const int64_t batch = c.size(0), m = c.size(1), n = c.size(2), k = a.size(2);
  const GemmTypes ty = gemm_types(op, c.dtype());  // first: an int64 product is an error at any size
  if (batch == 0 || m == 0 || n == 0) return;
  // The output: written in place when row-major with non-overlapping matrices, else through a temporary.
  std::optional<Operand> oc = operand(m, n, c.stride(1), c.stride(2));
  const bool direct = oc && oc->op == CUBLAS_OP_N && (batch == 1 || c.stride(0) >= m * oc->ld);
  Tensor res = direct ? c : (is_zero(beta) ? empty_tensor(c.sizes(), c.dtype(), c.device()) : contiguous_as(c, c.dtype()));
  if (k == 0) {  // an empty sum: res = beta * res
    if (is_zero(beta)) {
      call_op<Tensor>(TP_OP("fill_"), res, Scalar(0.0));
    } else {
      Tensor factor = empty_tensor({}, c.dtype(), Device{});  // a CPU number
      call_op<Tensor>(TP_OP("fill_"), factor, beta);
      call_op<Tensor>(TP_OP("mul_"), res, factor);
    }
  } else {
    const Batch A = as_operand(a), B = as_operand(b);
    const int64_t ldc = direct ? oc->ld : std::max<int64_t>(1, n), stride_c = batch == 1 ? 0 : (direct ? c.stride(0) : m * n);
    const int im = as_int(op, "n", n), in = as_int(op, "m", m), ik = as_int(op, "k", k);
    const int lda = as_int(op, "the leading dimension of mat2", B.mat.ld);
    const int ldb = as_int(op, "the leading dimension of mat1", A.mat.ld);
    const int ildc = as_int(op, "the leading dimension of the result", ldc);
    const int nb = as_int(op, "the batch size", batch);
    double alpha64 = alpha.to_double(), beta64 = beta.to_double();
    float alpha32 = float(alpha64), beta32 = float(beta64);
    const void *pa = ty.f64 ? static_cast<const void *>(&alpha64) : &alpha32;
    const void *pb = ty.f64 ? static_cast<const void *>(&beta64) : &beta32;
    const CublasApi &api = cublas();
    cublasHandle_t h = cublas_handle(dev, stream_for(dev).handle);
    // C^T (n x m) = B^T (n x k) @ A^T (k x m): Note [Row-major GEMM on cuBLAS].
    const cublasStatus_t st =
        batch == 1 ? api.cublasGemmEx(h, B.mat.op, A.mat.op, im, in, ik, pa, B.t.data_ptr(), ty.data, lda,
                                      A.t.data_ptr(), ty.data, ldb, pb, res.data_ptr(), ty.data, ildc, ty.compute,
                                      CUBLAS_GEMM_DEFAULT)
                   : api.cublasGemmStridedBatchedEx(h, B.mat.op, A.mat.op, im, in, ik, pa, B.t.data_ptr(), ty.data,
                                                    lda, B.stride, A.t.data_ptr(), ty.data, ldb, A.stride, pb,
                                                    res.data_ptr(), ty.data, ildc, stride_c, nb, ty.compute,
                                                    CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS)  // the message is built only on failure: GEMMs are called often
      cublas_check(st, str_cat(batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx", " (", op, ", ",
                               scalar_type_name(c.dtype()), ", m=", m, " n=", n, " k=", k, " batch=", batch, ")"));
  }
  if (res.impl() != c.impl()) device_copy(c, res);
}

// Note [Bias epilogue]
//   nn.Linear is addmm(bias, x, W^T). As a GEMM into a copy of the broadcast bias (beta = 1) it writes the
//   output twice and reads it once more; cuBLASLt's BIAS epilogue adds bias[j] while each output tile is still
//   in registers. Taken when alpha = beta = 1, the bias is 1-D with n elements, stride 1 and the product's
//   dtype (float16, bfloat16, float32), and the result is new (not in place, not out=). In cuBLAS's
//   column-major view (Note [Row-major GEMM on cuBLAS]) the result is n x m, so the bias runs down its rows,
//   which is where cuBLASLt adds it. The heuristic's choice is cached per problem (sizes, layouts, compute
//   type, pointer alignments: cuBLASLt otherwise assumes 256-byte aligned pointers); the query costs more host
//   time than the launch. Returns false (nothing written) where cuBLASLt is missing or has no algorithm.
uint32_t alignment(const void *p) {
  uint32_t al = 256;
  while (al > 1 && uintptr_t(p) % al) al >>= 1;
  return al;
}

bool gemm_bias(int dev, const Tensor &a, const Tensor &b, const Tensor &bias, const Tensor &r) {
  const ScalarType t = r.dtype();
  const int64_t m = r.size(0), n = r.size(1), k = a.size(1);
  if (t != ScalarType::Float16 && t != ScalarType::BFloat16 && t != ScalarType::Float32) return false;
  if (m == 0 || n == 0 || k == 0 || std::max({m, n, k}) > INT_MAX) return false;
  const CublasApi &api = cublas();
  if (!api.has_lt) return false;
  const Batch A = as_operand(as3d(a)), B = as_operand(as3d(b));
  const GemmTypes ty = gemm_types("addmm", t);
  const uint32_t al[4] = {alignment(B.t.data_ptr()), alignment(A.t.data_ptr()), alignment(r.data_ptr()),
                          alignment(r.data_ptr())};
  const Stream stream = stream_for(dev);
  cublasLtHandle_t h = cublaslt_handle(dev);
  const Workspace ws = cublas_workspace(dev, stream.handle);
  auto check = [&](cublasStatus_t st, const char *what) {
    if (st != CUBLAS_STATUS_SUCCESS) cublas_check(st, str_cat(what, " (addmm with bias, m=", m, " n=", n, " k=", k, ")"));
  };
  // The problem in cuBLAS's view: D (n x m) = op(B^T) (n x k) @ op(A^T) (k x m) + bias; layouts as stored.
  cublasLtMatmulDesc_t desc = nullptr;
  check(api.cublasLtMatmulDescCreate(&desc, ty.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const int32_t ta = B.mat.op, tb = A.mat.op;
  const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const void *bias_ptr = bias.data_ptr();
  api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof bias_ptr);
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  const bool na = ta == CUBLAS_OP_N, nb = tb == CUBLAS_OP_N;
  api.cublasLtMatrixLayoutCreate(&la, ty.data, na ? n : k, na ? k : n, B.mat.ld);
  api.cublasLtMatrixLayoutCreate(&lb, ty.data, nb ? k : m, nb ? m : k, A.mat.ld);
  api.cublasLtMatrixLayoutCreate(&ld, ty.data, n, m, n);
  // The algorithm for this problem: from the cache, or from the heuristic (then cached, a miss too).
  static std::mutex mu;
  static std::map<std::array<int64_t, 14>, std::optional<cublasLtMatmulAlgo_t>> algos;
  const std::array<int64_t, 14> key{dev, m, n, k, ta, tb, B.mat.ld, A.mat.ld, ty.compute, ty.data,
                                    al[0], al[1], al[2], alignment(bias_ptr)};
  std::optional<cublasLtMatmulAlgo_t> algo;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = algos.find(key); it != algos.end()) algo = it->second, known = true;
  }
  if (!known) {
    cublasLtMatmulPreference_t pref = nullptr;
    api.cublasLtMatmulPreferenceCreate(&pref);
    const uint64_t max_ws = ws.bytes;
    api.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws);
    for (int i = 0; i < 4; ++i)  // A, B, C, D
      api.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i, &al[i],
                                               sizeof al[i]);
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    const cublasStatus_t st =
        api.cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, 1, &result, &returned);
    api.cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_SUCCESS && returned > 0 && result.state == CUBLAS_STATUS_SUCCESS) algo = result.algo;
    std::lock_guard<std::mutex> lock(mu);
    algos.emplace(key, algo);
  }
  if (algo) {
    const float one = 1.0f, zero = 0.0f;
    check(api.cublasLtMatmul(h, desc, &one, B.t.data_ptr(), la, A.t.data_ptr(), lb, &zero, r.data_ptr(), ld,
                             r.data_ptr(), ld, &*algo, ws.ptr, ws.bytes, stream.handle),
          "cublasLtMatmul");
  }
  api.cublasLtMatrixLayoutDestroy(la);
  api.cublasLtMatrixLayoutDestroy(lb);
  api.cublasLtMatrixLayoutDestroy(ld);
  api.cublasLtMatmulDescDestroy(desc);
  return algo.has_value();
}

bool is_one(const Scalar &s) { return s.to_complex() == std::complex<double>(1); }

// Every product's entry: its tensors on one CUDA device, which is made current.
int enter(const char *op, const std::vector<Tensor> &ts) { return common_device(op, ts, false); }

}  // namespace

// ---- mm, bmm, addmm, baddbmm, addbmm ------------------------------------------------------------------------
static Tensor mm_impl(const char *op, const Tensor &self, const Tensor &mat2, const Tensor &out) {
  const int dev = enter(op, {self, mat2, out});
  DeviceGuard g(dev);
  check_mm_shapes(self, mat2);
  Tensor r = result_tensor(op, out, {self.size(0), mat2.size(1)}, self.dtype(), self.device());
  gemm(dev, op, as3d(self), as3d(mat2), as3d(r), Scalar(1.0), Scalar(0.0));
  return r;
}
static Tensor mm(const Tensor &self, const Tensor &mat2) { return mm_impl("mm", self, mat2, Tensor()); }
static Tensor mm_out(const Tensor &self, const Tensor &mat2, const Tensor &out) { return mm_impl("mm.out", self, mat2, out); }

static Tensor bmm_impl(const char *op, const Tensor &self, const Tensor &mat2, const Tensor &out) {
  const int dev = enter(op, {self, mat2, out});
  DeviceGuard g(dev);
  check_bmm_shapes(self, mat2);
  Tensor r = result_tensor(op, out, {self.size(0), self.size(1), mat2.size(2)}, self.dtype(), self.device());
  gemm(dev, op, self, mat2, r, Scalar(1.0), Scalar(0.0));
  return r;
}
static Tensor bmm(const Tensor &self, const Tensor &mat2) { return bmm_impl("bmm", self, mat2, Tensor()); }
static Tensor bmm_out(const Tensor &self, const Tensor &mat2, const Tensor &out) { return bmm_impl("bmm.out", self, mat2, out); }

static Tensor addmm_impl(const char *op, const Tensor &self, const Tensor &m1, const Tensor &m2, const Scalar &beta,
                         const Scalar &alpha, const Tensor &out, bool inplace) {
  const int dev = enter(op, {self, m1, m2, out});
  DeviceGuard g(dev);
  check_mm_shapes(m1, m2);
  const int64_t n = m2.size(1);
  if (!inplace && !out.defined() && is_one(alpha) && is_one(beta) && self.dim() == 1 && self.size(0) == n &&
      (n == 1 || self.stride(0) == 1) && self.dtype() == m1.dtype() && m1.dtype() == m2.dtype()) {
    Tensor r = empty_tensor({m1.size(0), n}, m1.dtype(), m1.device());  // Note [Bias epilogue]
    if (gemm_bias(dev, m1, m2, self, r)) return r;
  }
  Tensor r = prepare_add_result(op, self, {m1.size(0), n}, m1.dtype(), out, inplace, beta);
  gemm(dev, op, as3d(m1), as3d(m2), as3d(r), alpha, beta);
  return r;
}

static Tensor baddbmm_impl(const char *op, const Tensor &self, const Tensor &b1, const Tensor &b2, const Scalar &beta,
                           const Scalar &alpha, const Tensor &out, bool inplace) {
  const int dev = enter(op, {self, b1, b2, out});
  DeviceGuard g(dev);
  check_bmm_shapes(b1, b2);
  Tensor r = prepare_add_result(op, self, {b1.size(0), b1.size(1), b2.size(2)}, b1.dtype(), out, inplace, beta);
  gemm(dev, op, b1, b2, r, alpha, beta);
  return r;
}

// addbmm sums the batch of products: one GEMM of B1's matrices side by side (m x bk) with B2's stacked (bk x n).
static Tensor addbmm_impl(const char *op, const Tensor &self, const Tensor &b1, const Tensor &b2, const Scalar &beta,
                          const Scalar &alpha, const Tensor &out, bool inplace) {
  const int dev = enter(op, {self, b1, b2, out});
  DeviceGuard g(dev);
  check_bmm_shapes(b1, b2);
  const int64_t bs = b1.size(0), m = b1.size(1), k = b1.size(2), n = b2.size(2);
  Tensor r = prepare_add_result(op, self, {m, n}, b1.dtype(), out, inplace, beta);
  Tensor wide = reshape(call_op<Tensor>(TP_OP("permute"), b1, Shape{1, 0, 2}), {m, bs * k});
  Tensor tall = reshape(b2, {bs * k, n});
  gemm(dev, op, as3d(wide), as3d(tall), as3d(r), alpha, beta);
  return r;
}

static Tensor addmv_impl(const char *op, const Tensor &self, const Tensor &mat, const Tensor &vec, const Scalar &beta,
                         const Scalar &alpha, const Tensor &out, bool inplace) {
  const int dev = enter(op, {self, mat, vec, out});
  DeviceGuard g(dev);
  check_mv_shapes(mat, vec);
  Tensor r = prepare_add_result(op, self, {mat.size(0)}, mat.dtype(), out, inplace, beta);
  gemm(dev, op, as3d(mat), as3d(as_column(vec)), as3d(as_column(r)), alpha, beta);
  return r;
}

#define TP_ADD_VARIANTS(name)                                                                                   \
  static Tensor name(const Tensor &self, const Tensor &a, const Tensor &b, const Scalar &beta, const Scalar &alpha) { \
    return name##_impl(#name, self, a, b, beta, alpha, Tensor(), false);                                       \
  }                                                                                                             \
  static Tensor name##_(const Tensor &self, const Tensor &a, const Tensor &b, const Scalar &beta, const Scalar &alpha) { \
    return name##_impl(#name "_", self, a, b, beta, alpha, Tensor(), true);                                    \
  }                                                                                                             \
  static Tensor name##_out(const Tensor &self, const Tensor &a, const Tensor &b, const Scalar &beta,           \
                           const Scalar &alpha, const Tensor &out) {                                            \
    return name##_impl(#name ".out", self, a, b, beta, alpha, out, false);                                     \
  }
TP_ADD_VARIANTS(addmm)
TP_ADD_VARIANTS(baddbmm)
TP_ADD_VARIANTS(addbmm)
TP_ADD_VARIANTS(addmv)
#undef TP_ADD_VARIANTS

// ---- mv, dot, vdot --------------------------------------------------------------------------------------------
static Tensor mv_impl(const char *op, const Tensor &self, const Tensor &vec, const Tensor &out) {
  const int dev = enter(op, {self, vec, out});
  DeviceGuard g(dev);
  check_mv_shapes(self, vec);
  Tensor r = result_tensor(op, out, {self.size(0)}, self.dtype(), self.device());
  gemm(dev, op, as3d(self), as3d(as_column(vec)), as3d(as_column(r)), Scalar(1.0), Scalar(0.0));
  return r;
}
static Tensor mv(const Tensor &self, const Tensor &vec) { return mv_impl("mv", self, vec, Tensor()); }
static Tensor mv_out(const Tensor &self, const Tensor &vec, const Tensor &out) { return mv_impl("mv.out", self, vec, out); }

// dot: a 1 x n by n x 1 product. vdot conjugates its first vector, which changes nothing for the real dtypes
// (complex ones have no CUDA kernels yet).
static Tensor dot_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out) {
  const int dev = enter(op, {self, other, out});
  DeviceGuard g(dev);
  TP_CHECK(self.dim() == 1 && other.dim() == 1, Runtime, "1D tensors expected, but got ", self.dim(), "D and ",
           other.dim(), "D tensors");
  TP_CHECK(self.size(0) == other.size(0), Runtime, "inconsistent tensor size, expected tensor [", self.size(0),
           "] and src [", other.size(0), "] to have the same number of elements, but got ", self.size(0), " and ",
           other.size(0), " elements respectively");
  TP_CHECK(self.dtype() == other.dtype(), Runtime, op, " : expected both vectors to have same dtype, but found ",
           scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  check_real(op, self.dtype());
  Tensor r = result_tensor(op, out, {}, self.dtype(), self.device());
  gemm(dev, op, view_as(self, {1, 1, self.size(0)}, {0, 0, self.stride(0)}),
       view_as(other, {1, other.size(0), 1}, {0, other.stride(0), 1}), view_as(r, {1, 1, 1}, {0, 0, 0}), Scalar(1.0),
       Scalar(0.0));
  return r;
}
static Tensor dot(const Tensor &self, const Tensor &t) { return dot_impl("dot", self, t, Tensor()); }
static Tensor dot_out(const Tensor &self, const Tensor &t, const Tensor &out) { return dot_impl("dot.out", self, t, out); }
static Tensor vdot(const Tensor &self, const Tensor &t) { return dot_impl("vdot", self, t, Tensor()); }
static Tensor vdot_out(const Tensor &self, const Tensor &t, const Tensor &out) { return dot_impl("vdot.out", self, t, out); }

// ---- matmul: Note [matmul rank rules] in kernels/matmul.cpp, over the dispatcher ---------------------------------
static Tensor matmul(const Tensor &a, const Tensor &b) {
  const int64_t da = a.dim(), db = b.dim();
  TP_CHECK(da > 0 && db > 0, Runtime, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ",
           db, "D");
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) return reshape(mm(unsqueeze(a, 0), b), {b.size(1)});
  if (da == 2 && db == 2) return mm(a, b);
  if (da >= 3 && db <= 2) {  // fold the batch into the rows of one product
    const int64_t k = a.size(-1);
    Shape shape(a.sizes().begin(), a.sizes().end() - 1);
    Tensor rows = reshape(a, {shape_numel(shape), k});
    Tensor r = db == 2 ? mm(rows, b) : mv(rows, b);
    if (db == 2) shape.push_back(b.size(1));
    return reshape(r, shape);
  }
  Tensor a3 = da == 1 ? unsqueeze(a, 0) : a, b3 = db == 1 ? unsqueeze(b, 1) : b;
  const int64_t m = a3.size(-2), k = a3.size(-1), k2 = b3.size(-2), n = b3.size(-1);
  Shape batch = broadcast_shapes(Shape(a3.sizes().begin(), a3.sizes().end() - 2),
                                 Shape(b3.sizes().begin(), b3.sizes().end() - 2), "matmul");
  const int64_t nb = shape_numel(batch);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {m, k});
  eb.insert(eb.end(), {k2, n});
  auto expand = [](const Tensor &t, const Shape &s) { return call_op<Tensor>(TP_OP("expand"), t, s); };
  Tensor r = bmm(reshape(expand(a3, ea), {nb, m, k}), reshape(expand(b3, eb), {nb, k2, n}));
  Shape shape = batch;
  if (da > 1) shape.push_back(m);
  if (db > 1) shape.push_back(n);
  return reshape(r, shape);
}
static Tensor matmul_out(const Tensor &a, const Tensor &b, const Tensor &out) {
  Tensor r = matmul(a, b);
  DeviceGuard g(enter("matmul.out", {r, out}));
  Tensor o = result_tensor("matmul.out", out, r.sizes(), r.dtype(), r.device());
  device_copy(o, r);
  return o;
}

TP_LIBRARY(cuda_matmul) {
  TP_IMPL(lib, "mm", CUDA, mm);
  TP_IMPL(lib, "mm.out", CUDA, mm_out);
  TP_IMPL(lib, "bmm", CUDA, bmm);
  TP_IMPL(lib, "bmm.out", CUDA, bmm_out);
  TP_IMPL(lib, "addmm", CUDA, addmm);
  TP_IMPL(lib, "addmm_", CUDA, addmm_);
  TP_IMPL(lib, "addmm.out", CUDA, addmm_out);
  TP_IMPL(lib, "baddbmm", CUDA, baddbmm);
  TP_IMPL(lib, "baddbmm_", CUDA, baddbmm_);
  TP_IMPL(lib, "baddbmm.out", CUDA, baddbmm_out);
  TP_IMPL(lib, "addbmm", CUDA, addbmm);
  TP_IMPL(lib, "addbmm_", CUDA, addbmm_);
  TP_IMPL(lib, "addbmm.out", CUDA, addbmm_out);
  TP_IMPL(lib, "addmv", CUDA, addmv);
  TP_IMPL(lib, "addmv_", CUDA, addmv_);
  TP_IMPL(lib, "addmv.out", CUDA, addmv_out);
  TP_IMPL(lib, "mv", CUDA, mv);
  TP_IMPL(lib, "mv.out", CUDA, mv_out);
  TP_IMPL(lib, "dot", CUDA, dot);
  TP_IMPL(lib, "dot.out", CUDA, dot_out);
  TP_IMPL(lib, "vdot", CUDA, vdot);
  TP_IMPL(lib, "vdot.out", CUDA, vdot_out);
  TP_IMPL(lib, "matmul", CUDA, matmul);
  TP_IMPL(lib, "matmul.out", CUDA, matmul_out);
}

}  // namespace tp::p10::cuda
