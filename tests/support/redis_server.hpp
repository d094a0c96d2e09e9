// A real redis-server process for one test: its own free loopback port, its
// own temporary directory, no persistence, stopped by pid.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace warden::test {

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
  // Stops the server (stop()) and removes its directory. Never throws.
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::string host() const;       // "127.0.0.1"
  std::uint16_t port() const;     // fixed for the object's lifetime, across restarts
  std::string url() const;        // "redis://127.0.0.1:<port>"
  pid_t pid() const;              // -1 when not running
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
  // Starts the server again on the same port with the same arguments and waits
  // as the constructor does. If the port is briefly taken it keeps retrying for
  // up to 10 s. No-op if already running. Throws std::runtime_error on failure.
  void start();
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

  std::vector<std::string> extra_args_;
  std::string executable_;
  std::string directory_;
  std::string password_;
  std::uint16_t port_ = 0;
  // Atomic so that pid()/running() may be read from another thread while the
  // owning thread stops or restarts the server.
  mutable std::atomic<pid_t> pid_{-1};
};

}  // namespace warden::test
