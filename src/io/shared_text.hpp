// An immutable string shared by reference count: one allocation holding the
// count, the length and the characters, and a handle of one pointer. A lock's
// channel name is one: the lock core, its waiters and the subscriber's entry
// for the channel all point at the same characters instead of each keeping a
// copy (a channel name is some 60 bytes, times every lock with a waiter).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace warden::detail {

class SharedText {
 public:
  // Empty: allocates nothing.
  SharedText() noexcept = default;
  explicit SharedText(std::string_view text);
  SharedText(const SharedText& other) noexcept : block_(other.block_) { retain(); }
  SharedText(SharedText&& other) noexcept : block_(other.block_) { other.block_ = nullptr; }
  SharedText& operator=(const SharedText& other) noexcept;
  SharedText& operator=(SharedText&& other) noexcept;
  ~SharedText() { release(); }

  // The characters stay where they are for as long as any handle to them
  // lives (a view of them may key a map whose value holds a handle).
  std::string_view view() const noexcept {
    return block_ ? std::string_view(block_->text(), block_->size) : std::string_view();
  }
  operator std::string_view() const noexcept { return view(); }
  // The characters' address, read without touching them (for a prefetch).
  const char* data() const noexcept { return block_ ? block_->text() : nullptr; }
  std::string str() const { return std::string(view()); }
  std::size_t size() const noexcept { return block_ ? block_->size : 0; }
  bool empty() const noexcept { return size() == 0; }
  // Handles to the same characters (not merely equal ones).
  bool shares(const SharedText& other) const noexcept { return block_ == other.block_; }
  // How many handles point at these characters (0 for an empty handle);
  // for tests.
  std::uint32_t use_count() const noexcept { return block_ ? block_->refs.load(std::memory_order_relaxed) : 0; }

  friend bool operator==(const SharedText& a, const SharedText& b) noexcept { return a.view() == b.view(); }
  friend bool operator!=(const SharedText& a, const SharedText& b) noexcept { return !(a == b); }

 private:
  // The characters follow the header in the same allocation.
  struct Block {
    std::atomic<std::uint32_t> refs;
    std::uint32_t size;
    char* text() noexcept { return reinterpret_cast<char*>(this + 1); }
    const char* text() const noexcept { return reinterpret_cast<const char*>(this + 1); }
  };

  void retain() const noexcept {
    // Handles may be copied and dropped on different threads (a lock core is
    // made on a caller's thread, its waiters live on the I/O thread).
    if (block_) block_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept;

  Block* block_ = nullptr;
};

}  // namespace warden::detail
