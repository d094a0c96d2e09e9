// warden-bench: which master of a Redis Cluster serves which slots, read from
// the cluster itself, so the bench can put a lock (or the bound's key, or the
// plain-hiredis loop's lock) on the master it wants.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <warden/config.hpp>

namespace warden_bench {

struct cluster_master {
  std::string host;
  std::uint16_t port = 0;
  std::vector<std::pair<std::uint16_t, std::uint16_t>> slots;  // inclusive ranges it serves
  std::string address() const;                                 // "host:port"
};

class cluster_layout {
 public:
  // Asks the seeds of config.cluster in turn for CLUSTER NODES and keeps the
  // masters that serve slots, ordered by their lowest slot: master 0 serves
  // slot 0. Throws std::runtime_error when no seed answers, or when a slot is
  // served by no master (a cluster that is not ready).
  static cluster_layout read(const warden::Config& config);

  const std::vector<cluster_master>& masters() const { return masters_; }

  // The index of the master serving `slot`.
  std::size_t master_of_slot(std::uint16_t slot) const;

  // `base`, or the first of "base~1", "base~2", ... whose slot is served by
  // master `master` (about one name in masters().size() is): a lock name, or
  // a plain key, that lives where the caller wants it.
  std::string name_on(const std::string& base, std::size_t master) const;

 private:
  std::vector<cluster_master> masters_;
  std::vector<std::uint8_t> owner_;  // by slot: index into masters_
};

// `config` pointed at one node: its credentials and timeouts, that node's
// address, and no cluster seeds or sentinels, for the bench's blocking connections and for
// redis-benchmark.
warden::Config node_config(const warden::Config& config, const std::string& host, std::uint16_t port);

}  // namespace warden_bench
