// warden — distributed locks on Redis.
// Lock: a re-entrant lock held by one owner (client id + thread id) at a time.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include <warden/acquire_future.hpp>
#include <warden/cancel.hpp>
#include <warden/detail/duration.hpp>
#include <warden/lock_lost.hpp>
#include <warden/lock_options.hpp>
#include <warden/thread_id.hpp>

namespace warden {

namespace detail {
class LockCore;
struct access;  // the library's own way in (src/api/access.hpp)

template <class T>
struct completion_of {
  using type = std::function<void(std::error_code error, T value)>;
};
template <>
struct completion_of<void> {
  using type = std::function<void(std::error_code error)>;
};
}  // namespace detail

/// \brief The completion callback of an asynchronous call.
///
/// completion<void> is std::function<void(std::error_code)>, completion<T> is
/// std::function<void(std::error_code, T)> (T is value-initialised when the
/// error is set). It runs exactly once, on the Client's I/O thread (also for
/// bad input and after shutdown, where it runs at once on the calling thread
/// if the I/O thread is gone). It must not block; it may start further
/// *_async calls with callbacks. What it throws is caught and logged. The
/// error's text (naming the lock and server) is logged at debug level.
template <class T>
using completion = typename detail::completion_of<T>::type;

class Lock;
class FencedLock;

/// \brief The operations of every single-name lock handle: Lock (and so
/// FairLock and SpinLock, which are Locks) and FencedLock.
///
/// Not made directly: Client hands out Lock and FencedLock handles. Handles
/// are cheap to copy; copies refer to the same lock. Every member is safe to
/// call from any thread.
///
/// Ownership is per owner = client id + thread id, so the thread that locked
/// is the thread that unlocks (re-entrantly). Code that hops threads uses the
/// *_async functions, which take the owner's thread id explicitly: a
/// thread's current_thread_id(), or an owner id from new_owner_id() for work
/// that is not tied to one thread.
///
/// A hold taken without a lease is kept alive by the Client's watchdog for as
/// long as it is held; a hold taken with a lease (lock_options::with_lease)
/// expires by itself after it.
///
/// Satisfies Lockable and TimedLockable: std::lock_guard, std::unique_lock
/// and std::scoped_lock work with it, and unlock() never throws, so losing
/// the lock while a guard holds it never ends the process. Blocking calls
/// made on the Client's I/O thread (inside a callback) throw
/// errc::would_deadlock instead of hanging.
///
/// Every acquire takes a lock_options (wait, lease, cancellation); the bare
/// durations of try_lock_for() and try_lock_until() are waits, as the
/// standard requires.
class WARDEN_API BasicLock {
 public:
  using milliseconds = std::chrono::milliseconds;  ///< The unit of the lock's times.

  /// \return the lock's name, which is also its Redis key.
  const std::string& name() const noexcept;

  /// Waits until the lock is held by the calling thread, however long others
  /// hold it, and while the server answers that it did not run the attempt
  /// (LOADING, BUSY, ...).
  ///
  /// Throws warden::Error on shutdown, on a key that is not a lock of this
  /// kind, when no connection can be made within Config::command_timeout, and
  /// after Config::retry_attempts + 1 lost replies (of attempts or of
  /// settling them), each costing at most command_timeout; at once with
  /// errc::would_deadlock when the lock is non-re-entrant
  /// (Client::get_non_reentrant_lock) and the calling thread holds it already
  /// (every acquire form does). An attempt whose reply was lost is settled
  /// before anything else of this owner on this lock is sent: kept if it took
  /// effect, taken back if the caller has gone.
  /// \param options the lease (unset: watchdog-renewed) and the cancellation:
  ///   once cancelled, throws errc::cancelled soon after (on the next turn of
  ///   the I/O thread, or once an attempt in flight has answered), holding
  ///   nothing and left in no queue. A wait is refused (errc::invalid_argument):
  ///   use try_lock() for a bounded wait.
  void lock(const lock_options& options = {});

  /// Waits at most options.wait() for the lock; without options, one
  /// attempt, no waiting, watchdog-renewed (Lockable's try_lock()).
  ///
  /// Bound: answers within the wait + Config::command_timeout, whatever the
  /// server does (the last attempt may be sent at the deadline and every
  /// command of the wait, settling a lost reply included, shares that bound).
  /// When the outcome of an attempt is still unknown then, it throws
  /// errc::timed_out (or the connection error) and the attempt is taken back
  /// in the background should it have taken effect. Throws as lock() too.
  /// \param options the wait (>= 0; unset: one attempt), the lease (unset:
  ///   watchdog-renewed), and the cancellation (errc::cancelled, as for lock()).
  /// \return true if the calling thread now holds the lock, false on time-out.
  bool try_lock(const lock_options& options = {});

