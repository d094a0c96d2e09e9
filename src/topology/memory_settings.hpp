// A server's maxmemory and maxmemory-policy, read from INFO memory or CONFIG
// GET, and whether they let the server evict lock keys. Pure functions; the
// eviction guard (eviction_guard.hpp) decides what follows.
#pragma once

#include <optional>
#include <string>

#include "io/reply.hpp"

namespace warden::detail {

struct MemorySettings {
  unsigned long long maxmemory = 0;  // bytes; 0: no limit
  std::string policy;                // maxmemory-policy, as the server spells it
};

// From INFO memory's answer (its "maxmemory:" and "maxmemory_policy:"
// lines); nullopt when either is missing or not a number.
std::optional<MemorySettings> memory_settings_from_info(const Reply& info);

// From the answer to CONFIG GET maxmemory* (name, value, name, value, ...);
// nullopt when maxmemory or maxmemory-policy is missing.
std::optional<MemorySettings> memory_settings_from_config(const Reply& config);

// Whether a server with these settings may delete a lock key to free memory:
// a limit, and any policy but noeviction. Every lock key has a TTL, so the
// volatile-* policies may pick it as much as the allkeys-* ones; a policy
// this code does not know is not trusted either.
bool may_evict_locks(const MemorySettings& settings);

}  // namespace warden::detail
