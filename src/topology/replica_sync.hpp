// Config::replica_sync as a node applies it: how many replicas a lock write
// needs, what ROLE says is attached, and how a shortfall is put in words.
// Pure logic; SyncedWrites does the I/O.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <warden/config.hpp>

#include "io/command.hpp"
#include "io/reply.hpp"

namespace warden::detail {

struct ReplicaPolicy {
  replica_sync_mode mode = replica_sync_mode::off;  // never automatic
  int replicas = 1;                                 // mode count
  std::chrono::milliseconds timeout{1'000};

  bool on() const { return mode != replica_sync_mode::off; }
  // Replicas a write needs when `attached` are attached (nullopt: not
  // known). all_known needs every one, and at least one: a mode that asks
  // for replicas is not met by a master without any.
  int needed(std::optional<int> attached) const;
  // "at-least-one", "all-known", "3 replicas": for messages.
  std::string describe() const;
};

// The policy Config asks for: automatic is at_least_one where a failover
// can happen under the Client (a Sentinel master, a Cluster), off for a
// single server.
ReplicaPolicy replica_policy(const ReplicaSyncConfig& config, bool failover_topology);

// The replicas ROLE's answer lists as attached to a master; 0 for a server
// that is no master; nullopt for an answer that is not ROLE's.
std::optional<int> attached_replicas(const Reply& role);

// Why a write on `server` fell short, in words: "127.0.0.1:6380 has 0
// replicas attached and replica_sync (at-least-one) needs 1", or "0 of 1
// replicas acknowledged it within 1000 ms".
std::string too_few_attached(const std::string& server, int attached, int needed, const ReplicaPolicy& policy);
std::string too_few_acknowledged(int acknowledged, int needed, std::chrono::milliseconds waited);

}  // namespace warden::detail
