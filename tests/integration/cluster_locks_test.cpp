// Every lock kind on a Redis Cluster (3 masters, 3 replicas): routing by
// slot, two clients, multi-locks across masters, a replica as the only seed,
// and Redisson's shard channels.
#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

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
  // Generous: the two servers were just started and their Clients connect now
  // (a sanitizer build on a loaded machine once needed more than 2 s for it).
  ASSERT_TRUE(red.try_lock_for(10s));
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
  auto released = master.command(
      {"EVAL", "redis.call('del', KEYS[1]); return redis.call('spublish', KEYS[2], ARGV[1])", "2", name, channel, "0"});
  EXPECT_EQ(released.integer, 1);
  ASSERT_TRUE(got.get());
  EXPECT_LT(elapsed_ms(started), 10'000);
  EXPECT_EQ(acquires.last_wake(name), wake_cause::message);
}

}  // namespace
}  // namespace warden::test
