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
#include <warden/detail/timed_lockable.hpp>
#include <warden/lock_lost.hpp>
#include <warden/thread_id.hpp>

namespace warden {

namespace detail {
class LockCore;
struct access;  // the library's own way in (src/api/access.hpp)
}

namespace detail {
template <class T>
struct completion_of {
  using type = std::function<void(std::error_code error, T value)>;
};
template <>
struct completion_of<void> {
  using type = std::function<void(std::error_code error)>;
};
}  // namespace detail

// The completion callback of an asynchronous call: completion<void> is
// void(std::error_code), completion<T> is void(std::error_code, T) (T is
// value-initialised when error is set). It runs exactly once, on the Client's
// I/O thread (also for bad input and after shutdown, where it runs at once on
// the calling thread if the I/O thread is gone). It must not block; it may
// start further *_async calls with callbacks. What it throws is caught and
// logged. The error's text (naming the lock and server) is logged at debug level.
template <class T>
using completion = typename detail::completion_of<T>::type;

// A handle to one named lock of one Client. Handles are cheap to copy; copies
// refer to the same lock. Every member is safe to call from any thread.
//
// Ownership is per owner = client id + thread id, so the thread that locked is
// the thread that unlocks (re-entrantly). Code that hops threads uses the
// *_async functions, which take the owner's thread id explicitly.
//
// A hold taken without a lease is kept alive by the Client's watchdog for as
// long as it is held; a hold taken with a lease expires by itself after it.
//
// Lock satisfies Lockable and TimedLockable: std::lock_guard, std::unique_lock
// and std::scoped_lock work with it, and unlock() never throws, so losing the
// lock while a guard holds it never ends the process. Blocking calls made on
// the Client's I/O thread (inside a callback) throw errc::would_deadlock
// instead of hanging.
class WARDEN_API Lock : public detail::timed_lockable<Lock> {
 public:
  using milliseconds = std::chrono::milliseconds;

  // The lock's name, which is also its Redis key.
  const std::string& name() const noexcept;

  // Waits until the lock is held by the calling thread (watchdog-renewed lease),
  // however long others hold it, and while the server answers that it did not
  // run the attempt (LOADING, BUSY, ...). Throws warden::Error on shutdown, on
  // a key that is not a lock of this kind, when no connection can be made
  // within Config::command_timeout, and after Config::retry_attempts + 1 lost
  // replies (of attempts or of settling them), each costing at most
  // command_timeout; at once with errc::would_deadlock when the lock is
  // non-re-entrant (Client::get_non_reentrant_lock) and the calling thread
  // holds it already (every acquire form does). An attempt whose reply was
  // lost is settled before anything else of this owner on this lock is sent:
  // kept if it took effect, taken back if the caller has gone.
  void lock();
  // As lock(), until `cancel` is cancelled: then throws errc::cancelled soon
  // after (on the next turn of the I/O thread, or once an attempt in flight
  // has answered), holding nothing and left in no queue.
  void lock(const cancel_token& cancel);
  // As lock(), with a fixed lease after which the hold expires by itself.
  // Every lease must be positive and at most ten years (errc::invalid_argument).
  using detail::timed_lockable<Lock>::lock;

  // One attempt, no waiting. True if the calling thread now holds the lock.
  // Answers within Config::command_timeout.
  bool try_lock();

  // try_lock_for(wait[, lease]) waits at most `wait` (>= 0) for the lock. With
  // a lease the hold is fixed-lease; without, the watchdog renews it. Returns
  // false on time-out. try_lock_until(deadline[, lease]) waits until `deadline`
  // at most (a deadline in the past means one attempt). Any std::chrono
  // duration or clock; both come from detail::timed_lockable.
  //
  // Bound: either answers within wait + Config::command_timeout, whatever the
  // server does (the last attempt may be sent at the deadline and every
  // command of the wait, settling a lost reply included, shares that bound).
  // When the outcome of an attempt is still unknown then, it throws
  // errc::timed_out (or the connection error) and the attempt is taken back
  // in the background should it have taken effect.

  // Releases one hold of the calling thread; the last release deletes the key
  // and wakes a waiter. Never throws (Lockable requires it), so std::lock_guard,
  // std::unique_lock and std::scoped_lock are safe even when the hold was lost
  // while they held it. A release that fails is reported instead:
  //   - through the lost-lock listeners, when this client believed the hold was
  //     still good (a LockLost whose cause is the release's error:
  //     errc::lease_expired when the key was gone or had another owner, a
  //     connection error or errc::server_error when the outcome is unknown);
  //     a hold the watchdog had already reported lost is not reported twice;
  //   - through Config::logger (level error), always;
  //   - to the caller of unlock_checked(), which returns the cause.
  // Whatever the outcome, this client stops renewing the hold, so a release
  // that failed on a connection error leaves a key that expires with its lease.
  // Retried releases are idempotent: a release whose reply was lost is resent
  // and reports its first result. Waits at most Config::command_timeout (the
  // resends share that deadline).
  // Called on the Client's I/O thread (inside a callback), it cannot wait:
  // it starts the release and returns, and failures are reported as above.
  void unlock() noexcept;

