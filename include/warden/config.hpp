// warden — distributed locks on Redis.
// Client configuration: a plain struct, every field documented.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <warden/observer.hpp>

namespace warden {

/// How much a diagnostic matters, as told to the Config::logger with each message.
enum class log_level { debug, info, warning, error };

/// Called on the Client's I/O thread, and on a thread inside a blocking call
/// (which may send its own command and read its answer while the I/O thread
/// sleeps, and reports a failed unlock() itself); it must be thread-safe, must
/// not block and must not call back into blocking warden functions. What it
/// throws is ignored.
using logger = std::function<void(log_level, std::string_view message)>;

/// Oldest TLS version a connection accepts.
enum class tls_version { tls1_2, tls1_3 };

/// TLS for every connection of a Client (OpenSSL underneath). File fields are
/// PEM file paths; they are read when the Client is constructed, which throws
/// warden::Error (errc::invalid_argument) naming the field, the file and
/// OpenSSL's reason when one cannot be loaded. The handshake is part of the
/// connection attempt, so Config::connect_timeout bounds it. Handshake failures
/// are errc::tls_verify_failed (the server's certificate was not trusted) or
/// errc::tls_handshake_failed (anything else), with a message saying why.
struct TlsConfig {
  /// Off: plain TCP (or a plain unix socket). "rediss://" URLs turn it on.
  bool enabled = false;

  /// Trusted CA certificates: a PEM file with one or more certificates, and/or
  /// a directory prepared with `openssl rehash`. Both empty: the system trust
  /// store (OpenSSL's default paths, which honour SSL_CERT_FILE / SSL_CERT_DIR).
  std::string ca_file;
  std::string ca_dir;  ///< The CA directory (see ca_file).

  /// Client certificate (a PEM chain, leaf first) and its unencrypted private
  /// key, for servers that require one (Redis: tls-auth-clients yes). Both
  /// empty: no client certificate. Setting one without the other is invalid.
  std::string cert_file;
  std::string key_file;  ///< The client certificate's private key (see cert_file).

  /// Name sent as SNI and checked against the server certificate's names: a
  /// DNS name is matched against its DNS subject alternative names, an IP
  /// address literal against its IP SANs. Empty: Config::host (the host of a
  /// "rediss://" URL); in a cluster, each node's announced host. With a unix socket Config::host is not otherwise used,
  /// so set this to the name in the server's certificate.
  std::string server_name;

  /// Off: any certificate is accepted and the connection is encrypted but not
  /// authenticated (anyone in the path can read it). For tests only.
  bool verify_peer = true;

  /// Oldest protocol version offered; servers that only speak older ones fail
  /// with errc::tls_handshake_failed.
  tls_version min_version = tls_version::tls1_2;
};

/// A server's address: a host name or an IP address (IPv6 without brackets),
/// and a port (1-65535).
struct endpoint {
  std::string host;           ///< A host name or an IP address.
  std::uint16_t port = 6379;  ///< 1-65535.
};

/// How a Redis Cluster's waiters wait and its releases wake them. The two
/// kinds of pub/sub never see each other's messages, so every client sharing
/// a lock (warden or Redisson) must use the same one.
enum class sharded_pubsub {
  /// Sharded when the cluster supports it (Redis 7 and later, checked with
  /// PUBSUB SHARDNUMSUB when the Client first reads the slot table), as
  /// Redisson 3.22+ decides by default.
  automatic,
  /// Waiters SSUBSCRIBE on the master of the channel's slot and releases
  /// SPUBLISH (Redis 7; the messages stay on that shard).
  on,
  /// Waiters SUBSCRIBE and releases PUBLISH (every node of the cluster hears
  /// every message).
  off,
};

/// A Redis Cluster (cluster-enabled yes). Commands go to the master of their
/// key's slot, learnt from CLUSTER SLOTS and corrected by MOVED and ASK
/// replies; connections to each master are made on demand. Credentials, TLS
/// and the timeouts of Config apply to every node; `database` must be 0.
/// Nodes are reached at the addresses the cluster announces
/// (cluster-announce-ip / cluster-announce-port where NAT is in the way).
struct ClusterConfig {
  /// Any nodes of the cluster to learn it from (masters or replicas; one is
  /// enough, more survive one being down). Not empty: the Client talks to a
  /// cluster, and Config::host, port and unix_socket are not used.
  std::vector<endpoint> seeds;

