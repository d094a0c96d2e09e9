// warden — distributed locks on Redis.
// Lock: a re-entrant lock held by one owner (client id + thread id) at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <warden/cancel.hpp>
#include <warden/detail/timed_lockable.hpp>
#include <warden/thread_id.hpp>

namespace warden {

namespace detail {
class LockCore;
}

// What a lost-lock callback is told.
struct LockLost {
  std::string lock_name;
  thread_id owner;       // the thread id part of the owner whose hold was lost
  std::error_code cause; // errc::lease_expired (gone on the server) or a connection error
  std::string message;   // names the lock and the server
};

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
// and std::scoped_lock work with it. Blocking calls made on the Client's I/O
// thread (inside a callback) throw errc::would_deadlock instead of hanging.
class Lock : public detail::timed_lockable<Lock> {
 public:
  using milliseconds = std::chrono::milliseconds;

  explicit Lock(std::shared_ptr<detail::LockCore> core) noexcept;

  // The lock's name, which is also its Redis key.
  const std::string& name() const noexcept;

  // Waits until the lock is held by the calling thread (watchdog-renewed lease).
  // Throws warden::Error on connection failure or shutdown.
  void lock();
  // As lock(), until `cancel` is cancelled: then throws errc::cancelled soon
  // after (on the next turn of the I/O thread, or once an attempt in flight
  // has answered), holding nothing and left in no queue.
  void lock(const cancel_token& cancel);
  // As lock(), with a fixed lease after which the hold expires by itself.
  // Every lease must be positive and at most ten years (errc::invalid_argument).
  using detail::timed_lockable<Lock>::lock;

  // One attempt, no waiting. True if the calling thread now holds the lock.
  bool try_lock();

  // try_lock_for(wait[, lease]) waits at most `wait` (>= 0) for the lock. With
  // a lease the hold is fixed-lease; without, the watchdog renews it. Returns
  // false on time-out. try_lock_until(deadline[, lease]) waits until `deadline`
  // at most (a deadline in the past means one attempt). Any std::chrono
  // duration or clock; both come from detail::timed_lockable.

  // Releases one hold of the calling thread; the last release deletes the key
  // and wakes a waiter. Throws errc::not_owner when the calling thread does not
  // hold the lock, errc::lease_expired when it did but the lease ran out.
  // Retried releases are idempotent: a release whose reply was lost is resent
  // and reports its first result. Whatever the outcome, this client stops
  // renewing the released hold, so a release that failed on a connection
  // error leaves a key that expires with its lease.
  //
  // Unlike std::mutex, this unlock can fail, and it says so by throwing
  // (as Redisson's does). While an exception is already propagating it logs
  // instead, so a guard unwinding after an error never ends the program. A
  // std::lock_guard leaving its scope normally calls unlock() from a noexcept
  // destructor, so a failure there (the hold was lost, the server is down)
  // terminates: code that must survive losing its lock unlocks explicitly
  // (std::unique_lock and unlock() in a try) or uses unlock_async.
  void unlock();

  // Deletes the lock whoever holds it. True if there was a lock to delete.
  bool force_unlock();

  // Queries (one round trip each).
  bool is_locked() const;
  bool is_held_by_current_thread() const;
  bool is_held_by_thread(thread_id owner) const;
  int hold_count() const;  // of the calling thread
  // Time left on the lease; std::nullopt when the lock is not held.
  std::optional<milliseconds> remain_time_to_live() const;

  // Local bound up to which the calling thread's hold is known to be valid:
  // the time the last confirmed acquire or renewal was sent plus its lease.
  // time_point::min() when this client knows of no hold by the calling thread.
  std::chrono::steady_clock::time_point valid_until() const;
  std::chrono::steady_clock::time_point valid_until(thread_id owner) const;

  // Called (on the I/O thread) when a hold of this lock by any owner of this
  // client is found lost: the key vanished or changed owner, or no renewal was
  // confirmed for a whole lease. Replaces the previous callback.
  void on_lost(std::function<void(const LockLost&)> callback);

  // Asynchronous twins. They never block; failures arrive as warden::Error
  // through the future. `owner` is the thread id that will hold the lock.
  std::future<void> lock_async(thread_id owner);
  std::future<void> lock_async(thread_id owner, milliseconds lease);
  // Fails with errc::cancelled once `cancel` is cancelled while it waits.
  std::future<void> lock_async(thread_id owner, const cancel_token& cancel);
  std::future<bool> try_lock_async(thread_id owner, milliseconds wait = milliseconds{0});
  std::future<bool> try_lock_async(thread_id owner, milliseconds wait, milliseconds lease);
  std::future<void> unlock_async(thread_id owner);
  std::future<bool> force_unlock_async();
  std::future<bool> is_locked_async() const;
  std::future<std::optional<milliseconds>> remain_time_to_live_async() const;

  // Internal: the shared state behind this handle.
  const std::shared_ptr<detail::LockCore>& core() const noexcept { return core_; }

 protected:
  friend class detail::timed_lockable<Lock>;
  bool try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease);
  void lock_with_lease(milliseconds lease);

  std::shared_ptr<detail::LockCore> core_;
};

}  // namespace warden
