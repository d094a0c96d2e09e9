// Every lock kind on a real Redis Cluster (3 masters, 3 replicas) that the
// fixture builds on free loopback ports: routing by slot, both pub/sub modes,
// Redisson's shard channels, resharding (ASK, then MOVED), graceful and hard
// failover, the watchdog through a failover, and bad clusters.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
#include <system_error>
#include <thread>
#include <vector>

#include "lock/keys.hpp"
#include "topology/key_slot.hpp"
#include "message_recorder.hpp"
#include "redis_cluster.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using steady = std::chrono::steady_clock;
namespace keys = detail::keys;

Config cluster_config(const RedisCluster& cluster, sharded_pubsub mode = sharded_pubsub::automatic) {
  Config config = fast_config(Config::from_url(cluster.url()));
  config.command_timeout = 2s;
  config.cluster.pubsub = mode;
  return config;
}

// A name whose slot the node at `index` serves as master now.
std::string name_on(RedisCluster& cluster, std::size_t index, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string name = prefix + std::to_string(i);
    if (cluster.master_of_slot(keys::slot(name)) == static_cast<int>(index)) return name;
  }
}

long long shard_subscribers(RedisProbe& probe, const std::string& channel) {
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
void await_master(RedisCluster& cluster, std::uint16_t slot, std::size_t index, std::chrono::milliseconds timeout) {
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

  static std::unique_ptr<RedisCluster> shared_;
};

std::unique_ptr<RedisCluster> ClusterLocks::shared_;

TEST_F(ClusterLocks, EveryLockKindTakesItsKeysOnTheMasterOfItsSlot) {
  Client client(cluster_config(cluster()));
  for (std::size_t m = 0; m < 3; ++m) {
    RedisProbe master(cluster().first_master(m));
    SCOPED_TRACE("master " + std::to_string(m));

    auto name = name_on(cluster(), m, "kind-lock-");
    Lock lock = client.get_lock(name);
    lock.lock();
    EXPECT_TRUE(master.exists(name));
    EXPECT_TRUE(lock.is_held());
    lock.unlock();
    EXPECT_FALSE(master.exists(name));

    name = name_on(cluster(), m, "kind-fair-");
    FairLock fair = client.get_fair_lock(name);
    fair.lock();
    EXPECT_TRUE(master.exists(name));
    fair.unlock();
    EXPECT_FALSE(master.exists(name));

    name = name_on(cluster(), m, "kind-fenced-");
    FencedLock fenced = client.get_fenced_lock(name);
    auto token = fenced.lock_and_get_token();
    EXPECT_GE(token, 1);
    EXPECT_EQ(master.get(keys::fenced_token(name)), std::to_string(token));
    fenced.unlock();

    name = name_on(cluster(), m, "kind-spin-");
    SpinLock spin = client.get_spin_lock(name);
    spin.lock();
    EXPECT_TRUE(master.exists(name));
    spin.unlock();

    name = name_on(cluster(), m, "kind-rw-");
    ReadWriteLock rw = client.get_read_write_lock(name);
    rw.read_lock().lock();
    EXPECT_EQ(master.hgetall(name).at("mode"), "read");
    rw.read_lock().unlock();
    rw.write_lock().lock();
    EXPECT_EQ(master.hgetall(name).at("mode"), "write");
    rw.write_lock().unlock();
    EXPECT_FALSE(master.exists(name));

    name = name_on(cluster(), m, "kind-once-");
    Lock once = client.get_non_reentrant_lock(name);
    once.lock();
    try {
      once.lock();
      ADD_FAILURE() << "a second acquire of a non-re-entrant lock succeeded";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::would_deadlock);
    }
    once.unlock();
  }
}