  /// How often the slot table is read again when nothing prompts it (a
  /// redirection, a node that cannot be reached or CLUSTERDOWN do, at once).
  /// 10 ms to 24 h.
  std::chrono::milliseconds refresh_interval{5'000};

  /// Redirections (MOVED, ASK) one command may follow before it fails with
  /// errc::routing_failed (a cluster in flux, or a loop). 1 to 100.
  int max_redirects = 5;

  /// Which pub/sub the locks' waiters and releases use.
  sharded_pubsub pubsub = sharded_pubsub::automatic;
};

/// A master watched by Redis Sentinel. The Client asks the sentinels which
/// server is the master (SENTINEL GET-MASTER-ADDR-BY-NAME, trying each in
/// turn), confirms it with ROLE before sending it anything, and follows
/// switches: the +switch-master message of a sentinel, a poll every
/// poll_interval as a backstop, and any READONLY answer (a demoted master).
/// On a switch, the old master's connections are dropped at once (it stays
/// writable for a while after the switch), waiters re-poll and re-subscribe
/// on the new master. Config::username/password, tls and database apply to
/// the master; the sentinels have credentials of their own below.
struct SentinelConfig {
  /// The sentinels (default port 26379). Not empty: the Client talks to the
  /// master they name, and Config::host, port and unix_socket are not used.
  /// Other sentinels of the same master are learnt (SENTINEL SENTINELS).
  std::vector<endpoint> sentinels;

  /// The master's name in the sentinels' configuration (sentinel monitor
  /// NAME ...). Required with sentinels.
  std::string master_name;

  /// Credentials sent to the sentinels (sentinel requirepass / an ACL user
  /// there); empty: none.
  std::string username;
  std::string password;  ///< The sentinels' password (see username).

  /// How often the sentinels are asked for the master when no switch message
  /// came. 10 ms to 24 h.
  std::chrono::milliseconds poll_interval{1'000};
};

/// How many replicas must have a lock write before it counts (see
/// ReplicaSyncConfig).
enum class replica_sync_mode {
  /// at_least_one for a Sentinel master or a Cluster, off for a single server.
  automatic,
  /// Nothing is waited for: a write acknowledged by the master alone is taken
  /// (DESIGN §7: a failover may lose it).
  off,
  /// One replica of the master.
  at_least_one,
  /// Every replica the master had when last asked (ROLE).
  all_known,
  /// ReplicaSyncConfig::replicas of them.
  count,
};

/// Replica acknowledgement of lock writes. After each write that takes,
/// re-enters, renews or releases a hold, the Client sends WAIT on the same
/// connection and reads how many replicas have it. The writes go on
/// connections of their own (a few per master), so the wait never holds up
/// other commands.
///
/// An acquire too few replicas acknowledged is taken back and tried again,
/// with retry_backoff_min/max between tries, while the call's wait lasts
/// (lock(), which has none: retry_attempts more times), then fails with
/// errc::replica_sync_failed saying how many did. A renewal too few
/// acknowledged keeps the hold but does not extend valid_until(); a release
/// is done anyway. Both are logged and reported to the observer
/// (RenewalEvent / ReleaseEvent::replicas_missing).
///
/// A master with fewer replicas attached than the mode needs (right after a
/// failover that left the promoted replica without one, or, in the usual
/// mistake, a single server without replicas) is said in a log line (error
/// when the Client first reaches it), and acquires there are refused unsent
/// until enough replicas attach. A refused acquire did not run, so it does
/// not count as a failure: lock() waits on, trying again with back-off, and
/// a bounded call tries until its wait is over, then fails with
/// errc::replica_sync_failed saying why. Renewals and releases go through
/// (reported short). The mode is never lowered silently.
///
/// WAIT narrows the window in which a failover loses an acknowledged hold; it
/// does not close it (it is not consensus: a replica that has the write can
/// still lose the election to one that does not). See the README's safety
/// section.
struct ReplicaSyncConfig {
  replica_sync_mode mode = replica_sync_mode::automatic;  ///< When to wait for replicas (see replica_sync_mode).
  /// mode count: how many replicas. 1 to 1000.
  int replicas = 1;
  /// How long WAIT may wait for them (never past the command's own deadline).
  /// 1 ms to 24 h. Redisson's default.
  std::chrono::milliseconds timeout{1'000};
};

/// What the Client does about a server whose memory settings let it evict
/// lock keys: `maxmemory` above 0 with a `maxmemory-policy` of `volatile-*`
/// (every lock key has a TTL) or `allkeys-*`. Such a server deletes a held
/// lock when it runs short of memory, and a second owner walks in. See
/// docs/eviction.md.
enum class eviction_guard_mode {
  /// Said once per server (a warning in the log, Observer::on_eviction), and
  /// again if the server stops being safe after it was; locks work as usual.
  warn,
  /// Said as for warn, and every acquire routed to that server fails unsent
  /// with errc::eviction_possible until the server's settings are safe again
  /// (renewals and releases still go through).
  refuse,
  /// The server's memory settings are not read.
  off,
};

/// \brief A Client's configuration: a plain struct, every field documented.
struct WARDEN_API Config {
  // Every field is checked when a Client is constructed (see validate()); the
  // accepted range is given with each field.

