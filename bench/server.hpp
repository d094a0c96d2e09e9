// warden-bench: the throw-away redis-server used when no --url is given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <sys/types.h>

namespace warden_bench {

// A redis-server child process on a free loopback port, with persistence off
// (--save "" --appendonly no) and its working files in a private temporary
// directory. Stopped by its pid, never by name, so other servers on the
// machine are left alone.
class redis_server {
 public:
  // Starts redis-server (found on PATH) and waits until it answers PING.
  // Retries with another port if the chosen one was taken in the meantime.
  // Throws std::runtime_error with the server's log when it will not start.
  static std::unique_ptr<redis_server> start();

  ~redis_server() { stop(); }
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  // SIGTERM, then SIGKILL if it has not exited within a few seconds; removes
  // the temporary directory. Idempotent.
  void stop() noexcept;

  std::uint16_t port() const noexcept { return port_; }
  pid_t pid() const noexcept { return pid_; }

 private:
  redis_server() = default;

  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string dir_;       // private temporary directory (redis-server --dir)
  std::string log_path_;  // the child's stdout and stderr
};

// Makes SIGINT, SIGTERM and SIGHUP stop the registered server (by pid) before
// the bench dies of them, so an interrupted run leaves no redis-server behind.
// The child also gets PR_SET_PDEATHSIG, which covers SIGKILL of the bench.
void install_server_cleanup_handlers();

// Kills the running throw-away server, if any, without waiting: for exits that
// cannot run destructors (a hung library thread that cannot be joined).
void kill_server_now() noexcept;

}  // namespace warden_bench
