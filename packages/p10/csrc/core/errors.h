// errors.h — how C++ code in P10 reports bad input.
//
// Where it sits: kernels and the dispatcher throw `tp::p10::Error` with a kind; the Python binding layer
// (python/module.cpp) maps each kind to a Python exception type, and the C ABI (abi/abi_table.cpp) turns it
// into a return code plus a message (Note [ABI errors] in tp_abi.h). Nothing in P10 may abort on user input.
#pragma once
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "tensorplay/tp_abi.h"

namespace tp::p10 {

enum class ErrorKind { Runtime = TP_ERR_RUNTIME, Type = TP_ERR_TYPE, Value = TP_ERR_VALUE, Index = TP_ERR_INDEX,
                       NotImplemented = TP_ERR_NOT_IMPLEMENTED };

struct Error : std::runtime_error {
  ErrorKind kind;
  Error(ErrorKind k, const std::string &msg) : std::runtime_error(msg), kind(k) {}
};

// Note [Messages without iostream numbers]
//   Numbers in messages are formatted with std::to_string / snprintf("%g") (what `os << x` prints), not with an
//   ostream. An ostream formats numbers through the global locale's numpunct facet, and on the lent H200 a
//   pytest process that had loaded the CUDA driver crashed (SIGSEGV) in exactly the error paths whose message
//   held a number, while string-only messages were fine; standalone scripts did not crash. Plain C formatting
//   takes no C++ locale and so cannot hit that.
namespace detail {
inline void append(std::string &) {}
template <typename T, typename... Rest> void append(std::string &s, const T &x, const Rest &...rest) {
  if constexpr (std::is_same_v<T, bool>) {
    s += x ? "1" : "0";  // as an ostream prints it
  } else if constexpr (std::is_same_v<T, char>) {
    s += x;
  } else if constexpr (std::is_pointer_v<T> && std::is_convertible_v<T, const char *>) {
    s += x ? x : "(null)";
  } else if constexpr (std::is_integral_v<T>) {
    s += std::to_string(x);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", double(x));
    s += buf;
  } else if constexpr (std::is_convertible_v<const T &, std::string_view>) {
    s += std::string_view(x);
  } else {
    std::ostringstream os;  // any other type with an operator<<
    os << x;
    s += os.str();
  }
  append(s, rest...);
}
}  // namespace detail

// Build a message from pieces: str_cat("expected ", n, " dims").
template <typename... Args> std::string str_cat(const Args &...args) {
  std::string s;
  detail::append(s, args...);
  return s;
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
