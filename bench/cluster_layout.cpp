#include "cluster_layout.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "lock/keys.hpp"
#include "redis_sync.hpp"
#include "topology/key_slot.hpp"

namespace warden_bench {

namespace {

constexpr std::size_t slot_count = 16384;

std::uint16_t parse_slot(const std::string& text, const std::string& line) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v >= slot_count) {
    throw std::runtime_error(fmt::format("CLUSTER NODES: bad slot '{}' in '{}'", text, line));
  }
  return static_cast<std::uint16_t>(v);
}

// One line of CLUSTER NODES: "<id> <ip:port@cport[,hostname]> <flags> <master
// id> <ping sent> <pong received> <epoch> <link> <slot or range>...". Returns
// false for a node that serves nothing we can use (a replica, a failed or
// handshaking node, a master without slots).
bool parse_master(const std::string& line, cluster_master& out) {
  std::istringstream fields(line);
  std::string id, address, flags, skip;
  if (!(fields >> id >> address >> flags)) return false;
  auto has_flag = [&](std::string_view flag) {
    return ("," + flags + ",").find(fmt::format(",{},", flag)) != std::string::npos;
  };
  if (!has_flag("master") || has_flag("fail") || has_flag("handshake") || has_flag("noaddr")) return false;
  for (int i = 0; i < 5; ++i) fields >> skip;  // master id, ping, pong, epoch, link state
  // The port is after the last ':' before '@' (an IPv6 host has colons too).
  const std::string host_port = address.substr(0, address.find('@'));
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos) return false;
  out.host = host_port.substr(0, colon);
  out.port = static_cast<std::uint16_t>(std::strtoul(host_port.c_str() + colon + 1, nullptr, 10));
  if (out.host.empty() || out.port == 0) return false;
  std::string slot;
  while (fields >> slot) {
    if (slot.front() == '[') continue;  // a slot being migrated or imported: its owner is listed too
    const auto dash = slot.find('-');
    if (dash == std::string::npos) {
      const auto s = parse_slot(slot, line);
      out.slots.emplace_back(s, s);
    } else {
      out.slots.emplace_back(parse_slot(slot.substr(0, dash), line), parse_slot(slot.substr(dash + 1), line));
    }
  }
  return !out.slots.empty();
}

}  // namespace

std::string cluster_master::address() const { return fmt::format("{}:{}", host, port); }

cluster_layout cluster_layout::read(const warden::Config& config) {
  std::string nodes, problems;
  for (const auto& seed : config.cluster.seeds) {
    try {
      auto connection = redis_sync::connect(node_config(config, seed.host, seed.port), std::chrono::seconds(5));
      nodes = connection.command({"CLUSTER", "NODES"});
      break;
    } catch (const std::exception& e) {
      problems += fmt::format("\n  {}:{}: {}", seed.host, seed.port, e.what());
    }
  }
  if (nodes.empty()) throw std::runtime_error("no cluster seed answered CLUSTER NODES:" + problems);

  cluster_layout layout;
  std::istringstream lines(nodes);
  std::string line;
  while (std::getline(lines, line)) {
    cluster_master master;
    if (parse_master(line, master)) layout.masters_.push_back(std::move(master));
  }
  auto lowest = [](const cluster_master& m) { return std::min_element(m.slots.begin(), m.slots.end())->first; };
  std::sort(layout.masters_.begin(), layout.masters_.end(),
            [&](const cluster_master& a, const cluster_master& b) { return lowest(a) < lowest(b); });
  if (layout.masters_.size() > 255) throw std::runtime_error("CLUSTER NODES: more than 255 masters");

  constexpr std::uint8_t nobody = 255;
  layout.owner_.assign(slot_count, nobody);
  for (std::size_t m = 0; m < layout.masters_.size(); ++m) {
    for (const auto& [first, last] : layout.masters_[m].slots) {
      for (std::size_t s = first; s <= last; ++s) layout.owner_[s] = static_cast<std::uint8_t>(m);
    }
  }
  const auto hole = std::find(layout.owner_.begin(), layout.owner_.end(), nobody);
  if (hole != layout.owner_.end()) {
    throw std::runtime_error(
        fmt::format("the cluster serves no slot {} (CLUSTER NODES:\n{})", hole - layout.owner_.begin(), nodes));
  }
  return layout;
}

std::size_t cluster_layout::master_of_slot(std::uint16_t slot) const { return owner_.at(slot); }

std::string cluster_layout::name_on(const std::string& base, std::size_t master) const {
  namespace keys = warden::detail::keys;
  if (master >= masters_.size()) throw std::out_of_range(fmt::format("no master {}", master));
  if (master_of_slot(keys::slot(base)) == master) return base;
  for (unsigned n = 1;; ++n) {
    std::string name = fmt::format("{}~{}", base, n);
    if (master_of_slot(keys::slot(name)) == master) return name;
  }
}

warden::Config node_config(const warden::Config& config, const std::string& host, std::uint16_t port) {
  warden::Config node = config;
  node.cluster = {};
  node.sentinel = {};
  node.unix_socket.clear();
  node.host = host;
  node.port = port;
  return node;
}

}  // namespace warden_bench
