// warden — distributed locks on Redis.
// ReadWriteLock: shared readers, one exclusive writer.
#pragma once

#include <warden/export.hpp>

#include <string>
#include <utility>

#include <warden/lock.hpp>

namespace warden {

// A pair of locks on one name (Redisson's RReadWriteLock, same keys and
// messages): any number of owners may hold the read lock at once; the write
// lock excludes every other owner, readers and writers alike. Each half is a
// plain warden::Lock — re-entrant per owner, sync and async, Lockable, with
// lost-lock callbacks, valid_until() and watchdog renewal — so
// std::shared_lock-style code simply locks read_lock() and writers lock
// write_lock().
//
// Within one owner (client id + thread id):
// - The write holder may also take the read lock. Releasing the write lock
//   while still reading is a downgrade: the owner stays a reader, and other
//   readers may join at once (every waiter is woken).
// - An upgrade — asking for the write lock while holding the read lock — can
//   never be granted (the write lock would wait for its own reader), so every
//   acquire form fails at once with errc::would_deadlock instead of waiting:
//   lock() and try_lock_for() throw it, the async forms deliver it.
//
// Per half:
// - is_locked(): the lock is held in that mode (read, resp. write).
// - hold_count(), is_held_by_*(): the calling owner's read holds, resp. write holds.
// - force_unlock(): deletes the lock only when it is in that mode; returns
//   whether it did.
// - remain_time_to_live(): the TTL of the shared hash, which is the longest
//   lease among all holds.
//
// Handles are cheap to copy and refer to the same pair.
class WARDEN_API ReadWriteLock {
 public:
  ReadWriteLock(Lock read, Lock write) noexcept : read_(std::move(read)), write_(std::move(write)) {}

  // The lock's name, which is also the Redis key of its hash.
  const std::string& name() const noexcept { return read_.name(); }

  Lock read_lock() const noexcept { return read_; }
  Lock write_lock() const noexcept { return write_; }

 private:
  Lock read_;
  Lock write_;
};

}  // namespace warden
