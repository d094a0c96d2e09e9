// warden — distributed locks on Redis.
// ReadWriteLock: shared readers, one exclusive writer.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <string>
#include <utility>

#include <warden/lock.hpp>

namespace warden {

/// A pair of locks on one name (Redisson's RReadWriteLock, same keys and
/// messages): any number of owners may hold the read lock at once; the write
/// lock excludes every other owner, readers and writers alike. Each half is a
/// plain warden::Lock — re-entrant per owner, sync and async, Lockable, with
/// lost-lock callbacks, valid_until() and watchdog renewal.
///
/// The pair itself is SharedTimedLockable and TimedLockable, with
/// std::shared_timed_mutex's vocabulary: lock_shared() and friends take the
/// read lock, lock() and friends the write lock, for the calling thread. So
///   std::shared_lock<warden::ReadWriteLock> reading{rw};   // read_lock().lock()
///   std::unique_lock<warden::ReadWriteLock> writing{rw};   // write_lock().lock()
/// work, as do std::lock_guard and try_to_lock / defer_lock / a timeout.
/// Each call is the half's (see Lock for what it waits for and throws);
/// unlock() and unlock_shared() never throw.
///
/// Within one owner (client id + thread id):
/// - The write holder may also take the read lock. Releasing the write lock
///   while still reading is a downgrade: the owner stays a reader, and other
///   readers may join at once (every waiter is woken).
/// - An upgrade — asking for the write lock while holding the read lock — can
///   never be granted (the write lock would wait for its own reader), so every
///   acquire form fails at once with errc::would_deadlock instead of waiting:
///   lock() and try_lock_for() throw it, the async forms deliver it.
///
/// Per half:
/// - is_locked(): the lock is held in that mode (read, resp. write).
/// - hold_count(), is_held_by_*(): the calling owner's read holds, resp. write holds.
/// - force_unlock(): deletes the lock only when it is in that mode; returns
///   whether it did.
/// - remain_time_to_live(): the TTL of the shared hash, which is the longest
///   lease among all holds.
///
/// Handles are cheap to copy and refer to the same pair.
class WARDEN_API ReadWriteLock final {
 public:
  /// The pair of Client::get_read_write_lock().
  /// \param read the read half. \param write the write half.
  ReadWriteLock(Lock read, Lock write) noexcept : read_(std::move(read)), write_(std::move(write)) {}

  /// \return the lock's name, which is also the Redis key of its hash.
  const std::string& name() const noexcept { return read_.name(); }

  /// \return the read half, a Lock with every Lock operation.
  Lock read_lock() const noexcept { return read_; }
  /// \return the write half, a Lock with every Lock operation.
  Lock write_lock() const noexcept { return write_; }

  /// write_lock().lock() (Lockable).
  void lock() { write_.lock(); }
  /// write_lock().try_lock() (Lockable).
  /// \return true if the write lock is now held.
  bool try_lock() { return write_.try_lock(); }
  /// write_lock().try_lock_for(wait) (TimedLockable).
  /// \param wait any std::chrono duration, >= 0.
  /// \return true if the write lock is now held.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return write_.try_lock_for(wait);
  }
  /// write_lock().try_lock_until(deadline) (TimedLockable).
  /// \param deadline a time point of any clock.
  /// \return true if the write lock is now held.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return write_.try_lock_until(deadline);
  }
  /// write_lock().unlock(); never throws.
  void unlock() noexcept { write_.unlock(); }

  /// read_lock().lock() (SharedLockable).
  void lock_shared() { read_.lock(); }
  /// read_lock().try_lock() (SharedLockable).
  /// \return true if the read lock is now held.
  bool try_lock_shared() { return read_.try_lock(); }
  /// read_lock().try_lock_for(wait) (SharedTimedLockable).
  /// \param wait any std::chrono duration, >= 0.
  /// \return true if the read lock is now held.
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait) {
    return read_.try_lock_for(wait);
  }
  /// read_lock().try_lock_until(deadline) (SharedTimedLockable).
  /// \param deadline a time point of any clock.
  /// \return true if the read lock is now held.
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return read_.try_lock_until(deadline);
  }
  /// read_lock().unlock(); never throws.
  void unlock_shared() noexcept { read_.unlock(); }

 private:
  Lock read_;
  Lock write_;
};

}  // namespace warden
