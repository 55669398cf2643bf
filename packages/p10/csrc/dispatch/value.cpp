// value.cpp — conversions of boxed values.
#include "dispatch/value.h"

namespace tp::p10 {

ScalarType Scalar::natural_dtype() const {
  switch (kind) {
    case Kind::Bool: return ScalarType::Bool;
    case Kind::Int: return ScalarType::Int64;
    case Kind::Double: return default_dtype();
    case Kind::Complex: return ::tp::p10::to_complex(default_dtype());
  }
  return ScalarType::Float32;
}

template <typename T> T Scalar::to() const {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    auto z = to_complex();
    return T(typename T::value_type(z.real()), typename T::value_type(z.imag()));
  } else if constexpr (std::is_same_v<T, bool>) {
    return kind == Kind::Double ? d != 0 : kind == Kind::Complex ? c != std::complex<double>(0) : i != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return kind == Kind::Double ? T(int64_t(d)) : T(to_int());
  } else {  // float, double, Half, BFloat16
    return T(opmath_t<T>(kind == Kind::Int || kind == Kind::Bool ? double(i) : to_double()));
  }
}
template bool Scalar::to<bool>() const;
template uint8_t Scalar::to<uint8_t>() const;
template int8_t Scalar::to<int8_t>() const;
template int16_t Scalar::to<int16_t>() const;
template int32_t Scalar::to<int32_t>() const;
template int64_t Scalar::to<int64_t>() const;
template Half Scalar::to<Half>() const;
template BFloat16 Scalar::to<BFloat16>() const;
template float Scalar::to<float>() const;
template double Scalar::to<double>() const;
template complex64 Scalar::to<complex64>() const;
template complex128 Scalar::to<complex128>() const;

const Tensor &Value::to_tensor() const {
  TP_CHECK(tag == Tag::Tensor, Type, "expected a Tensor argument");
  return tensor;
}

}  // namespace tp::p10
