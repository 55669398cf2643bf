// schema.h — an op's signature, parsed from PyTorch-style schema text.
//
//   "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
//    name.overload( type name=default, ..., * keyword-only ... ) -> returns
//
// A Tensor type may carry an alias annotation, as in PyTorch (Note [Alias annotations]):
//   Tensor(a) self -> Tensor(a)        the result may share self's storage (a view)
//   Tensor(a!) self -> Tensor(a!)      the op writes into self and returns it (in-place, out=)
//   Tensor(a -> *) self -> Tensor(a)[] every result in the list may share self's storage (split, unbind)
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
  std::string alias_set;     // `Tensor(a)`, `Tensor(a!)`, `Tensor(a)[]`: "a"; "" when not annotated
  std::string alias_after;   // `Tensor(a -> *)`: "*", the set the value belongs to after the call ("" if same)
  bool is_write = false;     // `Tensor(a!)`: the op writes into this argument (in-place / out=)
  bool optional_elements = false;  // `Tensor?[]`: None entries become undefined Tensors
  std::string text;          // the argument as written, for messages

  std::string type_text() const;  // "Tensor?", "int[]", "Tensor?[]": the type without its alias annotation
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
  // A view op: its first argument is annotated and not written, and every result shares its alias set
  // (Note [Alias annotations]).
  bool is_view_op() const;
};

// Note [Alias annotations]
//   Arguments (and returns) that name the same alias set may share storage: `view(Tensor(a) self, ...) ->
//   Tensor(a)` says the result is a view of self, `add_(Tensor(a!) self, ...) -> Tensor(a!)` that self is
//   written and returned. This is the one place that knows which ops are views: tpx derives its view handling
//   (Note [Views and in-place] in tpx's csrc/meta.h) from `is_view_op`, not from a list of names. An
//   annotation says "may alias": conj of a real tensor returns self (as PyTorch's conj_physical does) without
//   being annotated, because for complex inputs it is a new tensor.
//
// Raises ValueError with the position and the text when the schema does not parse.
Schema parse_schema(const std::string &text);

}  // namespace tp::p10