  /// Address of the one server (not used for a cluster: see cluster.seeds).
  /// host: a name or an address (IPv6 without brackets); no NUL, space,
  /// control character or any of # ? / \ @ [ ] , (the same holds for the
  /// hosts of cluster seeds and sentinels). port: 1-65535.
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;  ///< The one server's port (see host).

  /// Path of the server's unix domain socket (Redis: unixsocket). Non-empty:
  /// connect there instead of host:port. An absolute path of at most 107 bytes
  /// (the size of sockaddr_un::sun_path less its terminating NUL). TLS may be
  /// used over it too (then see TlsConfig::server_name).
  std::string unix_socket;

  /// TLS settings; off by default.
  TlsConfig tls;

  /// A Redis Cluster to talk to instead of the one server above: see
  /// ClusterConfig. Off (no seeds) by default.
  ClusterConfig cluster;

  /// A master found through Redis Sentinel instead of the one server above:
  /// see SentinelConfig. Off (no sentinels) by default.
  SentinelConfig sentinel;

  /// Replica acknowledgement of lock writes (WAIT); on by default for
  /// Sentinel and Cluster.
  ReplicaSyncConfig replica_sync;

  /// What to do about a server that may evict lock keys (maxmemory with a
  /// volatile-* or allkeys-* policy). Each master's `maxmemory` and
  /// `maxmemory-policy` are read when its command connection is set up
  /// (INFO memory, or CONFIG GET where the ACL allows only that), before any
  /// lock command is written on it, and read again every
  /// health_check_interval, so a policy changed at run time is noticed.
  /// warn by default: it keeps every deployment that works today working
  /// (managed services often ship volatile-lru with maxmemory set) and says
  /// so; refuse makes a risky server an error. A server whose ACL denies both
  /// reads is said once (log, Observer::on_eviction) and otherwise trusted.
  /// See docs/eviction.md.
  eviction_guard_mode eviction_guard = eviction_guard_mode::warn;

  /// Credentials sent with AUTH after every connect. An empty username with a
  /// password uses the legacy single-password AUTH; both set use an ACL user.
  std::string username;
  std::string password;  ///< The password of AUTH (see username).

  /// Database selected with SELECT after every connect (0 sends nothing). >= 0.
  int database = 0;

