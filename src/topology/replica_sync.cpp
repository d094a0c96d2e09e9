#include "topology/replica_sync.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace warden::detail {

int ReplicaPolicy::needed(std::optional<int> attached) const {
  switch (mode) {
    case replica_sync_mode::off:
    case replica_sync_mode::automatic:
      return 0;
    case replica_sync_mode::at_least_one:
      return 1;
    case replica_sync_mode::all_known:
      return std::max(attached.value_or(1), 1);
    case replica_sync_mode::count:
      return replicas;
  }
  return 0;
}

std::string ReplicaPolicy::describe() const {
  switch (mode) {
    case replica_sync_mode::off:
    case replica_sync_mode::automatic:
      return "off";
    case replica_sync_mode::at_least_one:
      return "at-least-one";
    case replica_sync_mode::all_known:
      return "all-known";
    case replica_sync_mode::count:
      return fmt::format("{} replica{}", replicas, replicas == 1 ? "" : "s");
  }
  return "?";
}

ReplicaPolicy replica_policy(const ReplicaSyncConfig& config, bool failover_topology) {
  ReplicaPolicy policy;
  policy.mode = config.mode;
  if (policy.mode == replica_sync_mode::automatic) {
    policy.mode = failover_topology ? replica_sync_mode::at_least_one : replica_sync_mode::off;
  }
  policy.replicas = config.replicas;
  policy.timeout = config.timeout;
  return policy;
}

std::optional<int> attached_replicas(const Reply& role) {
  // ["master", offset, [[ip, port, offset], ...]]; a replica or a sentinel
  // answers with another first element.
  if (role.type != Reply::kind::array || role.elements.empty()) return std::nullopt;
  const Reply& kind = role.elements[0];
  if (kind.type != Reply::kind::string && kind.type != Reply::kind::status) return std::nullopt;
  if (kind.str != "master") return 0;
  if (role.elements.size() < 3 || role.elements[2].type != Reply::kind::array) return std::nullopt;
  return static_cast<int>(role.elements[2].elements.size());
}

std::string too_few_attached(const std::string& server, int attached, int needed, const ReplicaPolicy& policy) {
  return fmt::format("{} has {} replica{} attached and replica_sync ({}) needs {}", server, attached,
                     attached == 1 ? "" : "s", policy.describe(), needed);
}

std::string too_few_acknowledged(int acknowledged, int needed, std::chrono::milliseconds waited) {
  return fmt::format("{} of {} replica{} acknowledged it within {} ms", acknowledged, needed, needed == 1 ? "" : "s",
                     waited.count());
}

}  // namespace warden::detail
