// warden — distributed locks on Redis.
// CompositeLock: the operations MultiLock and RedLock share.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <system_error>
#include <vector>

#include <warden/acquire_future.hpp>
#include <warden/detail/duration.hpp>
#include <warden/lock.hpp>
#include <warden/lock_lost.hpp>
#include <warden/lock_options.hpp>
#include <warden/thread_id.hpp>

namespace warden {

namespace detail {
class CompositeCore;
struct access;  // the library's own way in (src/api/access.hpp)
}  // namespace detail

class MultiLock;
class RedLock;

/// \brief The operations of a lock made of member locks: MultiLock (all
/// members) and RedLock (a majority of members on independent servers).
///
/// Not made directly: construct a MultiLock or a RedLock. What "held" means,
/// how acquiring retries and what a release reports are the kind's (see
/// MultiLock and RedLock); the calls are the same.
///
/// Ownership is per thread id, as for Lock: every member is taken for the
/// same owner (client id + thread id), so a composite lock is re-entrant.
/// Handles are cheap to copy; copies share their holds and their listeners.
/// Every member function is safe to call from any thread.
///
/// Satisfies Lockable and TimedLockable, so std::lock_guard,
/// std::unique_lock and std::scoped_lock work. unlock() never throws.
/// Blocking calls made on the I/O thread of any member's Client throw
/// errc::would_deadlock. The lock's own back-off timers run on the I/O thread
/// of the first member's Client; if that Client is destroyed, pending calls
/// fail with errc::shut_down. A moved-from handle's calls fail with
/// errc::invalid_argument.
class WARDEN_API CompositeLock {
 public:
  using milliseconds = std::chrono::milliseconds;  ///< The unit of the lock's times.

  /// \return the member locks, as given to the constructor.
  const std::vector<Lock>& members() const noexcept;

  /// Waits until the lock is held by the calling thread (what that means is
  /// the kind's). Throws warden::Error with the cause (a member's, or
  /// errc::quorum_not_reached for a RedLock), after releasing what it took.
  /// \param options the lease (> 0; unset: every member's hold is renewed by
  ///   its Client's watchdog), applied to every member once the lock is
  ///   held, so that all expire together; and the cancellation: once
  ///   cancelled, throws errc::cancelled soon after (members' waits end at
  ///   once; between rounds within a short pause), holding no member. A wait
  ///   is refused (errc::invalid_argument): use try_lock() for a bounded wait.
  void lock(const lock_options& options = {});

  /// Waits at most options.wait() for the lock; without options, one round,
  /// no retry (Lockable's try_lock()). An error throws within the wait time
  /// plus one command timeout, after releasing the members taken.
  /// \param options the wait (>= 0; unset: one round), the lease and the
  ///   cancellation, as for lock().
  /// \return true if the calling thread now holds the lock, false on time-out
  ///   (nothing held).
  bool try_lock(const lock_options& options = {});

  /// try_lock() with a wait of `wait` (TimedLockable), watchdog-renewed.
  /// \param wait any std::chrono duration, >= 0.
  /// \return true if held, false on time-out.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock(lock_options().with_wait(wait));
  }

