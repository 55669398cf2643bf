// scalar_type.h — dtypes: the ScalarType enum, element sizes, names, and PyTorch's promotion rules.
//
// Where it sits: every layer names element types through ScalarType; the codes equal TP_DType in the C ABI
// and the order of the `tensorplay.<dtype>` objects. Kernels turn a runtime ScalarType into a C++ type with
// the TP_DISPATCH_* macros below (one switch, one lambda body per dtype).
#pragma once
#include <complex>
#include <cstdint>
#include <string>

#include "half.h"

namespace tp::p10 {

enum class ScalarType : int8_t {
  Bool = 0, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, Complex64, Complex128,
  NumTypes
};
constexpr int kNumScalarTypes = int(ScalarType::NumTypes);

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

int64_t element_size(ScalarType t);
const char *scalar_type_name(ScalarType t);  // "float32", the suffix of `tensorplay.float32`

inline bool is_floating(ScalarType t) { return t >= ScalarType::Float16 && t <= ScalarType::Float64; }
inline bool is_complex(ScalarType t) { return t == ScalarType::Complex64 || t == ScalarType::Complex128; }
inline bool is_integral(ScalarType t, bool include_bool) {
  return (t >= ScalarType::UInt8 && t <= ScalarType::Int64) || (include_bool && t == ScalarType::Bool);
}
inline bool is_signed(ScalarType t) { return t != ScalarType::Bool && t != ScalarType::UInt8; }

// PyTorch's promotion lattice for two dtypes (torch.promote_types).
ScalarType promote_types(ScalarType a, ScalarType b);
// torch.can_cast: may `from` be cast to `to` without moving to a lower category (bool < int < float < complex)?
bool can_cast(ScalarType from, ScalarType to);
// complex64 -> float32, complex128 -> float64; others unchanged.
ScalarType to_real(ScalarType t);
// float32 -> complex64, float64 -> complex128, float16 -> complex64 (no complex32 here).
ScalarType to_complex(ScalarType t);

// The process-wide default floating dtype (tp.get_default_dtype / tp.set_default_dtype).
ScalarType default_dtype();
void set_default_dtype(ScalarType t);

// C++ type <-> ScalarType.
template <typename T> struct ScalarTypeOf;
#define TP_SCALAR_TYPE_OF(cpp, st) \
  template <> struct ScalarTypeOf<cpp> { static constexpr ScalarType value = ScalarType::st; };
TP_SCALAR_TYPE_OF(bool, Bool)
TP_SCALAR_TYPE_OF(uint8_t, UInt8)
TP_SCALAR_TYPE_OF(int8_t, Int8)
TP_SCALAR_TYPE_OF(int16_t, Int16)
TP_SCALAR_TYPE_OF(int32_t, Int32)
TP_SCALAR_TYPE_OF(int64_t, Int64)
TP_SCALAR_TYPE_OF(Half, Float16)
TP_SCALAR_TYPE_OF(BFloat16, BFloat16)
TP_SCALAR_TYPE_OF(float, Float32)
TP_SCALAR_TYPE_OF(double, Float64)
TP_SCALAR_TYPE_OF(complex64, Complex64)
TP_SCALAR_TYPE_OF(complex128, Complex128)
#undef TP_SCALAR_TYPE_OF

// The type arithmetic happens in: float32 for the 16-bit floats, the type itself otherwise.
template <typename T> struct OpMathType { using type = T; };
template <> struct OpMathType<Half> { using type = float; };
template <> struct OpMathType<BFloat16> { using type = float; };
template <typename T> using opmath_t = typename OpMathType<T>::type;

[[noreturn]] void throw_unsupported_dtype(const char *op, ScalarType t);

// Note [dtype dispatch]
//   TP_DISPATCH_ALL(dtype, "op", [&]<typename scalar_t>() { ... }) runs the lambda with scalar_t bound to the
//   C++ type of `dtype`. The _FLOATING / _REAL variants accept fewer dtypes; the rest raise NotImplementedError
//   naming the op (Note [Unsupported dtype errors]). Each variant instantiates the lambda once per accepted dtype, so keep bodies small
//   (they are the inner loops) and keep shape logic outside.
#define TP_DISPATCH_CASE(st, cpp, ...) \
  case ::tp::p10::ScalarType::st: return __VA_ARGS__.template operator()<cpp>();

#define TP_DISPATCH_FLOATING(dtype, name, ...)                                             \
  [&] {                                                                                    \
    switch (dtype) {                                                                       \
      TP_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                        \
      TP_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                       \
      TP_DISPATCH_CASE(Float16, ::tp::p10::Half, __VA_ARGS__)                              \
      TP_DISPATCH_CASE(BFloat16, ::tp::p10::BFloat16, __VA_ARGS__)                         \
      default: ::tp::p10::throw_unsupported_dtype(name, dtype);                            \
    }                                                                                      \
  }()

#define TP_DISPATCH_INTEGRAL_CASES(...)                                                    \
  TP_DISPATCH_CASE(UInt8, uint8_t, __VA_ARGS__)                                            \
  TP_DISPATCH_CASE(Int8, int8_t, __VA_ARGS__)                                              \
  TP_DISPATCH_CASE(Int16, int16_t, __VA_ARGS__)                                            \
  TP_DISPATCH_CASE(Int32, int32_t, __VA_ARGS__)                                            \
  TP_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)

