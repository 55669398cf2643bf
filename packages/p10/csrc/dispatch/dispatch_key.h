// dispatch_key.h — the dispatch keys, the key set a call dispatches on, and everything derived from the key
// table (dispatch_keys.def): names, kinds, masks and the translation to and from the C ABI's key codes.
//
// Where it sits: the dispatcher (dispatcher.cpp) computes a KeySet for every op call and runs the kernel of the
// highest key present; the C ABI (abi_table.cpp) and the Python bindings (py_ops.cpp) name keys through here.
//
// Note [Dispatch key table]
//   Every fact about a key is one row of dispatch_keys.def: its name, its priority, its ABI code, its kind and
//   what it is for. Nothing else writes a key's name or number: KeySet::str, error messages, tp.ops.info's
//   kernel dict, tp.explain and tensorplay.library.KEYS all read the table (Python through _C._dispatch_keys).
//   - Priority is row order, lowest first. A runtime key's enum value is its bit in a KeySet, and the highest
//     bit present runs first. Priorities are internal to P10: a key inserted at any priority shifts the bits
//     above it, and no client notices, because no priority crosses the C ABI.
//   - The ABI code is the key's TP_KEY_* number (tp_abi.h), separate from its priority. A new key takes the
//     next unused code; a code is never renumbered or reused (Note [ABI evolution]). A TP_KeySet crossing the
//     ABI is a bitset of ABI codes; keyset_to_abi and keyset_from_abi below are the only two translations, one
//     each way, and every ABI entry point taking or returning a key goes through them (or key_from_abi_code).
//   - Kind: Backend (the device a tensor lives on; an empty slot falls back to AnyBackend, then Composite),
//     Wrapper (runs before the backend and hands on with redispatch; may take a fallback for all ops) or Slot
//     (kernel-only: never in a KeySet, it serves keys whose own slot is empty, Note [Kernel lookup]).
//     Every Backend row sits below every Wrapper row — a wrapper's redispatch masks out every key at or above
//     it, which must never take the backend with it — and Slot rows come after every runtime key, so runtime
//     keys own bits 0..kNumRuntimeKeys-1.
//   - Masks (kBackendKeys, kWrapperKeys, kRuntimeKeys, KeySet::at_or_above) are computed from the rows; no code
//     writes a literal mask. dispatch_key.cpp checks every rule above with static_asserts.
//   So adding a key (Functionalize, Batched for vmap, Fake) is one row here at its priority plus one TP_KEY_*
//   enumerator with the next free code in tp_abi.h (a TP_ABI_MINOR bump, so a client naming it refuses an older
//   P10). Runtime keys' codes must stay below 32, the width of TP_KeySet; the KeySet itself has 64 bits.
#pragma once
#include <cstdint>
#include <string>

#include "tensorplay/tp_abi.h"

