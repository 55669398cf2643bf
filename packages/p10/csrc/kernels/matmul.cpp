// matmul.cpp — products of matrices and vectors: mm, bmm, mv, dot, vdot, addmm, addmv, addbmm, baddbmm,
// matmul, inner, outer, tensordot, kron, cross (einsum is in einsum.cpp), with PyTorch's in-place and out= forms.
//
// Where it sits: every matrix product here ends in gemm_batched (blas.h), which runs OpenBLAS or the blocked
// reference kernel on strided 3-D views; this file holds the shape rules, dtype checks and error messages.
// Products take no type promotion (PyTorch's rule: `mm` of float32 and float64 is an error); outer and kron
// are elementwise products and promote like `mul`. One kernel serves CPU and Meta: on meta the shape
// checks run and gemm_batched does nothing.
#include <algorithm>

#include "dispatch/kernel_box.h"
#include "kernels/blas.h"
#include "kernels/cast.h"

namespace tp::p10 {

namespace {

// PyTorch's `AxB` shape spelling in mm's error message.
std::string dims_str(const Tensor &t) {
  std::string s;
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "x" : "") + std::to_string(t.size(i));
  return s;
}

Tensor view_as(const Tensor &t, Shape sizes, Shape strides) {
  return make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
}
Tensor as3d(const Tensor &t) {  // a matrix as a batch of one
  return view_as(t, {1, t.size(0), t.size(1)}, {0, t.stride(0), t.stride(1)});
}
Tensor unsqueeze(const Tensor &t, int64_t d) { return call_op<Tensor>(TP_OP("unsqueeze"), t, d); }
Tensor reshape(const Tensor &t, const Shape &s) { return call_op<Tensor>(TP_OP("reshape"), t, s); }
Tensor permute(const Tensor &t, const Shape &p) { return call_op<Tensor>(TP_OP("permute"), t, p); }
Tensor expand(const Tensor &t, const Shape &s) { return call_op<Tensor>(TP_OP("expand"), t, s); }
Tensor mul(const Tensor &a, const Tensor &b) { return call_op<Tensor>(TP_OP("mul"), a, b); }
void copy_into(const Tensor &dst, const Tensor &src) { call_op<Tensor>(TP_OP("copy_"), dst, src, false); }
bool is_zero(const Scalar &s) { return s.to_complex() == std::complex<double>(0); }

// The result tensor of an op: a new one, or `out` checked (dtype) and resized (PyTorch's out= rules).
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

// PyTorch's wording where a kernel expects every input in the first one's dtype (bmm, cross, einsum).
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

// r (rows x cols, already holding `self` when beta != 0) = beta * r + alpha * m1 @ m2, for 2-D operands.
void addmm_into(const char *op, const Tensor &r, const Tensor &m1, const Tensor &m2, const Scalar &beta,
                const Scalar &alpha) {
  gemm_batched(op, as3d(m1), as3d(m2), as3d(r), alpha, beta);
}

// addmm/addmv/baddbmm/addbmm share this: result = beta * self + alpha * (product), self broadcast to `shape`.
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
  if (!is_zero(beta) && !r.device().is_meta()) copy_into(r, self);
  return r;
}

}  // namespace

// ---- mm, bmm, addmm, baddbmm, addbmm ------------------------------------------------------------------------
static Tensor mm_impl(const char *op, const Tensor &self, const Tensor &mat2, const Tensor &out) {
  check_mm_shapes(self, mat2);
  Tensor r = result_tensor(op, out, {self.size(0), mat2.size(1)}, self.dtype(), self.device());
  addmm_into(op, r, self, mat2, Scalar(0), Scalar(1));
  return r;
}
static Tensor mm(const Tensor &self, const Tensor &mat2) { return mm_impl("mm", self, mat2, Tensor()); }
static Tensor mm_out(const Tensor &self, const Tensor &mat2, const Tensor &out) { return mm_impl("mm.out", self, mat2, out); }

