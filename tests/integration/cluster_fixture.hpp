// What the Redis Cluster tests share (the cluster_*_test.cpp files): a Config
// for a cluster, lock names on a given master, the observer's last wake-up
// per lock, and ClusterLocks, the fixture of one cluster shared by the tests
// that change no node's role.
#pragma once

#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lock/keys.hpp"
#include "message_recorder.hpp"
#include "redis_cluster.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"
#include "topology/key_slot.hpp"

namespace warden::test {

using steady = std::chrono::steady_clock;
namespace keys = detail::keys;

inline Config cluster_config(const RedisCluster& cluster, sharded_pubsub mode = sharded_pubsub::automatic) {
  Config config = fast_config(Config::from_url(cluster.url()));
  config.command_timeout = 2s;
  config.cluster.pubsub = mode;
  return config;
}

// A name whose slot the node at `index` serves as master now.
inline std::string name_on(RedisCluster& cluster, std::size_t index, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string name = prefix + std::to_string(i);
    if (cluster.master_of_slot(keys::slot(name)) == static_cast<int>(index)) return name;
  }
}

inline long long shard_subscribers(RedisProbe& probe, const std::string& channel) {
  auto reply = probe.command({"PUBSUB", "SHARDNUMSUB", channel});
  return reply.elements.size() == 2 ? reply.elements[1].integer : 0;
}

// The last finished acquire of each lock, as the observer reports it.
class Acquires {
 public:
  void watch(Config& config) {
    config.observer.on_acquire = [this](const AcquireEvent& event) {
      std::lock_guard<std::mutex> guard(mutex_);
      last_[std::string(event.lock_name)] = event.last_wake;
    };
  }
  wake_cause last_wake(const std::string& name) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = last_.find(name);
    return it == last_.end() ? wake_cause::none : it->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, wake_cause> last_;
};

// Waits until the cluster says the node at `index` serves `slot`.
inline void await_master(RedisCluster& cluster, std::uint16_t slot, std::size_t index,
                         std::chrono::milliseconds timeout) {
  ASSERT_TRUE(eventually([&] { return cluster.master_of_slot(slot) == static_cast<int>(index); }, timeout))
      << "node " << index << " did not become the master of slot " << slot;
}

// ---------------------------------------------------------------------------
// One cluster shared by the tests that change no node's role.

class ClusterLocks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = std::make_unique<RedisCluster>(); }
  static void TearDownTestSuite() { shared_.reset(); }

  RedisCluster& cluster() { return *shared_; }

  inline static std::unique_ptr<RedisCluster> shared_;
};

// Cuts master 0's replica off for good (a reconnect is refused: it now
// sends a password the master does not have).
inline void cut_off_replica(RedisCluster& cluster) {
  RedisProbe replica(cluster.first_replica(0));
  replica.command({"READONLY"});
  ASSERT_FALSE(replica.command({"CONFIG", "SET", "masterauth", "not-the-masters"}).is_error());
  replica.command({"CLIENT", "KILL", "TYPE", "master"});
  ASSERT_TRUE(eventually([&] {
    auto info = replica.command({"INFO", "replication"}).str;
    return info.find("master_link_status:down") != std::string::npos;
  }));
}

}  // namespace warden::test