namespace tp::p10 {

// Note [Dispatch key table]: one enumerator per row of dispatch_keys.def, lowest priority first.
enum class DispatchKey : uint8_t {
#define TP_DISPATCH_KEY(name, abi_code, kind, doc) name,
#include "dispatch/dispatch_keys.def"
#undef TP_DISPATCH_KEY
};

enum class KeyKind : uint8_t { Backend, Wrapper, Slot };

struct DispatchKeyInfo {
  const char *name;      // "CPU": the one spelling of the key everywhere
  int abi_code;          // TP_KEY_CPU: stable across releases, never the priority
  const char *abi_name;  // "TP_KEY_CPU", so tests can check the header without a hand-kept map
  KeyKind kind;
  const char *doc;
};

inline constexpr DispatchKeyInfo kDispatchKeyTable[] = {
#define TP_DISPATCH_KEY(name, abi_code, kind, doc) {#name, abi_code, #abi_code, KeyKind::kind, doc},
#include "dispatch/dispatch_keys.def"
#undef TP_DISPATCH_KEY
};

constexpr int kNumSlots = int(sizeof(kDispatchKeyTable) / sizeof(kDispatchKeyTable[0]));  // kernel slots per op

constexpr const DispatchKeyInfo &key_info(DispatchKey k) { return kDispatchKeyTable[int(k)]; }
constexpr KeyKind key_kind(DispatchKey k) { return key_info(k).kind; }
constexpr bool is_backend_key(DispatchKey k) { return key_kind(k) == KeyKind::Backend; }
constexpr bool is_wrapper_key(DispatchKey k) { return key_kind(k) == KeyKind::Wrapper; }
constexpr bool is_runtime_key(DispatchKey k) { return key_kind(k) != KeyKind::Slot; }

// Runtime keys are the rows before the first Slot row (dispatch_key.cpp checks that none follows it).
constexpr int count_runtime_keys() {
  int n = 0;
  while (n < kNumSlots && kDispatchKeyTable[n].kind != KeyKind::Slot) ++n;
  return n;
}
constexpr int kNumRuntimeKeys = count_runtime_keys();

const char *dispatch_key_name(DispatchKey k);                       // "?" for a value outside the table
bool parse_dispatch_key(const std::string &name, DispatchKey *out);  // "CPU" -> DispatchKey::CPU
std::string dispatch_key_names();  // every key, runtime keys highest first, then slots: for error messages

struct KeySet {
  uint64_t bits = 0;
  constexpr KeySet() = default;
  constexpr explicit KeySet(uint64_t b) : bits(b) {}
  constexpr KeySet(DispatchKey k) : bits(uint64_t(1) << uint8_t(k)) {}
  constexpr KeySet operator|(KeySet o) const { return KeySet(bits | o.bits); }
  constexpr KeySet operator&(KeySet o) const { return KeySet(bits & o.bits); }
  constexpr KeySet operator-(KeySet o) const { return KeySet(bits & ~o.bits); }
  constexpr bool operator==(const KeySet &o) const = default;
  constexpr bool has(DispatchKey k) const { return bits & (uint64_t(1) << uint8_t(k)); }
  constexpr bool empty() const { return bits == 0; }
  DispatchKey highest() const { return DispatchKey(63 - __builtin_clzll(bits)); }  // requires !empty()
  // Every runtime key at or above k: what a wrapper masks out when it hands on (Note [Redispatch]).
  static constexpr KeySet at_or_above(DispatchKey k);
  std::string str() const;  // "{Autograd, CPU}", highest first
};

// The runtime keys of one kind, read off the table (Note [Dispatch key table]).
constexpr KeySet keys_of_kind(KeyKind kind) {
  KeySet ks;
  for (int i = 0; i < kNumRuntimeKeys; ++i)
    if (kDispatchKeyTable[i].kind == kind) ks = ks | DispatchKey(i);
  return ks;
}
constexpr KeySet kBackendKeys = keys_of_kind(KeyKind::Backend);
constexpr KeySet kWrapperKeys = keys_of_kind(KeyKind::Wrapper);
constexpr KeySet kRuntimeKeys = kBackendKeys | kWrapperKeys;

constexpr KeySet KeySet::at_or_above(DispatchKey k) {
  return KeySet(~((uint64_t(1) << uint8_t(k)) - 1u)) & kRuntimeKeys;
}

// ---- the C ABI's key codes (Note [Dispatch key table]) --------------------------------------------------------
// The key whose TP_KEY_* code is `code`; false when no key has it.
constexpr bool key_from_abi_code(int code, DispatchKey *out) {
  for (int i = 0; i < kNumSlots; ++i)
    if (kDispatchKeyTable[i].abi_code == code) { *out = DispatchKey(i); return true; }
  return false;
}

// Internal (priority) bits -> ABI (code) bits. Slot bits, never part of a key set, are dropped.
constexpr TP_KeySet keyset_to_abi(KeySet ks) {
  TP_KeySet out = 0;
  for (int i = 0; i < kNumRuntimeKeys; ++i)
    if (ks.has(DispatchKey(i))) out |= TP_KEY_BIT(kDispatchKeyTable[i].abi_code);
  return out;
}

// ABI (code) bits -> internal (priority) bits. Bits naming no runtime key are dropped: the ABI's tls setters
// cannot fail, and a code this P10 does not know cannot change how it dispatches.
constexpr KeySet keyset_from_abi(TP_KeySet bits) {
  KeySet ks;
  for (int i = 0; i < kNumRuntimeKeys; ++i)
    if (bits & TP_KEY_BIT(kDispatchKeyTable[i].abi_code)) ks = ks | DispatchKey(i);
  return ks;
}

}  // namespace tp::p10
