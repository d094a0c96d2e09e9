// Bad clusters: a seed that is no cluster node, and slots no master serves.
#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

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

}  // namespace
}  // namespace warden::test
