// tensor_iterator.h — the one loop helper behind every elementwise op (PyTorch's TensorIterator idea).
//
// Where it sits: kernels/unary.cpp, binary.cpp, compare.cpp, copy.cpp … build a TensorIterator from their
// operands, then hand it a scalar lambda:
//
//   TensorIterator it = TensorIterator::binary("add", out, a, b);
//   TP_DISPATCH_ALL(it.common_dtype(), "add", [&]<typename T>() {
//     cpu_kernel<T>(it, [](T x, T y) -> T { return x + y; });
//   });
//   return it.output();
//
// The iterator does, once, everything an elementwise op needs besides the arithmetic:
//   1. broadcasting the operands to one shape (NumPy rules, errors naming the op);
//   2. type promotion (Note [Result type]) and casting inputs to the computation dtype;
//   3. allocating the output, or checking a given one (in-place / out=) for shape and castability;
//   4. per-operand byte strides over the broadcast shape (stride 0 on broadcast dims), dims coalesced so a
//      contiguous tensor is one flat run;
//   5. splitting the flat range over threads (parallel.h) and calling a 1-D inner loop per run.
// Kernels never do stride arithmetic themselves (STYLE.md rule 3).
#pragma once
#include <array>
#include <limits>
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "loop/parallel.h"

namespace tp::p10 {

struct IterConfig {
  const char *op = "op";
  bool promote_inputs = true;           // compute in the common dtype of the inputs
  bool int_to_float = false;            // integer/bool common dtype becomes the default float (true_divide, exp)
  std::optional<ScalarType> out_dtype;  // fixed output dtype (Bool for comparisons); default = common dtype
  std::optional<ScalarType> compute_dtype;  // fixed computation dtype (overrides promotion)
  bool resize_out = true;               // out= of the wrong shape is resized (false: in-place, must match)
};

// Note [Result type]
//   PyTorch ranks operands in three tiers: tensors with dims, zero-dim tensors, and wrapped Python numbers. The
//   common dtype is that of the highest tier, unless a lower tier is of a higher *category* (bool < integer <
//   floating < complex), in which case the lower tier lifts the category: `int_tensor + 2.5` is float32 (the
//   default dtype), `float16_tensor + float64_zero_dim` stays float16, `uint8_tensor + 1000` stays uint8.
ScalarType result_type(const std::vector<Tensor> &operands);

class TensorIterator {
 public:
  static constexpr int kMaxOperands = 4;  // output + up to 3 inputs (where, addcmul, lerp)

  // `out` may be undefined (allocate) or a tensor to write into.
  TensorIterator(const IterConfig &cfg, Tensor out, std::vector<Tensor> inputs);
  static TensorIterator unary(const char *op, Tensor out, const Tensor &a, bool int_to_float = false);
  // `inplace`: out is self, so it keeps its shape (the inputs must broadcast to it).
  static TensorIterator binary(const char *op, Tensor out, const Tensor &a, const Tensor &b,
                               bool int_to_float = false, bool inplace = false);

