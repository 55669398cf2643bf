// dispatch_key.h — the dispatch keys, in priority order, and the key set a call dispatches on.
//
// Where it sits: the dispatcher (dispatcher.cpp) computes a KeySet for every op call and runs the kernel of the
// highest key present. The numeric values are the C ABI's TP_KEY_* values (checked below).
#pragma once
#include <cstdint>
#include <string>

#include "tensorplay/tp_abi.h"

namespace tp::p10 {

// Lowest priority first: a key's value is its bit in a KeySet, so "highest set bit" = "runs first".
enum class DispatchKey : uint8_t {
  PrivateUse1 = 0,  // a user's own backend, registered through the C ABI
  Meta = 1,         // shapes and dtypes only: every op's shape function
  CPU = 2,
  CUDA = 3,
  Autograd = 4,     // tpx records the graph node, then redispatches below itself
  Autocast = 5,     // amp: casts inputs, then redispatches
  Tracer = 6,       // stax capture: records the op into a graph
  Python = 7,       // kernels and modes written in Python (tensorplay.library)
  NumRuntimeKeys = 8,
  // Not runtime keys — kernel slots used when a backend (or Autograd) slot is empty. Note [Kernel lookup].
  Composite = 8,    // a decomposition into other ops: works everywhere, and is differentiated through
  AnyBackend = 9,   // one kernel correct for every backend (views, metadata): used for backend keys only
  NumSlots = 10,
};
static_assert(int(DispatchKey::Python) == TP_KEY_PYTHON && int(DispatchKey::CPU) == TP_KEY_CPU &&
              int(DispatchKey::Autograd) == TP_KEY_AUTOGRAD && int(DispatchKey::Composite) == TP_KEY_COMPOSITE &&
              int(DispatchKey::AnyBackend) == TP_KEY_ANY_BACKEND && int(DispatchKey::Tracer) == TP_KEY_TRACER,
              "DispatchKey must match TP_DispatchKey in tp_abi.h");

constexpr int kNumRuntimeKeys = int(DispatchKey::NumRuntimeKeys);
constexpr int kNumSlots = int(DispatchKey::NumSlots);

const char *dispatch_key_name(DispatchKey k);
bool parse_dispatch_key(const std::string &name, DispatchKey *out);  // "CPU" -> DispatchKey::CPU

inline bool is_backend_key(DispatchKey k) { return uint8_t(k) <= uint8_t(DispatchKey::CUDA); }

struct KeySet {
  uint32_t bits = 0;
  constexpr KeySet() = default;
  constexpr explicit KeySet(uint32_t b) : bits(b) {}
  constexpr KeySet(DispatchKey k) : bits(1u << uint8_t(k)) {}
  KeySet operator|(KeySet o) const { return KeySet(bits | o.bits); }
  KeySet operator&(KeySet o) const { return KeySet(bits & o.bits); }
  KeySet operator-(KeySet o) const { return KeySet(bits & ~o.bits); }
  bool has(DispatchKey k) const { return bits & (1u << uint8_t(k)); }
  bool empty() const { return bits == 0; }
  DispatchKey highest() const { return DispatchKey(31 - __builtin_clz(bits)); }  // requires !empty()
  // Every key at or above k: what a wrapper masks out when it hands on (Note [Redispatch]).
  static KeySet at_or_above(DispatchKey k) { return KeySet(~((1u << uint8_t(k)) - 1u) & 0xffu); }
  std::string str() const;
};

}  // namespace tp::p10
