// elementwise.h — the host side of the elementwise kernel families with one, two or three inputs
// (cuda_kernels/elementwise.cuh): ask the CPU op on meta tensors, then launch one kernel form.
//
// Where it sits: used by ops_unary_float.cpp, ops_activation.cpp, ops_binary_special.cpp, ops_logical.cpp and
// ops_ternary.cpp. An op function there (1) calls meta_result() with its arguments, which runs the called form
// of the CPU op (in-place / out= checks) and returns the functional form's result on meta (dtype, shape,
// layout); (2) gets its output with begin(); (3) calls run() with the kernel family, the compute dtype and the
// numbers p0..p2. The CPU op stays the single source of the rules; these files only compute.
#pragma once
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"

namespace tp::p10::cuda {

// How an op was called: `op` names it in messages ("atan2_"), `schema` is the overload called ("atan2_",
// "lerp_.Scalar"), `functional` the overload giving the result ("atan2", "lerp.Scalar"). `out` is the tensor to
// write (self when `inplace`; undefined: a new one).
struct Form {
  const char *op;
  const char *schema;
  const char *functional;
  Tensor out;
  bool inplace;
};

template <typename X> X to_meta(const X &x) {
  if constexpr (std::is_same_v<X, Tensor> || std::is_same_v<X, std::optional<Tensor>>) return meta_like(x);
  else return x;
}

// The CPU op's answer on meta copies of the arguments: the called form runs its checks, the functional form
// returns the result (Note in cuda/ops_meta.h).
template <typename... Args> Tensor meta_result(const Form &f, const Args &...args) {
  if (f.inplace) call_op<Tensor>(require_op(f.schema), to_meta(args)...);
  else if (f.out.defined()) call_op<Tensor>(require_op(f.schema), to_meta(args)..., meta_like(f.out));
  return call_op<Tensor>(require_op(f.functional), to_meta(args)...);
}

// The device of the op's tensors (CPU 0-d numbers allowed) and the tensor it writes, laid out as `meta`.
struct Target {
  int dev;
  Device device;
  Tensor out;
};
Target begin(const Form &f, const Tensor &meta, const std::vector<Tensor> &inputs);

// One kernel launch of `module`'s family `fn` over `inputs` (1 to 3; a two-input op may have one CPU number)
// into `out`. The kernel computes in `ct` (inputs are cast to it) and stores `rt` (ct or bool); an out of
// another dtype gets a cast copy. p: the op's numbers, as the kernels' p0..p2.
struct Kernel {
  const char *module;
  std::string fn;
  ScalarType ct;
  ScalarType rt;
  std::array<double, 3> p{0.0, 0.0, 0.0};
};
void run(const char *op, const Kernel &k, const Target &t, const std::vector<Tensor> &inputs);

// out = x, cast (the family is the identity for this dtype: floor of an integer, sgn of bool).
void copy_into(const Target &t, const Tensor &x);
// Every element of out = v (isnan of an integer tensor).
void fill_into(const Target &t, const Scalar &v);

// RuntimeError "ZeroDivisionError: integer division or modulo by zero in <op>" when any element of the integer
// tensor (or CPU number) `divisor` is zero: one device pass, one int read back (as the CPU op scans first).
void check_no_zero_divisor(const char *op, const Tensor &divisor, ScalarType ct);

// True when every element of the bool CUDA tensor `b` is true: one device pass, one int read back.
bool all_true(const Tensor &b);

}  // namespace tp::p10::cuda
