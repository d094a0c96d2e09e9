// A real redis-server process for one test: its own free loopback port (plus,
// on request, a TLS port and a unix socket), its own temporary directory, no
// persistence, stopped by pid.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace warden::test {

// A TLS listener for RedisServerOptions (PEM paths, e.g. from TestCa).
struct RedisTlsOptions {
  std::string cert_file;      // --tls-cert-file
  std::string key_file;       // --tls-key-file
  std::string ca_file;        // --tls-ca-cert-file: the CA client certificates must be signed by
  bool auth_clients = false;  // --tls-auth-clients yes|no: require a client certificate
};

// What a RedisServer listens on besides its plain loopback port.
struct RedisServerOptions {
  // Appended to the command line, as for RedisServer(std::vector<std::string>).
  std::vector<std::string> extra_args;
  // Set: also listen with TLS on a second free loopback port, tls_port().
  std::optional<RedisTlsOptions> tls;
  // True: also listen on <directory()>/redis.sock (--unixsocketperm 700).
  bool unix_socket = false;
  // True: a cluster node (--cluster-enabled yes, its node table in
  // <directory()>/nodes.conf, kept across restarts) with its cluster bus on a
  // second free loopback port, cluster_port(). RedisCluster joins such nodes.
  bool cluster = false;
  // Not empty: a Redis Sentinel (redis-server <directory()>/sentinel.conf
  // --sentinel) whose configuration file starts with these lines, e.g.
  // "sentinel monitor NAME 127.0.0.1 PORT 2". The sentinel rewrites the file
  // as it learns; it is kept across restarts. Persistence and DEBUG options
  // are not passed to it.
  std::vector<std::string> sentinel_config;
  // Not empty: the temporary --dir (log, AOF, socket) is made in this
  // directory instead of $TMPDIR (default /tmp).
  std::string parent_directory;
};

// Not thread-safe: drive one RedisServer from one thread at a time (reading
// host()/port()/url() from other threads is fine; the port never changes).
class RedisServer {
 public:
  // Starts `redis-server` (from PATH, else /usr/bin/redis-server) on a free
  // 127.0.0.1 port with --save "" --appendonly no --bind 127.0.0.1, a fresh
  // temporary --dir holding the log, and --enable-debug-command local (so tests
  // can use DEBUG SLEEP); `extra_args` are appended and so override those.
  // Returns once the server answers PING (and, when it can be checked, is this
  // very process answering). Throws std::runtime_error, with the tail of the
  // server's log, if that does not happen within 10 s.
  explicit RedisServer(std::vector<std::string> extra_args = {});
  // As above, plus a TLS port and/or a unix socket. The plain port stays open
  // on 127.0.0.1 either way: the fixture's readiness check, RedisProbe and
  // MessageRecorder speak plain RESP on it, while the code under test is
  // pointed at tls_url() or unix_url(). Throws std::runtime_error also when the
  // socket path would not fit in sockaddr_un (a very long TMPDIR).
  explicit RedisServer(RedisServerOptions options);
  // Stops the server (stop()) and removes its directory. Never throws.
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::string host() const;    // "127.0.0.1"
  std::uint16_t port() const;  // fixed for the object's lifetime, across restarts
  std::string url() const;     // "redis://127.0.0.1:<port>"
  // The cluster bus port, fixed like port(); 0 when the server is no cluster node.
  std::uint16_t cluster_port() const;
  // The TLS port, fixed like port(); 0 when the server has no TLS listener.
  std::uint16_t tls_port() const;
  // "rediss://127.0.0.1:<tls_port>"; empty without TLS.
  std::string tls_url() const;
  // The unix socket's absolute path; empty without one.
  const std::string& unix_socket() const;
  // "unix://<unix_socket>" (append "?db=N" to pick a database); empty without one.
  std::string unix_url() const;
  pid_t pid() const;  // -1 when not running
  // False once stopped or killed, and also when the process died by itself
  // (it is reaped here).
  bool running() const;
  // The value following "--requirepass" in the extra arguments, else empty.
  // RedisProbe and MessageRecorder built from this server AUTH with it.
  const std::string& password() const;
  // Where the server writes redis.log (and its stdout/stderr, to stdout.log).
  const std::string& directory() const;

  // A crash: SIGKILL, then reaps the process. No-op if not running.
  void kill();
  // A clean shutdown: SIGTERM (after SIGCONT, in case it is paused), up to 5 s
  // for it to exit, then SIGKILL. No-op if not running.
  void stop();
  // Starts the server again on the same port(s), socket path and arguments and waits
  // as the constructor does. If the port is briefly taken it keeps retrying for
  // up to 10 s. No-op if already running. Throws std::runtime_error on failure.
  void start();
  // As start(), with `extra_args` in place of those given so far, for this
  // start and every later one (a node whose configuration changed while it
  // was down). No-op if already running.
  void start(std::vector<std::string> extra_args);
  // SIGSTOP, returning once the process is stopped: the server keeps its
  // sockets but answers nothing, like a hung or partitioned node.
  void pause();
  // SIGCONT: the server answers again, including what was sent meanwhile.
  void resume();

 private:
  enum class readiness { ready, exited, timed_out };

  std::vector<std::string> command_line() const;
  void spawn_server();
  readiness wait_until_ready(std::chrono::steady_clock::time_point deadline, std::string* why);
  bool answers_as_this_process(pid_t pid) const;
  std::string log_tail() const;

  void start_first_time();

  std::vector<std::string> extra_args_;
  std::optional<RedisTlsOptions> tls_;
  std::string unix_socket_;
  std::uint16_t tls_port_ = 0;
  bool cluster_ = false;
  std::uint16_t cluster_port_ = 0;
  bool sentinel_ = false;
  std::string executable_;
  std::string directory_;
  std::string password_;
  std::uint16_t port_ = 0;
  // Atomic so that pid()/running() may be read from another thread while the
  // owning thread stops or restarts the server.
  mutable std::atomic<pid_t> pid_{-1};
};

}  // namespace warden::test