static Tensor bmm_impl(const char *op, const Tensor &self, const Tensor &mat2, const Tensor &out) {
  check_bmm_shapes(self, mat2);
  Tensor r = result_tensor(op, out, {self.size(0), self.size(1), mat2.size(2)}, self.dtype(), self.device());
  gemm_batched(op, self, mat2, r, Scalar(1), Scalar(0));
  return r;
}
static Tensor bmm(const Tensor &self, const Tensor &mat2) { return bmm_impl("bmm", self, mat2, Tensor()); }
static Tensor bmm_out(const Tensor &self, const Tensor &mat2, const Tensor &out) { return bmm_impl("bmm.out", self, mat2, out); }

static Tensor addmm_impl(const char *op, const Tensor &self, const Tensor &m1, const Tensor &m2, const Scalar &beta,
                         const Scalar &alpha, const Tensor &out, bool inplace) {
  check_mm_shapes(m1, m2);
  Tensor r = prepare_add_result(op, self, {m1.size(0), m2.size(1)}, m1.dtype(), out, inplace, beta);
  addmm_into(op, r, m1, m2, beta, alpha);
  return r;
}

static Tensor baddbmm_impl(const char *op, const Tensor &self, const Tensor &b1, const Tensor &b2, const Scalar &beta,
                           const Scalar &alpha, const Tensor &out, bool inplace) {
  check_bmm_shapes(b1, b2);
  Tensor r = prepare_add_result(op, self, {b1.size(0), b1.size(1), b2.size(2)}, b1.dtype(), out, inplace, beta);
  gemm_batched(op, b1, b2, r, alpha, beta);
  return r;
}

