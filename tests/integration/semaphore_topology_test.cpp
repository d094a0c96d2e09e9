// Semaphore and PermitExpirableSemaphore on every topology: a Redis Cluster with shard channels (a plain
// name and one that carries its own {hash tag}, whose channel is Redisson's
// "redisson_sc:NAME"), Sentinel, and replica acknowledgement of acquires and
// releases (Config::replica_sync).
#include "cluster_fixture.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"

namespace warden::test {
namespace {

class SemaphoreTopologyCluster : public ClusterLocks {};

std::string semaphore_channel(const std::string& name) {
  return name.find('{') != std::string::npos ? "redisson_sc:" + name : "redisson_sc:{" + name + "}";
}

// A waiter on one Client, the release on another: the waiter joins the shard
// channel on the master of the name's slot, and the release's SPUBLISH wakes
// it within a round trip (its wait is unbounded: no timer could).
void shard_release_wakes(RedisCluster& cluster, const std::string& name, std::size_t master_index) {
  Config config = cluster_config(cluster, sharded_pubsub::automatic);
  Client waiter(config);
  Client releaser(config);
  RedisProbe master(cluster.first_master(master_index));
  const std::string channel = semaphore_channel(name);
  Semaphore waiting_side = waiter.get_semaphore(name);
  auto waiting = std::async(std::launch::async, [&] {
    waiting_side.acquire();
    return steady::now();
  });
  ASSERT_TRUE(eventually([&] { return shard_subscribers(master, channel) == 1; }, 10s));
  EXPECT_EQ(subscribers(master, channel), 0);
  auto released = steady::now();
  releaser.get_semaphore(name).release();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(waiting.get() - released).count(), 500);
  EXPECT_EQ(master.get(name), "0");
  // A Redisson release there (INCRBY and SPUBLISH of the new count) wakes a
  // warden waiter too.
  auto second = std::async(std::launch::async, [&] { return waiting_side.try_acquire_for(10s); });
  ASSERT_TRUE(eventually([&] { return shard_subscribers(master, channel) == 1; }, 10s));
  auto reply =
      master.command({"EVAL", "local v = redis.call('incrby', KEYS[1], ARGV[1]); redis.call(ARGV[2], KEYS[2], v);", "2",
                      name, channel, "1", "spublish"});
  ASSERT_FALSE(reply.is_error()) << reply.str;
  ASSERT_EQ(second.wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(second.get());
}

TEST_F(SemaphoreTopologyCluster, AReleaseWakesAWaiterThroughAShardChannel) {
  shard_release_wakes(cluster(), name_on(cluster(), 1, "sem-shard-"), 1);
}

TEST_F(SemaphoreTopologyCluster, ANameWithItsOwnHashTagKeepsItInTheChannel) {
  // The tag decides the slot of the name and of "redisson_sc:{tag}...".
  std::string tag = name_on(cluster(), 2, "t");
  std::string name = "{" + tag + "}:pool";
  ASSERT_EQ(keys::slot(name), keys::slot(semaphore_channel(name)));
  shard_release_wakes(cluster(), name, 2);
}

TEST_F(SemaphoreTopologyCluster, ThreadsOnSeveralClientsNeverHoldMoreThanThePermits) {
  Config config = cluster_config(cluster());
  Client a(config);
  Client b(config);
  const std::string name = name_on(cluster(), 0, "sem-many-");
  a.get_semaphore(name).add_permits(2);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      Semaphore semaphore = (t % 2 ? a : b).get_semaphore(name);
      for (int i = 0; i < 15; ++i) {
        semaphore.acquire();
        int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        --inside;
        semaphore.release();
      }
    });
  }
  for (auto& worker : workers) worker.join();
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(a.get_semaphore(name).available_permits(), 2);
}

// A PermitExpirableSemaphore on a cluster: its count and {NAME}:timeout
// share the name's slot (a name with its own tag keeps it: NAME:timeout),
// and a release's SPUBLISH wakes a waiter on another Client.
TEST_F(SemaphoreTopologyCluster, APermitExpirableSemaphoreKeepsItsKeysInOneSlotAndWakesThroughAShardChannel) {
  Config config = cluster_config(cluster(), sharded_pubsub::automatic);
  Client holder(config);
  Client waiter(config);
  std::string tag = name_on(cluster(), 1, "p");
  const std::string name = "{" + tag + "}:render";
  RedisProbe master(cluster().first_master(1));
  PermitExpirableSemaphore held = holder.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(held.try_set_permits(1));
  std::string id = held.acquire();
  EXPECT_FALSE(master.command({"ZSCORE", name + ":timeout", id}).is_nil());
  auto waiting = std::async(std::launch::async,
                            [&] { return waiter.get_permit_expirable_semaphore(name).try_acquire_for(10s, 10s); });
  ASSERT_TRUE(eventually([&] { return shard_subscribers(master, semaphore_channel(name)) == 1; }, 10s));
  auto released = steady::now();
  held.release(id);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(waiting.get().has_value());
  EXPECT_LT(elapsed_ms(released), 500);
}

