// warden — distributed locks on Redis.
// Client: connections, the I/O thread and the watchdog shared by its locks.
#pragma once

#include <warden/export.hpp>

#include <memory>
#include <string>
#include <string_view>

#include <warden/config.hpp>
#include <warden/fair_lock.hpp>
#include <warden/fenced_lock.hpp>
#include <warden/lock.hpp>
#include <warden/read_write_lock.hpp>
#include <warden/spin_lock.hpp>

namespace warden {

namespace detail {
class ClientCore;
struct access;  // the library's own way in (src/api/access.hpp)
}

// Owns one I/O thread running a libuv loop, the connections to Redis and one
// watchdog that renews every watchdog-mode hold of this client's locks.
//
// Thread-safe. Constructing a Client does not wait for the server: the first
// connection is made in the background and commands wait for it (up to their
// deadline). Destroying the Client fails pending calls with errc::shut_down and
// joins the I/O thread; holds still taken stop being renewed and expire after
// their lease. Lock handles may outlive the Client; their calls then fail with
// errc::shut_down.
class WARDEN_API Client {
 public:
  // Throws warden::Error (errc::invalid_argument) naming the field when
  // `config` is outside its documented ranges (Config::validate()).
  explicit Client(Config config = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // This client's UUID, the first half of every owner field it writes.
  const std::string& id() const noexcept;

  const Config& config() const noexcept;

  // A handle to the re-entrant lock `name` (also its Redis key).
  // Throws errc::invalid_argument for an empty name, and for a name that has
  // no hash tag by Redis's rule but contains '}' (e.g. "{}", "x{}y"): the
  // lock's other keys could not share its cluster slot.
  Lock get_lock(std::string_view name);

  // A handle to the fair lock `name` (also its Redis key): granted in the
  // order owners started waiting (see FairLock). Throws errc::invalid_argument
  // for an empty name.
  FairLock get_fair_lock(std::string_view name);

  // A handle to the fenced lock `name` (also its Redis key): a Lock whose
  // every acquire draws a fencing token from redisson_lock_token:{NAME} (see
  // FencedLock). Throws as get_lock().
  FencedLock get_fenced_lock(std::string_view name);

  // A handle to the spin lock `name` (also its Redis key): a Lock whose
  // waiters poll with `backoff` instead of subscribing, and whose release
  // publishes nothing (see SpinLock). Throws as get_lock(), and
  // errc::invalid_argument naming the field when `backoff` is out of range.
  // Handles of one name made with different back-offs are separate locks
  // within this client (as a Lock and a FairLock of one name are): each
  // keeps its own book of holds, though Redis sees one lock.
  SpinLock get_spin_lock(std::string_view name, SpinBackoff backoff = {});

  // Non-re-entrant variants of get_lock() and get_fair_lock(): the same keys
  // and waiting, but an owner that asks for the lock while it holds it fails
  // at once with errc::would_deadlock (every acquire form; nothing changes
  // in Redis) instead of nesting a second hold, as std::mutex would
  // deadlock. Throw as get_lock().
  Lock get_non_reentrant_lock(std::string_view name);
  FairLock get_non_reentrant_fair_lock(std::string_view name);

  // A handle to the read-write lock `name` (its hash's Redis key).
  // Throws errc::invalid_argument for an empty name.
  ReadWriteLock get_read_write_lock(std::string_view name);

 private:
  friend struct detail::access;
  std::shared_ptr<detail::ClientCore> core_;
};

}  // namespace warden
