// replica_sync on a cluster: a master without its replica takes no lock.
#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

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

}  // namespace
}  // namespace warden::test
