// schema.h — an op's signature, parsed from PyTorch-style schema text.
//
//   "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
//    name.overload( type name=default, ..., * keyword-only ... ) -> returns
//
// Where it sits: every op is defined from a schema string (in C++ registration blocks, through the C ABI's
// op_define, or from Python with tensorplay.library). The schema drives Python argument parsing, default
// filling for boxed calls, dispatch-key computation (which arguments are tensors) and tp.explain's output.
#pragma once
#include <string>
#include <vector>

#include "dispatch/value.h"

namespace tp::p10 {

enum class ArgType : uint8_t { Tensor, TensorList, Int, IntList, Float, Bool, Scalar, ScalarType, Device, String,
                               Generator };
const char *arg_type_name(ArgType t);

struct Argument {
  std::string name;
  ArgType type = ArgType::Tensor;
  bool optional = false;     // `Tensor?`, `int?`: accepts None
  bool kwarg_only = false;   // after `*`
  bool has_default = false;
  Value default_value;
  bool is_write = false;     // `Tensor(a!)`: the op writes into this argument (in-place / out=)
  bool optional_elements = false;  // `Tensor?[]`: None entries become undefined Tensors
  std::string text;          // the argument as written, for messages
};

struct Schema {
  std::string ns;        // "" for built-in ops, "mylib" for "mylib::op"
  std::string name;      // "add"
  std::string overload;  // "Tensor" ("" when none)
  std::vector<Argument> args;
  std::vector<Argument> returns;  // names may be empty
  std::string text;      // the schema as given

  std::string qualified_name() const;  // "mylib::add.Tensor"
  std::string base_name() const;       // "mylib::add": what Python calls, overloads grouped
};

// Raises ValueError with the position and the text when the schema does not parse.
Schema parse_schema(const std::string &text);

}  // namespace tp::p10
