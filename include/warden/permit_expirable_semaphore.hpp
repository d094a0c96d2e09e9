// warden — distributed locks on Redis.
// PermitExpirableSemaphore: a semaphore whose permits have ids and leases,
// in Redisson's RPermitExpirableSemaphore layout.
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

#include <warden/acquire_future.hpp>
#include <warden/cancel.hpp>
#include <warden/detail/duration.hpp>
#include <warden/lock.hpp>
#include <warden/lock_lost.hpp>
#include <warden/lock_options.hpp>

namespace warden {

/// \brief What a permit-lost listener is told
/// (PermitExpirableSemaphore::subscribe_lost()).
struct WARDEN_API PermitLost {
  /// The semaphore the permit was taken from.
  std::string semaphore_name;
  /// The lost permit's id, as acquire() returned it.
  std::string permit_id;
  /// errc::lease_expired (gone on the server: expired, reclaimed, or
  /// released by someone else), a connection error when no renewal could be
  /// confirmed for a whole lease, or errc::replica_sync_failed.
  std::error_code cause;
  /// Names the semaphore, the server and the permit.
  std::string message;
};

/// \brief A permit-lost listener. Runs on a Client's I/O thread, as a
/// lost-lock listener does (see lost_listener): it must not block.
using permit_lost_listener = std::function<void(const PermitLost&)>;

namespace detail {
class PermitSemaphoreCore;
struct access;  // the library's own way in (src/api/access.hpp)
}  // namespace detail

/// A semaphore named `name` whose permits each have an id and a lease, in
/// Redisson's layout: the key `name` holds the free permits, the sorted set
/// `{name}:timeout` the permits held (id → expiry, epoch ms, by the Redis
/// server's clock). A permit whose lease ran out goes back to the pool when
/// any call next touches the semaphore, so a holder that dies gives its
/// permit back one lease later. Expiry is judged by the server's clock
/// (TIME inside the scripts), never a client's: a client whose clock is
/// wrong cannot free other holders' live permits.
///
/// A permit taken without a lease is kept alive by the Client's watchdog:
/// its expiry is Config::lock_watchdog_timeout from now (server clock),
/// pushed on every third of that while the Client lives, in the batches the
/// watchdog renews lock holds in. It comes back to the pool one lease after
/// its holder dies (or loses its connection for a lease) and is never
/// reclaimed while the holder lives; a renewal that finds it gone tells the
/// subscribe_lost() listeners. (Redisson's acquire() without a lease gives a
/// permit that never expires, lost for good with a crashed holder.)
///
/// Permit ids are 32 hex digits (16 random bytes). Every wait is woken by
/// releases (pub/sub, channel `redisson_sc:{name}`) or, when nothing is
/// published, at the earliest expiry the server named. Errors as
/// Semaphore's: errc::invalid_argument for bad input (nothing sent),
/// errc::wrong_type for keys of another kind (left as they are).
class WARDEN_API PermitExpirableSemaphore {
 public:
  using milliseconds = std::chrono::milliseconds;  ///< The unit of the semaphore's times.

  /// The semaphore's name (its key).
  const std::string& name() const noexcept;

  /// Takes a permit, waiting for ever; returns its id. options.lease() is
  /// the permit's fixed lease (unset: the watchdog keeps the permit, see
  /// above); options.cancel() ends the wait with errc::cancelled; a wait in
  /// the options is errc::invalid_argument.
  std::string acquire(const lock_options& options = {});

  /// Takes a permit with a lease of `lease`, waiting for ever; returns its id.
  template <class Rep, class Period>
  std::string acquire(const std::chrono::duration<Rep, Period>& lease) {
    return acquire(lock_options().with_lease(lease));
  }

  /// Takes a permit, waiting up to options.wait() (unset: one try); its id,
  /// or nullopt when the wait ran out.
  std::optional<std::string> try_acquire(const lock_options& options = {});

  /// Takes a permit with a lease of `lease`, waiting up to `wait`.
  template <class Rep1, class Period1, class Rep2, class Period2>
  std::optional<std::string> try_acquire_for(const std::chrono::duration<Rep1, Period1>& wait,
                                             const std::chrono::duration<Rep2, Period2>& lease) {
    return try_acquire(lock_options().with_wait(wait).with_lease(lease));
  }

  /// Gives the permit `id` back. Throws errc::lease_expired when its lease
  /// had run out, errc::not_owner when no such permit is held.
  void release(const std::string& id);

  /// Gives the permit `id` back; false when it is not held (or expired).
  bool try_release(const std::string& id);

  /// Sets the lease of the held permit `id` to `lease` from now (server
  /// clock); false when it is not held. A watchdog-kept permit is no longer
  /// renewed: the lease set is its own.
  template <class Rep, class Period>
  bool update_lease_time(const std::string& id, const std::chrono::duration<Rep, Period>& lease) {
    return update_lease_ms(id, detail::to_ms(lease));
  }

