// warden-bench: where a run goes (one Redis server, or the masters of a
// Redis Cluster) and on which server each of its locks lives.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <warden/config.hpp>

#include "cluster_layout.hpp"
#include "cluster_server.hpp"
#include "options.hpp"
#include "server.hpp"

namespace warden_bench {

struct bench_target {
  warden::Config client;                 // what warden's Client is made from
  warden::Config home;                   // the one server S1 runs on, and the loop and the 1-connection bound
  std::vector<warden::Config> servers;   // every server of the run (home first): CPU and commands are summed
  std::optional<cluster_layout> layout;  // set for a cluster
  std::string description;               // for the report's header
  std::string home_address;              // "host:port" of home

  // Whichever the bench started; stopped (by pid) when the target goes.
  std::unique_ptr<redis_server> server;
  std::unique_ptr<throwaway_cluster> cluster;

  bool is_cluster() const { return layout.has_value(); }

  // The name of the index-th lock (or key) of a set whose natural name is
  // `base`: `base` itself on one server; on a cluster, `base` or a variant of
  // it whose slot master index % masters serves, so a set of locks spreads
  // evenly and any set's first lock lives on home (master 0).
  std::string place(const std::string& base, std::size_t index) const;

  // The command warden's lock release wakes waiters with on home: "publish",
  // or "spublish" on a cluster whose waiters use shard channels (chosen as
  // warden chooses: Config::cluster.pubsub, and when automatic, whether the
  // server knows PUBSUB SHARDNUMSUB).
  std::string publish_command() const;
};

// Starts the throw-away server (or, with --cluster, the throw-away cluster),
// or reads the one --url names. Throws std::runtime_error.
bench_target open_target(const options& opts);

}  // namespace warden_bench
