// ops_unary_float.cpp — the CUDA kernels of the unary float family (ops/unary_float.h: exp, log, sin, sigmoid,
// logit, …): one templated kernel per form, instantiated by name for each op's functor and dtype.
//
// Where it sits: impl_unary_float<Cuda> registers the three forms of every row of the table for the CUDA key.
// A call asks the family's meta rule (Note [The family's meta rule]) on meta copies of its tensors — the
// called form for its checks, the functional form for the result's dtype and layout — casts the input to the
// result dtype T and launches tensorplay_p10/cuda_kernels/unary_float.cu's unary_contig<F, T> (16-byte packs)
// or unary_strided<F, T> (Note [Kernel geometry]); an out= of another dtype gets a cast copy.
//
// Note [Kernel names]
//   The kernels are found by name expression (Note [Template kernels] in launch.h): "unary_contig<Exp,
//   bfloat16>", spelled from the functor's `name` ("exp" -> Exp: a functor is its op's name with the first
//   letter upper-cased) and tensorplay's dtype name (common.cuh's typedefs). register_unary_float_kernels
//   lists every one the table can ask for, and test_cuda_nvrtc.py compiles them all.
#include <cctype>

#include "cuda/elementwise.h"
#include "ops/unary_float.h"

namespace tp::p10::cuda {

namespace {
constexpr const char *kModule = "unary_float.cu";
constexpr ScalarType kDtypes[] = {ScalarType::Float32, ScalarType::Float64, ScalarType::Float16,
                                  ScalarType::BFloat16};

// Note [Kernel names]: "unary_contig<Exp, float32>".
std::string kernel_name(const char *form, const char *op, ScalarType t) {
  std::string functor = op;
  functor[0] = char(std::toupper(static_cast<unsigned char>(functor[0])));
  return str_cat(form, "<", functor, ", ", scalar_type_name(t), ">");
}

struct Cuda {
  template <typename F, Complex C> static Tensor run(const UnaryCall &c, const Tensor &self, const F &f) {
    const Tensor ms = meta_like(self);
    if (c.inplace) unary_float_meta(UnaryCall{c.op, ms, true}, ms, C);
    else if (c.out.defined()) unary_float_meta(UnaryCall{c.op, meta_like(c.out), false}, ms, C);
    const Tensor m = unary_float_meta(UnaryCall{F::name, Tensor(), false}, ms, C);
    const Target t = begin({c.op, c.op, F::name, c.inplace ? self : c.out, c.inplace}, m, {self});
    const ScalarType ct = m.dtype();
    check_real(c.op, ct);
    if (t.out.numel() == 0) return t.out;
    DeviceGuard guard(t.dev);
    Tensor res = t.out.dtype() == ct ? t.out : empty_tensor(t.out.sizes(), ct, t.device);
    const Tensor x = self.dtype() == ct ? self : contiguous_as(self, ct);
    const Stream stream = stream_for(t.dev);
    const int64_t n = res.numel();
    if (res.is_contiguous() && x.is_contiguous() && x.sizes() == res.sizes()) {
      const int pack = int(16 / element_size(ct));  // Note [16-byte packs]
      launch(kernel(t.dev, kModule, kernel_name("unary_contig", F::name, ct)), elementwise_config(t.dev, n, pack),
             stream, n, res.data_ptr(), x.data_ptr(), f);
    } else {
      const KernelGeometry g = make_geometry(res.sizes(), {&res, &x}, c.op);
      launch(kernel(t.dev, kModule, kernel_name("unary_strided", F::name, ct)), elementwise_config(t.dev, n),
             stream, n, g, res.data_ptr(), x.data_ptr(), f);
    }
    if (res.impl() != t.out.impl()) device_copy(t.out, res);
    return t.out;
  }
};

// Every name expression the table can ask for, registered before the module's first compile.
const bool registered = [] {
  std::vector<std::string> names;
  for_each_unary_float([&]<typename F, Complex C, typename... X>(const UnaryFloatOp<F, C, X...> &) {
    for (ScalarType t : kDtypes)
      for (const char *form : {"unary_contig", "unary_strided"}) names.push_back(kernel_name(form, F::name, t));
  });
  register_kernel_names(kModule, names);
  return true;
}();
}  // namespace

TP_LIBRARY(cuda_unary_float) { impl_unary_float<Cuda>(lib, DispatchKey::CUDA, __LINE__); }

}  // namespace tp::p10::cuda
