// warden — distributed locks on Redis.
// Observer hooks: what a Client tells a service about its locks and
// connections, for metrics and tracing (Config::observer).
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string_view>
#include <system_error>

#include <warden/thread_id.hpp>

namespace warden {

/// Which kind of lock an event is about (fenced and spin: FencedLock and
/// SpinLock). A MultiLock or RedLock has no events of its own: its members
/// (Locks of these kinds) report theirs.
enum class lock_kind { lock, fair, read, write, fenced, spin };

/// "lock", "fair", "read", "write", "fenced", "spin": for metric labels.
constexpr const char* to_string(lock_kind kind) noexcept {
  switch (kind) {
    case lock_kind::lock:
      return "lock";
    case lock_kind::fair:
      return "fair";
    case lock_kind::read:
      return "read";
    case lock_kind::write:
      return "write";
    case lock_kind::fenced:
      return "fenced";
    case lock_kind::spin:
      return "spin";
  }
  return "?";
}

/// How an acquire ended.
enum class acquire_outcome {
  acquired,   ///< the lock is held
  timed_out,  ///< the wait ran out (try_lock, try_lock_for, ...); not an error
  cancelled,  ///< the wait was cancelled (errc::cancelled)
  failed,     ///< an error: connection, server, wrong type, shutdown, ...
};

/// What ended a waiter's sleep before a re-try.
enum class wake_cause {
  none,       ///< it never slept: answered by its first attempts
  message,    ///< an unlock message on the lock's channel (pub/sub)
  timer,      ///< its own timer: the holder's lease ran out, or the poll interval passed
  reconnect,  ///< the subscriber connection dropped or was re-made (messages may be lost)
};

/// "none", "message", "timer", "reconnect".
constexpr const char* to_string(wake_cause cause) noexcept {
  switch (cause) {
    case wake_cause::none:
      return "none";
    case wake_cause::message:
      return "message";
    case wake_cause::timer:
      return "timer";
    case wake_cause::reconnect:
      return "reconnect";
  }
  return "?";
}

/// One acquire (lock(), try_lock*(), *_async) finished.
struct AcquireEvent {
  std::string_view lock_name;                           ///< the lock's name
  lock_kind kind = lock_kind::lock;                     ///< the lock's kind
  thread_id owner = 0;                                  ///< the thread id part of the owner
  acquire_outcome outcome = acquire_outcome::acquired;  ///< how it ended
  std::error_code error;                                ///< failed and cancelled: why; empty otherwise
  /// From the call to its answer: how long the caller waited.
  std::chrono::nanoseconds waited{0};
  /// Acquire scripts sent: 1 for a lock that was free, more after waits.
  int attempts = 0;
  /// Wake-ups before re-tries, by cause, and the cause of the last one (the one
  /// the final attempt followed); none when it never slept.
  int woken_by_message = 0;
  int woken_by_timer = 0;                   ///< wake-ups by the waiter's own timer
  int woken_by_reconnect = 0;               ///< wake-ups by a reconnect of the subscription
  wake_cause last_wake = wake_cause::none;  ///< the cause of the last wake-up
  /// Config::replica_sync: attempts that took the lock (each then taken
  /// back), or were not sent, because too few replicas had it.
  int replica_sync_misses = 0;
};

/// One release (unlock(), unlock_checked(), unlock_async()) was answered.
struct ReleaseEvent {
  std::string_view lock_name;        ///< the lock's name
  lock_kind kind = lock_kind::lock;  ///< the lock's kind
  thread_id owner = 0;               ///< the thread id part of the owner
  std::error_code error;             ///< empty: released; else errc::not_owner, lease_expired, a connection error, ...
  bool freed = false;                ///< the owner's last hold: the lock is free now and its waiters were told
  std::chrono::nanoseconds latency{0};  ///< from sending the release to its answer
  /// Config::replica_sync: released, but too few replicas acknowledged it; a
  /// failover now could bring the hold back until its lease runs out.
  bool replicas_missing = false;
};

/// The watchdog's renewals: one script call renews a batch of up to 100 holds
/// on one node.
enum class renewal_phase {
  sent,       ///< the batch was sent
  confirmed,  ///< the server answered: `renewed` holds extended, `gone` found lost
  failed,     ///< no answer (error: time-out, connection) or an error reply; retried soon
};

/// One batch of watchdog renewals to one server.
struct RenewalEvent {
  std::string_view node;                      ///< "host:port", or the unix socket's path
  renewal_phase phase = renewal_phase::sent;  ///< how far the batch got
  std::size_t count = 0;                      ///< holds in the batch
  std::size_t renewed = 0;                    ///< confirmed: holds extended for another lease
  std::size_t gone = 0;                       ///< confirmed: holds the server no longer had (each is reported lost)
  /// confirmed, Config::replica_sync: renewed on the master, but too few
  /// replicas acknowledged it; their valid_until() was not extended.
  std::size_t unsynced = 0;
  std::chrono::nanoseconds latency{0};  ///< confirmed and failed: from sending to the answer
  std::error_code error;                ///< failed: why
};

/// A hold was lost: its key was gone or owned by someone else at renewal, its
/// fixed lease ran out, no renewal was confirmed for a whole lease, or its
/// release failed while the hold was believed good. The same events the
/// lock's lost-lock listeners get, for every lock of the Client.
struct HoldLostEvent {
  std::string_view lock_name;        ///< the lock's name
  lock_kind kind = lock_kind::lock;  ///< the lock's kind
  thread_id owner = 0;               ///< the thread id part of the owner
  std::error_code cause;             ///< as LockLost::cause
  std::string_view message;          ///< names the lock and the server
};

/// Each node has a command connection and a subscriber connection (pub/sub);
/// with Config::replica_sync on, lock writes and their WAIT go on up to four
/// synced connections of their own, made as needed.
enum class connection_role { command, subscriber, synced };

/// "command", "subscriber", "synced".
constexpr const char* to_string(connection_role role) noexcept {
  switch (role) {
    case connection_role::command:
      return "command";
    case connection_role::subscriber:
      return "subscriber";
    case connection_role::synced:
      return "synced";
  }
  return "?";
}

/// What happened to one of the Client's connections (Observer::on_connection).
enum class connection_state {
  up,              ///< connected, and the server answered the set-up commands
  down,            ///< a connection that was up dropped; reconnecting
  connect_failed,  ///< an attempt to connect (or reconnect) failed; trying again
};

/// A connection of the Client came up, dropped, or failed to connect.
struct ConnectionEvent {
  std::string_view node;                            ///< "host:port", or the unix socket's path
  connection_role role = connection_role::command;  ///< what the connection is for
  connection_state state = connection_state::up;    ///< what happened
  bool reconnect = false;                           ///< up: it had been up before (re-established)
  std::error_code error;                            ///< down, connect_failed: why (errc::connection_refused, ...)
  std::string_view detail;                          ///< down, connect_failed: the cause in words
  std::chrono::milliseconds retry_in{0};            ///< down, connect_failed: when the next attempt starts
};

/// What the eviction guard found on a server (Config::eviction_guard).
enum class eviction_finding {
  evictable,   ///< maxmemory > 0 and a volatile-* or allkeys-* policy: held locks may be evicted
  safe,        ///< a server found evictable before is safe now (noeviction, or maxmemory 0)
  unreadable,  ///< neither INFO memory nor CONFIG GET could be read (an ACL denies both)
};

/// "evictable", "safe", "unreadable".
constexpr const char* to_string(eviction_finding finding) noexcept {
  switch (finding) {
    case eviction_finding::evictable:
      return "evictable";
    case eviction_finding::safe:
      return "safe";
    case eviction_finding::unreadable:
      return "unreadable";
  }
  return "?";
}

/// The eviction guard's finding about one server: told when a server is first
/// found evictable (and again each time it becomes so after being safe), when
/// it becomes safe again, and once when its settings cannot be read.
struct EvictionEvent {
  std::string_view node;                                   ///< "host:port", or the unix socket's path
  eviction_finding finding = eviction_finding::evictable;  ///< what was found
  std::string_view policy;                                 ///< evictable, safe: the server's maxmemory-policy
  unsigned long long maxmemory = 0;                        ///< evictable, safe: the server's maxmemory in bytes
  bool refusing = false;    ///< evictable: acquires on this server fail (eviction_guard_mode::refuse)
  std::string_view detail;  ///< unreadable: the server's refusals, in words
};

/// Callbacks a Client calls as things happen; each may be left empty (the
/// default), which costs one test of an empty std::function where the event
/// arises. Set them before constructing the Client (Config is copied).
///
/// Every callback runs as part of the Client's I/O work: on its I/O thread, or
/// on a thread inside a blocking warden call that does that work in place while
/// the I/O thread sleeps (a free lock taken without waking the I/O thread).
/// Never two at once, and in the order of the events; a callback that keeps
/// state needs no lock against other callbacks of the same Client, only
/// against the threads that read that state. It must not block: it holds up
/// every lock of the Client while it runs. Hand
/// the event to a queue, bump a counter or an atomic, or record it in a
/// histogram; never wait for a lock or a network call there (a blocking warden
/// call fails with errc::would_deadlock). The string_views point into the
/// Client's own state and are valid only during the call: copy what you keep.
/// What a callback throws is caught and logged (log_level::error). Whatever a
/// callback uses must outlive the Client: destroying it fails pending calls,
/// whose events are still reported.
///
/// Redirects (Redis Cluster) and failovers (Sentinel) will get hooks of their
/// own when warden supports those topologies.
struct Observer {
  std::function<void(const AcquireEvent&)> on_acquire;        ///< an acquire finished
  std::function<void(const ReleaseEvent&)> on_release;        ///< a release was answered
  std::function<void(const RenewalEvent&)> on_renewal;        ///< a renewal batch moved on
  std::function<void(const HoldLostEvent&)> on_hold_lost;     ///< a hold was lost
  std::function<void(const ConnectionEvent&)> on_connection;  ///< a connection changed state
  std::function<void(const EvictionEvent&)> on_eviction;      ///< the eviction guard found something
};

}  // namespace warden
