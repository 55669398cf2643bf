// kernel_box.h — adapt a typed C++ kernel to the boxed calling convention, and call ops from C++ with types.
//
//   Tensor add_cpu(const Tensor &self, const Tensor &other, const Scalar &alpha);
//   TP_IMPL(lib, "add.Tensor", CPU, add_cpu);            // registers box<add_cpu>
//   Tensor y = call_op<Tensor>(TP_OP("add.Tensor"), a, b, Scalar(1));
//
// Where it sits: used by every kernel file's TP_LIBRARY block and by C++ code that calls other ops.
// Note [One calling convention] in dispatcher.h says why everything is boxed underneath.
#pragma once
#include <optional>
#include <tuple>
#include <type_traits>

#include "dispatch/dispatcher.h"

namespace tp::p10 {

// ---- Value -> C++ argument ----------------------------------------------------------------------------------
template <typename T> struct FromValue;
template <> struct FromValue<Tensor> { static Tensor get(const Value &v) { return v.is_none() ? Tensor() : v.tensor; } };
template <> struct FromValue<std::optional<Tensor>> {
  static std::optional<Tensor> get(const Value &v) { return v.is_tensor() ? std::optional<Tensor>(v.tensor) : std::nullopt; }
};
template <> struct FromValue<int64_t> { static int64_t get(const Value &v) { return v.to_int(); } };
template <> struct FromValue<double> { static double get(const Value &v) { return v.to_double(); } };
template <> struct FromValue<bool> { static bool get(const Value &v) { return v.to_bool(); } };
template <> struct FromValue<Scalar> { static Scalar get(const Value &v) { return v.scalar; } };
template <> struct FromValue<std::string> { static std::string get(const Value &v) { return v.str; } };
template <> struct FromValue<std::vector<int64_t>> { static std::vector<int64_t> get(const Value &v) { return v.ints; } };
template <> struct FromValue<std::vector<Tensor>> { static std::vector<Tensor> get(const Value &v) { return v.tensors; } };
template <typename T> struct FromValue<std::optional<T>> {
  static std::optional<T> get(const Value &v) { return v.is_none() ? std::nullopt : std::optional<T>(FromValue<T>::get(v)); }
};
template <> struct FromValue<ScalarType> { static ScalarType get(const Value &v) { return v.dtype; } };
template <> struct FromValue<Device> { static Device get(const Value &v) { return v.device; } };

// ---- C++ value -> Value -------------------------------------------------------------------------------------
inline Value to_value(const Tensor &t) { return Value(t); }
inline Value to_value(const std::optional<Tensor> &t) { return t ? Value(*t) : Value(); }
inline Value to_value(int64_t v) { return Value::from_int(v); }
inline Value to_value(int v) { return Value::from_int(v); }
inline Value to_value(double v) { return Value::from_double(v); }
inline Value to_value(bool v) { return Value::from_bool(v); }
inline Value to_value(const Scalar &s) { return Value::from_scalar(s); }
inline Value to_value(const std::vector<int64_t> &v) { return Value::from_ints(v); }
inline Value to_value(const std::vector<Tensor> &v) { return Value::from_tensors(v); }
inline Value to_value(const std::string &s) { return Value::from_string(s); }
inline Value to_value(const char *s) { return Value::from_string(s); }
inline Value to_value(ScalarType t) { return Value::from_dtype(t); }
inline Value to_value(Device d) { return Value::from_device(d); }
inline Value to_value(std::nullopt_t) { return Value(); }
template <typename T> Value to_value(const std::optional<T> &v) { return v ? to_value(*v) : Value(); }

// ---- boxing a typed kernel ----------------------------------------------------------------------------------
template <typename F> struct FnTraits;
template <typename R, typename... A> struct FnTraits<R (*)(A...)> {
  using Ret = R;
  using Args = std::tuple<std::decay_t<A>...>;
};

template <typename T> struct is_tuple : std::false_type {};
template <typename... T> struct is_tuple<std::tuple<T...>> : std::true_type {};

// A kernel's result onto the stack; a tuple (several results) pushes each element in order.
template <typename R> void push_result(Stack &s, R &&r) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, Tensor>) s.push_back(Value(std::forward<R>(r)));
  else if constexpr (std::is_same_v<D, std::vector<Tensor>>) s.push_back(Value::from_tensors(std::forward<R>(r)));
  else if constexpr (is_tuple<D>::value) std::apply([&s](auto &&...x) { (push_result(s, x), ...); }, r);
  else s.push_back(to_value(r));
}

template <auto Fn, typename Args, size_t... I>
void call_unboxed(Stack &stack, std::index_sequence<I...>) {
  using R = typename FnTraits<decltype(Fn)>::Ret;
  if constexpr (std::is_void_v<R>) {
    Fn(FromValue<std::tuple_element_t<I, Args>>::get(stack[I])...);
    stack.clear();
  } else {
    R r = Fn(FromValue<std::tuple_element_t<I, Args>>::get(stack[I])...);
    stack.clear();
    push_result(stack, std::move(r));
  }
}

