// warden — distributed locks on Redis.
// MultiLock: several locks taken and released as one, all or nothing.
#pragma once

#include <warden/export.hpp>

#include <cstddef>
#include <initializer_list>
#include <vector>

#include <warden/composite_lock.hpp>
#include <warden/lock.hpp>

namespace warden {

/// \brief Holds every one of its member locks, or none of them. Members may be any
/// kind of warden lock (Lock, FairLock, a read or a write lock), from one Client
/// or from several Clients on different servers.
///
/// Acquiring sends to all members at once (not one after another). If any
/// member cannot be taken, the members already taken are released and the
/// whole set is tried again after a jittered back-off, until the wait time runs
/// out. Each member waits only a short, randomly drawn time per attempt, so two
/// callers locking {A, B} and {B, A} at the same time do not deadlock: the one
/// whose attempt ends first lets go, and the other gets both.
///
/// Ownership is per thread id, as for Lock: every member is taken for the same
/// owner (client id + thread id), so a MultiLock is re-entrant, and a member
/// the owner already holds on its own is simply re-entered. Handles are cheap
/// to copy; copies share their holds. Every member function is safe to call from
/// any thread.
///
/// Leases: while an attempt is under way the members are taken with a lease long
/// enough not to expire before the last one is taken; once all are held they get
/// the caller's lease (so all expire together), or, without a lease, are renewed
/// by their Clients' watchdogs.
///
/// Satisfies Lockable and TimedLockable, so std::lock_guard, std::unique_lock
/// and std::scoped_lock work. unlock() never throws. Blocking calls made
/// on the I/O thread of any member's Client throw errc::would_deadlock.
///
/// The MultiLock's own back-off timers run on the I/O thread of the first
/// member's Client; if that Client is destroyed, pending calls fail with
/// errc::shut_down.
///
/// Unlock: every member is released even if some fail. unlock_checked()'s
/// code is the first failing member's (errc::lease_expired for a member whose
/// lease ran out, a connection error, ...); the logged message names every
/// failing member and its cause.
///
/// is_locked(): every member is locked, by anyone; throws the first member error.
///
/// valid_until(): the earliest of the members' valid_until().
///
/// Lost-lock listeners: called once per hold when any member of it is found
/// lost (its key vanished or changed owner, its lease ran out, or no renewal
/// was confirmed for a whole lease), or when the hold's release failed. The
/// other members stay held until unlock().
class WARDEN_API MultiLock final : public CompositeLock {
 public:
  /// Throws warden::Error (errc::invalid_argument) when there are no members.
  /// A lock listed twice is taken twice (re-entrantly) and released twice.
  /// \param members the member locks, in order.
  MultiLock(std::initializer_list<Lock> members);
  /// Throws warden::Error (errc::invalid_argument) when there are no members.
  /// A lock listed twice is taken twice (re-entrantly) and released twice.
  /// \param members the member locks, in order.
  explicit MultiLock(std::vector<Lock> members);
};

}  // namespace warden
