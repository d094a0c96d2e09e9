#include "redis_cluster.hpp"

#include <functional>
#include <stdexcept>
#include <thread>

#include "detail/server_state.hpp"
#include "redis_probe.hpp"

namespace warden::test {

namespace {

using namespace std::chrono_literals;
using detail::info_field;

constexpr std::size_t slot_count = 16384;

std::string checked_status(RedisProbe& probe, const std::vector<std::string>& argv) {
  auto reply = probe.command(argv);
  if (reply.is_error()) throw std::runtime_error("RedisCluster: " + argv.at(0) + " " + argv.at(1) + ": " + reply.str);
  return reply.str;
}

void wait_for(const std::function<std::string()>& problem, std::chrono::milliseconds timeout, const char* what) {
  detail::wait_for(problem, timeout, "RedisCluster", what);
}

}  // namespace

RedisCluster::RedisCluster(RedisClusterOptions options) : options_(std::move(options)) {
  if (options_.masters == 0) throw std::invalid_argument("RedisCluster: at least one master");
  const std::size_t total = options_.masters * (1 + options_.replicas_per_master);
  for (std::size_t i = 0; i < total; ++i) {
    RedisServerOptions server;
    server.cluster = true;
    // A replica shows in CLUSTER SLOTS only once it reports a replication
    // offset, which on an idle master first moves with a replication PING.
    server.extra_args = {"--cluster-node-timeout",     "2000", "--repl-diskless-sync-delay", "0",
                         "--repl-ping-replica-period", "1"};
    server.extra_args.insert(server.extra_args.end(), options_.extra_args.begin(), options_.extra_args.end());
    nodes_.push_back(std::make_unique<RedisServer>(std::move(server)));
    RedisProbe probe(*nodes_.back());
    ids_.push_back(probe.command({"CLUSTER", "MYID"}).str);
  }
  for (std::size_t m = 0; m < options_.masters; ++m) {
    RedisProbe probe(node(m));
    auto first = m * slot_count / options_.masters;
    auto last = (m + 1) * slot_count / options_.masters - 1;
    checked_status(probe, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)});
  }
  for (std::size_t i = 1; i < total; ++i) {
    RedisProbe probe(node(i));
    checked_status(probe, {"CLUSTER", "MEET", node(0).host(), std::to_string(node(0).port()),
                           std::to_string(node(0).cluster_port())});
  }
  // A replica can only follow a master it has heard of.
  wait_for(
      [&]() -> std::string {
        for (std::size_t i = 0; i < total; ++i) {
          RedisProbe probe(node(i));
          auto known = info_field(probe.command({"CLUSTER", "INFO"}).str, "cluster_known_nodes");
          if (known != std::to_string(total)) return "node " + std::to_string(i) + " knows " + known + " nodes";
        }
        return {};
      },
      30s, "nodes did not meet");
  for (std::size_t m = 0; m < options_.masters; ++m) {
    for (std::size_t k = 0; k < options_.replicas_per_master; ++k) {
      RedisProbe probe(first_replica(m, k));
      checked_status(probe, {"CLUSTER", "REPLICATE", ids_.at(m)});
    }
  }
  wait_until_healthy();
  // Clients learn replicas (and how many acknowledgements to ask for) from
  // CLUSTER SLOTS, so every node must list them before a test starts.
  wait_for(
      [&]() -> std::string {
        for (std::size_t i = 0; i < total; ++i) {
          RedisProbe probe(node(i));
          for (const auto& range : probe.command({"CLUSTER", "SLOTS"}).elements) {
            if (range.elements.size() != 3 + options_.replicas_per_master) {
              return "node " + std::to_string(i) + " lists " + std::to_string(range.elements.size() - 3) +
                     " replicas for slot " + std::to_string(range.elements.at(0).integer);
            }
          }
        }
        return {};
      },
      30s, "replicas not listed");
}

RedisServer& RedisCluster::first_replica(std::size_t master, std::size_t k) {
  if (master >= options_.masters || k >= options_.replicas_per_master) {
    throw std::out_of_range("RedisCluster: no such replica");
  }
  return node(options_.masters + master * options_.replicas_per_master + k);
}

std::string RedisCluster::seeds() const {
  std::string out;
  for (const auto& node : nodes_) {
    if (!out.empty()) out += ',';
    out += node->host() + ":" + std::to_string(node->port());
  }
  return out;
}

std::string RedisCluster::url() const { return "redis+cluster://" + seeds() + "/"; }

int RedisCluster::master_of_slot(std::uint16_t slot) {
  for (const auto& candidate : nodes_) {
    if (!candidate->running()) continue;
    RedisProbe probe(*candidate);
    auto ranges = probe.command({"CLUSTER", "SLOTS"});
    for (const auto& range : ranges.elements) {
      if (range.elements.size() < 3 || range.elements[0].integer > slot || range.elements[1].integer < slot) continue;
      auto port = range.elements[2].elements.at(1).integer;
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i]->port() == port) return static_cast<int>(i);
      }
    }
  }
  return -1;
}

std::string RedisCluster::health_problem() {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i]->running()) continue;
    RedisProbe probe(*nodes_[i]);
    const std::string name = "node " + std::to_string(i) + " (port " + std::to_string(nodes_[i]->port()) + ")";
    auto cluster = probe.command({"CLUSTER", "INFO"}).str;
    if (info_field(cluster, "cluster_state") != "ok") return name + ": cluster_state is not ok";
    if (info_field(cluster, "cluster_slots_ok") != std::to_string(slot_count)) {
      return name + ": cluster_slots_ok is " + info_field(cluster, "cluster_slots_ok");
    }
    if (info_field(cluster, "cluster_known_nodes") != std::to_string(nodes_.size())) {
      return name + ": knows " + info_field(cluster, "cluster_known_nodes") + " nodes";
    }
    auto replication = probe.command({"INFO", "replication"}).str;
    if (info_field(replication, "role") == "slave" && info_field(replication, "master_link_status") != "up") {
      return name + ": its link to its master is " + info_field(replication, "master_link_status");
    }
  }
  return {};
}

void RedisCluster::wait_until_healthy(std::chrono::milliseconds timeout) {
  wait_for([this] { return health_problem(); }, timeout, "not healthy");
}

}  // namespace warden::test
