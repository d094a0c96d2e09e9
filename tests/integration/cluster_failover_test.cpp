// Holds and waiters through a graceful and a hard failover, with replica_sync
// off, a stale slot table after a MOVED, and the watchdog while a master fails over.
#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

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
  ASSERT_TRUE(lost.wait_for(15s)) << "the promoted replica has the key: " << promoted.exists(name) << ", PTTL "
                                  << promoted.pttl(name);
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
