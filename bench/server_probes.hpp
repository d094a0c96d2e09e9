// warden-bench: the servers' own counters over a window — CPU (INFO cpu) and
// commands run (INFO commandstats) — read on connections of the bench's own.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <warden/config.hpp>

#include "redis_sync.hpp"

namespace warden_bench {

// Cumulative user + system CPU seconds of the servers (INFO cpu), summed; -1
// when any of them cannot tell. Its own connections, so sampling costs one
// round trip per server and never touches warden's connections.
class server_cpu_probe {
 public:
  explicit server_cpu_probe(const std::vector<warden::Config>& servers) {
    try {
      for (const auto& server : servers) {
        connections_.push_back(redis_sync::connect(server, std::chrono::seconds(5)));
      }
    } catch (const std::exception&) {
      // No probe: the report says n/a for server CPU.
      connections_.clear();
    }
  }

  double operator()() {
    if (connections_.empty()) return -1;
    try {
      double total = 0;
      for (auto& connection : connections_) {
        const std::string info = connection.command({"INFO", "cpu"});
        total += field(info, "used_cpu_sys:") + field(info, "used_cpu_user:");
      }
      return total;
    } catch (const std::exception&) {
      return -1;
    }
  }

 private:
  static double field(const std::string& info, std::string_view key) {
    const auto at = info.find(key);
    if (at == std::string::npos) throw std::runtime_error("INFO cpu: no " + std::string{key});
    return std::strtod(info.c_str() + at + key.size(), nullptr);
  }

  std::vector<redis_sync> connections_;
};

// Calls per command from INFO commandstats ("cmdstat_evalsha:calls=12,..."
// → {"evalsha", 12}), summed over the servers; empty when unavailable. Its
// own connections, like the CPU probe.
class server_commands_probe {
 public:
  explicit server_commands_probe(const std::vector<warden::Config>& servers) {
    try {
      for (const auto& server : servers) {
        connections_.push_back(redis_sync::connect(server, std::chrono::seconds(5)));
      }
    } catch (const std::exception&) {
      // No probe: the report says n/a for commands per pair.
      connections_.clear();
    }
  }

  std::map<std::string, std::uint64_t> operator()() {
    std::map<std::string, std::uint64_t> calls;
    try {
      for (auto& connection : connections_) {
        const std::string info = connection.command({"INFO", "commandstats"});
        const std::string_view prefix = "cmdstat_", key = ":calls=";
        for (std::size_t at = info.find(prefix); at != std::string::npos; at = info.find(prefix, at + 1)) {
          const auto colon = info.find(key, at);
          if (colon == std::string::npos) break;
          calls[info.substr(at + prefix.size(), colon - at - prefix.size())] +=
              std::strtoull(info.c_str() + colon + key.size(), nullptr, 10);
        }
      }
    } catch (const std::exception&) {
      calls.clear();
    }
    return calls;
  }

 private:
  std::vector<redis_sync> connections_;
};

}  // namespace warden_bench