  /// try_lock() waiting until `deadline` at most (TimedLockable),
  /// watchdog-renewed. A deadline in the past means one round.
  /// \param deadline a time point of any clock.
  /// \return true if held, false on time-out.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock(lock_options().with_wait(detail::until(deadline)));
  }

  /// Releases the calling thread's latest hold on every member it was taken
  /// on, all in parallel; never throws (Lockable), so std guards are safe
  /// when a member was lost while held. A failure is logged
  /// (Config::logger of the first member's Client, level error), told to
  /// the lost-lock listeners unless they were already told of this hold's
  /// loss, and returned by unlock_checked(). On a member's I/O thread it
  /// starts the release without waiting.
  void unlock() noexcept;

  /// As unlock(), and returns the cause of a failure. Never throws.
  /// \return empty on success; the kind's failure (see MultiLock, RedLock);
  ///   errc::not_owner, without sending anything, when the calling thread
  ///   holds nothing through this lock (or a copy of it);
  ///   errc::would_deadlock on a member's I/O thread, without releasing.
  [[nodiscard]] std::error_code unlock_checked() noexcept;

  /// One round trip per member, in parallel. Throws the kind's error when
  /// the members' answers leave it undecided.
  /// \return true if the lock is held, by anyone (MultiLock: every member
  ///   locked; RedLock: a majority of the nodes have the key).
  bool is_locked() const;

  /// The local bound up to which the whole lock is known to be held by
  /// `owner` (MultiLock: the earliest of the members'; RedLock: see there).
  /// steady_clock::time_point{} (the clock's epoch: before any now, safe to
  /// subtract from now, see BasicLock::valid_until()) when it holds nothing
  /// through this lock, or after the hold was reported lost. No round trip.
  /// \param owner the owner asked about; the calling thread by default.
  /// \return the bound, on the steady clock.
  std::chrono::steady_clock::time_point valid_until(thread_id owner = current_thread_id()) const;
  /// The validity left before valid_until(owner).
  /// \param owner the owner asked about; the calling thread by default.
  /// \return whole milliseconds rounded down; zero once it has passed, and
  ///   without a hold.
  milliseconds valid_for(thread_id owner = current_thread_id()) const;

  /// Registers a lost-lock listener, called once per hold when the hold is
  /// found lost (what that means is the kind's) or when its release failed.
  /// It runs on a member's Client I/O thread and must not block.
  /// LockLost::lock_name names the member (for a failed release: every
  /// member); message names the composite lock too.
  /// \param listener called with what was lost (see lost_listener).
  /// \return the subscription: the listener stays registered until it is
  ///   destroyed or reset.
  [[nodiscard]] LostSubscription subscribe_lost(lost_listener listener);

  /// lock(options) for `owner`, without blocking. The future is completed on
  /// one of the members' I/O threads; an AcquireFuture destroyed before get()
  /// gives back the hold its acquire takes (see AcquireFuture).
  /// \param owner the thread id that will hold the lock, e.g. from new_owner_id().
  /// \param options as for lock().
  /// \return the future of the acquire.
  AcquireFuture<void> lock_async(thread_id owner, const lock_options& options = {});
  /// lock(options) for `owner`, reporting to a callback that runs once on one
  /// of the members' I/O threads (see completion). The form to use inside a
  /// lost-lock listener.
  /// \param owner the thread id that will hold the lock.
  /// \param options as for lock().
  /// \param done called once with the outcome.
  void lock_async(thread_id owner, const lock_options& options, completion<void> done);
  /// try_lock(options) for `owner`, without blocking.
  /// \param owner the thread id that will hold the lock.
  /// \param options as for try_lock().
  /// \return the future of the acquire: true if held, false on time-out.
  AcquireFuture<bool> try_lock_async(thread_id owner, const lock_options& options = {});
  /// try_lock(options) for `owner`, reporting to a callback.
  /// \param owner the thread id that will hold the lock.
  /// \param options as for try_lock().
  /// \param done called once with the outcome: true if held, false on time-out.
  void try_lock_async(thread_id owner, const lock_options& options, completion<bool> done);
  /// Releases `owner`'s latest hold as unlock() does (listeners are told of a
  /// lost hold), and delivers the failure.
  /// \param owner the thread id holding the lock.
  /// \return a future that throws warden::Error as unlock_checked() would return it.
  std::future<void> unlock_async(thread_id owner);
  /// As unlock_async(owner), reporting to a callback.
  /// \param owner the thread id holding the lock.
  /// \param done called once with the cause of a failure (empty on success).
  void unlock_async(thread_id owner, completion<void> done);
  /// is_locked() without blocking.
  /// \return a future of whether the lock is held.
  std::future<bool> is_locked_async() const;
  /// is_locked() reporting to a callback.
  /// \param done called once with whether the lock is held.
  void is_locked_async(completion<bool> done) const;

 private:
  friend class MultiLock;
  friend class RedLock;
  friend struct detail::access;
  CompositeLock(std::shared_ptr<detail::CompositeCore> core, std::vector<Lock>&& members) noexcept;

  std::shared_ptr<detail::CompositeCore> core_;
  std::vector<Lock> members_;  // as given; the core keeps their shared state
};

}  // namespace warden
