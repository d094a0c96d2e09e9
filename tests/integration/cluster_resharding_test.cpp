// A held and awaited lock follows its slot to another master (ASK, then MOVED).
#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

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
    auto moved = source.command(
        {"MIGRATE", "127.0.0.1", std::to_string(cluster.node(to).port()), key.str, "0", "5000", "REPLACE"});
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

}  // namespace
}  // namespace warden::test
