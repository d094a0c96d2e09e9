// A master with replicas watched by Redis Sentinels for one test: each a
// RedisServer on its own free loopback port, stopped by pid.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace warden::test {

struct RedisSentinelOptions {
  std::size_t replicas = 1;
  std::size_t sentinels = 3;
  int quorum = 2;
  std::string master_name = "warden-master";
  std::chrono::milliseconds down_after{1'000};
  std::chrono::milliseconds failover_timeout{5'000};
  // Appended to every data node's command line (not the sentinels').
  std::vector<std::string> extra_args;
  // Non-empty: the sentinels require this password (requirepass).
  std::string sentinel_password;
};

// Not thread-safe: drive one group from one thread at a time.
class RedisSentinelGroup {
 public:
  // Starts the master (--repl-diskless-sync-delay 0), its replicas
  // (--replicaof) and the sentinels (sentinel monitor NAME ... QUORUM,
  // down-after-milliseconds, failover-timeout), and returns once
  // wait_until_healthy() does. Throws std::runtime_error saying what was
  // missing after 30 s.
  explicit RedisSentinelGroup(RedisSentinelOptions options = {});
  RedisSentinelGroup(const RedisSentinelGroup&) = delete;
  RedisSentinelGroup& operator=(const RedisSentinelGroup&) = delete;

  // Data nodes in creation order: 0 is the first master, then the replicas.
  // Roles change with failovers: master_index() says who is master now.
  RedisServer& node(std::size_t index) { return *nodes_.at(index); }
  std::size_t nodes() const { return nodes_.size(); }
  RedisServer& sentinel(std::size_t index) { return *sentinels_.at(index); }
  std::size_t sentinels() const { return sentinels_.size(); }
  const std::string& master_name() const { return options_.master_name; }

  // "redis+sentinel://127.0.0.1:s1,127.0.0.1:s2,.../NAME".
  std::string url() const;

  // The data node the first answering sentinel names as master (-1: none).
  int master_index();

  // Waits until the node at `index` is the master by every running
  // sentinel's word and its own (ROLE). Throws std::runtime_error when
  // `timeout` passes.
  void wait_for_master(std::size_t index, std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Starts the data node at `index` again after a kill, on its port and
  // with the command line the first master had (no --replicaof): it comes up
  // as a master with an empty data set, as a promoted node whose
  // configuration the sentinels rewrote would, and the sentinels then make
  // it a replica of the master they name. Throws as RedisServer::start().
  void restart_as_master(std::size_t index);

  // As wait_for_master(current master), and every running replica's link to
  // it is up, and every running sentinel knows every other running sentinel
  // and every running replica.
  void wait_until_healthy(std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  std::string problem_with_master(std::size_t index, bool with_replicas);

  RedisSentinelOptions options_;
  std::vector<std::string> master_args_;  // the first master's extra arguments
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  std::vector<std::unique_ptr<RedisServer>> sentinels_;
};

}  // namespace warden::test
