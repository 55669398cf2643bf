// abi.h — TPX's C++ view of P10: the imported C ABI table, an owning tensor handle, errors, op calls.
//
// Where it sits: under everything in tensorplay_tpx._C. TPX never links P10's C++ (docs/design.md §2): every tensor is
// a `TP_Tensor*` reached through `api`, every op call goes through `api->op_call`. This header wraps the table in
// the few C++ conveniences the engine needs (RAII references, exceptions) and nothing more.
#pragma once
#include <tensorplay/tp_abi.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tp::tpx {

extern const TP_Api *api;  // set once at module init (module.cpp)

// A C++ exception carrying a TP_ErrorKind; the binding layer turns it into the matching Python exception and
// boxed kernels turn it into the ABI error channel (Note [ABI errors] in tp_abi.h).
struct Error : std::runtime_error {
  int kind;
  Error(int k, const std::string &msg) : std::runtime_error(msg), kind(k) {}
};
[[noreturn]] inline void fail(int kind, const std::string &msg) { throw Error(kind, msg); }
// Rethrow what P10 left in its error channel.
[[noreturn]] inline void throw_pending() {
  Error e(api->error_kind(), api->error_message());
  api->clear_error();
  throw e;
}

// An owning reference to a P10 tensor (Note [ABI ownership]): adopt() takes a NEW reference, borrow() adds one.
class TensorRef {
 public:
  TensorRef() = default;
  static TensorRef adopt(TP_Tensor *p) { TensorRef r; r.p_ = p; return r; }
  static TensorRef borrow(TP_Tensor *p) { if (p) api->tensor_incref(p); return adopt(p); }
  TensorRef(const TensorRef &o) : p_(o.p_) { if (p_) api->tensor_incref(p_); }
  TensorRef(TensorRef &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  TensorRef &operator=(TensorRef o) noexcept { std::swap(p_, o.p_); return *this; }
  ~TensorRef() { if (p_) api->tensor_decref(p_); }

  TP_Tensor *get() const { return p_; }
  TP_Tensor *release() { return std::exchange(p_, nullptr); }
  bool defined() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }

  std::vector<int64_t> sizes() const {
    const int64_t *s = api->tensor_sizes(p_);
    return std::vector<int64_t>(s, s + api->tensor_dim(p_));
  }
  int dtype() const { return api->tensor_dtype(p_); }
  int64_t version() const { return api->tensor_version(p_); }
  bool requires_grad() const { return api->tensor_requires_grad(p_) != 0; }

 private:
  TP_Tensor *p_ = nullptr;
};

// Floating and complex dtypes carry gradients; integers and bool never do (PyTorch's rule).
inline bool is_differentiable_dtype(int dtype) { return dtype >= TP_FLOAT16; }
inline bool is_complex_dtype(int dtype) { return dtype == TP_COMPLEX64 || dtype == TP_COMPLEX128; }

// ---- boxed values ----------------------------------------------------------------------------------------------
inline TP_Value tv(const TensorRef &t) { TP_Value v{}; v.tag = t ? TP_VALUE_TENSOR : TP_VALUE_NONE; v.v.tensor = t.get(); return v; }
inline TP_Value iv(int64_t i) { TP_Value v{}; v.tag = TP_VALUE_INT; v.v.i = i; return v; }
inline TP_Value dv(double d) { TP_Value v{}; v.tag = TP_VALUE_DOUBLE; v.v.d = d; return v; }
inline TP_Value bv(bool b) { TP_Value v{}; v.tag = TP_VALUE_BOOL; v.v.i = b; return v; }
inline TP_Value nonev() { TP_Value v{}; v.tag = TP_VALUE_NONE; return v; }
// Any contiguous int64 container (std::vector, SmallVector); the list is borrowed for the call.
template <typename Ints>
inline TP_Value ilv(const Ints &xs) {
  TP_Value v{}; v.tag = TP_VALUE_INT_LIST; v.v.ints.data = xs.data(); v.v.ints.len = int64_t(xs.size()); return v;
}

// Look an op up once; a missing op is a packaging bug (P10 older than TPX), reported by name.
const TP_Op *find_op(const char *qualified_name);

// Call `op` through the full dispatcher (so, with grad mode on, the call is itself recorded: that is how
// backward builds a graph under create_graph) and return its single tensor result.
TensorRef call1(const TP_Op *op, std::initializer_list<TP_Value> args);
// The same, below the Autograd key: the call is never recorded.
TensorRef call1_below_autograd(const TP_Op *op, std::initializer_list<TP_Value> args);

}  // namespace tp::tpx