  /// The local bound up to which the watchdog-kept permit `id` (taken by
  /// this Client without a lease) is known to be held: when its last
  /// confirmed acquire or renewal was sent, plus the watchdog's lease, as a
  /// lock's valid_until(). steady_clock::time_point{} (the clock's epoch,
  /// before any now) for every other id: released, lost, taken by another
  /// Client, or taken with a fixed lease (whose bound the caller knows: the
  /// start of its acquire call plus that lease). No round trip.
  /// \param id the permit, as acquire() returned it.
  /// \return the bound, on the steady clock.
  std::chrono::steady_clock::time_point valid_until(const std::string& id) const;

  /// The number of free permits (expired ones reclaimed first).
  std::int64_t available_permits() const;
  /// The number of permits held (expired ones reclaimed first).
  std::int64_t acquired_permits() const;
  /// The time left on permit `id` by the server's clock (Redisson's
  /// getLeaseTime): nullopt for a permit that never expires. A permit kept
  /// by the watchdog shows the lease its last renewal gave it. Throws
  /// errc::not_owner when no such permit is held (released, expired, or
  /// never taken).
  std::optional<milliseconds> lease_time(const std::string& id) const;
  /// Sets the permits to `permits` if the semaphore has none yet; false otherwise.
  bool try_set_permits(std::int64_t permits);
  /// Makes free + held permits equal `permits`, changing the free count.
  void set_permits(std::int64_t permits);

  /// acquire(options) as a future: its id. If the future is destroyed before
  /// get() and a permit was taken, it is released.
  AcquireFuture<std::string> acquire_async(const lock_options& options = {});
  /// acquire(options) with a completion callback (I/O thread).
  void acquire_async(const lock_options& options, completion<std::string> done);
  /// try_acquire(options) as a future.
  AcquireFuture<std::optional<std::string>> try_acquire_async(const lock_options& options = {});
  /// try_acquire(options) with a completion callback (I/O thread).
  void try_acquire_async(const lock_options& options, completion<std::optional<std::string>> done);
  /// release(id) as a future.
  std::future<void> release_async(const std::string& id);
  /// release(id) with a completion callback (I/O thread).
  void release_async(const std::string& id, completion<void> done);
  /// try_release(id) as a future.
  std::future<bool> try_release_async(const std::string& id);
  /// try_release(id) with a completion callback (I/O thread).
  void try_release_async(const std::string& id, completion<bool> done);
  /// available_permits() as a future.
  std::future<std::int64_t> available_permits_async() const;
  /// acquired_permits() as a future.
  std::future<std::int64_t> acquired_permits_async() const;
  /// available_permits() with a completion callback (I/O thread).
  void available_permits_async(completion<std::int64_t> done) const;
  /// acquired_permits() with a completion callback (I/O thread).
  void acquired_permits_async(completion<std::int64_t> done) const;
  /// lease_time(id) as a future.
  std::future<std::optional<milliseconds>> lease_time_async(const std::string& id) const;
  /// lease_time(id) with a completion callback (I/O thread).
  void lease_time_async(const std::string& id, completion<std::optional<milliseconds>> done) const;
  /// try_set_permits() as a future.
  std::future<bool> try_set_permits_async(std::int64_t permits);
  /// set_permits() as a future.
  std::future<void> set_permits_async(std::int64_t permits);
  /// update_lease_time(id, lease) as a future: false when the permit is not held.
  std::future<bool> update_lease_time_async(const std::string& id, milliseconds lease);
  /// try_set_permits() with a completion callback (I/O thread).
  void try_set_permits_async(std::int64_t permits, completion<bool> done);
  /// set_permits() with a completion callback (I/O thread).
  void set_permits_async(std::int64_t permits, completion<void> done);
  /// update_lease_time(id, lease) with a completion callback (I/O thread):
  /// false when the permit is not held.
  void update_lease_time_async(const std::string& id, milliseconds lease, completion<bool> done);

  /// Calls `listener` whenever a renewal by this Client's watchdog finds one
  /// of the semaphore's watchdog-kept permits gone, or none could be
  /// confirmed for a whole lease: the permit is no longer held. Heard
  /// through every handle of this semaphore in this Client. The listener
  /// stays registered while the returned subscription lives.
  LostSubscription subscribe_lost(permit_lost_listener listener);

 private:
  friend struct detail::access;
  explicit PermitExpirableSemaphore(std::shared_ptr<detail::PermitSemaphoreCore> core) noexcept;
  bool update_lease_ms(const std::string& id, milliseconds lease);

  std::shared_ptr<detail::PermitSemaphoreCore> core_;
};

}  // namespace warden