  const Tensor &output() const { return operands_[0]; }
  const Tensor &input(int i) const { return operands_[i + 1]; }
  ScalarType common_dtype() const { return common_dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  bool is_meta() const { return is_meta_; }
  int ntensors() const { return ntensors_; }

  // Run `loop(char **data, const int64_t *byte_strides, int64_t n)` over every run of elements: data[k] points
  // at operand k's first element of the run, byte_strides[k] is its step. Runs are split across threads.
  template <typename Loop> void for_each(const Loop &loop) const;
  // The same walk on the calling thread only: for loops whose writes may collide (scatter with repeated
  // indices, index_put_ with accumulate), where splitting across threads would race.
  template <typename Loop> void for_each_serial(const Loop &loop) const;

  // After the loop: copy a temporary output back into the caller's out tensor (Note [Output casting]).
  Tensor finish();

 private:
  int ntensors_ = 0;
  std::array<Tensor, kMaxOperands> operands_;
  Tensor user_out_;  // set when the computation writes a temporary first
  ScalarType common_dtype_ = ScalarType::Float32;
  Shape shape_;                                  // coalesced iteration shape, innermost last
  std::vector<std::array<int64_t, kMaxOperands>> strides_;  // per dim, per operand, in bytes
  int64_t numel_ = 0;
  bool is_meta_ = false;
  const char *op_ = "";

  void compute_strides();
  void coalesce();
  template <typename Loop> void walk(const Loop &loop, int64_t grain) const;
};

template <typename Loop> void TensorIterator::walk(const Loop &loop, int64_t grain) const {
  if (numel_ == 0 || is_meta_) return;
  const int nd = int(shape_.size());
  const int nt = ntensors_;
  std::array<char *, kMaxOperands> base{};
  for (int k = 0; k < nt; ++k) base[k] = static_cast<char *>(operands_[k].data_ptr());
  if (nd == 0) {  // a single element
    std::array<int64_t, kMaxOperands> zero{};
    loop(base.data(), zero.data(), int64_t(1));
    return;
  }
  const int64_t inner = shape_[nd - 1];
  std::array<int64_t, kMaxOperands> inner_strides{};
  for (int k = 0; k < nt; ++k) inner_strides[k] = strides_[nd - 1][k];
  if (nd == 1) {  // the common case after coalescing: one flat run per thread, no index bookkeeping
    parallel_for(0, numel_, grain, [&](int64_t begin, int64_t end) {
      std::array<char *, kMaxOperands> ptr{};
      for (int k = 0; k < nt; ++k) ptr[k] = base[k] + begin * inner_strides[k];
      loop(ptr.data(), inner_strides.data(), end - begin);
    });
    return;
  }
  parallel_for(0, numel_, grain, [&](int64_t begin, int64_t end) {
    // Position of `begin` as a multi-index over the outer dims plus an offset into the innermost dim.
    std::vector<int64_t> idx(nd, 0);
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) { idx[d] = rem % shape_[d]; rem /= shape_[d]; }
    int64_t i = begin;
    std::array<char *, kMaxOperands> ptr{};
    while (i < end) {
      for (int k = 0; k < nt; ++k) {
        int64_t off = 0;
        for (int d = 0; d < nd; ++d) off += idx[d] * strides_[d][k];
        ptr[k] = base[k] + off;
      }
      int64_t n = std::min(inner - idx[nd - 1], end - i);
      loop(ptr.data(), inner_strides.data(), n);
      i += n;
      idx[nd - 1] += n;
      for (int d = nd - 1; d > 0 && idx[d] >= shape_[d]; --d) { idx[d] = 0; ++idx[d - 1]; }
    }
  });
}

template <typename Loop> void TensorIterator::for_each(const Loop &loop) const { walk(loop, kGrainSize); }
template <typename Loop> void TensorIterator::for_each_serial(const Loop &loop) const {
  walk(loop, std::numeric_limits<int64_t>::max());
}

// ---- the scalar-lambda front end ----------------------------------------------------------------------------
// cpu_kernel<T>(it, f): f takes N values of type T (the computation dtype) and returns the output's type.
// The contiguous case is a plain indexed loop the compiler can vectorise; other strides use byte offsets.
template <typename T, typename F> void cpu_kernel(const TensorIterator &it, const F &f) {
  using Out = decltype(f(std::declval<T>()));
  it.for_each([&](char **data, const int64_t *s, int64_t n) {
    Out *o = reinterpret_cast<Out *>(data[0]);
    const char *a = data[1];
    if (s[0] == sizeof(Out) && s[1] == sizeof(T)) {
      const T *pa = reinterpret_cast<const T *>(a);
      for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out *>(data[0] + i * s[0]) = f(*reinterpret_cast<const T *>(a + i * s[1]));
    }
  });
}

template <typename T, typename F> void cpu_kernel2(const TensorIterator &it, const F &f) {
  using Out = decltype(f(std::declval<T>(), std::declval<T>()));
  it.for_each([&](char **data, const int64_t *s, int64_t n) {
    Out *o = reinterpret_cast<Out *>(data[0]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(T) && s[2] == sizeof(T)) {
      const T *pa = reinterpret_cast<const T *>(data[1]);
      const T *pb = reinterpret_cast<const T *>(data[2]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], pb[i]);
    } else if (s[0] == sizeof(Out) && s[1] == sizeof(T) && s[2] == 0) {  // tensor op scalar
      const T *pa = reinterpret_cast<const T *>(data[1]);
      const T b = *reinterpret_cast<const T *>(data[2]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], b);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out *>(data[0] + i * s[0]) =
            f(*reinterpret_cast<const T *>(data[1] + i * s[1]), *reinterpret_cast<const T *>(data[2] + i * s[2]));
    }
  });
}

template <typename T, typename F> void cpu_kernel3(const TensorIterator &it, const F &f) {
  using Out = decltype(f(std::declval<T>(), std::declval<T>(), std::declval<T>()));
  it.for_each([&](char **data, const int64_t *s, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<Out *>(data[0] + i * s[0]) =
          f(*reinterpret_cast<const T *>(data[1] + i * s[1]), *reinterpret_cast<const T *>(data[2] + i * s[2]),
            *reinterpret_cast<const T *>(data[3] + i * s[3]));
  });
}

// Cast a whole tensor to another dtype (a new contiguous tensor); defined in kernels/copy.cpp.
Tensor cast_to(const Tensor &t, ScalarType dtype);

}  // namespace tp::p10