TEST_F(ClusterLocks, WaitUntilConnectedReturnsOnceEveryMasterIsConnected) {
  Client client(cluster_config(cluster()));
  auto started = steady::now();
  client.wait_until_connected(5s);
  EXPECT_LT(elapsed_ms(started), 2'000);
  // Every master, not only the one that gave the slot table: a lock may
  // live on any of them.
  for (std::size_t m = 0; m < 3; ++m) {
    auto clients = RedisProbe(cluster().first_master(m)).command({"CLIENT", "LIST"}).str;
    EXPECT_NE(clients.find("name=warden:" + client.id()), std::string::npos) << "master " << m << ": " << clients;
  }
}

TEST_F(ClusterLocks, TwoClientsExcludeEachOtherOnEveryMaster) {
  Client a(cluster_config(cluster()));
  Client b(cluster_config(cluster()));
  for (std::size_t m = 0; m < 3; ++m) {
    auto name = name_on(cluster(), m, "exclude-");
    Lock mine = a.get_lock(name);
    Lock theirs = b.get_lock(name);
    ASSERT_TRUE(mine.try_lock());
    EXPECT_FALSE(theirs.try_lock()) << "master " << m;
    mine.unlock();
    EXPECT_TRUE(theirs.try_lock()) << "master " << m;
    theirs.unlock();
  }
}

TEST_F(ClusterLocks, AMultiLockSpansMastersAndARedLockMixesAClusterWithSingleServers) {
  Client client(cluster_config(cluster()));
  std::vector<std::string> names;
  std::vector<Lock> members;
  for (std::size_t m = 0; m < 3; ++m) {
    names.push_back(name_on(cluster(), m, "multi-"));
    members.push_back(client.get_lock(names.back()));
  }
  MultiLock multi(members);
  multi.lock();
  for (std::size_t m = 0; m < 3; ++m) {
    RedisProbe master(cluster().first_master(m));
    EXPECT_TRUE(master.exists(names[m]));
  }
  Client other(cluster_config(cluster()));
  EXPECT_FALSE(other.get_lock(names[2]).try_lock());
  multi.unlock();
  for (std::size_t m = 0; m < 3; ++m) {
    RedisProbe master(cluster().first_master(m));
    EXPECT_FALSE(master.exists(names[m]));
  }

  RedisServer single_a, single_b;
  Client on_a(fast_config(single_a));
  Client on_b(fast_config(single_b));
  RedLock red({client.get_lock(names[0]), on_a.get_lock("red"), on_b.get_lock("red")});
  ASSERT_TRUE(red.try_lock_for(2s));
  RedisProbe master(cluster().first_master(0));
  EXPECT_TRUE(master.exists(names[0]));
  red.unlock();
  EXPECT_FALSE(master.exists(names[0]));
}

TEST_F(ClusterLocks, AReplicaAsTheOnlySeedIsEnough) {
  Config config = cluster_config(cluster());
  const auto& replica = cluster().first_replica(1);
  config.cluster.seeds = {endpoint{"127.0.0.1", replica.port()}};
  Client client(config);
  auto name = name_on(cluster(), 2, "via-replica-");
  Lock lock = client.get_lock(name);
  lock.lock();
  RedisProbe master(cluster().first_master(2));
  EXPECT_TRUE(master.exists(name));
  lock.unlock();
}

// A waiter on another Client is woken by the unlock message, in the pub/sub
// mode asked for, long before the holder's lease (30 s) would run out.
class ClusterPubSub : public ClusterLocks, public ::testing::WithParamInterface<sharded_pubsub> {};

TEST_P(ClusterPubSub, AWaiterIsWokenByTheUnlockMessage) {
  const bool sharded = GetParam() != sharded_pubsub::off;  // automatic: Redis 7 has shard channels
  Config config = cluster_config(cluster(), GetParam());
  Acquires acquires;
  acquires.watch(config);
  Client holder(config);
  Client waiter(config);
  auto name = name_on(cluster(), 1, "woken-" + std::to_string(static_cast<int>(GetParam())) + "-");
  const std::string channel = keys::lock_channel(name);
  RedisProbe master(cluster().first_master(1));

  Lock held = holder.get_lock(name);
  held.lock();
  auto started = steady::now();
  auto got = std::async(std::launch::async, [&] {
    Lock lock = waiter.get_lock(name);
    if (!lock.try_lock_for(20s)) return false;
    lock.unlock();
    return true;
  });
  // Subscribed on the master of the channel's slot, with the asked-for kind.
  ASSERT_TRUE(eventually([&] { return (sharded ? shard_subscribers(master, channel) : subscribers(master, channel)) == 1; }));
  EXPECT_EQ(sharded ? subscribers(master, channel) : shard_subscribers(master, channel), 0);
  held.unlock();
  ASSERT_TRUE(got.get());
  EXPECT_LT(elapsed_ms(started), 10'000);
  EXPECT_EQ(acquires.last_wake(name), wake_cause::message);
}

// A loopback port that takes connections (the kernel completes them) and
// never answers: as a cluster's first seed it holds a Client's first slot
// table back until the Client gives up on it and asks the next seed.
class SilentSeed {
 public:
  SilentSeed() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0 || listen(fd_, 8) != 0) {
      int error = errno;
      close(fd_);
      throw std::system_error(error, std::generic_category(), "listen");
    }
    port_ = ntohs(address.sin_port);
  }
  ~SilentSeed() { close(fd_); }
  SilentSeed(const SilentSeed&) = delete;
  SilentSeed& operator=(const SilentSeed&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// A release that a Client sends before its first slot table says which
// pub/sub mode the cluster uses still publishes with the mode's command: the
// waiter (on another Client, subscribed the asked-for way) is woken by it.
TEST_P(ClusterPubSub, AReleaseSentBeforeTheFirstSlotTableWakesTheWaiter) {
  Config config = cluster_config(cluster(), GetParam());
  Acquires acquires;
  acquires.watch(config);
  Client holder(config);
  Client waiter(config);
  auto name = name_on(cluster(), 2, "early-" + std::to_string(static_cast<int>(GetParam())) + "-");
  const std::string channel = keys::lock_channel(name);
  const bool sharded = GetParam() != sharded_pubsub::off;
  RedisProbe master(cluster().first_master(2));

  Lock held = holder.get_lock(name);
  held.lock();
  auto got = std::async(std::launch::async, [&] {
    Lock lock = waiter.get_lock(name);
    if (!lock.try_lock_for(20s)) return false;
    lock.unlock();
    return true;
  });
  ASSERT_TRUE(
      eventually([&] { return (sharded ? shard_subscribers(master, channel) : subscribers(master, channel)) == 1; }));

  // A third Client, whose first seed never answers, force-releases the lock
  // as soon as it is made: the release script is built long before its
  // table (the silent seed is given up on after a second at the earliest).
  SilentSeed silent;
  Config late = cluster_config(cluster(), GetParam());
  late.command_timeout = 5s;  // the release outlasts the wait for the silent seed (1 s)
  late.cluster.seeds.insert(late.cluster.seeds.begin(), endpoint{"127.0.0.1", silent.port()});
  Client releaser(late);
  auto started = steady::now();
  EXPECT_TRUE(releaser.get_lock(name).force_unlock());
  EXPECT_GE(elapsed_ms(started), 500) << "the release did not wait for the first slot table";

  ASSERT_TRUE(got.get());
  EXPECT_EQ(acquires.last_wake(name), wake_cause::message);
}

INSTANTIATE_TEST_SUITE_P(Modes, ClusterPubSub,
                         ::testing::Values(sharded_pubsub::automatic, sharded_pubsub::on, sharded_pubsub::off),
                         [](const ::testing::TestParamInfo<sharded_pubsub>& info) {
                           switch (info.param) {
                             case sharded_pubsub::automatic: return std::string("automatic");
                             case sharded_pubsub::on: return std::string("on");
                             case sharded_pubsub::off: return std::string("off");
                           }
                           return std::string("unknown");
                         });

TEST_F(ClusterLocks, RedissonShardChannelsHearWardenAndWardenHearsRedisson) {
  Config config = cluster_config(cluster());
  Acquires acquires;
  acquires.watch(config);
  Client client(config);
  auto name = name_on(cluster(), 0, "redisson-");
  const std::string channel = keys::lock_channel(name);
  auto& node = cluster().first_master(0);
  RedisProbe master(node);

  // A Redisson waiter listens with SSUBSCRIBE on the channel's master: a
  // warden release reaches it.
  {
    MessageRecorder redisson_waiter(node, {channel}, true);
    Lock lock = client.get_lock(name);
    lock.lock();
    lock.unlock();
    auto heard = redisson_waiter.wait_for(1, 5s);
    ASSERT_EQ(heard.size(), 1u);
    EXPECT_EQ(heard[0].channel, channel);
    EXPECT_EQ(heard[0].payload, "0");
  }

  // A Redisson holder (its layout, written here) releases as Redisson does
  // in sharded mode: DEL, then SPUBLISH "0". The warden waiter is woken by it.
  const std::string redisson_owner = "6f1d2c3b-0000-4000-8000-00000000cafe:1";
  master.command({"HSET", name, redisson_owner, "1"});
  master.command({"PEXPIRE", name, "30000"});
  auto started = steady::now();
  auto got = std::async(std::launch::async, [&] {
    Lock lock = client.get_lock(name);
    if (!lock.try_lock_for(20s)) return false;
    lock.unlock();
    return true;
  });
  ASSERT_TRUE(eventually([&] { return shard_subscribers(master, channel) == 1; }));
  auto released = master.command({"EVAL", "redis.call('del', KEYS[1]); return redis.call('spublish', KEYS[2], ARGV[1])",
                                   "2", name, channel, "0"});
  EXPECT_EQ(released.integer, 1);
  ASSERT_TRUE(got.get());
  EXPECT_LT(elapsed_ms(started), 10'000);
  EXPECT_EQ(acquires.last_wake(name), wake_cause::message);
}

TEST(ClusterConfig, URLsNameTheSeeds) {
  auto config = Config::from_url("redis+cluster://user:p%40ss@127.0.0.1:7000,localhost:7001,[::1]:7002/");
  ASSERT_EQ(config.cluster.seeds.size(), 3u);
  EXPECT_EQ(config.cluster.seeds[0].host, "127.0.0.1");
  EXPECT_EQ(config.cluster.seeds[0].port, 7000);
  EXPECT_EQ(config.cluster.seeds[1].host, "localhost");
  EXPECT_EQ(config.cluster.seeds[2].host, "::1");
  EXPECT_EQ(config.cluster.seeds[2].port, 7002);
  EXPECT_EQ(config.username, "user");
  EXPECT_EQ(config.password, "p@ss");
  EXPECT_FALSE(config.tls.enabled);
  EXPECT_TRUE(Config::from_url("rediss+cluster://10.0.0.1:6380").tls.enabled);
  EXPECT_EQ(Config::from_url("redis+cluster://h").cluster.seeds.at(0).port, 6379);
  for (const char* bad : {"redis+cluster://", "redis+cluster://a:1,", "redis+cluster://a:1/2", "redis+cluster://a:0"}) {
    try {
      Config::from_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument) << bad;
    }
  }
}

TEST(ClusterConfig, ValidateNamesTheField) {
  auto expect_invalid = [](Config config, const std::string& field) {
    try {
      config.validate();
      ADD_FAILURE() << field << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument);
      EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
    }
  };
  Config config;
  config.cluster.seeds = {endpoint{"127.0.0.1", 7000}};
  config.validate();
  Config db = config;
  db.database = 1;
  expect_invalid(db, "database");
  Config empty_host = config;
  empty_host.cluster.seeds.push_back(endpoint{"", 7001});
  expect_invalid(empty_host, "cluster.seeds[1]");
  Config redirects = config;
  redirects.cluster.max_redirects = 0;
  expect_invalid(redirects, "cluster.max_redirects");
  Config refresh = config;
  refresh.cluster.refresh_interval = 1ms;
  expect_invalid(refresh, "cluster.refresh_interval");
  Config socket = config;
  socket.unix_socket = "/tmp/redis.sock";
  expect_invalid(socket, "unix_socket");
}

// ---------------------------------------------------------------------------
// Bad clusters

TEST(ClusterBadInput, ASeedThatIsNoClusterNodeFailsWithClusterError) {
  RedisServer plain;
  RedisProbe probe(plain);
  Config config = fast_config(plain);
  config.cluster.seeds = {endpoint{"127.0.0.1", plain.port()}};
  Client client(config);
  Lock lock = client.get_lock("not-a-cluster");
  auto started = steady::now();
  try {
    lock.lock();
    ADD_FAILURE() << "locked on a server that is not a cluster node";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::routing_failed) << error.what();
    EXPECT_NE(std::string(error.what()).find("cluster support disabled"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("not-a-cluster"), std::string::npos) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 1'000) << "every seed answered: no reason to wait";
  EXPECT_FALSE(probe.exists("not-a-cluster"));
}

// Master 2 gives up its slots: nobody serves them. Returns them.
std::pair<long long, long long> uncover_third_master(RedisCluster& cluster) {
  auto ranges = RedisProbe(cluster.first_master(0)).command({"CLUSTER", "SLOTS"});
  long long first = -1, last = -1;
  for (const auto& range : ranges.elements) {
    if (range.elements.at(2).elements.at(1).integer == cluster.first_master(2).port()) {
      first = range.elements[0].integer;
      last = range.elements[1].integer;
    }
  }
  if (first < 0) return {first, last};
  for (std::size_t i = 0; i < 3; ++i) {
    RedisProbe(cluster.node(i)).command({"CLUSTER", "DELSLOTSRANGE", std::to_string(first), std::to_string(last)});
  }
  EXPECT_TRUE(eventually([&] { return cluster.master_of_slot(static_cast<std::uint16_t>(first)) == -1; }));
  return {first, last};
}

TEST(ClusterBadInput, AKeyInAnUncoveredSlotFailsWithClusterErrorNamingTheSlot) {
  RedisCluster cluster({3, 0, {"--cluster-require-full-coverage", "no"}});
  auto [first, last] = uncover_third_master(cluster);
  ASSERT_GE(first, 0);

  Config config = cluster_config(cluster);
  config.replica_sync.mode = replica_sync_mode::off;  // a cluster without replicas
  Client client(config);
  std::string orphan;
  for (int i = 0; orphan.empty(); ++i) {
    auto name = "orphan-" + std::to_string(i);
    auto slot = keys::slot(name);
    if (slot >= first && slot <= last) orphan = name;
  }
  try {
    client.get_lock(orphan).lock();
    ADD_FAILURE() << "locked a key no master serves";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::routing_failed) << error.what();
    EXPECT_NE(std::string(error.what()).find("no master serves slot " + std::to_string(keys::slot(orphan))),
              std::string::npos)
        << error.what();
  }
  // The rest of the cluster works.
  auto served = name_on(cluster, 0, "served-");
  Lock lock = client.get_lock(served);
  lock.lock();
  lock.unlock();
}

TEST(ClusterBadInput, WaitUntilConnectedFailsNamingASlotNoMasterServes) {
  RedisCluster cluster({3, 0, {"--cluster-require-full-coverage", "no"}});
  auto [first, last] = uncover_third_master(cluster);
  ASSERT_GE(first, 0);
  Config config = cluster_config(cluster);
  config.replica_sync.mode = replica_sync_mode::off;
  Client client(config);
  auto started = steady::now();
  try {
    client.wait_until_connected(500ms);
    ADD_FAILURE() << "ready with slots " << first << "-" << last << " served by nobody";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::routing_failed) << error.what();
    EXPECT_NE(std::string(error.what()).find("no master serves slot " + std::to_string(first)), std::string::npos)
        << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 1'500);
}

// ---------------------------------------------------------------------------
// Resharding and failover: each test has a cluster of its own.

// Moves `slot` from the master at `from` to the one at `to` as redis-cli
// --cluster reshard does: IMPORTING, MIGRATING, MIGRATE each key, then NODE on
// both. `between` runs once the keys have moved but the slot is still the
// old master's (commands for it are answered ASK).
void move_slot(RedisCluster& cluster, std::uint16_t slot, std::size_t from, std::size_t to,
               const std::function<void()>& between) {
  RedisProbe source(cluster.node(from));
  RedisProbe target(cluster.node(to));
  auto s = std::to_string(slot);
  ASSERT_FALSE(target.command({"CLUSTER", "SETSLOT", s, "IMPORTING", cluster.node_id(from)}).is_error());
  ASSERT_FALSE(source.command({"CLUSTER", "SETSLOT", s, "MIGRATING", cluster.node_id(to)}).is_error());
  auto keys_in_slot = source.command({"CLUSTER", "GETKEYSINSLOT", s, "100"});
  for (const auto& key : keys_in_slot.elements) {
    auto moved = source.command({"MIGRATE", "127.0.0.1", std::to_string(cluster.node(to).port()), key.str, "0",
                                 "5000", "REPLACE"});
    ASSERT_FALSE(moved.is_error()) << moved.str;
  }
  between();
  ASSERT_FALSE(target.command({"CLUSTER", "SETSLOT", s, "NODE", cluster.node_id(to)}).is_error());
  ASSERT_FALSE(source.command({"CLUSTER", "SETSLOT", s, "NODE", cluster.node_id(to)}).is_error());
}

TEST(ClusterResharding, AHeldAndAwaitedLockFollowsItsSlotThroughAskThenMoved) {
  // With replicas: the lock writes wait for them (replica_sync), so ASKING
  // goes on the synced connections too.
  RedisCluster cluster({3, 1, {}});
  Config config = cluster_config(cluster);
  config.lock_watchdog_timeout = 3s;  // renewals every second, through the move
  Log log;
  log.watch(config);
  Acquires acquires;
  acquires.watch(config);
  Client holder(config);
  Client waiter(config);
  auto name = name_on(cluster, 0, "resharded-");
  auto slot = keys::slot(name);
  Lock held = holder.get_lock(name);
  std::atomic<int> lost{0};
  auto subscription = held.subscribe_lost([&](const LockLost&) { ++lost; });
  held.lock();
  auto got = std::async(std::launch::async, [&] { return waiter.get_lock(name).try_lock_for(30s); });
  RedisProbe source(cluster.node(0));
  ASSERT_TRUE(eventually([&] { return shard_subscribers(source, keys::lock_channel(name)) == 1; }));

  RedisProbe target(cluster.node(1));
  move_slot(cluster, slot, 0, 1, [&] {
    // Mid-migration: the key is on the target, the slot still the source's.
    // A one-key script (the query) is sent to the source, answered ASK and
    // run on the target; so is the watchdog's renewal. (A script with a key
    // the target does not have yet is answered TRYAGAIN there until the
    // migration ends: the router retries it within its deadline.)
    EXPECT_EQ(held.hold_count(), 1);
    EXPECT_TRUE(log.contains("answered ASK " + std::to_string(slot))) << log.all();
    auto importing_pttl = [&] {
      target.command({"ASKING"});  // the slot is not the target's yet
      return target.pttl(name);
    };
    auto before = importing_pttl();
    EXPECT_TRUE(eventually([&] { return importing_pttl() > before; }, 3s)) << "no renewal reached the target";
  });

  // The slot is the target's now: the holder's next command meets MOVED once.
  held.lock();
  EXPECT_TRUE(log.contains("answered MOVED " + std::to_string(slot))) << log.all();
  EXPECT_EQ(target.hgetall(name).at(holder.id() + ":" + std::to_string(current_thread_id())), "2");
  held.unlock();
  EXPECT_GT(target.pttl(name), 0);
  held.unlock();
  ASSERT_TRUE(got.get());
  EXPECT_TRUE(target.exists(name));  // the waiter's hold, on the new master
  EXPECT_EQ(lost.load(), 0);
}

// Holder and waiter through a failover of their lock's master. `hard`: the
// master is killed (kill -9) after its replica acknowledged the hold (WAIT),
// else the replica takes over gracefully (CLUSTER FAILOVER). Returns the
// milliseconds from the failover's start until the waiter held the lock.
long long hold_and_wait_through_failover(bool hard) {
  RedisCluster cluster({3, 1, {}});
  Config config = cluster_config(cluster);
  config.lock_watchdog_timeout = 9s;  // longer than a failover takes here
  config.command_timeout = 10s;       // a release sent at the failover waits for it
  Acquires acquires;
  acquires.watch(config);
  Client holder(config);
  Client waiter(config);
  auto name = name_on(cluster, 0, hard ? "killed-" : "failed-over-");
  auto slot = keys::slot(name);
  Lock held = holder.get_lock(name);
  std::atomic<int> lost{0};
  auto subscription = held.subscribe_lost([&](const LockLost&) { ++lost; });
  held.lock();  // the replica has it: replica_sync waited for it
  RedisProbe master(cluster.first_master(0));
  auto got = std::async(std::launch::async, [&] { return waiter.get_lock(name).try_lock_for(60s); });
  EXPECT_TRUE(eventually([&] { return shard_subscribers(master, keys::lock_channel(name)) == 1; }));

  auto started = steady::now();
  if (hard) {
    cluster.first_master(0).kill();
    // The promoted replica has no replica of its own: lock writes there are
    // refused (replica_sync) until the old master is back as one, which the
    // waiter's wait covers.
    await_master(cluster, slot, 3, 20s);
    cluster.first_master(0).start();
  } else {
    RedisProbe(cluster.first_replica(0)).command({"CLUSTER", "FAILOVER"});
  }
  // Released at once: the release waits for the slot's new master (its
  // command time covers the failover) and wakes the waiter there.
  EXPECT_FALSE(held.unlock_checked());
  EXPECT_TRUE(got.get());
  auto took = elapsed_ms(started);
  EXPECT_EQ(lost.load(), 0);
  await_master(cluster, slot, 3, 20s);  // first_replica(0)
  RedisProbe promoted(cluster.first_replica(0));
  EXPECT_TRUE(promoted.exists(name));  // the waiter's hold
  return took;
}

TEST(ClusterFailover, GracefulFailoverKeepsTheHoldAndWakesTheWaiter) {
  auto took = hold_and_wait_through_failover(false);
  RecordProperty("failover_to_waiter_ms", static_cast<int>(took));
}

TEST(ClusterFailover, AMasterKilledWithItsHoldReplicatedFailsOverAndTheWaiterGetsTheLock) {
  auto took = hold_and_wait_through_failover(true);
  std::cout << "cluster: kill -9 of the master to the waiter holding the lock: " << took << " ms\n";
  RecordProperty("kill_to_waiter_ms", static_cast<int>(took));
}

// Cuts master 0's replica off for good (a reconnect is refused: it now
// sends a password the master does not have).
void cut_off_replica(RedisCluster& cluster) {
  RedisProbe replica(cluster.first_replica(0));
  replica.command({"READONLY"});
  ASSERT_FALSE(replica.command({"CONFIG", "SET", "masterauth", "not-the-masters"}).is_error());
  replica.command({"CLIENT", "KILL", "TYPE", "master"});
  ASSERT_TRUE(eventually([&] {
    auto info = replica.command({"INFO", "replication"}).str;
    return info.find("master_link_status:down") != std::string::npos;
  }));
}

// replica_sync (on by default for a cluster): a master without a replica
// takes no lock. The call fails naming the reason, and writes nothing.
TEST(ClusterReplicaSync, AnAcquireOnAMasterWithoutItsReplicaFailsAndWritesNothing) {
  RedisCluster cluster({3, 1, {}});
  cut_off_replica(cluster);
  Log log;
  Config config = cluster_config(cluster);
  log.watch(config);
  Client client(config);
  auto name = name_on(cluster, 0, "unreplicated-");
  RedisProbe master(cluster.first_master(0));
  auto before = master.script_calls();
  auto started = steady::now();
  try {
    client.get_lock(name).try_lock_for(1s);
    ADD_FAILURE() << "locked on a master without replicas";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::replica_sync_failed) << error.what();
    EXPECT_NE(std::string(error.what()).find("has 0 replicas attached and replica_sync (at-least-one) needs 1"),
              std::string::npos)
        << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 1'000 + 500);
  EXPECT_FALSE(master.exists(name));
  EXPECT_EQ(master.script_calls(), before) << "an acquire was sent to a master without replicas";
  // Another master, with its replica, takes locks as before.
  Lock other = client.get_lock(name_on(cluster, 1, "replicated-"));
  other.lock();
  other.unlock();
  EXPECT_TRUE(log.contains("has 0 replicas attached")) << log.all();
}

// With replica_sync off a hold the replica never had is lost with its
// master (DESIGN §7); the holder is told.
TEST(ClusterFailover, WithReplicaSyncOffAHoldThatDidNotReachTheReplicaIsReportedLost) {
  RedisCluster cluster({3, 1, {}});
  Config config = cluster_config(cluster);
  config.lock_watchdog_timeout = 9s;
  config.replica_sync.mode = replica_sync_mode::off;
  Client holder(config);
  auto& master_node = cluster.first_master(0);
  cut_off_replica(cluster);
  RedisProbe replica(cluster.first_replica(0));
  replica.command({"READONLY"});
  auto name = name_on(cluster, 0, "unreplicated-");
  Lock held = holder.get_lock(name);
  held.lock();
  std::this_thread::sleep_for(200ms);  // time enough to replicate, had the link been up
  ASSERT_FALSE(replica.exists(name));
  master_node.kill();
  Event lost;
  std::error_code cause;
  auto subscription = held.subscribe_lost([&](const LockLost& event) {
    cause = event.cause;
    lost.set();
  });
  await_master(cluster, keys::slot(name), 3, 20s);
  // The promoted replica never had the key: the next renewal finds it gone.
  RedisProbe promoted(cluster.first_replica(0));
  ASSERT_TRUE(lost.wait_for(15s)) << "the promoted replica has the key: " << promoted.exists(name)
                                  << ", PTTL " << promoted.pttl(name);
  EXPECT_EQ(cause, errc::lease_expired);
  EXPECT_LT(held.valid_until(), steady::now());
}

// A MOVED is news: a slot table read meanwhile from a node that has not
// heard of the change must not undo it (nor let go of the node it named,
// failing what was sent there). Node 0 is made to lag for good: it forgets
// master 1's replica (CLUSTER FORGET keeps that node out of its table for a
// minute), so once the replica takes over, node 0's table has master 1's
// slots served by nobody. The router asks connected masters for the table,
// node 0 (slots 0-5460) first.
TEST(ClusterFailover, ATableFromANodeBehindAMovedDoesNotUndoIt) {
  RedisCluster cluster({3, 1, {"--cluster-require-full-coverage", "no"}});
  Log log;
  Config config = cluster_config(cluster);
  log.watch(config);
  Client client(config);
  auto elsewhere = name_on(cluster, 0, "lagging-");
  auto name = name_on(cluster, 1, "moved-on-");
  auto slot = keys::slot(name);
  Lock zero = client.get_lock(elsewhere);
  Lock lock = client.get_lock(name);
  zero.lock();  // connected to node 0 and node 1
  lock.lock();
  lock.unlock();

  RedisProbe lagging(cluster.node(0));
  ASSERT_FALSE(lagging.command({"CLUSTER", "FORGET", cluster.node_id(4)}).is_error());
  RedisProbe promoted(cluster.first_replica(1));
  ASSERT_FALSE(promoted.command({"CLUSTER", "FAILOVER"}).is_error());
  ASSERT_TRUE(eventually([&] { return promoted.command({"ROLE"}).elements.at(0).str == "master"; }, 20s));
  RedisProbe demoted(cluster.node(1));
  ASSERT_TRUE(eventually([&] { return demoted.command({"ROLE"}).elements.at(0).str == "slave"; }, 20s));
  auto covers = [&](RedisProbe& probe) {
    for (const auto& range : probe.command({"CLUSTER", "SLOTS"}).elements) {
      if (range.elements.at(0).integer <= slot && slot <= range.elements.at(1).integer) return true;
    }
    return false;
  };
  ASSERT_TRUE(eventually([&] { return !covers(lagging); }, 20s)) << "node 0 still knows who serves slot " << slot;

  // The acquire meets MOVED at node 1 and goes to node 4, while the table
  // that the MOVED made the router read comes from node 0; the release
  // right after still finds node 4.
  try {
    EXPECT_TRUE(lock.try_lock_for(5s));
    lock.unlock();
  } catch (const Error& error) {
    ADD_FAILURE() << error.what() << "\n" << log.all();
  }
  EXPECT_FALSE(promoted.exists(name));
  zero.unlock();
}

TEST(ClusterFailover, TheWatchdogRenewsHoldsOnEveryMasterWhileOneFailsOver) {
  // The other masters keep serving while one is down (with full coverage
  // required, Redis refuses every command, CLUSTERDOWN, until the replica
  // takes over; warden then retries within each command's deadline).
  RedisCluster cluster({3, 1, {"--cluster-require-full-coverage", "no"}});
  Config config = cluster_config(cluster);
  config.lock_watchdog_timeout = 9s;  // renewals every 3 s
  Client holder(config);
  std::vector<std::string> names;
  std::vector<Lock> locks;
  std::atomic<int> lost{0};
  std::vector<LostSubscription> subscriptions;
  for (std::size_t m = 0; m < 3; ++m) {
    names.push_back(name_on(cluster, m, "renewed-"));
    locks.push_back(holder.get_lock(names.back()));
    subscriptions.push_back(locks.back().subscribe_lost([&](const LockLost&) { ++lost; }));
    locks.back().lock();
    EXPECT_EQ(RedisProbe(cluster.first_master(m)).command({"WAIT", "1", "2000"}).integer, 1);
  }
  cluster.first_master(0).kill();
  // While master 0 fails over, the holds on masters 1 and 2 keep their
  // renewals: their TTL never falls a whole period (plus a margin) behind.
  RedisProbe one(cluster.first_master(1));
  RedisProbe two(cluster.first_master(2));
  long long lowest = 9'000;
  auto until = steady::now() + 8s;
  while (steady::now() < until) {
    lowest = std::min({lowest, one.pttl(names[1]), two.pttl(names[2])});
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(lowest, 9'000 - 3'000 - 1'000);
  await_master(cluster, keys::slot(names[0]), 3, 20s);
  RedisProbe promoted(cluster.first_replica(0));
  EXPECT_TRUE(eventually([&] { return promoted.pttl(names[0]) > 6'000; }, 8s));
  EXPECT_EQ(lost.load(), 0);
  for (auto& lock : locks) lock.unlock();
}

}  // namespace
}  // namespace warden::test
