// warden — distributed locks on Redis.
// Client: connections, the I/O thread and the watchdog shared by its locks.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <warden/config.hpp>
#include <warden/count_down_latch.hpp>
#include <warden/detail/duration.hpp>
#include <warden/fair_lock.hpp>
#include <warden/fenced_lock.hpp>
#include <warden/lock.hpp>
#include <warden/permit_expirable_semaphore.hpp>
#include <warden/read_write_lock.hpp>
#include <warden/semaphore.hpp>
#include <warden/spin_lock.hpp>

namespace warden {

namespace detail {
class ClientCore;
struct access;  ///< the library's own way in (src/api/access.hpp)
}  // namespace detail

/// Owns one I/O thread running a libuv loop, the connections to Redis and one
/// watchdog that renews every watchdog-mode hold of this client's locks.
///
/// Thread-safe. Constructing a Client does not wait for the server: the first
/// connection is made in the background and commands wait for it (up to their
/// deadline). wait_until_connected() lets a service fail fast at start instead.
///
/// Destroying the Client fails pending calls with errc::shut_down and joins
/// the I/O thread without a word to the server: holds still taken stop being
/// renewed and stay on the server until their lease runs out (30 s by default),
/// so a destructor never waits for the network. close() releases them first.
/// Lock handles may outlive the Client; their calls then fail with
/// errc::shut_down.
class WARDEN_API Client {
 public:
  /// Throws warden::Error (errc::invalid_argument) naming the field when
  /// `config` is outside its documented ranges (Config::validate()).
  explicit Client(Config config = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Waits until the Client can serve lock commands: its servers answer a
  /// PING on a connection that is set up (AUTH, SELECT done). One server: that
  /// server. Cluster: the slot table is read, every master it names answers,
  /// and every slot has a master. Sentinel: a sentinel named the master, the
  /// master confirmed its role, and answers. Returns as soon as that is so.
  /// Runs on the calling thread; it is not an operation of any owner and
  /// changes nothing in Redis.
  ///
  /// Throws warden::Error when not ready within `timeout`, or sooner for a
  /// cause that waiting cannot cure, with the cause of the last failure:
  /// connection_refused (nothing listens; the server closed the connection
  /// unanswered, e.g. a TLS port reached with redis://: the message says so),
  /// authentication_failed (credentials or database refused), tls_verify_failed
  /// / tls_handshake_failed, protocol_error (not a Redis server), routing_failed
  /// (Cluster: no slot table, or slots no master serves; Sentinel: no master
  /// found), or timed_out when no attempt has failed yet (a slow server).
  /// Also errc::invalid_argument for a negative timeout, errc::shut_down after
  /// close() or once destroyed, and errc::would_deadlock on the I/O thread.
  /// The Client keeps connecting in the background after a failure: a later
  /// call may succeed.
  template <class Rep, class Period>
  void wait_until_connected(const std::chrono::duration<Rep, Period>& timeout) {
    wait_until_connected_ms(detail::to_ms(timeout));
  }

  /// Closes the Client in an orderly way: refuses new calls (they fail with
  /// errc::shut_down from now on), fails waiting acquires with
  /// errc::shut_down, releases every hold that this Client's owners still
  /// have (every lock kind, every re-entrant level; each release as unlock()
  /// would send it, so waiters of other clients wake at once), waits up to
  /// `timeout` for the servers' answers, then shuts down as the destructor
  /// does. Returns true when every hold was released (or there was none);
  /// false when a release failed or was not answered within `timeout`: those
  /// holds expire with their lease (each failure is also reported as unlock()
  /// reports it: lost-lock listeners, the logger). A hold whose acquire was
  /// still in flight when close() began is released too; a call racing with
  /// close() on another thread may still take a lock just before the end,
  /// which then expires with its lease. Later calls fail with
  /// errc::shut_down; a later close() does nothing and returns true.
  /// Throws errc::invalid_argument for a negative timeout and
  /// errc::would_deadlock on the I/O thread (nothing is closed then).
  template <class Rep, class Period>
  bool close(const std::chrono::duration<Rep, Period>& timeout) {
    return close_ms(detail::to_ms(timeout));
  }
  /// close() with Config::command_timeout as its timeout.
  bool close();

  /// This client's UUID, the first half of every owner field it writes.
  const std::string& id() const noexcept;

  /// \return the configuration the Client was made with.
  const Config& config() const noexcept;

  /// A handle to the re-entrant lock `name` (also its Redis key).
  /// Throws errc::invalid_argument for an empty name, and for a name that has
  /// no hash tag by Redis's rule but contains '}' (e.g. "{}", "x{}y"): the
  /// lock's other keys could not share its cluster slot.
  Lock get_lock(std::string_view name);

  /// A handle to the fair lock `name` (also its Redis key): granted in the
  /// order owners started waiting (see FairLock). Throws errc::invalid_argument
  /// for an empty name.
  FairLock get_fair_lock(std::string_view name);

  /// A handle to the fenced lock `name` (also its Redis key): a Lock whose
  /// every acquire draws a fencing token from redisson_lock_token:{NAME} (see
  /// FencedLock). Throws as get_lock().
  FencedLock get_fenced_lock(std::string_view name);

  /// A handle to the spin lock `name` (also its Redis key): a Lock whose
  /// waiters poll with `backoff` instead of subscribing, and whose release
  /// publishes nothing (see SpinLock). Throws as get_lock(), and
  /// errc::invalid_argument naming the field when `backoff` is out of range.
  /// Handles of one name made with different back-offs are separate locks
  /// within this client (as a Lock and a FairLock of one name are): each
  /// keeps its own book of holds, though Redis sees one lock.
  SpinLock get_spin_lock(std::string_view name, SpinBackoff backoff = {});

  /// Non-re-entrant variants of get_lock() and get_fair_lock(): the same keys
  /// and waiting, but an owner that asks for the lock while it holds it fails
  /// at once with errc::would_deadlock (every acquire form; nothing changes
  /// in Redis) instead of nesting a second hold, as std::mutex would
  /// deadlock. Throw as get_lock().
  Lock get_non_reentrant_lock(std::string_view name);
  FairLock get_non_reentrant_fair_lock(std::string_view name);  ///< As get_non_reentrant_lock(), for a FairLock.

  /// A handle to the read-write lock `name` (its hash's Redis key).
  /// Throws errc::invalid_argument for an empty name.
  ReadWriteLock get_read_write_lock(std::string_view name);

  /// A handle to the count-down latch `name` (its Redis key; see
  /// CountDownLatch). Any name but the empty one (errc::invalid_argument):
  /// its channel is the name in braces as it stands, Redisson's rule.
  CountDownLatch get_count_down_latch(std::string_view name);

  /// A handle to the counting semaphore `name` (its Redis key holds the free
  /// permits; see Semaphore). Throws errc::invalid_argument for an empty
  /// name, for a name get_lock() refuses, and for a name that contains '{'
  /// without a non-empty {hash tag} ("a{", "x{}y"): Redisson's channel name
  /// for it would lie in another cluster slot.
  Semaphore get_semaphore(std::string_view name);

  /// A handle to the permit-expirable semaphore `name` (its Redis key holds
  /// the free permits, `{name}:timeout` the permits held; see
  /// PermitExpirableSemaphore). Throws as get_semaphore().
  PermitExpirableSemaphore get_permit_expirable_semaphore(std::string_view name);

 private:
  friend struct detail::access;
  void wait_until_connected_ms(std::chrono::milliseconds timeout);
  bool close_ms(std::chrono::milliseconds timeout);
  std::shared_ptr<detail::ClientCore> core_;
};

}  // namespace warden