// addbmm sums the batch of products: sum_b B1[b] @ B2[b] is one GEMM of B1's matrices side by side (m x bk)
// with B2's stacked (bk x n).
static Tensor addbmm_impl(const char *op, const Tensor &self, const Tensor &b1, const Tensor &b2, const Scalar &beta,
                          const Scalar &alpha, const Tensor &out, bool inplace) {
  check_bmm_shapes(b1, b2);
  const int64_t bs = b1.size(0), m = b1.size(1), k = b1.size(2), n = b2.size(2);
  Tensor r = prepare_add_result(op, self, {m, n}, b1.dtype(), out, inplace, beta);
  Tensor wide = reshape(permute(b1, {1, 0, 2}), {m, bs * k});
  Tensor tall = reshape(b2, {bs * k, n});
  addmm_into(op, r, wide, tall, beta, alpha);
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

// ---- mv, addmv, dot, vdot ----------------------------------------------------------------------------------
static void check_mv_shapes(const Tensor &mat, const Tensor &vec) {
  TP_CHECK(mat.dim() == 2 && vec.dim() == 1, Runtime, "vector + matrix @ vector expected, got ", mat.dim(), ", ",
           vec.dim());
  TP_CHECK(mat.size(1) == vec.size(0), Runtime, "size mismatch, got input (", mat.size(0), "), mat (", dims_str(mat),
           "), vec (", vec.size(0), ")");
  check_same_dtype("mat and vec", mat, vec);
}

static Tensor as_column(const Tensor &v) { return view_as(v, {v.size(0), 1}, {v.stride(0), 1}); }

static Tensor addmv_impl(const char *op, const Tensor &self, const Tensor &mat, const Tensor &vec, const Scalar &beta,
                         const Scalar &alpha, const Tensor &out, bool inplace) {
  check_mv_shapes(mat, vec);
  Tensor r = prepare_add_result(op, self, {mat.size(0)}, mat.dtype(), out, inplace, beta);
  addmm_into(op, as_column(r), mat, as_column(vec), beta, alpha);
  return r;
}
TP_ADD_VARIANTS(addmv)

static Tensor mv_impl(const char *op, const Tensor &self, const Tensor &vec, const Tensor &out) {
  check_mv_shapes(self, vec);
  Tensor r = result_tensor(op, out, {self.size(0)}, self.dtype(), self.device());
  addmm_into(op, as_column(r), self, as_column(vec), Scalar(0), Scalar(1));
  return r;
}
static Tensor mv(const Tensor &self, const Tensor &vec) { return mv_impl("mv", self, vec, Tensor()); }
static Tensor mv_out(const Tensor &self, const Tensor &vec, const Tensor &out) { return mv_impl("mv.out", self, vec, out); }

// dot and vdot: a 1 x n by n x 1 product; vdot conjugates the first vector (same as dot for real dtypes).
static Tensor dot_impl(const char *op, const Tensor &self, const Tensor &other, const Tensor &out, bool conj) {
  TP_CHECK(self.dim() == 1 && other.dim() == 1, Runtime, "1D tensors expected, but got ", self.dim(), "D and ",
           other.dim(), "D tensors");
  TP_CHECK(self.size(0) == other.size(0), Runtime, "inconsistent tensor size, expected tensor [", self.size(0),
           "] and src [", other.size(0), "] to have the same number of elements, but got ", self.size(0), " and ",
           other.size(0), " elements respectively");
  TP_CHECK(self.dtype() == other.dtype(), Runtime, op, " : expected both vectors to have same dtype, but found ",
           scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  Tensor r = result_tensor(op, out, {}, self.dtype(), self.device());
  Tensor a = self;
  if (conj && is_complex(self.dtype()) && !self.device().is_meta()) {
    a = call_op<Tensor>(TP_OP("contiguous"), self);
    if (a.impl() == self.impl()) a = call_op<Tensor>(TP_OP("clone"), self);
    TP_DISPATCH_ALL(a.dtype(), op, [&]<typename T>() {
      if constexpr (is_complex_dtype<T>) {
        T *p = a.data<T>();
        for (int64_t i = 0; i < a.numel(); ++i) p[i] = std::conj(p[i]);
      }
    });
  }
  gemm_batched(op, view_as(a, {1, 1, a.size(0)}, {0, 0, a.stride(0)}),
               view_as(other, {1, other.size(0), 1}, {0, other.stride(0), 1}), view_as(r, {1, 1, 1}, {0, 0, 0}),
               Scalar(1), Scalar(0));
  return r;
}
static Tensor dot(const Tensor &self, const Tensor &t) { return dot_impl("dot", self, t, Tensor(), false); }
static Tensor dot_out(const Tensor &self, const Tensor &t, const Tensor &out) { return dot_impl("dot.out", self, t, out, false); }
static Tensor vdot(const Tensor &self, const Tensor &t) { return dot_impl("vdot", self, t, Tensor(), true); }
static Tensor vdot_out(const Tensor &self, const Tensor &t, const Tensor &out) { return dot_impl("vdot.out", self, t, out, true); }

// ---- matmul ------------------------------------------------------------------------------------------------
// Note [matmul rank rules] (PyTorch's): 1-D @ 1-D is dot; 2-D @ 1-D is mv; 1-D @ 2-D prepends a 1 to the vector
// and removes it again; 2-D @ 2-D is mm. With a batch (>= 3-D) on the left and a matrix or vector on the right,
// the batch folds into the rows of one mm (no copies when the left side is contiguous). Otherwise the leading
// dims broadcast and the product is one bmm over the flattened batch; a 1-D operand gets a dim for the product
// (prepended on the left, appended on the right) that is removed from the result.
static Tensor matmul_impl(const Tensor &a, const Tensor &b) {
  const int64_t da = a.dim(), db = b.dim();
  TP_CHECK(da > 0 && db > 0, Runtime, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ",
           db, "D");
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) return reshape(mm(unsqueeze(a, 0), b), {b.size(1)});
  if (da == 2 && db == 2) return mm(a, b);
  if (da >= 3 && db <= 2) {
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
  Tensor r = bmm(reshape(expand(a3, ea), {nb, m, k}), reshape(expand(b3, eb), {nb, k2, n}));
  Shape shape = batch;
  if (da > 1) shape.push_back(m);
  if (db > 1) shape.push_back(n);
  return reshape(r, shape);
}

// The out= form of an op computed through others: compute, then copy into the checked and resized `out`.
static Tensor copy_to_out(const char *op, const Tensor &r, const Tensor &out) {
  Tensor o = result_tensor(op, out, r.sizes(), r.dtype(), r.device());
  if (!o.device().is_meta()) copy_into(o, r);
  return o;
}

static Tensor matmul(const Tensor &a, const Tensor &b) { return matmul_impl(a, b); }
static Tensor matmul_out(const Tensor &a, const Tensor &b, const Tensor &out) {
  return copy_to_out("matmul.out", matmul_impl(a, b), out);
}

// ---- tensordot, inner, outer -------------------------------------------------------------------------------
// tensordot contracts dims_self of self with dims_other of other: permute each side to (free, contracted) and
// (contracted, free), flatten both to matrices, one mm, and unflatten the free dims.
static Tensor tensordot(const Tensor &a, const Tensor &b, std::vector<int64_t> dims_a, std::vector<int64_t> dims_b) {
  TP_CHECK(dims_a.size() == dims_b.size(), Runtime, "both dimensions lists should have same length");
  std::vector<bool> used_a(a.dim()), used_b(b.dim());
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t x = wrap_dim(dims_a[i], a.dim(), "tensordot"), y = wrap_dim(dims_b[i], b.dim(), "tensordot");
    TP_CHECK(!used_a[x] && !used_b[y], Runtime, "tensordot: a dim appears more than once in the lists of dims");
    TP_CHECK(a.size(x) == b.size(y), Runtime, "contracted dimensions need to match, but first has size ", a.size(x),
             " in dim ", x, " and second has size ", b.size(y), " in dim ", y);
    used_a[x] = used_b[y] = true;
    dims_a[i] = x;
    dims_b[i] = y;
    k *= a.size(x);
  }
  Shape perm_a, perm_b, shape;
  int64_t m = 1, n = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!used_a[d]) { perm_a.push_back(d); shape.push_back(a.size(d)); m *= a.size(d); }
  perm_a.insert(perm_a.end(), dims_a.begin(), dims_a.end());
  perm_b = dims_b;
  for (int64_t d = 0; d < b.dim(); ++d)
    if (!used_b[d]) { perm_b.push_back(d); shape.push_back(b.size(d)); n *= b.size(d); }
  Tensor r = call_op<Tensor>(TP_OP("mm"), reshape(permute(a, perm_a), {m, k}), reshape(permute(b, perm_b), {k, n}));
  return reshape(r, shape);
}
static Tensor tensordot_out(const Tensor &a, const Tensor &b, std::vector<int64_t> da, std::vector<int64_t> db,
                            const Tensor &out) {
  return copy_to_out("tensordot.out", tensordot(a, b, std::move(da), std::move(db)), out);
}

