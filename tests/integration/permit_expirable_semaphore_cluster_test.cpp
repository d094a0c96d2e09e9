// The watchdog-kept permit of a PermitExpirableSemaphore on a Redis Cluster:
// each permit's renewal goes to the master of its semaphore's slot (three
// semaphores, one on each master, renewed in the same batches), and follows
// the slot when it moves to another master (ASK while it migrates, then
// MOVED) and when the master fails over to its replica.
#include <functional>

#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

constexpr auto lease = std::chrono::milliseconds{900};
constexpr auto long_lease = std::chrono::milliseconds{3000};

std::string timeouts_of(const std::string& name) { return "{" + name + "}:timeout"; }

// The permit's expiry (epoch ms, server clock) on `node`; -1 when absent.
long long expiry_on(RedisProbe& node, const std::string& name, const std::string& id, bool asking = false) {
  if (asking) node.command({"ASKING"});
  auto reply = node.command({"ZSCORE", timeouts_of(name), id});
  return reply.is_nil() || reply.is_error() ? -1 : std::stoll(reply.str);
}

long long server_ms(RedisProbe& node) {
  auto time = node.command({"TIME"});
  return std::stoll(time.elements.at(0).str) * 1000 + std::stoll(time.elements.at(1).str) / 1000;
}

// `watchdog`: the kept permits' lease. The moves use a longer one, so that
// a renewal refused while a failover pauses writes is not the end of it.
Config kept_config(RedisCluster& cluster, std::chrono::milliseconds watchdog = lease) {
  Config config = cluster_config(cluster);
  config.lock_watchdog_timeout = watchdog;
  return config;
}

class PermitExpirableSemaphoreCluster : public ClusterLocks {};

TEST_F(PermitExpirableSemaphoreCluster, KeptPermitsOnEveryMasterAreRenewedOnTheirOwnNode) {
  Client holder(kept_config(cluster()));
  Client other(kept_config(cluster()));
  struct held {
    std::string name, id;
    std::unique_ptr<RedisProbe> master;
    long long first_expiry = 0;
  };
  std::vector<held> permits;
  std::atomic<int> lost{0};
  std::vector<LostSubscription> subscriptions;
  for (std::size_t m = 0; m < 3; ++m) {
    held one;
    one.name = name_on(cluster(), m, "pes-kept-" + std::to_string(m) + "-");
    one.master = std::make_unique<RedisProbe>(cluster().first_master(m));
    PermitExpirableSemaphore semaphore = holder.get_permit_expirable_semaphore(one.name);
    subscriptions.push_back(semaphore.subscribe_lost([&](const PermitLost&) { ++lost; }));
    ASSERT_TRUE(semaphore.try_set_permits(1));
    one.id = semaphore.acquire();  // no lease: kept by the watchdog
    one.first_expiry = expiry_on(*one.master, one.name, one.id);
    ASSERT_GT(one.first_expiry, 0) << one.name << " on master " << m;
    permits.push_back(std::move(one));
  }
  const auto acquired = steady::now();
  // Each expiry is pushed on its own master, several times, until well past
  // the first lease: the renewals go where the slot is served.
  for (auto& one : permits) {
    EXPECT_TRUE(eventually(
        [&] {
          return steady::now() - acquired > 2 * lease &&
                 expiry_on(*one.master, one.name, one.id) > one.first_expiry + 2 * lease.count() / 3;
        },
        10s))
        << one.name << ": expiry " << expiry_on(*one.master, one.name, one.id) << ", first " << one.first_expiry;
  }
  for (auto& one : permits) {
    PermitExpirableSemaphore semaphore = holder.get_permit_expirable_semaphore(one.name);
    // Still held, with most of a lease ahead by the server's clock, and by
    // the holder's local bound.
    EXPECT_GT(expiry_on(*one.master, one.name, one.id) - server_ms(*one.master), lease.count() / 3) << one.name;
    EXPECT_GT(semaphore.valid_until(one.id), steady::now()) << one.name;
    EXPECT_EQ(semaphore.acquired_permits(), 1) << one.name;
    EXPECT_FALSE(other.get_permit_expirable_semaphore(one.name).try_acquire_for(0ms, 10s)) << one.name;
  }
  EXPECT_EQ(lost.load(), 0);
  for (auto& one : permits) {
    PermitExpirableSemaphore semaphore = holder.get_permit_expirable_semaphore(one.name);
    semaphore.release(one.id);
    EXPECT_EQ(semaphore.valid_until(one.id), steady::time_point{});
    EXPECT_FALSE(one.master->exists(timeouts_of(one.name)));
    EXPECT_EQ(one.master->get(one.name), "1");
  }
}

