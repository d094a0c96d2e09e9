// What a cancel_source and its tokens share: the flag and the callbacks of
// the operations waiting on it. Internal; the public side is warden/cancel.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <warden/cancel.hpp>

namespace warden::detail {

class cancel_state {
 public:
  cancel_state();
  bool cancelled() const noexcept;
  void cancel() noexcept;
  // Runs `callback` once on cancel(), on the cancelling thread (at once, on
  // this thread, if already cancelled, and then returns 0). Returns a handle
  // for remove().
  std::uint64_t add(std::function<void()> callback);
  // After remove() returns, the callback is not running and will not run.
  void remove(std::uint64_t handle) noexcept;

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

// The library's way to a token's state (null for a default token): the
// token keeps it private so that no internal type shows in its interface.
struct cancel_access {
  static const std::shared_ptr<cancel_state>& state(const cancel_token& token) noexcept { return token.state_; }
  static std::shared_ptr<cancel_state> make() { return std::make_shared<cancel_state>(); }
};

}  // namespace warden::detail
