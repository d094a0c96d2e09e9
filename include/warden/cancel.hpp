// warden — distributed locks on Redis.
// Cancelling a wait: a cancel_source hands out tokens; a call given a token
// returns errc::cancelled soon after the source is cancelled.
#pragma once

#include <warden/export.hpp>

#include <memory>
#include <utility>

namespace warden {

namespace detail {
class cancel_state;
struct cancel_access;  // the library's own way in (src/lock/cancel_state.hpp)
}  // namespace detail

/// \brief Observes a cancel_source; given to an acquire through
/// lock_options::with_cancel().
///
/// A default-constructed token is never cancelled. Cheap to copy; safe to use
/// from any thread.
class WARDEN_API cancel_token {
 public:
  /// A token that is never cancelled.
  cancel_token() noexcept = default;

  /// \return true once the source was cancelled.
  bool cancelled() const noexcept;

 private:
  friend class cancel_source;
  friend struct detail::cancel_access;
  explicit cancel_token(std::shared_ptr<detail::cancel_state> state) noexcept : state_(std::move(state)) {}
  std::shared_ptr<detail::cancel_state> state_;
};

/// \brief Cancels the waits of every call given one of its tokens, as C++20's
/// std::stop_source does for std::stop_token.
///
/// A waiting acquire (any lock kind, any form: blocking, future or callback)
/// given a token then ends promptly with errc::cancelled and leaves nothing
/// behind: no hold (an attempt already sent is taken back if it took effect),
/// no place in a fair lock's queue, no subscription. A call that has already
/// got its lock keeps it; a call started with an already cancelled token fails
/// at once without sending anything.
class WARDEN_API cancel_source {
 public:
  /// A source not cancelled yet.
  cancel_source();

  /// Cancels every wait given one of its tokens. Idempotent; safe from any
  /// thread, including inside warden callbacks.
  void cancel() noexcept;
  /// \return true once cancel() was called.
  bool cancelled() const noexcept;
  /// \return a token observing this source.
  cancel_token token() const noexcept { return cancel_token(state_); }

 private:
  std::shared_ptr<detail::cancel_state> state_;
};

}  // namespace warden
