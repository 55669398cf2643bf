// value.h — Value, one boxed op argument or result, and Stack, the argument list a boxed kernel works on.
//
// Where it sits: every op call goes through a Stack (Note [One calling convention] in dispatcher.h). Python
// arguments are converted into Values by python/py_ops.cpp, C ABI TP_Values by abi/abi_table.cpp, and C++
// callers build them directly (ops.h).
#pragma once
#include <complex>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tp::p10 {

class GeneratorImpl;  // random/generator.h

// A Python number as an op argument (schema type `Scalar`): int, float, bool or complex.
struct Scalar {
  enum class Kind : uint8_t { Int, Double, Bool, Complex } kind = Kind::Int;
  int64_t i = 0;
  double d = 0;
  std::complex<double> c;
  Scalar() = default;
  Scalar(int64_t v) : kind(Kind::Int), i(v) {}
  Scalar(int v) : kind(Kind::Int), i(v) {}
  Scalar(double v) : kind(Kind::Double), d(v) {}
  Scalar(bool v) : kind(Kind::Bool), i(v) {}
  Scalar(std::complex<double> v) : kind(Kind::Complex), c(v) {}
  double to_double() const { return kind == Kind::Double ? d : kind == Kind::Complex ? c.real() : double(i); }
  int64_t to_int() const { return kind == Kind::Double ? int64_t(d) : kind == Kind::Complex ? int64_t(c.real()) : i; }
  std::complex<double> to_complex() const { return kind == Kind::Complex ? c : std::complex<double>(to_double(), 0); }
  bool is_floating() const { return kind == Kind::Double; }
  bool is_integral() const { return kind == Kind::Int; }
  bool is_bool() const { return kind == Kind::Bool; }
  bool is_complex() const { return kind == Kind::Complex; }
  // The dtype PyTorch gives a tensor made from this number alone (float -> default dtype).
  ScalarType natural_dtype() const;
  template <typename T> T to() const;  // cast to a kernel's C++ type (defined in value.cpp for each dtype)
};

struct Value {
  enum class Tag : uint8_t { None, Tensor, Int, Double, Bool, Scalar, IntList, TensorList, String, DType, Device, Generator };
  Tag tag = Tag::None;
  Tensor tensor;
  Scalar scalar;  // Int / Double / Bool / Scalar payloads live here
  std::vector<int64_t> ints;
  std::vector<Tensor> tensors;
  std::string str;
  ScalarType dtype = ScalarType::Float32;
  Device device;
  // A Generator argument: a CPU or CUDA generator (random/generator.h), borrowed for the duration of the call.
  // Kernels take it through cpu_generator() / cuda::cuda_generator(), which check its device type.
  GeneratorImpl *generator = nullptr;

  Value() = default;
  Value(Tensor t) : tag(t.defined() ? Tag::Tensor : Tag::None), tensor(std::move(t)) {}
  static Value from_int(int64_t v) { Value x; x.tag = Tag::Int; x.scalar = Scalar(v); return x; }
  static Value from_double(double v) { Value x; x.tag = Tag::Double; x.scalar = Scalar(v); return x; }
  static Value from_bool(bool v) { Value x; x.tag = Tag::Bool; x.scalar = Scalar(v); return x; }
  static Value from_scalar(Scalar s) { Value x; x.tag = Tag::Scalar; x.scalar = s; return x; }
  static Value from_ints(std::vector<int64_t> v) { Value x; x.tag = Tag::IntList; x.ints = std::move(v); return x; }
  static Value from_tensors(std::vector<Tensor> v) { Value x; x.tag = Tag::TensorList; x.tensors = std::move(v); return x; }
  static Value from_string(std::string s) { Value x; x.tag = Tag::String; x.str = std::move(s); return x; }
  static Value from_dtype(ScalarType t) { Value x; x.tag = Tag::DType; x.dtype = t; return x; }
  static Value from_device(Device d) { Value x; x.tag = Tag::Device; x.device = d; return x; }

  bool is_none() const { return tag == Tag::None; }
  bool is_tensor() const { return tag == Tag::Tensor; }
  // Typed access for kernels. Types are checked once by the argument parser, so these only assert shape.
  const Tensor &to_tensor() const;
  int64_t to_int() const { return scalar.to_int(); }
  double to_double() const { return scalar.to_double(); }
  bool to_bool() const { return scalar.i != 0; }
  const Scalar &to_scalar() const { return scalar; }
};

using Stack = std::vector<Value>;

}  // namespace tp::p10
