#include "io/shared_text.hpp"

#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

namespace warden::detail {

SharedText::SharedText(std::string_view text) {
  if (text.empty()) return;
  if (text.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("warden: text too long to share");
  // A terminating NUL as well, so that the characters can be read as a C string in a debugger.
  void* memory = ::operator new(sizeof(Block) + text.size() + 1);
  block_ = new (memory) Block{{1}, static_cast<std::uint32_t>(text.size())};
  std::memcpy(block_->text(), text.data(), text.size());
  block_->text()[text.size()] = '\0';
}

SharedText& SharedText::operator=(const SharedText& other) noexcept {
  if (block_ != other.block_) {
    other.retain();
    release();
    block_ = other.block_;
  }
  return *this;
}

SharedText& SharedText::operator=(SharedText&& other) noexcept {
  if (this != &other) {
    release();
    block_ = other.block_;
    other.block_ = nullptr;
  }
  return *this;
}

void SharedText::release() noexcept {
  if (!block_) return;
  // The last handle frees the characters; the acquire side of acq_rel makes
  // every other handle's reads happen before that.
  if (block_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    block_->~Block();
    ::operator delete(block_);
  }
  block_ = nullptr;
}

}  // namespace warden::detail