  /// Lease of a hold taken without an explicit lease. The watchdog renews such
  /// holds every lock_watchdog_timeout / 3, so the lock lives as long as its
  /// holder does and at most this long after the holder dies. Redisson's default.
  /// 3 ms to ten years.
  std::chrono::milliseconds lock_watchdog_timeout{30'000};

  /// Watchdog-mode holds renewed per script call (in a cluster, a call's holds
  /// share a hash slot). Fewer, larger calls cost less; each call keeps the
  /// server busy for about 0.8 µs per hold (an HEXISTS and a PEXPIRE), so other
  /// clients' commands wait that long behind it. Renewals are spread over the
  /// renewal period, bucket by bucket, never sent all at once. Redisson's
  /// lockWatchdogBatchSize and its default. 1 to 10,000.
  int lock_watchdog_batch_size = 100;

  /// FairLock: how long a queued waiter may go unseen before the others treat
  /// it as gone (its process died) and drop it from the queue. A waiter is seen
  /// whenever it tries for the lock, and while waiting it tries again at least
  /// every fair_lock_wait_timeout / 3, so a live waiter keeps its place however
  /// long it waits, and a dead one holds up the queue at most this long after
  /// its last try (plus this long for each dead waiter dropped ahead of it).
  /// Short values are safe for long waits; they cost each waiter
  /// a script call every fair_lock_wait_timeout / 3. 3 ms to ten years.
  /// Redisson's default.
  std::chrono::milliseconds fair_lock_wait_timeout{300'000};

  /// How long one connection attempt (TCP or unix socket connect, the TLS
  /// handshake when tls.enabled, then AUTH/SELECT) may take. 1 ms to 24 h.
  std::chrono::milliseconds connect_timeout{10'000};

  /// How long one command may wait for its reply. A call that sends commands
  /// never waits longer than its own wait time plus this. 1 ms to 24 h.
  std::chrono::milliseconds command_timeout{3'000};

  /// How many times a command that failed on a connection error is tried again
  /// (idempotent commands: resent; a lock acquire: ownership is read back first).
  /// 0 to 1000.
  int retry_attempts = 3;

  /// Back-off between retries and between reconnect attempts: exponential from
  /// retry_backoff_min, capped at retry_backoff_max, each delay drawn with full
  /// jitter from [delay/2, delay]. Each 0 to 24 h, min <= max.
  std::chrono::milliseconds retry_backoff_min{50};
  std::chrono::milliseconds retry_backoff_max{2'000};  ///< The longest delay (see retry_backoff_min).

  /// An idle connection is probed with PING this often; a probe left unanswered
  /// for as long closes the connection and starts a reconnect. 1 ms to 24 h.
  std::chrono::milliseconds health_check_interval{5'000};

  /// Receives the Client's diagnostics (connects, reconnects, lost locks).
  /// Empty: nothing is logged.
  warden::logger logger;

  /// Hooks for metrics and tracing: acquires, releases, watchdog renewals,
  /// lost holds, connections (see warden/observer.hpp). Empty by default; they
  /// run with the Client's I/O work and must not block.
  warden::Observer observer;

  /// Parses one of
  ///   redis://[[user]:password@]host[:port][/db]
  ///   rediss://[[user]:password@]host[:port][/db]      TLS (tls.enabled), checked against host
  ///   unix://[[user]:password@]/path/to/redis.sock[?db=N]
  ///   redis+unix://[[user]:password@]/path/to/redis.sock[?db=N]
  ///   redis+cluster://[[user]:password@]host1:port1,host2:port2[,...][/]   cluster seeds
  ///   rediss+cluster://[[user]:password@]host1:port1,...[/]                  the same over TLS
  ///   redis+sentinel://[[user]:password@]host1:26379,host2:26379/mastername[/db]
  ///   rediss+sentinel://...                                                  the master over TLS
  /// A sentinel URL's credentials are the master's; the sentinels' own are
  /// SentinelConfig::username/password.
  /// The scheme is case-insensitive; an IPv6 host is written in brackets
  /// ([::1]:6379). Credentials may use %-escapes (e.g. %40 for '@'). A bare
  /// userinfo is the password. Fields the URL does not name keep their
  /// defaults. A host with a byte no host has (see Config::host: "#", "?", a
  /// NUL...) is refused rather than cut short. Throws
  /// warden::Error (errc::invalid_argument) naming the URL, with its password
  /// masked, when it cannot be parsed.
  static Config from_url(std::string_view url);

  /// Throws warden::Error (errc::invalid_argument) naming the first field that
  /// is outside its range. Client's constructor calls it. TLS files are not
  /// opened here but when the Client is constructed.
  void validate() const;
};

}  // namespace warden
