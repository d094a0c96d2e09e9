// warden — distributed locks on Redis.
// RedLock: one lock over N independent Redis masters (the Redlock algorithm).
#pragma once

#include <warden/export.hpp>

#include <cstddef>
#include <initializer_list>
#include <vector>

#include <warden/composite_lock.hpp>
#include <warden/lock.hpp>

namespace warden {

/// \brief A lock that is held when a majority (N/2 + 1) of N independent Redis masters
/// hold it for the same owner. Each member is one lock on one master, normally
/// the same name through a different Client per server:
///
///   warden::RedLock lock{c1.get_lock("orders"), c2.get_lock("orders"), c3.get_lock("orders")};
///
/// Members may be of any kind (Lock, FairLock, read or write lock). Use an odd
/// N: a majority of 4 is 3, so 4 nodes tolerate one failure, no more than 3 do,
/// and a 2–2 split leaves nobody the lock. See docs/choosing-a-lock.md for what
/// RedLock does and does not guarantee.
///
/// An acquire round asks every node at once, each within a time budget of
/// min(command_timeout, max(lease/10, 50 ms)); a node that refuses, errs or does
/// not answer in time counts as a "no". The round succeeds as soon as a majority
/// said yes and validity = lease − elapsed − drift is positive (drift = 1% of the
/// lease + 2 ms; without a lease, the shortest watchdog timeout of the members'
/// Clients is the lease); nodes answering yes after that are held as well.
/// Otherwise the holds taken are released (also those answering late), and the
/// round is repeated after a jittered back-off while wait time is left.
///
/// Without a lease, each node's hold is renewed by its Client's watchdog. A node
/// that loses the key (restarted empty, key deleted or expired) is taken again
/// while the other nodes still confirm a majority valid, and counts only if they
/// still do when the re-take answers. Once a majority's confirmed validity has
/// run out (see valid_until()), the hold is lost for good: the lost-lock
/// callback fires once, the nodes still held are released (no more renewals),
/// nothing is taken back, and unlock() reports errc::lease_expired.
///
/// Ownership, re-entry, handles, thread safety, Lockable and would_deadlock: as
/// for MultiLock. The RedLock's own back-off timers run on the I/O thread of
/// the first member's Client.
///
/// lock() throws errc::quorum_not_reached, after releasing what it took, as
/// soon as a round has more failed nodes than the quorum tolerates; what()
/// lists every node's server and cause (taken by another owner / timed out /
/// connection refused / server error / ...). try_lock() with a wait rounds
/// until a majority holds it or the wait runs out: false when only other
/// owners stood in the way; errc::quorum_not_reached (with every node's cause)
/// when the last round also had failed nodes, or when failed nodes alone made
/// a majority impossible, or when every round that reached a majority took too
/// long to leave any validity. try_lock() without a wait is one round.
///
/// Unlock: an acquire returns as soon as a majority said yes; if a connected
/// node had not answered yet, unlock first waits for its answer (at most its
/// time budget), so that no key is left behind on it; a node that answers
/// later still is released then. Succeeds when a majority confirmed the
/// release and the hold was not lost; otherwise fails with
/// errc::lease_expired (the lock had been lost, also when the listeners were
/// told before) or errc::quorum_not_reached (nodes could not be reached; their
/// keys expire with their lease), the logged message listing every node's
/// cause.
///
/// is_locked(): a majority of the nodes have the key, whoever holds it;
/// errc::quorum_not_reached when unreachable nodes leave it undecided.
///
/// valid_until(): the majority-th latest of the nodes' bounds, each being when
/// its last confirmed acquire or renewal was sent plus its lease minus the
/// drift. Right after an acquire this is the round's start plus lease minus
/// drift, i.e. the end of the round plus the validity time. It only moves
/// forward while a majority stays confirmed: once it has passed, the hold is
/// lost and never comes back.
///
/// Lost-lock listeners: called once per hold when a majority of nodes is no
/// longer confirmed valid — a node's loss left too few, or the majority's
/// validity ran out (renewals failed or came too late, the process was
/// stopped) — or when the hold's release failed. They run on the I/O thread
/// of the node whose loss broke the majority, or of the first member's
/// Client; LockLost::lock_name names that node's lock (for a failed release:
/// every node); message says why.
class WARDEN_API RedLock final : public CompositeLock {
 public:
  /// Throws warden::Error (errc::invalid_argument) for fewer than 3 members or
  /// two members on one server (one Client twice, or two Clients of one
  /// host:port whatever their database; "localhost" is 127.0.0.1); nothing is
  /// sent to Redis.
  /// \param members the member locks, in order.
  RedLock(std::initializer_list<Lock> members);
  /// Throws warden::Error (errc::invalid_argument) for fewer than 3 members or
  /// two members on one server (one Client twice, or two Clients of one
  /// host:port whatever their database; "localhost" is 127.0.0.1); nothing is
  /// sent to Redis.
  /// \param members the member locks, in order.
  explicit RedLock(std::vector<Lock> members);

  /// \return the number of nodes that must hold the lock: members().size() / 2 + 1.
  std::size_t quorum() const noexcept;
};

}  // namespace warden
