// A real Redis Cluster for one test: masters and their replicas, each a
// RedisServer in cluster mode on its own free loopback ports, joined and
// given slots by the fixture, stopped by pid.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace warden::test {

struct RedisClusterOptions {
  std::size_t masters = 3;
  std::size_t replicas_per_master = 1;
  // Appended to every node's command line.
  std::vector<std::string> extra_args;
};

// Not thread-safe: drive one RedisCluster from one thread at a time.
class RedisCluster {
 public:
  // Starts the nodes (--cluster-node-timeout 2000, --repl-diskless-sync-delay
  // 0, --repl-ping-replica-period 1), splits the 16384 slots evenly over the masters (CLUSTER
  // ADDSLOTSRANGE), introduces every node to the first (CLUSTER MEET), makes
  // replica k of master m replicate it (CLUSTER REPLICATE), and returns once
  // wait_until_healthy() does and every node's CLUSTER SLOTS lists every
  // replica. Throws std::runtime_error, saying what was
  // missing, when that takes longer than 30 s.
  explicit RedisCluster(RedisClusterOptions options = {});
  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  std::size_t size() const { return nodes_.size(); }
  // Nodes in creation order: the masters first, then replica k of master m
  // at masters + m * replicas_per_master + k. Roles change with failovers;
  // master_of_slot() says who serves a slot now.
  RedisServer& node(std::size_t index) { return *nodes_.at(index); }
  RedisServer& first_master(std::size_t master) { return node(master); }
  RedisServer& first_replica(std::size_t master, std::size_t k = 0);
  // The node's cluster id (CLUSTER MYID, asked once at creation).
  const std::string& node_id(std::size_t index) const { return ids_.at(index); }

  // "127.0.0.1:p1,127.0.0.1:p2,..." of every node, and the cluster URL form
  // "redis+cluster://<seeds>/".
  std::string seeds() const;
  std::string url() const;

  // The index of the node that serves `slot` as master according to the
  // running nodes (the first running node that knows one); -1 if none does.
  int master_of_slot(std::uint16_t slot);

  // Waits until every running node reports cluster_state:ok with every slot
  // served, knows every running node, and every running replica's link to its
  // master is up. Throws std::runtime_error with what is still missing when
  // `timeout` passes.
  void wait_until_healthy(std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  std::string health_problem();

  RedisClusterOptions options_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  std::vector<std::string> ids_;
};

}  // namespace warden::test