// Real numbers: every dtype but bool and complex.
#define TP_DISPATCH_REAL(dtype, name, ...)                                                 \
  [&] {                                                                                    \
    switch (dtype) {                                                                       \
      TP_DISPATCH_INTEGRAL_CASES(__VA_ARGS__)                                              \
      TP_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                        \
      TP_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                       \
      TP_DISPATCH_CASE(Float16, ::tp::p10::Half, __VA_ARGS__)                              \
      TP_DISPATCH_CASE(BFloat16, ::tp::p10::BFloat16, __VA_ARGS__)                         \
      default: ::tp::p10::throw_unsupported_dtype(name, dtype);                            \
    }                                                                                      \
  }()

// Float and complex dtypes: the dtypes the transcendental functions accept.
#define TP_DISPATCH_FLOATING_AND_COMPLEX(dtype, name, ...)                                \
  [&] {                                                                                    \
    switch (dtype) {                                                                       \
      TP_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                        \
      TP_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                       \
      TP_DISPATCH_CASE(Float16, ::tp::p10::Half, __VA_ARGS__)                              \
      TP_DISPATCH_CASE(BFloat16, ::tp::p10::BFloat16, __VA_ARGS__)                         \
      TP_DISPATCH_CASE(Complex64, ::tp::p10::complex64, __VA_ARGS__)                       \
      TP_DISPATCH_CASE(Complex128, ::tp::p10::complex128, __VA_ARGS__)                     \
      default: ::tp::p10::throw_unsupported_dtype(name, dtype);                            \
    }                                                                                      \
  }()

// Every dtype.
#define TP_DISPATCH_ALL(dtype, name, ...)                                                  \
  [&] {                                                                                    \
    switch (dtype) {                                                                       \
      TP_DISPATCH_CASE(Bool, bool, __VA_ARGS__)                                            \
      TP_DISPATCH_INTEGRAL_CASES(__VA_ARGS__)                                              \
      TP_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                        \
      TP_DISPATCH_CASE(Float64, double, __VA_ARGS__)                                       \
      TP_DISPATCH_CASE(Float16, ::tp::p10::Half, __VA_ARGS__)                              \
      TP_DISPATCH_CASE(BFloat16, ::tp::p10::BFloat16, __VA_ARGS__)                         \
      TP_DISPATCH_CASE(Complex64, ::tp::p10::complex64, __VA_ARGS__)                       \
      TP_DISPATCH_CASE(Complex128, ::tp::p10::complex128, __VA_ARGS__)                     \
      default: ::tp::p10::throw_unsupported_dtype(name, dtype);                            \
    }                                                                                      \
  }()

}  // namespace tp::p10
