// cast.h — converting one element between any two dtypes, PyTorch's way.
//
// Where it sits: kernels/copy.cpp (copy_, .to(dtype)) and anything that converts element by element.
// Rules: to bool is `x != 0`; complex to real drops the imaginary part; 16-bit floats go through float32;
// float to integer truncates toward zero (out-of-range values are undefined in C++, so they are clamped
// through int64 first, matching PyTorch on the common platforms for in-range values).
#pragma once
#include <type_traits>

#include "core/scalar_type.h"

namespace tp::p10 {

template <typename T> struct is_complex_t : std::false_type {};
template <typename T> struct is_complex_t<std::complex<T>> : std::true_type {};
template <typename T> constexpr bool is_complex_dtype = is_complex_t<T>::value;

template <typename To, typename From> inline To cast_value(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_complex_t<From>::value) {
    if constexpr (is_complex_t<To>::value) return To(typename To::value_type(x.real()), typename To::value_type(x.imag()));
    else if constexpr (std::is_same_v<To, bool>) return x.real() != 0 || x.imag() != 0;
    else return cast_value<To>(x.real());
  } else if constexpr (is_complex_t<To>::value) {
    return To(typename To::value_type(cast_value<double>(x)), 0);
  } else if constexpr (std::is_same_v<To, bool>) {
    return opmath_t<From>(x) != opmath_t<From>(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(float(opmath_t<From>(x)));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    // floating -> integer: truncate; go through int64 so narrow types wrap like PyTorch does
    auto v = opmath_t<From>(x);
    if (v != v) return To(0);
    return To(static_cast<int64_t>(v));
  } else {
    return To(opmath_t<From>(x));
  }
}

}  // namespace tp::p10