  /// try_lock() with a wait of `wait` (TimedLockable), watchdog-renewed.
  /// \param wait any std::chrono duration, >= 0.
  /// \return true if the calling thread now holds the lock, false on time-out.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock(lock_options().with_wait(wait));
  }

  /// try_lock() waiting until `deadline` at most (TimedLockable),
  /// watchdog-renewed. A deadline in the past means one attempt.
  /// \param deadline a time point of any clock.
  /// \return true if the calling thread now holds the lock, false on time-out.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock(lock_options().with_wait(detail::until(deadline)));
  }

  /// Releases one hold of the calling thread; the last release deletes the
  /// key and wakes a waiter. Never throws (Lockable requires it), so
  /// std::lock_guard, std::unique_lock and std::scoped_lock are safe even when
  /// the hold was lost while they held it. A release that fails is reported
  /// instead:
  ///   - to the lost-lock listeners (subscribe_lost()), when this client
  ///     believed the hold was still good (a LockLost whose cause is the
  ///     release's error: errc::lease_expired when the key was gone or had
  ///     another owner, a connection error or errc::server_error when the
  ///     outcome is unknown); a hold the watchdog had already reported lost
  ///     is not reported twice;
  ///   - through Config::logger (level error), always;
  ///   - to the caller of unlock_checked(), which returns the cause.
  ///
  /// Whatever the outcome, this client stops renewing the hold, so a release
  /// that failed on a connection error leaves a key that expires with its
  /// lease. Retried releases are idempotent: a release whose reply was lost
  /// is resent and reports its first result. Waits at most
  /// Config::command_timeout (the resends share that deadline). Called on the
  /// Client's I/O thread (inside a callback), it cannot wait: it starts the
  /// release and returns, and failures are reported as above.
  void unlock() noexcept;

  /// As unlock(), and returns the cause of a failure. Never throws.
  /// \return empty on success; errc::not_owner (the calling thread held
  ///   nothing, nothing changed), errc::lease_expired (the hold was lost), a
  ///   connection error, errc::server_error, errc::shut_down, or
  ///   errc::would_deadlock when called on the I/O thread (nothing sent; use
  ///   unlock_async there).
  [[nodiscard]] std::error_code unlock_checked() noexcept;

  /// Deletes the lock whoever holds it.
  /// \return true if there was a lock to delete.
  bool force_unlock();

  /// One round trip. Throws warden::Error on failure.
  /// \return true if anyone holds the lock.
  bool is_locked() const;
  /// One round trip. Throws warden::Error on failure.
  /// \param owner the owner asked about; the calling thread by default.
  /// \return true if `owner` holds the lock.
  bool is_held(thread_id owner = current_thread_id()) const;
  /// One round trip. Throws warden::Error on failure.
  /// \param owner the owner asked about; the calling thread by default.
  /// \return how many times `owner` holds the lock (re-entrant holds), 0 for none.
  int hold_count(thread_id owner = current_thread_id()) const;
  /// One round trip. Throws warden::Error on failure.
  /// \return the time left on the lease; milliseconds::max() for a key
  ///   without expiry; std::nullopt when the lock is not held.
  std::optional<milliseconds> remain_time_to_live() const;

  /// The local bound up to which `owner`'s hold is known to be valid: the
  /// time the last confirmed acquire or renewal was sent plus its lease.
  /// Without a hold (never taken, released, or lost) it is
  /// steady_clock::time_point{}, the clock's epoch (the boot on Linux):
  /// before any now, and safe to subtract from now, so the check to make
  /// right before a critical write,
  /// \code
  ///   if (lock.valid_until() - std::chrono::steady_clock::now() > margin) write();
  /// \endcode
  /// is false then, as it is once the bound has passed. No round trip.
  /// \param owner the owner asked about; the calling thread by default.
  /// \return the bound, on the steady clock.
  std::chrono::steady_clock::time_point valid_until(thread_id owner = current_thread_id()) const;
  /// The validity left: valid_until(owner) - now. The same check:
  /// `if (lock.valid_for() > margin) write();`
  /// \param owner the owner asked about; the calling thread by default.
  /// \return whole milliseconds rounded down; zero once valid_until() has
  ///   passed, and without a hold.
  milliseconds valid_for(thread_id owner = current_thread_id()) const;

  /// Registers a lost-lock listener: it is called (on the I/O thread) when a
  /// hold of this lock by any owner of this client is found lost — the key
  /// vanished or changed owner, a fixed lease ran out, no renewal was
  /// confirmed for a whole lease — or when a release of a hold believed good
  /// failed (see unlock()). Every handle of the lock shares its listeners;
  /// any number may be registered.
  /// \param listener called with what was lost (see lost_listener).
  /// \return the subscription: the listener stays registered until it is
  ///   destroyed or reset.
  [[nodiscard]] LostSubscription subscribe_lost(lost_listener listener);

  /// lock() for `owner`, without blocking: the future's get() returns once
  /// held, or throws what lock() throws. An AcquireFuture destroyed before
  /// get() gives back the hold (see AcquireFuture).
  /// \param owner the thread id that will hold the lock.
  /// \param options as for lock() (lease, cancellation; no wait).
  /// \return the future of the acquire.
  AcquireFuture<void> lock_async(thread_id owner, const lock_options& options = {});
  /// lock() for `owner`, reporting to a callback (see completion), which then
  /// owns the hold. The form to use inside a lost-lock listener or another
  /// callback.
  /// \param owner the thread id that will hold the lock.
  /// \param options as for lock() (lease, cancellation; no wait).
  /// \param done called once with the outcome.
  void lock_async(thread_id owner, const lock_options& options, completion<void> done);
  /// try_lock(options) for `owner`, without blocking.
  /// \param owner the thread id that will hold the lock.
  /// \param options as for try_lock() (wait, lease, cancellation).
  /// \return the future of the acquire: true if held, false on time-out.
  AcquireFuture<bool> try_lock_async(thread_id owner, const lock_options& options = {});
  /// try_lock(options) for `owner`, reporting to a callback (see completion).
  /// \param owner the thread id that will hold the lock.
  /// \param options as for try_lock() (wait, lease, cancellation).
  /// \param done called once with the outcome: true if held, false on time-out.
  void try_lock_async(thread_id owner, const lock_options& options, completion<bool> done);
  /// Releases one hold of `owner` as unlock() does (listeners are told of a
  /// lost hold), and also delivers the failure.
  /// \param owner the thread id holding the lock.
  /// \return a future that throws warden::Error as unlock_checked() would return it.
  std::future<void> unlock_async(thread_id owner);
  /// As unlock_async(owner), reporting to a callback.
  /// \param owner the thread id holding the lock.
  /// \param done called once with the cause of a failure (empty on success).
  void unlock_async(thread_id owner, completion<void> done);
  /// force_unlock() without blocking.
  /// \return a future of whether there was a lock to delete.
  std::future<bool> force_unlock_async();
  /// force_unlock() reporting to a callback.
  /// \param done called once with whether there was a lock to delete.
  void force_unlock_async(completion<bool> done);
  /// is_locked() without blocking.
  /// \return a future of whether anyone holds the lock.
  std::future<bool> is_locked_async() const;
  /// is_locked() reporting to a callback.
  /// \param done called once with whether anyone holds the lock.
  void is_locked_async(completion<bool> done) const;
  /// is_held(owner) without blocking.
  /// \param owner the owner asked about.
  /// \return a future of whether `owner` holds the lock.
  std::future<bool> is_held_async(thread_id owner) const;
  /// is_held(owner) reporting to a callback.
  /// \param owner the owner asked about.
  /// \param done called once with whether `owner` holds the lock.
  void is_held_async(thread_id owner, completion<bool> done) const;
  /// hold_count(owner) without blocking.
  /// \param owner the owner asked about.
  /// \return a future of `owner`'s hold count.
  std::future<int> hold_count_async(thread_id owner) const;
  /// hold_count(owner) reporting to a callback.
  /// \param owner the owner asked about.
  /// \param done called once with `owner`'s hold count.
  void hold_count_async(thread_id owner, completion<int> done) const;
  /// remain_time_to_live() without blocking.
  /// \return a future of the time left on the lease (see remain_time_to_live()).
  std::future<std::optional<milliseconds>> remain_time_to_live_async() const;
  /// remain_time_to_live() reporting to a callback.
  /// \param done called once with the time left on the lease.
  void remain_time_to_live_async(completion<std::optional<milliseconds>> done) const;

 private:
  friend class Lock;
  friend class FencedLock;
  friend struct detail::access;
  explicit BasicLock(std::shared_ptr<detail::LockCore> core) noexcept;

  std::shared_ptr<detail::LockCore> core_;
};

/// \brief A handle to one named lock of one Client: a re-entrant lock held
/// by one owner (client id + thread id) at a time.
///
/// Made by Client::get_lock() (and get_fair_lock(), get_spin_lock(),
/// get_non_reentrant_lock(), a ReadWriteLock's halves: FairLock and SpinLock
/// are Locks whose kind is fixed by the Client call that made them). Every
/// operation is BasicLock's; a FencedLock converts to a Lock too.
class WARDEN_API Lock final : public BasicLock {
 private:
  friend class FencedLock;
  friend struct detail::access;
  explicit Lock(std::shared_ptr<detail::LockCore> core) noexcept : BasicLock(std::move(core)) {}
};

}  // namespace warden
