// A vector of trivially copyable elements that keeps its first element in
// place: no allocation while it holds at most one. Most pub/sub channels have
// one local waiter, and a vector would allocate for that one. Beyond one the
// elements move to the heap (capacity doubling); back to one or none, they
// move back in and the heap storage is given back, so a crowd that has gone
// leaves nothing behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace warden::detail {

template <class T>
class SmallList {
  static_assert(std::is_trivially_copyable_v<T>, "SmallList moves its elements as bytes");

 public:
  SmallList() noexcept : many_(nullptr) {}
  SmallList(const SmallList& other) : SmallList() {
    for (const T& item : other) push_back(item);
  }
  SmallList(SmallList&& other) noexcept : SmallList() { take(other); }
  SmallList& operator=(const SmallList& other) {
    if (this != &other) {
      SmallList copy(other);
      clear();
      take(copy);
    }
    return *this;
  }
  SmallList& operator=(SmallList&& other) noexcept {
    if (this != &other) {
      clear();
      take(other);
    }
    return *this;
  }
  ~SmallList() { clear(); }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  // True while the elements live in place (none or one).
  bool inline_storage() const noexcept { return capacity_ == 1; }

  T* begin() noexcept { return inline_storage() ? &one_ : many_; }
  T* end() noexcept { return begin() + size_; }
  const T* begin() const noexcept { return inline_storage() ? &one_ : many_; }
  const T* end() const noexcept { return begin() + size_; }
  T& operator[](std::size_t i) noexcept { return begin()[i]; }
  const T& operator[](std::size_t i) const noexcept { return begin()[i]; }
  T& back() noexcept { return begin()[size_ - 1]; }

  T& push_back(const T& item) {
    if (size_ == capacity_) grow();
    T* slot = begin() + size_;
    std::memcpy(static_cast<void*>(slot), static_cast<const void*>(&item), sizeof(T));
    ++size_;
    return *slot;
  }

  // Removes the element at `at` (one of this list's), keeping the order of
  // the others. Pointers to elements are invalidated.
  void erase(T* at) noexcept {
    if (inline_storage()) {  // the one element
      size_ = 0;
      return;
    }
    T* first = many_;
    std::size_t index = static_cast<std::size_t>(at - first);
    std::size_t after = size_ - index - 1;
    if (after != 0) std::memmove(static_cast<void*>(at), static_cast<const void*>(at + 1), after * sizeof(T));
    --size_;
    if (size_ <= 1) shrink_inline();
  }

  void clear() noexcept {
    if (!inline_storage()) ::operator delete(many_);
    many_ = nullptr;
    size_ = 0;
    capacity_ = 1;
  }

 private:
  void grow() {
    if (capacity_ > std::numeric_limits<std::uint32_t>::max() / 2) throw std::length_error("warden: list too long");
    std::uint32_t capacity = capacity_ * 2;
    auto* fresh = static_cast<T*>(::operator new(sizeof(T) * capacity));
    std::memcpy(static_cast<void*>(fresh), static_cast<const void*>(begin()), sizeof(T) * size_);
    if (!inline_storage()) ::operator delete(many_);
    many_ = fresh;
    capacity_ = capacity;
  }

  void shrink_inline() noexcept {
    T* heap = many_;
    if (size_ == 1) {
      std::memcpy(static_cast<void*>(&one_), static_cast<const void*>(heap), sizeof(T));
    } else {
      many_ = nullptr;
    }
    ::operator delete(heap);
    capacity_ = 1;
  }

  void take(SmallList& other) noexcept {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (!other.inline_storage()) {
      many_ = other.many_;
    } else if (other.size_ == 1) {
      std::memcpy(static_cast<void*>(&one_), static_cast<const void*>(&other.one_), sizeof(T));
    }
    other.size_ = 0;
    other.capacity_ = 1;
    other.many_ = nullptr;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 1;  // 1: the element (if any) is one_
  union {
    T one_;
    T* many_;
  };
};

}  // namespace warden::detail
