// warden — distributed locks on Redis.
// MultiLock: several locks taken and released as one, all or nothing.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

#include <warden/cancel.hpp>
#include <warden/detail/timed_lockable.hpp>
#include <warden/lock.hpp>
#include <warden/thread_id.hpp>

namespace warden {

namespace detail {
class CompositeCore;
struct access;  // the library's own way in (src/api/access.hpp)
}

// Holds every one of its member locks, or none of them. Members may be any
// kind of warden lock (Lock, FairLock, a read or a write lock), from one Client
// or from several Clients on different servers.
//
// Acquiring sends to all members at once (not one after another). If any
// member cannot be taken, the members already taken are released and the
// whole set is tried again after a jittered back-off, until the wait time runs
// out. Each member waits only a short, randomly drawn time per attempt, so two
// callers locking {A, B} and {B, A} at the same time do not deadlock: the one
// whose attempt ends first lets go, and the other gets both.
//
// Ownership is per thread id, as for Lock: every member is taken for the same
// owner (client id + thread id), so a MultiLock is re-entrant, and a member
// the owner already holds on its own is simply re-entered. Handles are cheap
// to copy; copies share their holds. Every member function is safe to call from
// any thread.
//
// Leases: while an attempt is under way the members are taken with a lease long
// enough not to expire before the last one is taken; once all are held they get
// the caller's lease (so all expire together), or, without a lease, are renewed
// by their Clients' watchdogs.
//
// Satisfies Lockable and TimedLockable, so std::lock_guard, std::unique_lock
// and std::scoped_lock work. unlock() never throws. Blocking calls made
// on the I/O thread of any member's Client throw errc::would_deadlock.
//
// The MultiLock's own back-off timers run on the I/O thread of the first
// member's Client; if that Client is destroyed, pending calls fail with
// errc::shut_down.
class WARDEN_API MultiLock : public detail::timed_lockable<MultiLock> {
 public:
  using milliseconds = std::chrono::milliseconds;

  // Throws warden::Error (errc::invalid_argument) when there are no members.
  // A lock listed twice is taken twice (re-entrantly) and released twice.
  MultiLock(std::initializer_list<Lock> members);
  explicit MultiLock(std::vector<Lock> members);

  const std::vector<Lock>& members() const noexcept;

  // Waits until every member is held by the calling thread (watchdog-renewed).
  // Throws warden::Error with the failing member's cause (connection refused,
  // server error, ...) and releases what it took when a member fails with an
  // error rather than being held by someone else.
  void lock();
  // As lock(), until `cancel` is cancelled: then throws errc::cancelled soon
  // after (members' waits end at once; between rounds within a short pause),
  // holding no member.
  void lock(const cancel_token& cancel);
  // As lock(), with a fixed lease (> 0) applied to every member once all are
  // held; the holds expire by themselves after it.
  using detail::timed_lockable<MultiLock>::lock;

  // One attempt on every member, no waiting. True if all are now held.
  bool try_lock();

  // try_lock_for(wait[, lease]) / try_lock_until(deadline[, lease]) (from
  // detail::timed_lockable): wait at most `wait` (>= 0). With a lease the holds
  // are fixed-lease; without, the watchdog renews them. False on time-out
  // (nothing held); an error from any member throws, within the wait time plus
  // one command timeout, after releasing the others.

  // Releases one hold of every member by the calling thread, all in parallel.
  // Every member is released even if some fail. Never throws (Lockable), so
  // std guards are safe when a member was lost while held. A failure is
  // logged (Config::logger of the first member's Client, level error), told
  // to the lost-lock listeners unless they were already told of this hold's
  // loss, and returned by unlock_checked(): the code is the first failing
  // member's (errc::lease_expired for a member whose lease ran out, a
  // connection error, ...), the logged message names every failing member and
  // its cause; errc::not_owner, without sending anything, when the calling
  // thread holds nothing through this MultiLock (or a copy of it). On a
  // member's I/O thread unlock() starts the release without waiting, and
  // unlock_checked() returns errc::would_deadlock without releasing.
  void unlock() noexcept;
  [[nodiscard]] std::error_code unlock_checked() noexcept;

  // True if every member is locked, by anyone (one round trip per member, in
  // parallel). Throws the first member error.
  bool is_locked() const;

  // The earliest of the members' valid_until() for the calling thread (or
  // `owner`): the local bound up to which the whole set is known to be held.
  // steady_clock::time_point{} (the clock's epoch: before any now, safe to
  // subtract from now, see Lock::valid_until()) when it holds nothing through
  // this MultiLock, or after a member was reported lost.
  std::chrono::steady_clock::time_point valid_until() const;
  std::chrono::steady_clock::time_point valid_until(thread_id owner) const;
  // The validity left before valid_until(), in whole milliseconds rounded
  // down; zero once it has passed, and without a hold.
  std::chrono::milliseconds valid_for() const;
  std::chrono::milliseconds valid_for(thread_id owner) const;

  // Lost-lock listeners (see Lock): each is called once per hold when any
  // member of it is found lost (its key vanished or changed owner, its lease
  // ran out, or no renewal was confirmed for a whole lease), or when the
  // hold's release failed. Runs on that member's Client I/O thread; it must
  // not block. LockLost::lock_name names the member (for a failed release:
  // every member); message names the MultiLock too. The other members stay
  // held until unlock(). Copies of a MultiLock share listeners.
  lost_listener_id add_lost_listener(lost_listener listener);
  void remove_lost_listener(lost_listener_id id);
  [[nodiscard]] LostSubscription subscribe_lost(lost_listener listener);

  // Asynchronous twins: never block. `owner` is the thread id that holds (or
  // will hold) the locks, e.g. from new_owner_id(). Future forms: errors arrive
  // as warden::Error through the future, which is completed on one of the
  // members' I/O threads; an AcquireFuture destroyed before get() gives back
  // the hold its acquire takes (see acquire_future.hpp). Callback forms: the
  // callback runs once on one of the members' I/O threads and must not block
  // (see completion in lock.hpp); they are the forms to use inside a lost-lock
  // listener. unlock_async reports a lost hold to the listeners as unlock() does.
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
  std::future<void> unlock_async(thread_id owner);
  void unlock_async(thread_id owner, completion<void> done);
  std::future<bool> is_locked_async() const;
  void is_locked_async(completion<bool> done) const;

 private:
  friend struct detail::access;
  friend class detail::timed_lockable<MultiLock>;
  bool try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease);
  void lock_with_lease(milliseconds lease);

  std::shared_ptr<detail::CompositeCore> core_;
  std::vector<Lock> members_;  // as given; the core keeps their shared state
};

}  // namespace warden