// Moves `slot` from master `from` to master `to` with its keys, as
// resharding does; `between` runs while the keys are on the target and the
// slot is still the source's (the source answers ASK).
void move_slot(RedisCluster& cluster, std::uint16_t slot, std::size_t from, std::size_t to,
               const std::function<void()>& between) {
  RedisProbe source(cluster.node(from));
  RedisProbe target(cluster.node(to));
  auto s = std::to_string(slot);
  ASSERT_FALSE(target.command({"CLUSTER", "SETSLOT", s, "IMPORTING", cluster.node_id(from)}).is_error());
  ASSERT_FALSE(source.command({"CLUSTER", "SETSLOT", s, "MIGRATING", cluster.node_id(to)}).is_error());
  std::vector<std::string> migrate{"MIGRATE", "127.0.0.1", std::to_string(cluster.node(to).port()), "", "0", "5000",
                                   "REPLACE", "KEYS"};
  for (const auto& key : source.command({"CLUSTER", "GETKEYSINSLOT", s, "100"}).elements) migrate.push_back(key.str);
  ASSERT_GT(migrate.size(), 8u) << "no keys in slot " << s;
  auto moved = source.command(migrate);
  ASSERT_FALSE(moved.is_error()) << moved.str;
  between();
  ASSERT_FALSE(target.command({"CLUSTER", "SETSLOT", s, "NODE", cluster.node_id(to)}).is_error());
  ASSERT_FALSE(source.command({"CLUSTER", "SETSLOT", s, "NODE", cluster.node_id(to)}).is_error());
}

TEST(PermitExpirableSemaphoreClusterMoves, AKeptPermitIsRenewedOnTheMasterItsSlotMovedTo) {
  // With replicas: a cluster master's permit writes wait for one
  // (replica_sync), so ASKING goes on the synced connections too.
  RedisCluster cluster({3, 1, {}});
  Client holder(kept_config(cluster, long_lease));
  const std::string name = name_on(cluster, 0, "pes-moved-");
  const auto slot = keys::slot(name);
  PermitExpirableSemaphore semaphore = holder.get_permit_expirable_semaphore(name);
  std::atomic<int> lost{0};
  auto subscription = semaphore.subscribe_lost([&](const PermitLost&) { ++lost; });
  ASSERT_TRUE(semaphore.try_set_permits(1));
  const std::string id = semaphore.acquire();
  RedisProbe target(cluster.node(1));
  move_slot(cluster, slot, 0, 1, [&] {
    // Mid-migration: the renewal is sent to the source, answered ASK, and
    // run on the target.
    const long long before = expiry_on(target, name, id, true);
    ASSERT_GT(before, 0);
    EXPECT_TRUE(eventually([&] { return expiry_on(target, name, id, true) > before; }, 5s))
        << "no renewal reached the importing master";
  });
  // The slot is the target's: renewals meet MOVED once and go there.
  const long long after_move = expiry_on(target, name, id);
  ASSERT_GT(after_move, 0);
  EXPECT_TRUE(eventually([&] { return expiry_on(target, name, id) > after_move + long_lease.count() / 3; }, 5s))
      << "no renewal reached the new master";
  EXPECT_GT(semaphore.valid_until(id), steady::now());
  EXPECT_EQ(lost.load(), 0);
  semaphore.release(id);
  EXPECT_EQ(target.get(name), "1");
  EXPECT_FALSE(target.exists(timeouts_of(name)));
}

TEST(PermitExpirableSemaphoreClusterMoves, AKeptPermitIsRenewedOnTheReplicaPromotedByAFailover) {
  RedisCluster cluster({3, 1, {}});
  Client holder(kept_config(cluster, long_lease));
  const std::string name = name_on(cluster, 0, "pes-failover-");
  const auto slot = keys::slot(name);
  PermitExpirableSemaphore semaphore = holder.get_permit_expirable_semaphore(name);
  std::atomic<int> lost{0};
  auto subscription = semaphore.subscribe_lost([&](const PermitLost&) { ++lost; });
  ASSERT_TRUE(semaphore.try_set_permits(1));
  const std::string id = semaphore.acquire();
  RedisProbe promoted(cluster.first_replica(0));
  // A graceful failover: the replica has every write the master took.
  ASSERT_FALSE(promoted.command({"CLUSTER", "FAILOVER"}).is_error());
  await_master(cluster, slot, 3, 20s);  // first_replica(0)
  const long long at_failover = expiry_on(promoted, name, id);
  ASSERT_GT(at_failover, 0) << "the permit did not reach the replica";
  EXPECT_TRUE(eventually([&] { return expiry_on(promoted, name, id) > at_failover + long_lease.count() / 3; }, 10s))
      << "no renewal reached the promoted master";
  EXPECT_GT(semaphore.valid_until(id), steady::now());
  EXPECT_EQ(lost.load(), 0);
  semaphore.release(id);
  EXPECT_EQ(promoted.get(name), "1");
}

}  // namespace
}  // namespace warden::test
