// dispatch_key.cpp — key names and key-set printing from the key table, and the compile-time checks of the
// table's rules (Note [Dispatch key table] in dispatch_key.h).
#include "dispatch/dispatch_key.h"

#include <string_view>

namespace tp::p10 {

// ---- the rules of Note [Dispatch key table], checked once here -------------------------------------------------
namespace {

constexpr bool slots_come_last() {
  for (int i = kNumRuntimeKeys; i < kNumSlots; ++i)
    if (kDispatchKeyTable[i].kind != KeyKind::Slot) return false;
  return true;
}

constexpr bool backends_below_wrappers() {
  int highest_backend = -1, lowest_wrapper = kNumRuntimeKeys;
  for (int i = 0; i < kNumRuntimeKeys; ++i) {
    if (kDispatchKeyTable[i].kind == KeyKind::Backend) highest_backend = i;
    if (kDispatchKeyTable[i].kind == KeyKind::Wrapper && i < lowest_wrapper) lowest_wrapper = i;
  }
  return highest_backend < lowest_wrapper;
}

constexpr bool names_and_codes_unique() {
  for (int i = 0; i < kNumSlots; ++i)
    for (int j = i + 1; j < kNumSlots; ++j)
      if (std::string_view(kDispatchKeyTable[i].name) == kDispatchKeyTable[j].name ||
          kDispatchKeyTable[i].abi_code == kDispatchKeyTable[j].abi_code)
        return false;
  return true;
}

constexpr bool runtime_codes_fit_abi_keyset() {
  for (int i = 0; i < kNumRuntimeKeys; ++i)
    if (int code = kDispatchKeyTable[i].abi_code; code < 0 || code >= int(8 * sizeof(TP_KeySet))) return false;
  return true;
}

constexpr bool abi_round_trip_is_exact() {
  for (int i = 0; i < kNumRuntimeKeys; ++i) {
    KeySet one = DispatchKey(i);
    if (keyset_to_abi(one) != TP_KEY_BIT(kDispatchKeyTable[i].abi_code)) return false;
    if (keyset_from_abi(keyset_to_abi(one)) != one) return false;
  }
  return keyset_from_abi(keyset_to_abi(kRuntimeKeys)) == kRuntimeKeys;
}

static_assert(kNumSlots <= 64, "a KeySet has 64 bits: one per key");
static_assert(slots_come_last(), "dispatch_keys.def: Slot rows must come after every runtime key");
static_assert(backends_below_wrappers(), "dispatch_keys.def: every Backend row must sit below every Wrapper row");
static_assert(names_and_codes_unique(), "dispatch_keys.def: two rows share a name or an ABI code");
static_assert(runtime_codes_fit_abi_keyset(), "dispatch_keys.def: a runtime key's ABI code must fit TP_KeySet");
static_assert(abi_round_trip_is_exact(), "keyset_to_abi / keyset_from_abi must invert each other on runtime keys");
static_assert(!kBackendKeys.empty() && !kWrapperKeys.empty() && (kBackendKeys & kWrapperKeys).empty());

}  // namespace

// ---- names -------------------------------------------------------------------------------------------------------
const char *dispatch_key_name(DispatchKey k) {
  int i = int(k);
  return i >= 0 && i < kNumSlots ? kDispatchKeyTable[i].name : "?";
}

bool parse_dispatch_key(const std::string &name, DispatchKey *out) {
  for (int i = 0; i < kNumSlots; ++i)
    if (name == kDispatchKeyTable[i].name) { *out = DispatchKey(i); return true; }
  return false;
}

std::string dispatch_key_names() {
  std::string s;
  auto add = [&s](int i) { s += (s.empty() ? "" : ", ") + std::string(kDispatchKeyTable[i].name); };
  for (int i = kNumRuntimeKeys - 1; i >= 0; --i) add(i);
  for (int i = kNumRuntimeKeys; i < kNumSlots; ++i) add(i);
  return s;
}

std::string KeySet::str() const {
  std::string s;
  for (int i = kNumRuntimeKeys - 1; i >= 0; --i)
    if (has(DispatchKey(i))) s += (s.empty() ? "" : ", ") + std::string(kDispatchKeyTable[i].name);
  return "{" + s + "}";
}

}  // namespace tp::p10
