// warden — distributed locks on Redis.
// Error codes and the exception thrown by synchronous calls.
#pragma once

#include <warden/export.hpp>

#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

namespace warden {

/// Each distinct cause a lock operation can fail with. Synchronous calls throw
/// warden::Error carrying one of these; asynchronous calls deliver the same
/// Error through their future.
enum class errc {
  not_owner = 1,          ///< the caller does not hold the lock it tried to release
  lease_expired,          ///< the caller held the lock, but its lease ran out (or the key was deleted)
  timed_out,              ///< a command got no reply before its deadline
  connection_lost,        ///< the connection dropped while a command was in flight
  connection_refused,     ///< no connection to the server could be established
  authentication_failed,  ///< AUTH or SELECT was rejected after connecting
  server_error,           ///< Redis answered with an error not listed here (e.g. NOPERM)
  invalid_argument,       ///< bad input: empty name, non-positive lease, ...
  shut_down,              ///< the Client was destroyed while the call was pending
  quorum_not_reached,     ///< a RedLock could not take a majority of its nodes
  would_deadlock,         ///< a blocking call on the I/O thread, or a read→write upgrade
  cancelled,              ///< the wait was cancelled through its cancel_token
  wrong_type,             ///< the key exists but is not a lock of this kind (a string, a foreign
                          ///< hash, another lock kind's keys); nothing was written or deleted
  protocol_error,         ///< a reply of a type the command cannot give (not a Redis server?)
  tls_verify_failed,      ///< TLS: the server's certificate was not trusted (unknown CA, name
                          ///< mismatch, expired, ...); the message says which
  tls_handshake_failed,   ///< TLS: the handshake failed otherwise (the server does not speak TLS,
                          ///< refused our client certificate, no common protocol version, or the
                          ///< handshake did not finish within Config::connect_timeout)
  routing_failed,         ///< no server to send the command to. Cluster: no slot table could be
                          ///< read from any seed (not a cluster node?), no master serves the
                          ///< key's slot, or a command was redirected more often than
                          ///< ClusterConfig::max_redirects. Sentinel: no sentinel knows a
                          ///< master by that name, or none it names confirms it is master
  replica_sync_failed,    ///< Config::replica_sync: fewer replicas than needed acknowledged an
                          ///< acquire in time (the message says how many of how many; the
                          ///< acquire was taken back), or a bounded wait ended while the master
                          ///< had fewer attached (its acquires were refused unsent)
  eviction_possible,      ///< Config::eviction_guard refuse: the server the lock lives on may
                          ///< evict lock keys (maxmemory with a volatile-* or allkeys-* policy);
                          ///< the acquire was not sent. The message names the server, its
                          ///< settings and Config::eviction_guard
};

/// The std::error_category of warden::errc; its name() is "warden".
WARDEN_API const std::error_category& error_category() noexcept;

/// \return `e` as a std::error_code of error_category().
inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

/// Thrown by every synchronous warden call that fails. code() is a warden::errc;
/// what() names the lock (where there is one) and the server.
class WARDEN_API Error : public std::system_error {
 public:
  /// An Error with a warden::errc (see the other constructor).
  Error(errc code, const std::string& message) : Error(make_error_code(code), message) {}
  /// what() is `message`, then ": " and code().message() unless the message
  /// already says that (a cause is said once: "connection refused
  /// (ECONNREFUSED)", not "...: connection refused").
  Error(std::error_code code, const std::string& message);
  /// \return the message (see the constructor).
  const char* what() const noexcept override;

 private:
  std::runtime_error text_;  ///< reference-counted: copying cannot throw
};

}  // namespace warden

/// \cond INTERNAL
template <>
struct std::is_error_code_enum<warden::errc> : std::true_type {};
/// \endcond