template <auto Fn> void box(const Operator &, Stack &stack, void *) {
  using Args = typename FnTraits<decltype(Fn)>::Args;
  call_unboxed<Fn, Args>(stack, std::make_index_sequence<std::tuple_size_v<Args>>{});
}

// The typed entry point stored next to box<Fn> (Note [Unboxed calls]): it takes the decayed argument types as
// one tuple, so call_op can check the signature with a single typeid comparison.
template <auto Fn> struct Unboxed {
  using Traits = FnTraits<decltype(Fn)>;
  using Ret = typename Traits::Ret;
  using Args = typename Traits::Args;
  static Ret call(Args &args) { return std::apply(Fn, args); }
};

// Register a typed kernel: boxed for Python and the C ABI, unboxed for C++ callers.
template <auto Fn> void impl_typed(Library &lib, const char *op_name, DispatchKey key, int line) {
  using U = Unboxed<Fn>;
  lib.impl(op_name, key, &box<Fn>, line, reinterpret_cast<UnboxedFn>(&U::call),
           &typeid(typename U::Ret (*)(typename U::Args &)));
}

#define TP_IMPL(lib, op_name, key, fn) ::tp::p10::impl_typed<fn>(lib, op_name, ::tp::p10::DispatchKey::key, __LINE__)
#define TP_IMPL_BOXED(lib, op_name, key, fn) (lib).impl(op_name, ::tp::p10::DispatchKey::key, fn, __LINE__)

// ---- calling an op from C++ ---------------------------------------------------------------------------------
const Operator &require_op(const char *qualified_name);  // throws if unknown
void fill_defaults(const Operator &op, Stack &stack);   // append schema defaults for missing trailing args

// The Operator for a name, looked up once per call site.
#define TP_OP(name) ([]() -> const ::tp::p10::Operator & {           \
  static const ::tp::p10::Operator *op_ = &::tp::p10::require_op(name); \
  return *op_;                                                        \
}())

// Dispatch keys contributed by one typed argument (mirrors compute_keys in dispatcher.cpp).
template <typename T> void add_keys(KeySet &ks, bool &saw_tensor, const Device *&device, const T &a) {
  if constexpr (std::is_same_v<T, Tensor>) {
    if (a.defined()) { ks = ks | tensor_keys(a); saw_tensor = true; }
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    if (a && a->defined()) { ks = ks | tensor_keys(*a); saw_tensor = true; }
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (const Tensor &t : a) if (t.defined()) { ks = ks | tensor_keys(t); saw_tensor = true; }
  } else if constexpr (std::is_same_v<T, Device>) {
    if (!device) device = &a;
  } else if constexpr (std::is_same_v<T, std::optional<Device>>) {
    if (!device && a) device = &*a;
  }
}

template <typename R = Tensor, typename... Args> R call_op(const Operator &op, const Args &...args) {
  // Note [Unboxed calls]: same key set and kernel as the boxed path; skip boxing when the kernel's typed entry
  // point has exactly these argument types.
  if (int(sizeof...(Args)) == op.num_args()) {
    using Tuple = std::tuple<std::decay_t<Args>...>;
    KeySet ks;
    bool saw_tensor = false;
    const Device *device = nullptr;
    (add_keys(ks, saw_tensor, device, args), ...);
    ks = finish_keys(ks, saw_tensor, device);
    KernelChoice c = select_kernel(op, ks);
    if (c.kernel->unboxed && *c.kernel->signature == typeid(R (*)(Tuple &))) {
      TraceScope trace(op, ks, c, true);
      Tuple tuple(args...);
      return reinterpret_cast<R (*)(Tuple &)>(c.kernel->unboxed)(tuple);
    }
  }
  Stack s;
  s.reserve(op.schema.args.size());
  (s.push_back(to_value(args)), ...);
  fill_defaults(op, s);
  call(op, s);
  if constexpr (std::is_void_v<R>) return;
  else if constexpr (std::is_same_v<R, Tensor>) return s.at(0).is_none() ? Tensor() : s[0].tensor;
  else if constexpr (std::is_same_v<R, std::vector<Tensor>>) return s.at(0).tensors;
  else if constexpr (std::is_same_v<R, std::tuple<Tensor, Tensor>>) return {s.at(0).tensor, s.at(1).tensor};
  else if constexpr (std::is_same_v<R, std::tuple<Tensor, Tensor, Tensor>>)
    return {s.at(0).tensor, s.at(1).tensor, s.at(2).tensor};
  else return FromValue<R>::get(s.at(0));
}

}  // namespace tp::p10
