// scalar_type.cpp — dtype facts and PyTorch's type-promotion lattice.
//
// Where it sits: used by the loop machinery (loop/tensor_iterator.cpp) to pick an op's computation dtype, and
// exposed as tp.promote_types / tp.can_cast / tp.result_type.
#include "core/scalar_type.h"

#include "core/errors.h"

namespace tp::p10 {

int64_t element_size(ScalarType t) {
  static const int64_t sizes[kNumScalarTypes] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return sizes[int(t)];
}

const char *scalar_type_name(ScalarType t) {
  static const char *names[kNumScalarTypes] = {"bool",    "uint8",    "int8",    "int16",
                                              "int32",   "int64",    "float16", "bfloat16",
                                              "float32", "float64",  "complex64", "complex128"};
  int i = int(t);
  return (i >= 0 && i < kNumScalarTypes) ? names[i] : "<invalid dtype>";
}

// Note [Promotion lattice]
//   PyTorch promotes within a category (bool < integer < floating < complex) to the smaller type that holds
//   both; across categories the higher category wins. Three pairs have no "holds both" type and need care:
//   uint8 with int8 -> int16; float16 with bfloat16 -> float32; and complex with float64 -> complex128.
//   The table is written out once, as PyTorch documents it, rather than derived, so a reader can check any
//   cell against torch.promote_types.
ScalarType promote_types(ScalarType a, ScalarType b) {
  using S = ScalarType;
  constexpr S b1 = S::Bool, u1 = S::UInt8, i1 = S::Int8, i2 = S::Int16, i4 = S::Int32, i8 = S::Int64,
              f2 = S::Float16, bf = S::BFloat16, f4 = S::Float32, f8 = S::Float64, c8 = S::Complex64,
              c16 = S::Complex128;
  static const S table[kNumScalarTypes][kNumScalarTypes] = {
      /*        b1   u1   i1   i2   i4   i8   f2   bf   f4   f8   c8   c16 */
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, c8, c16},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, c8, c16},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, c8, c16},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, c8, c16},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16},
      /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c16, c8, c16},
      /* c16*/ {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16},
  };
  return table[int(a)][int(b)];
}

static int category(ScalarType t) {
  if (t == ScalarType::Bool) return 0;
  if (is_integral(t, false)) return 1;
  if (is_floating(t)) return 2;
  return 3;
}

bool can_cast(ScalarType from, ScalarType to) { return category(from) <= category(to); }

ScalarType to_real(ScalarType t) {
  if (t == ScalarType::Complex64) return ScalarType::Float32;
  if (t == ScalarType::Complex128) return ScalarType::Float64;
  return t;
}

ScalarType to_complex(ScalarType t) {
  if (t == ScalarType::Float64 || t == ScalarType::Complex128) return ScalarType::Complex128;
  return ScalarType::Complex64;
}

static ScalarType g_default_dtype = ScalarType::Float32;
ScalarType default_dtype() { return g_default_dtype; }
void set_default_dtype(ScalarType t) {
  TP_CHECK(is_floating(t), Type, "set_default_dtype(): only floating-point types are supported as the default type, got ",
           scalar_type_name(t));
  g_default_dtype = t;
}

// PyTorch's C++ name of each dtype, as its "not implemented for 'Long'" errors spell it.
static const char *pytorch_dtype_name(ScalarType t) {
  static const char *names[kNumScalarTypes] = {"Bool",  "Byte", "Char",     "Short", "Int",          "Long",
                                              "Half",  "BFloat16", "Float", "Double", "ComplexFloat", "ComplexDouble"};
  int i = int(t);
  return (i >= 0 && i < kNumScalarTypes) ? names[i] : "<invalid dtype>";
}

// Note [Unsupported dtype errors]
//   An op that has no kernel for a dtype raises NotImplementedError, as PyTorch's AT_DISPATCH macros do, so code
//   written against PyTorch (`except NotImplementedError`) catches ours. Every dtype-dispatch macro (scalar_type.h)
//   and every hand-written "this op has no kernel for that dtype" check, CPU, meta and CUDA, ends here.
void throw_unsupported_dtype(const char *op, ScalarType t) {
  fail(ErrorKind::NotImplemented, "\"", op, "\" not implemented for '", pytorch_dtype_name(t), "' (dtype ",
       scalar_type_name(t), ")");
}

}  // namespace tp::p10