static Tensor inner(const Tensor &a, const Tensor &b) {
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b);
  TP_CHECK(a.size(-1) == b.size(-1), Runtime, "inner() the last dimension must match on both input tensors but got "
           "shapes ", shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  return tensordot(a, b, {-1}, {-1});
}
static Tensor inner_out(const Tensor &a, const Tensor &b, const Tensor &out) {
  return copy_to_out("inner.out", inner(a, b), out);
}

// outer and kron are elementwise products of reshaped views, so they promote dtypes like mul (as in PyTorch);
// cross, like PyTorch's, wants one dtype.
static Tensor outer(const Tensor &a, const Tensor &b) {
  TP_CHECK(a.dim() == 1, Runtime, "outer: Expected 1-D argument self, but got ", a.dim(), "-D");
  TP_CHECK(b.dim() == 1, Runtime, "outer: Expected 1-D argument vec2, but got ", b.dim(), "-D");
  return mul(unsqueeze(a, 1), b);
}
static Tensor outer_out(const Tensor &a, const Tensor &b, const Tensor &out) {
  return copy_to_out("outer.out", outer(a, b), out);
}

// kron: with both padded to the same rank, view a as [a0, 1, a1, 1, ...] and b as [1, b0, 1, b1, ...]; their
// broadcast product [a0, b0, a1, b1, ...] flattened in pairs is the Kronecker product.
static Tensor kron(const Tensor &a, const Tensor &b) {
  const int64_t nd = std::max(a.dim(), b.dim());
  Shape sa, sb, shape;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t x = i < nd - a.dim() ? 1 : a.size(i - (nd - a.dim()));
    int64_t y = i < nd - b.dim() ? 1 : b.size(i - (nd - b.dim()));
    sa.insert(sa.end(), {x, 1});
    sb.insert(sb.end(), {1, y});
    shape.push_back(x * y);
  }
  return reshape(mul(reshape(a, sa), reshape(b, sb)), shape);
}
static Tensor kron_out(const Tensor &a, const Tensor &b, const Tensor &out) {
  return copy_to_out("kron.out", kron(a, b), out);
}

