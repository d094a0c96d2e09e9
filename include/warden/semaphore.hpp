// warden — distributed locks on Redis.
// Semaphore: a counting semaphore shared through Redis, in Redisson's
// RSemaphore layout, so Java services using Redisson share it.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>

#include <warden/acquire_future.hpp>
#include <warden/cancel.hpp>
#include <warden/detail/duration.hpp>
#include <warden/lock.hpp>
#include <warden/lock_options.hpp>

namespace warden {

namespace detail {
class SemaphoreCore;
struct access;  // the library's own way in (src/api/access.hpp)
}  // namespace detail

/// A counting semaphore named `name` on Redis, with the vocabulary of
/// std::counting_semaphore. The key `name` holds the number of available
/// permits (a missing key counts 0; set a count with try_set_permits() or
/// add_permits()); a release publishes the new count on `redisson_sc:{name}`
/// and wakes as many waiters of this Client as there are permits free.
/// Permits have no owner: any thread, task or process may release them, and
/// nothing renews or reclaims them (see PermitExpirableSemaphore for that).
///
/// Every call takes a count of permits, which must be positive: 0 or less
/// fails with errc::invalid_argument and changes nothing. A key that is not a
/// count (another type, or a string that is not an integer) fails with
/// errc::wrong_type and is left as it is. Blocking calls throw warden::Error;
/// called on the client's I/O thread (inside a callback) they throw
/// errc::would_deadlock. Async forms deliver the same errors to their future
/// or callback; callbacks run on the client's I/O thread. Handles are cheap
/// to copy and thread-safe; all handles of one name share the semaphore.
class WARDEN_API Semaphore {
 public:
  using milliseconds = std::chrono::milliseconds;  ///< The unit of the semaphore's times.

  /// The semaphore's name (its key).
  const std::string& name() const noexcept;

  /// Takes `permits`, waiting for ever until that many are free.
  /// `options` may carry a cancel_token (errc::cancelled ends the wait, and
  /// nothing is taken); a wait or a lease in them is errc::invalid_argument.
  void acquire(std::int64_t permits = 1, const lock_options& options = {});

  /// Takes `permits` if that many are free now; false (nothing taken) if not.
  bool try_acquire(std::int64_t permits = 1);

  /// Takes `permits`, waiting up to options.wait() (unset: one try) and
  /// cancellable through options.cancel(); false when the wait ran out.
  /// Answers within the wait plus Config::command_timeout.
  bool try_acquire(std::int64_t permits, const lock_options& options);

  /// Takes `permits`, waiting up to `wait`; false when it ran out.
  template <class Rep, class Period>
  bool try_acquire_for(const std::chrono::duration<Rep, Period>& wait, std::int64_t permits = 1) {
    return try_acquire(permits, lock_options().with_wait(wait));
  }

  /// Takes `permits`, waiting until `deadline`; false when it passed.
  template <class Clock, class Duration>
  bool try_acquire_until(const std::chrono::time_point<Clock, Duration>& deadline, std::int64_t permits = 1) {
    return try_acquire(permits, lock_options().with_wait(detail::until(deadline)));
  }

  /// Gives `permits` back (Redisson's release: no owner is checked) and
  /// wakes waiters. Sent again after a lost reply, it still adds them once.
  void release(std::int64_t permits = 1);

  /// Gives `permits` back as release() does, but only to a semaphore whose
  /// key exists (Redisson's releaseIfExists): false, and nothing written,
  /// when it does not (never set, drained by a delete, or expired).
  bool release_if_exists(std::int64_t permits = 1);

  /// The number of permits free now (0 when the key does not exist).
  std::int64_t available_permits() const;

  /// Sets the count to `permits` if the semaphore has no count yet; false
  /// (nothing changed) if it has one.
  bool try_set_permits(std::int64_t permits);

  /// Adds `permits` to the count (a missing key counts 0) and wakes waiters.
  void add_permits(std::int64_t permits);

  /// Takes every free permit; returns how many that was.
  std::int64_t drain_permits();

  /// acquire() as a future. If the future is destroyed before get() and the
  /// permits were taken, they are released.
  AcquireFuture<void> acquire_async(std::int64_t permits = 1, const lock_options& options = {});
  /// acquire() with a completion callback (I/O thread).
  void acquire_async(std::int64_t permits, const lock_options& options, completion<void> done);
  /// try_acquire(permits, options) as a future; permits taken for a future
  /// destroyed before get() are released.
  AcquireFuture<bool> try_acquire_async(std::int64_t permits = 1, const lock_options& options = {});
  /// try_acquire(permits, options) with a completion callback (I/O thread).
  void try_acquire_async(std::int64_t permits, const lock_options& options, completion<bool> done);
  /// release() as a future.
  std::future<void> release_async(std::int64_t permits = 1);
  /// release() with a completion callback (I/O thread).
  void release_async(std::int64_t permits, completion<void> done);
  /// release_if_exists() as a future.
  std::future<bool> release_if_exists_async(std::int64_t permits = 1);
  /// release_if_exists() with a completion callback (I/O thread).
  void release_if_exists_async(std::int64_t permits, completion<bool> done);
  /// available_permits() as a future.
  std::future<std::int64_t> available_permits_async() const;
  /// available_permits() with a completion callback (I/O thread).
  void available_permits_async(completion<std::int64_t> done) const;
  /// try_set_permits() as a future.
  std::future<bool> try_set_permits_async(std::int64_t permits);
  /// try_set_permits() with a completion callback (I/O thread).
  void try_set_permits_async(std::int64_t permits, completion<bool> done);
  /// add_permits() as a future.
  std::future<void> add_permits_async(std::int64_t permits);
  /// add_permits() with a completion callback (I/O thread).
  void add_permits_async(std::int64_t permits, completion<void> done);
  /// drain_permits() as a future.
  std::future<std::int64_t> drain_permits_async();
  /// drain_permits() with a completion callback (I/O thread).
  void drain_permits_async(completion<std::int64_t> done);

 private:
  friend struct detail::access;
  explicit Semaphore(std::shared_ptr<detail::SemaphoreCore> core) noexcept;

  std::shared_ptr<detail::SemaphoreCore> core_;
};

}  // namespace warden