  // As unlock(), and returns the cause of a failure (empty on success):
  // errc::not_owner (the calling thread held nothing, nothing changed),
  // errc::lease_expired (the hold was lost), a connection error,
  // errc::server_error, errc::shut_down, or errc::would_deadlock when called on
  // the I/O thread (nothing sent; use unlock_async there). Never throws.
  [[nodiscard]] std::error_code unlock_checked() noexcept;

  // Deletes the lock whoever holds it. True if there was a lock to delete.
  bool force_unlock();

  // Queries (one round trip each). Throw warden::Error on failure.
  bool is_locked() const;
  bool is_held_by_current_thread() const;
  bool is_held_by_thread(thread_id owner) const;
  int hold_count() const;  // of the calling thread
  // Time left on the lease; std::nullopt when the lock is not held.
  std::optional<milliseconds> remain_time_to_live() const;

  // Local bound up to which the calling thread's (or `owner`'s) hold is known
  // to be valid: the time the last confirmed acquire or renewal was sent plus
  // its lease. Without a hold (never taken, released, or lost) it is
  // steady_clock::time_point{}, the clock's epoch (the boot on Linux): before
  // any now, and safe to subtract from now (the difference is minus the
  // uptime), so the check to make right before a critical write,
  //   if (lock.valid_until() - std::chrono::steady_clock::now() > margin) write();
  // is false then, as it is once the bound has passed.
  std::chrono::steady_clock::time_point valid_until() const;
  std::chrono::steady_clock::time_point valid_until(thread_id owner) const;
  // The validity left: valid_until() - now in whole milliseconds, rounded
  // down; zero once valid_until() has passed, and without a hold. The same
  // check: if (lock.valid_for() > margin) write();
  milliseconds valid_for() const;
  milliseconds valid_for(thread_id owner) const;

  // Lost-lock listeners: each is called (on the I/O thread) when a hold of this
  // lock by any owner of this client is found lost — the key vanished or
  // changed owner, a fixed lease ran out, no renewal was confirmed for a whole
  // lease — or when a release of a hold believed good failed (see unlock()).
  // Every handle of the lock shares its listeners; any number may be added.
  // After remove_lost_listener() returns, the listener is not running and is
  // never called again (when called from inside a listener, a call already
  // under way on this thread is not waited for). Removing an unknown id does
  // nothing. A listener is kept until removed: one that captures a handle of
  // its own lock keeps the lock and its Client's state alive until then.
  lost_listener_id add_lost_listener(lost_listener listener);
  void remove_lost_listener(lost_listener_id id);
  // add_lost_listener, removed again when the returned subscription goes away.
  [[nodiscard]] LostSubscription subscribe_lost(lost_listener listener);

  // Asynchronous twins. They never block. `owner` is the thread id that will
  // hold (or holds) the lock: a thread's current_thread_id(), or an owner id
  // from new_owner_id() for work that is not tied to one thread.
  //
  // Future forms: failures arrive as warden::Error through the future. An
  // AcquireFuture releases a hold nobody collected with get() (see
  // acquire_future.hpp); a callback form's hold is the callback's.
  //
  // Callback forms: the callback runs once on the I/O thread (see completion);
  // they are the ones to use inside a lost-lock listener or another callback.
  AcquireFuture<void> lock_async(thread_id owner);
  AcquireFuture<void> lock_async(thread_id owner, milliseconds lease);
  // Fails with errc::cancelled once `cancel` is cancelled while it waits.
  AcquireFuture<void> lock_async(thread_id owner, const cancel_token& cancel);
  void lock_async(thread_id owner, completion<void> done);
  void lock_async(thread_id owner, milliseconds lease, completion<void> done);
  AcquireFuture<bool> try_lock_async(thread_id owner, milliseconds wait = milliseconds{0});
  AcquireFuture<bool> try_lock_async(thread_id owner, milliseconds wait, milliseconds lease);
  void try_lock_async(thread_id owner, milliseconds wait, completion<bool> done);
  void try_lock_async(thread_id owner, milliseconds wait, milliseconds lease, completion<bool> done);
  // Releases as unlock() does (listeners are told of a lost hold), and also
  // delivers the failure (as warden::Error through the future, or as the code).
  std::future<void> unlock_async(thread_id owner);
  void unlock_async(thread_id owner, completion<void> done);
  std::future<bool> force_unlock_async();
  void force_unlock_async(completion<bool> done);
  std::future<bool> is_locked_async() const;
  void is_locked_async(completion<bool> done) const;
  std::future<bool> is_held_by_thread_async(thread_id owner) const;
  void is_held_by_thread_async(thread_id owner, completion<bool> done) const;
  std::future<int> hold_count_async(thread_id owner) const;
  void hold_count_async(thread_id owner, completion<int> done) const;
  std::future<std::optional<milliseconds>> remain_time_to_live_async() const;
  void remain_time_to_live_async(completion<std::optional<milliseconds>> done) const;

 protected:
  friend class detail::timed_lockable<Lock>;
  friend struct detail::access;
  // Handles are made by Client (through detail::access) and copied from there.
  explicit Lock(std::shared_ptr<detail::LockCore> core) noexcept;
  bool try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease);
  void lock_with_lease(milliseconds lease);

  std::shared_ptr<detail::LockCore> core_;
};

}  // namespace warden
