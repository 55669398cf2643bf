// errors.h — how C++ code in P10 reports bad input.
//
// Where it sits: kernels and the dispatcher throw `tp::p10::Error` with a kind; the Python binding layer
// (python/module.cpp) maps each kind to a Python exception type, and the C ABI (abi/abi_table.cpp) turns it
// into a return code plus a message (Note [ABI errors] in tp_abi.h). Nothing in P10 may abort on user input.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

#include "tensorplay/tp_abi.h"

namespace tp::p10 {

enum class ErrorKind { Runtime = TP_ERR_RUNTIME, Type = TP_ERR_TYPE, Value = TP_ERR_VALUE, Index = TP_ERR_INDEX,
                       NotImplemented = TP_ERR_NOT_IMPLEMENTED };

struct Error : std::runtime_error {
  ErrorKind kind;
  Error(ErrorKind k, const std::string &msg) : std::runtime_error(msg), kind(k) {}
};

namespace detail {
inline void append(std::ostringstream &) {}
template <typename T, typename... Rest> void append(std::ostringstream &os, const T &x, const Rest &...rest) {
  os << x;
  append(os, rest...);
}
}  // namespace detail

// Build a message from pieces: tp_str("expected ", n, " dims").
template <typename... Args> std::string str_cat(const Args &...args) {
  std::ostringstream os;
  detail::append(os, args...);
  return os.str();
}

template <typename... Args> [[noreturn]] void fail(ErrorKind kind, const Args &...args) {
  throw Error(kind, str_cat(args...));
}

}  // namespace tp::p10

// TP_CHECK(cond, Kind, message pieces...): throw an Error of that kind when cond is false.
#define TP_CHECK(cond, kind, ...)                                                     \
  do {                                                                                \
    if (!(cond)) ::tp::p10::fail(::tp::p10::ErrorKind::kind, __VA_ARGS__);            \
  } while (0)
