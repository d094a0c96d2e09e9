// warden-bench: the throw-away Redis Cluster used with --cluster.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <warden/config.hpp>

#include "server.hpp"

namespace warden_bench {

// Masters only (no replicas), each a throw-away redis_server in cluster mode
// on free loopback ports, stopped by pid like the single server.
class throwaway_cluster {
 public:
  // Starts `masters` nodes, gives node i the i-th of `masters` even shares of
  // the 16384 slots (CLUSTER ADDSLOTSRANGE), introduces every other node to
  // node 0 (CLUSTER MEET) and returns once every node reports cluster_state:ok
  // with every slot served and knows all the nodes. Throws std::runtime_error
  // saying what was still missing after `timeout`.
  static std::unique_ptr<throwaway_cluster> start(std::size_t masters,
                                                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

  const std::vector<std::unique_ptr<redis_server>>& nodes() const { return nodes_; }
  std::vector<warden::endpoint> seeds() const;

 private:
  throwaway_cluster() = default;
  // Why the cluster is not ready yet, or "" when it is.
  std::string not_ready() const;

  std::vector<std::unique_ptr<redis_server>> nodes_;
};

}  // namespace warden_bench
