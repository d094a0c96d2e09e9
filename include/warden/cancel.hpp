// warden — distributed locks on Redis.
// Cancelling a wait: a cancel_source hands out tokens; a call given a token
// returns errc::cancelled soon after the source is cancelled.
#pragma once

#include <warden/export.hpp>

#include <cstdint>
#include <functional>
#include <memory>

namespace warden {

namespace detail {
class cancel_state;
}

// Observes a cancel_source. A default-constructed token is never cancelled.
// Cheap to copy; safe to use from any thread.
class WARDEN_API cancel_token {
 public:
  cancel_token() noexcept = default;

  // True once the source was cancelled.
  bool cancelled() const noexcept;

  // Internal: the state shared with the source (null for a default token).
  const std::shared_ptr<detail::cancel_state>& state() const noexcept { return state_; }

 private:
  friend class cancel_source;
  explicit cancel_token(std::shared_ptr<detail::cancel_state> state) noexcept : state_(std::move(state)) {}
  std::shared_ptr<detail::cancel_state> state_;
};

// Cancels the waits of every call given one of its tokens, as C++20's
// std::stop_source does for std::stop_token. A waiting lock()/lock_async()
// given a token then ends promptly with errc::cancelled and leaves nothing
// behind: no hold (an attempt already sent is taken back if it took effect),
// no place in a fair lock's queue, no subscription. A call that has already
// got its lock keeps it; a call started with an already cancelled token fails
// at once without sending anything.
class WARDEN_API cancel_source {
 public:
  cancel_source();

  // Idempotent; safe from any thread, including inside warden callbacks.
  void cancel() noexcept;
  bool cancelled() const noexcept;
  cancel_token token() const noexcept { return cancel_token(state_); }

 private:
  std::shared_ptr<detail::cancel_state> state_;
};

namespace detail {

// What a source and its tokens share: the flag and the callbacks of the
// operations waiting on it.
class WARDEN_API cancel_state {
 public:
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
  std::shared_ptr<impl> impl_ = make();
  static std::shared_ptr<impl> make();
};

}  // namespace detail
}  // namespace warden