TEST(SemaphoreTopology, SentinelsMasterHoldsAPermitExpirableSemaphore) {
  RedisSentinelGroup group;
  Client client(fast_sentinel_config(group.url()));
  RedisProbe master(group.node(0));
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore("s-pes");
  EXPECT_TRUE(semaphore.try_set_permits(2));
  std::string id = semaphore.acquire(30s);
  EXPECT_EQ(master.get("s-pes"), "1");
  EXPECT_FALSE(master.command({"ZSCORE", "{s-pes}:timeout", id}).is_nil());
  semaphore.release(id);
  EXPECT_EQ(master.get("s-pes"), "2");
}

TEST(SemaphoreTopology, SentinelsMasterHoldsTheCountAndReleasesWake) {
  RedisSentinelGroup group;
  Client client(fast_sentinel_config(group.url()));
  Client other(fast_sentinel_config(group.url()));
  RedisProbe master(group.node(0));
  Semaphore semaphore = client.get_semaphore("s-sem");
  EXPECT_TRUE(semaphore.try_set_permits(1));
  EXPECT_EQ(master.get("s-sem"), "1");
  semaphore.acquire();
  auto waiting = std::async(std::launch::async, [&] { return other.get_semaphore("s-sem").try_acquire_for(10s); });
  ASSERT_TRUE(eventually([&] { return subscribers(master, "redisson_sc:{s-sem}") == 1; }));
  auto released = steady::now();
  semaphore.release();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(waiting.get());
  EXPECT_LT(elapsed_ms(released), 500);
  EXPECT_EQ(master.get("s-sem"), "0");
}

TEST(SemaphoreTopology, ReplicaSyncCoversAcquiresAndReleases) {
  MasterWithReplica servers;
  ASSERT_TRUE(replica_online(servers.probe));
  Config config = fast_config(servers.master);
  config.replica_sync.mode = replica_sync_mode::all_known;
  Client client(config);
  RedisProbe replica_probe(servers.replica);
  Semaphore semaphore = client.get_semaphore("replicated-sem");
  semaphore.add_permits(2);
  semaphore.acquire();
  // Acknowledged: the replica has the count by the time acquire() returns.
  EXPECT_EQ(replica_probe.get("replicated-sem"), "1");
  semaphore.release();
  EXPECT_EQ(replica_probe.get("replicated-sem"), "2");
}

// A permit-expirable semaphore's acquire waits for the replica as a lock's
// does: with the replica stopped no permit id is handed out and the permit
// taken on the master is given back; once acknowledged, the replica has the
// permit by the time its id is returned.
TEST(SemaphoreTopology, APermitNoReplicaHasIsNotHandedOut) {
  MasterWithReplica servers;
  ASSERT_TRUE(replica_online(servers.probe));
  Config config = fast_config(servers.master);
  config.replica_sync.mode = replica_sync_mode::at_least_one;
  config.replica_sync.timeout = 300ms;
  Client client(config);
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore("replicated-pes");
  ASSERT_TRUE(semaphore.try_set_permits(2));

  servers.replica.pause();
  try {
    auto id = semaphore.try_acquire_for(1200ms, 30s);
    ADD_FAILURE() << "a permit no replica has was handed out: " << id.value_or("none");
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::replica_sync_failed) << error.what();
  }
  ASSERT_TRUE(eventually([&] { return servers.probe.get("replicated-pes") == "2"; }, 5s))
      << "the permit was not given back";
  EXPECT_EQ(servers.probe.command({"ZCARD", "{replicated-pes}:timeout"}).integer, 0);

  servers.replica.resume();
  // Once the replica has caught up (a write of the probe's acknowledged), the
  // permit is handed out, and the replica has it.
  ASSERT_TRUE(eventually(
      [&] {
        servers.probe.command({"SET", "replicated-pes:caught-up", "1"});
        return servers.probe.command({"WAIT", "1", "200"}).integer == 1;
      },
      10s));
  std::string id = semaphore.acquire(30s);
  RedisProbe replica_probe(servers.replica);
  EXPECT_FALSE(replica_probe.command({"ZSCORE", "{replicated-pes}:timeout", id}).is_nil())
      << "returned before the replica had it";
  semaphore.release(id);
}

TEST(SemaphoreTopology, ReplicaSyncWithoutReplicasRefusesAcquiresUnsent) {
  RedisServer server;
  Config config = fast_config(server);
  config.replica_sync.mode = replica_sync_mode::at_least_one;
  Client client(config);
  RedisProbe probe(server);
  probe.command({"SET", "lonely-sem", "1"});
  try {
    client.get_semaphore("lonely-sem").try_acquire_for(200ms);
    ADD_FAILURE() << "acquired without a replica";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::replica_sync_failed) << error.what();
  }
  EXPECT_EQ(probe.get("lonely-sem"), "1");
}

}  // namespace
}  // namespace warden::test
