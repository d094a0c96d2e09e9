// warden — distributed locks on Redis.
// lock_options: how long an acquire may wait, how long the hold it takes
// lasts, and what can cancel it — one type for every lock kind and every form.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <optional>
#include <utility>

#include <warden/cancel.hpp>
#include <warden/detail/duration.hpp>

namespace warden {

/// \brief How an acquire goes: its wait, its lease and its cancellation.
///
/// One type for every acquire of every lock kind (lock(), try_lock(), the
/// asynchronous and token forms, MultiLock and RedLock), so that a wait and a
/// lease are never told apart by their position alone. Built with the
/// chainable setters:
/// \code
///   lock.lock(warden::lock_options().with_lease(std::chrono::seconds(10)));
///   lock.try_lock(warden::lock_options().with_wait(std::chrono::seconds(2)).with_cancel(source.token()));
/// \endcode
/// Each setter takes any std::chrono duration, rounded up to whole
/// milliseconds and saturating (hours::max() is ten thousand years of
/// milliseconds, not an overflow); a NaN floating-point duration counts as
/// negative, which every acquire refuses (errc::invalid_argument).
///
/// - wait: how long a try_lock form waits for the lock (>= 0; unset: one
///   attempt, no waiting). The lock forms wait for ever and refuse a wait
///   (errc::invalid_argument): use a try_lock form for a bounded wait.
/// - lease: the hold expires by itself after it (positive, at most ten
///   years). Unset: the Client's watchdog renews the hold while it is held.
/// - cancel: cancelling its source ends the wait with errc::cancelled, holding
///   nothing (see cancel_source). Unset: nothing cancels the wait.
///
/// Cheap to copy; a value type with no tie to any lock.
class lock_options {
 public:
  /// No wait (one attempt for the try_lock forms), no lease (watchdog
  /// renewal), no cancellation.
  lock_options() = default;

  /// Sets the longest time a try_lock form waits for the lock.
  /// \param wait any std::chrono duration; >= 0.
  /// \return this, for chaining.
  template <class Rep, class Period>
  lock_options& with_wait(const std::chrono::duration<Rep, Period>& wait) {
    wait_ = detail::to_ms(wait);
    return *this;
  }

  /// Sets a fixed lease: the hold expires by itself after it, and the
  /// watchdog does not renew it.
  /// \param lease any std::chrono duration; positive, at most ten years.
  /// \return this, for chaining.
  template <class Rep, class Period>
  lock_options& with_lease(const std::chrono::duration<Rep, Period>& lease) {
    lease_ = detail::to_ms(lease);
    return *this;
  }

  /// Makes the wait cancellable by the source of `token`.
  /// \param token a token of a cancel_source.
  /// \return this, for chaining.
  lock_options& with_cancel(cancel_token token) {
    cancel_ = std::move(token);
    return *this;
  }

  /// \return the wait in whole milliseconds, or std::nullopt when none was set.
  const std::optional<std::chrono::milliseconds>& wait() const noexcept { return wait_; }
  /// \return the lease in whole milliseconds, or std::nullopt for watchdog renewal.
  const std::optional<std::chrono::milliseconds>& lease() const noexcept { return lease_; }
  /// \return the cancellation token (a default token, never cancelled, when none was set).
  const cancel_token& cancel() const noexcept { return cancel_; }

 private:
  std::optional<std::chrono::milliseconds> wait_;
  std::optional<std::chrono::milliseconds> lease_;
  cancel_token cancel_;
};

}  // namespace warden