// cross along `dim` (default: the first dim of size 3 of the broadcast shape, PyTorch's deprecated default).
static Tensor cross(const Tensor &a, const Tensor &b, std::optional<int64_t> dim) {
  check_scalar_type(b, a.dtype());
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), "linalg.cross");
  int64_t d = -1;
  if (dim) {
    d = wrap_dim(*dim, int64_t(shape.size()), "linalg.cross");
  } else {
    for (size_t i = 0; i < shape.size() && d < 0; ++i)
      if (shape[i] == 3) d = int64_t(i);
    TP_CHECK(d >= 0, Runtime, "no dimension of size 3 in input");
  }
  auto size_at = [&](const Tensor &t) { return d - (int64_t(shape.size()) - t.dim()) >= 0 ? t.size(d - (int64_t(shape.size()) - t.dim())) : 1; };
  TP_CHECK(shape[d] == 3, Runtime, "linalg.cross: inputs dimension ", d, " must have length 3. Got ", size_at(a),
           " and ", size_at(b));
  Tensor ea = expand(a, shape), eb = expand(b, shape);
  auto part = [&](const Tensor &t, int64_t i) { return call_op<Tensor>(TP_OP("select"), t, d, i); };
  Tensor r;
  for (int64_t i = 0; i < 3; ++i) {
    int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    Tensor ci = call_op<Tensor>(TP_OP("sub"), mul(part(ea, j), part(eb, k)), mul(part(ea, k), part(eb, j)), Scalar(1));
    if (i == 0) r = empty_tensor(shape, ci.dtype(), ci.device());
    if (!r.device().is_meta()) copy_into(part(r, i), ci);
  }
  return r;
}
static Tensor cross_out(const Tensor &a, const Tensor &b, std::optional<int64_t> dim, const Tensor &out) {
  return copy_to_out("cross.out", cross(a, b, dim), out);
}

// Private: switch the BLAS path off and on (tests compare it with the reference kernel); returns the old setting.
static bool set_gemm_blas(bool enabled) {
  bool old = gemm_use_blas();
  set_gemm_use_blas(enabled);
  return old;
}

