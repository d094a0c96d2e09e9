#include "cluster_server.hpp"

#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "redis_sync.hpp"

namespace warden_bench {

namespace {

constexpr unsigned slot_count = 16384;
const std::string loopback = "127.0.0.1";

warden::Config at(std::uint16_t port) {
  warden::Config config;
  config.host = loopback;
  config.port = port;
  return config;
}

// The value of `key` in CLUSTER INFO's "key:value" lines, or "".
std::string info_field(const std::string& info, const std::string& key) {
  const std::string wanted = key + ":";
  for (std::size_t at = 0; at < info.size();) {
    const auto end = info.find_first_of("\r\n", at);
    const std::string line = info.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(wanted, 0) == 0) return line.substr(wanted.size());
    if (end == std::string::npos) break;
    at = info.find_first_not_of("\r\n", end);
  }
  return {};
}

}  // namespace

std::unique_ptr<throwaway_cluster> throwaway_cluster::start(std::size_t masters, std::chrono::milliseconds timeout) {
  if (masters == 0 || masters > slot_count) throw std::invalid_argument("throwaway_cluster: bad number of masters");
  std::unique_ptr<throwaway_cluster> cluster{new throwaway_cluster};
  for (std::size_t i = 0; i < masters; ++i) cluster->nodes_.push_back(redis_server::start(/*cluster_node=*/true));

  for (std::size_t i = 0; i < masters; ++i) {
    const redis_server& node = *cluster->nodes_[i];
    auto connection = redis_sync::connect(at(node.port()), std::chrono::seconds(5));
    const unsigned first = static_cast<unsigned>(i * slot_count / masters);
    const unsigned last = static_cast<unsigned>((i + 1) * slot_count / masters) - 1;
    connection.command({"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)});
    if (i > 0) {
      const redis_server& first_node = *cluster->nodes_[0];
      connection.command(
          {"CLUSTER", "MEET", loopback, std::to_string(first_node.port()), std::to_string(first_node.cluster_port())});
    }
  }

  // The nodes gossip their way to agreement over the cluster bus and send
  // no event when they get there: the state is polled.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::string missing = cluster->not_ready();
    if (missing.empty()) return cluster;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error(
          fmt::format("the throw-away cluster was not ready after {} ms: {}", timeout.count(), missing));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string throwaway_cluster::not_ready() const {
  for (const auto& node : nodes_) {
    const std::string name = fmt::format("{}:{}", loopback, node->port());
    std::string info;
    try {
      info = redis_sync::connect(at(node->port()), std::chrono::seconds(5)).command({"CLUSTER", "INFO"});
    } catch (const std::exception& e) {
      return fmt::format("{}: {}", name, e.what());
    }
    if (info_field(info, "cluster_state") != "ok") return name + ": cluster_state is not ok";
    if (info_field(info, "cluster_slots_ok") != std::to_string(slot_count)) {
      return name + ": cluster_slots_ok is " + info_field(info, "cluster_slots_ok");
    }
    if (info_field(info, "cluster_known_nodes") != std::to_string(nodes_.size())) {
      return name + ": knows " + info_field(info, "cluster_known_nodes") + " nodes";
    }
  }
  return {};
}

std::vector<warden::endpoint> throwaway_cluster::seeds() const {
  std::vector<warden::endpoint> out;
  for (const auto& node : nodes_) out.push_back({loopback, node->port()});
  return out;
}

}  // namespace warden_bench
