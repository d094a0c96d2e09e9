// warden — distributed locks on Redis.
// RedLock: one lock over N independent Redis masters (the Redlock algorithm).
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

// A lock that is held when a majority (N/2 + 1) of N independent Redis masters
// hold it for the same owner. Each member is one lock on one master, normally
// the same name through a different Client per server:
//
//   warden::RedLock lock{c1.get_lock("orders"), c2.get_lock("orders"), c3.get_lock("orders")};
//
// Members may be of any kind (Lock, FairLock, read or write lock). Use an odd
// N: a majority of 4 is 3, so 4 nodes tolerate one failure, no more than 3 do,
// and a 2–2 split leaves nobody the lock. See docs/choosing-a-lock.md for what
// RedLock does and does not guarantee.
//
// An acquire round asks every node at once, each within a time budget of
// min(command_timeout, max(lease/10, 50 ms)); a node that refuses, errs or does
// not answer in time counts as a "no". The round succeeds as soon as a majority
// said yes and validity = lease − elapsed − drift is positive (drift = 1% of the
// lease + 2 ms; without a lease, the shortest watchdog timeout of the members'
// Clients is the lease); nodes answering yes after that are held as well.
// Otherwise the holds taken are released (also those answering late), and the
// round is repeated after a jittered back-off while wait time is left.
//
// Without a lease, each node's hold is renewed by its Client's watchdog. A node
// that loses the key (restarted empty, key deleted or expired) is taken again
// while the other nodes still confirm a majority valid, and counts only if they
// still do when the re-take answers. Once a majority's confirmed validity has
// run out (see valid_until()), the hold is lost for good: the lost-lock
// callback fires once, the nodes still held are released (no more renewals),
// nothing is taken back, and unlock() reports errc::lease_expired.
//
// Ownership, re-entry, handles, thread safety, Lockable and would_deadlock: as
// for MultiLock. The RedLock's own back-off timers run on the I/O thread of
// the first member's Client.
class WARDEN_API RedLock : public detail::timed_lockable<RedLock> {
 public:
  using milliseconds = std::chrono::milliseconds;

  // Throws warden::Error (errc::invalid_argument) for fewer than 3 members or
  // two members on one server (one Client twice, or two Clients of one
  // host:port whatever their database; "localhost" is 127.0.0.1); nothing is
  // sent to Redis.
  RedLock(std::initializer_list<Lock> members);
  explicit RedLock(std::vector<Lock> members);

  const std::vector<Lock>& members() const noexcept;
  std::size_t quorum() const noexcept;  // members().size() / 2 + 1

  // Waits until a majority holds the lock for the calling thread
  // (watchdog-renewed). Throws warden::Error (errc::quorum_not_reached), after
  // releasing what it took, as soon as a round has more failed nodes than the
  // quorum tolerates; what() lists every node's server and cause (taken by
  // another owner / timed out / connection refused / server error / ...).
  void lock();
  // As lock(), until `cancel` is cancelled: then throws errc::cancelled soon
  // after (members' waits end at once; between rounds within a short pause),
  // holding no member.
  void lock(const cancel_token& cancel);
  // As lock(), with a fixed lease (> 0) on every node.
  using detail::timed_lockable<RedLock>::lock;

  // One round, no retry. True if a majority now holds the lock.
  bool try_lock();

  // try_lock_for(wait[, lease]) / try_lock_until(deadline[, lease]) (from
  // detail::timed_lockable): rounds until a majority holds it or `wait` (>= 0)
  // runs out. False when only other owners stood in the way;
  // errc::quorum_not_reached (with every node's cause) when the last round also
  // had failed nodes, or when failed nodes alone made a majority impossible, or
  // when every round that reached a majority took too long to leave any validity.

  // Releases the calling thread's latest hold on every node it was taken on,
  // all in parallel. An acquire returns as soon as a majority said yes; if a
  // connected node had not answered yet, unlock first waits for its answer (at
  // most its time budget), so that no key is left behind on it; a node that
  // answers later still is released then. Succeeds when a majority confirmed
  // the release and the hold was not lost; otherwise fails with
  // errc::lease_expired (the lock had been lost, also when the listeners were
  // told before) or errc::quorum_not_reached (nodes could not be reached;
  // their keys expire with their lease), the logged message listing every
  // node's cause; errc::not_owner, without sending anything, when the calling
  // thread holds nothing through this RedLock. Never throws (Lockable): a
  // failure is logged (level error), told to the lost-lock listeners unless
  // they were already told of this hold's loss, and returned by
  // unlock_checked(). On a member's I/O thread unlock() starts the release
  // without waiting, and unlock_checked() returns errc::would_deadlock without
  // releasing.
  void unlock() noexcept;
  [[nodiscard]] std::error_code unlock_checked() noexcept;

  // True if a majority of the nodes have the key, whoever holds it. Throws
  // errc::quorum_not_reached when unreachable nodes leave it undecided.
  bool is_locked() const;

  // The local bound up to which a majority of the calling thread's (or
  // `owner`'s) holds are known valid: the majority-th latest of the nodes'
  // bounds, each being when its last confirmed acquire or renewal was sent plus
  // its lease minus the drift. Right after an acquire this is the round's start
  // plus lease minus drift, i.e. the end of the round plus the validity time.
  // It only moves forward while a majority stays confirmed: once it has
  // passed, the hold is lost and never comes back. steady_clock::time_point{}
  // (the clock's epoch: before any now, safe to subtract from now, see
  // Lock::valid_until()) when nothing is held or the hold was lost.
  std::chrono::steady_clock::time_point valid_until() const;
  std::chrono::steady_clock::time_point valid_until(thread_id owner) const;
  // The validity left before valid_until(), in whole milliseconds rounded
  // down; zero once it has passed, and without a hold.
  std::chrono::milliseconds valid_for() const;
  std::chrono::milliseconds valid_for(thread_id owner) const;

  // Lost-lock listeners (see Lock): each is called once per hold when a
  // majority of nodes is no longer confirmed valid — a node's loss left too
  // few, or the majority's validity ran out (renewals failed or came too
  // late, the process was stopped) — or when the hold's release failed. Runs
  // on the I/O thread of the node whose loss broke the majority, or of the
  // first member's Client; it must not block. LockLost::lock_name names that
  // node's lock (for a failed release: every node); message says why. Copies
  // of a RedLock share listeners.
  lost_listener_id add_lost_listener(lost_listener listener);
  void remove_lost_listener(lost_listener_id id);
  [[nodiscard]] LostSubscription subscribe_lost(lost_listener listener);

  // Asynchronous twins, as for MultiLock.
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
  friend class detail::timed_lockable<RedLock>;
  bool try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease);
  void lock_with_lease(milliseconds lease);

  std::shared_ptr<detail::CompositeCore> core_;
  std::vector<Lock> members_;  // as given; the core keeps their shared state
};

}  // namespace warden