TP_LIBRARY(matmul) {
  lib.def("mm(Tensor self, Tensor mat2) -> Tensor");
  lib.def("mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("bmm(Tensor self, Tensor mat2) -> Tensor");
  lib.def("bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("mv(Tensor self, Tensor vec) -> Tensor");
  lib.def("mv.out(Tensor self, Tensor vec, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("dot(Tensor self, Tensor tensor) -> Tensor");
  lib.def("dot.out(Tensor self, Tensor tensor, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("vdot(Tensor self, Tensor other) -> Tensor");
  lib.def("vdot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  for (const char *name : {"addmm", "baddbmm", "addbmm", "addmv"}) {
    std::string n(name), args = n == "addmm" ? "Tensor mat1, Tensor mat2" : n == "addmv" ? "Tensor mat, Tensor vec"
                                                                                        : "Tensor batch1, Tensor batch2";
    lib.def(n + "(Tensor self, " + args + ", *, Scalar beta=1, Scalar alpha=1) -> Tensor");
    lib.def(n + "_(Tensor(a!) self, " + args + ", *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)");
    lib.def(n + ".out(Tensor self, " + args + ", *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  }
  lib.def("matmul(Tensor self, Tensor other) -> Tensor");
  lib.def("matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor");
  lib.def("tensordot.out(Tensor self, Tensor other, int[] dims_self, int[] dims_other, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("inner(Tensor self, Tensor other) -> Tensor");
  lib.def("inner.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("outer(Tensor self, Tensor vec2) -> Tensor");
  lib.def("outer.out(Tensor self, Tensor vec2, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("kron(Tensor self, Tensor other) -> Tensor");
  lib.def("kron.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("cross(Tensor self, Tensor other, int? dim=None) -> Tensor");
  lib.def("cross.out(Tensor self, Tensor other, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("_set_gemm_blas(bool enabled) -> bool");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    impl_typed<mm>(lib, "mm", key, __LINE__);
    impl_typed<mm_out>(lib, "mm.out", key, __LINE__);
    impl_typed<bmm>(lib, "bmm", key, __LINE__);
    impl_typed<bmm_out>(lib, "bmm.out", key, __LINE__);
    impl_typed<mv>(lib, "mv", key, __LINE__);
    impl_typed<mv_out>(lib, "mv.out", key, __LINE__);
    impl_typed<dot>(lib, "dot", key, __LINE__);
    impl_typed<dot_out>(lib, "dot.out", key, __LINE__);
    impl_typed<vdot>(lib, "vdot", key, __LINE__);
    impl_typed<vdot_out>(lib, "vdot.out", key, __LINE__);
    impl_typed<addmm>(lib, "addmm", key, __LINE__);
    impl_typed<addmm_>(lib, "addmm_", key, __LINE__);
    impl_typed<addmm_out>(lib, "addmm.out", key, __LINE__);
    impl_typed<baddbmm>(lib, "baddbmm", key, __LINE__);
    impl_typed<baddbmm_>(lib, "baddbmm_", key, __LINE__);
    impl_typed<baddbmm_out>(lib, "baddbmm.out", key, __LINE__);
    impl_typed<addbmm>(lib, "addbmm", key, __LINE__);
    impl_typed<addbmm_>(lib, "addbmm_", key, __LINE__);
    impl_typed<addbmm_out>(lib, "addbmm.out", key, __LINE__);
    impl_typed<addmv>(lib, "addmv", key, __LINE__);
    impl_typed<addmv_>(lib, "addmv_", key, __LINE__);
    impl_typed<addmv_out>(lib, "addmv.out", key, __LINE__);
    impl_typed<matmul>(lib, "matmul", key, __LINE__);
    impl_typed<matmul_out>(lib, "matmul.out", key, __LINE__);
    impl_typed<set_gemm_blas>(lib, "_set_gemm_blas", key, __LINE__);
  }
  // Compositions whose every step is a dispatched op: the same code serves CUDA tensors (cuda/ops_matmul.cpp
  // has the products they call).
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta, DispatchKey::CUDA}) {
    impl_typed<tensordot>(lib, "tensordot", key, __LINE__);
    impl_typed<tensordot_out>(lib, "tensordot.out", key, __LINE__);
    impl_typed<inner>(lib, "inner", key, __LINE__);
    impl_typed<inner_out>(lib, "inner.out", key, __LINE__);
    impl_typed<outer>(lib, "outer", key, __LINE__);
    impl_typed<outer_out>(lib, "outer.out", key, __LINE__);
    impl_typed<kron>(lib, "kron", key, __LINE__);
    impl_typed<kron_out>(lib, "kron.out", key, __LINE__);
    impl_typed<cross>(lib, "cross", key, __LINE__);
    impl_typed<cross_out>(lib, "cross.out", key, __LINE__);
  }
}

}  // namespace tp::p10
