// ref.h — intrusive reference counting for Storage, TensorImpl and friends.
//
// Why intrusive: a TensorImpl* must be usable as the C ABI's opaque `TP_Tensor*`, with incref/decref callable
// from other pillars. An intrusive count makes the raw pointer itself the handle (no control block to find).
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace tp::p10 {

struct RefCounted {
  mutable std::atomic<int64_t> refcount_{0};
  RefCounted() = default;
  RefCounted(const RefCounted &) = delete;
  RefCounted &operator=(const RefCounted &) = delete;
  virtual ~RefCounted() = default;
  void incref() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void decref() const {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int64_t use_count() const { return refcount_.load(std::memory_order_relaxed); }
};

// Ref<T>: an owning pointer to a RefCounted T.
template <typename T> class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T *p) : p_(p) { if (p_) p_->incref(); }        // takes a NEW share of p
  static Ref adopt(T *p) { Ref r; r.p_ = p; return r; }        // takes over an existing share
  Ref(const Ref &o) : p_(o.p_) { if (p_) p_->incref(); }
  Ref(Ref &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U> Ref(const Ref<U> &o) : p_(o.get()) { if (p_) p_->incref(); }
  ~Ref() { if (p_) p_->decref(); }
  Ref &operator=(Ref o) noexcept { std::swap(p_, o.p_); return *this; }
  T *get() const { return p_; }
  T *operator->() const { return p_; }
  T &operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  T *release() { T *p = p_; p_ = nullptr; return p; }  // hands the share to the caller
  template <typename... Args> static Ref make(Args &&...args) { return Ref(new T(std::forward<Args>(args)...)); }

 private:
  T *p_ = nullptr;
};

}  // namespace tp::p10
