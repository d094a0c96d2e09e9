// warden-bench: the throw-away redis-server (or cluster node) used when no
// --url is given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

namespace warden_bench {

// A redis-server child process on a free loopback port, with persistence off
// (--save "" --appendonly no) and its working files in a private temporary
// directory. Stopped by its pid, never by name, so other servers on the
// machine are left alone.
class redis_server {
 public:
  // Starts redis-server (found on PATH) and waits until it answers PING.
  // Retries with other ports if a chosen one was taken in the meantime.
  // Throws std::runtime_error with the server's log when it will not start.
  // `cluster_node`: cluster-enabled, with its nodes.conf in the private
  // directory and its cluster bus on a free port of its own (the default,
  // port + 10000, may be taken or past 65535); it serves no slot until it is
  // given some (see bench_cluster).
  // `extra_args` go on the command line after the bench's own (e.g.
  // "--replicaof 127.0.0.1 <port>").
  static std::unique_ptr<redis_server> start(bool cluster_node = false,
                                             const std::vector<std::string>& extra_args = {});

  // Starts a replica of the server on `master_port` (127.0.0.1), as start()
  // does, and waits until its link to the master is up (INFO replication:
  // master_link_status:up) and the master counts it in WAIT. Throws
  // std::runtime_error with the replica's log when it does not get there
  // within 10 s.
  static std::unique_ptr<redis_server> start_replica_of(std::uint16_t master_port);

  ~redis_server() { stop(); }
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  // SIGTERM, then SIGKILL if it has not exited within a few seconds; removes
  // the temporary directory. Idempotent.
  void stop() noexcept;

  std::uint16_t port() const noexcept { return port_; }
  std::uint16_t cluster_port() const noexcept { return cluster_port_; }  // 0 unless a cluster node
  pid_t pid() const noexcept { return pid_; }

 private:
  redis_server() = default;

  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::uint16_t cluster_port_ = 0;
  int registration_ = -1;        // this server's entry in the table the signal handlers read
  std::string dir_;              // private temporary directory (redis-server --dir)
  std::string log_path_;         // the child's stdout and stderr
  std::string nodes_conf_path_;  // a cluster node's nodes.conf; "" otherwise
};

// Makes SIGINT, SIGTERM and SIGHUP stop the running servers (by pid) before
// the bench dies of them, so an interrupted run leaves no redis-server behind.
// Each child also gets PR_SET_PDEATHSIG, which covers SIGKILL of the bench.
void install_server_cleanup_handlers();

// Kills the running throw-away servers, if any, without a clean shutdown: for
// exits that cannot run destructors (a hung library thread that cannot be
// joined).
void kill_server_now() noexcept;

}  // namespace warden_bench
