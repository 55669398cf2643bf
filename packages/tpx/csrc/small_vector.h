// small_vector.h — a vector that keeps its first N elements inside itself (LLVM's / c10's SmallVector idea).
//
// Where it sits: under the recording path (record.cpp) and the graph (node.h). Recording one op used to cost a
// dozen small heap allocations — the op's input list, its edges, its outputs' shapes, ... — each a few
// elements long; those were most of the gap to PyTorch's per-op overhead (Note [Recording allocations] in
// record.cpp). A SmallVector<T, N> holding at most N elements never touches the heap; past N it moves to a heap
// buffer like std::vector. Only the std::vector operations TPX uses are provided.
#pragma once
#include <cstddef>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace tp::tpx {

template <typename T, size_t N>
class SmallVector {
  static_assert(N > 0, "SmallVector needs room for at least one element inline");

 public:
  using value_type = T;
  using iterator = T *;
  using const_iterator = const T *;

  SmallVector() = default;
  SmallVector(size_t n, const T &value) { assign(n, value); }
  template <typename It, typename = decltype(*std::declval<It>())>
  SmallVector(It first, It last) { assign(first, last); }
  SmallVector(const SmallVector &o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector &&o) noexcept { take(std::move(o)); }
  SmallVector &operator=(const SmallVector &o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector &operator=(SmallVector &&o) noexcept {
    if (this != &o) {
      destroy_all();
      take(std::move(o));
    }
    return *this;
  }
  ~SmallVector() { destroy_all(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T *data() { return data_; }
  const T *data() const { return data_; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T &at(size_t i) { return i < size_ ? data_[i] : out_of_range(); }
  const T &at(size_t i) const { return i < size_ ? data_[i] : out_of_range(); }
  T &back() { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n > cap_) grow_to(n);
  }
  template <typename... Args>
  T &emplace_back(Args &&...args) {
    if (size_ == cap_) {
      // Build first: the arguments may refer to an element that growing would move.
      T tmp(std::forward<Args>(args)...);
      grow_to(cap_ * 2);
      return *new (data_ + size_++) T(std::move(tmp));
    }
    return *new (data_ + size_++) T(std::forward<Args>(args)...);
  }
  void push_back(const T &x) { emplace_back(x); }
  void push_back(T &&x) { emplace_back(std::move(x)); }
  void pop_back() { data_[--size_].~T(); }
  void clear() {
    for (size_t i = 0; i < size_; ++i) data_[i].~T();
    size_ = 0;
  }
  void resize(size_t n) {
    reserve(n);
    while (size_ > n) pop_back();
    while (size_ < n) new (data_ + size_++) T();
  }
  void assign(size_t n, const T &value) {
    clear();
    reserve(n);
    while (size_ < n) new (data_ + size_++) T(value);
  }
  template <typename It>
  void assign(It first, It last) {
    clear();
    reserve(size_t(std::distance(first, last)));
    for (; first != last; ++first) new (data_ + size_++) T(*first);
  }

 private:
  alignas(T) unsigned char inline_[N * sizeof(T)];
  T *data_ = reinterpret_cast<T *>(inline_);
  size_t size_ = 0, cap_ = N;

  bool is_inline() const { return data_ == reinterpret_cast<const T *>(inline_); }
  [[noreturn]] static T &out_of_range() { throw std::out_of_range("SmallVector::at: index out of range"); }

  void grow_to(size_t n) {
    T *fresh = static_cast<T *>(::operator new(n * sizeof(T)));
    for (size_t i = 0; i < size_; ++i) {
      new (fresh + i) T(std::move(data_[i]));
      data_[i].~T();
    }
    if (!is_inline()) ::operator delete(data_);
    data_ = fresh;
    cap_ = n;
  }
  void destroy_all() {
    clear();
    if (!is_inline()) ::operator delete(data_);
    data_ = reinterpret_cast<T *>(inline_);
    cap_ = N;
  }
  // Steal o's heap buffer, or move its inline elements one by one; o is left empty and inline.
  void take(SmallVector &&o) noexcept {
    if (o.is_inline()) {
      data_ = reinterpret_cast<T *>(inline_);
      cap_ = N;
      size_ = 0;
      for (size_t i = 0; i < o.size_; ++i) new (data_ + size_++) T(std::move(o.data_[i]));
      o.clear();
    } else {
      data_ = o.data_;
      size_ = o.size_;
      cap_ = o.cap_;
      o.data_ = reinterpret_cast<T *>(o.inline_);
      o.size_ = 0;
      o.cap_ = N;
    }
  }
};

template <typename T, size_t N, typename Other>
bool same_elements(const SmallVector<T, N> &a, const Other &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

}  // namespace tp::tpx
